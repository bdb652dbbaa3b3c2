from model import Config, enabled_actions, initial_state, step


def test_initial_state_has_enabled_actions():
    s = initial_state(Config())
    assert enabled_actions(s)
    step(s, enabled_actions(s)[0])
