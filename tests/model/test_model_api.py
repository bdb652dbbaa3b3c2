"""The model's public face: Config validation, ActionNotEnabled, action reprs."""

import pytest

import model
from model import (ActionNotEnabled, Config, FenceBroker, ReplicateMetadata, StartBroker,
                   enabled_actions, initial_state, step)


@pytest.mark.parametrize("kwargs, field", [
    (dict(brokers=(1, 2)), "Config.brokers"),
    (dict(brokers=(1, 2, 3, 4, 5, 6)), "Config.brokers"),
    (dict(brokers=(1, 1, 2)), "Config.brokers"),
    (dict(assignment=(1, 2, 9)), "Config.assignment"),
    (dict(assignment=(1, 1)), "Config.assignment"),
    (dict(assignment=()), "Config.assignment"),
    (dict(min_isr=4), "Config.min_isr"),
    (dict(min_isr=0), "Config.min_isr"),
    (dict(unclean_recovery="eager"), "Config.unclean_recovery"),
    (dict(unclean_leader_election="yes"), "Config.unclean_leader_election"),
    (dict(variants={"NO_ELR"}), "Config.variants"),
])
def test_invalid_config_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Config(**kwargs)


def test_invalid_config_lists_allowed_values():
    with pytest.raises(ValueError, match="none.*balanced.*proactive.*manual"):
        Config(unclean_recovery="eager")
    with pytest.raises(ValueError, match=r"1\.\.3"):
        Config(min_isr=5)


def test_initial_state_matches_the_chapters_numbering():
    s = initial_state(Config(brokers=(1, 2, 3, 4), assignment=(2, 1, 3), min_isr=2))
    p = s.partition
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 1, 1)
    assert p.isr == {1, 2, 3} and p.replicas == (2, 1, 3)
    assert s.replica(4) is None
    assert [s.registration(b).broker_epoch for b in (1, 2, 3, 4)] == [0, 1, 2, 3]
    assert all(b.metadata_offset == len(s.controller.metadata_log) for b in s.brokers)


def test_step_rejects_a_disabled_action_with_the_reason():
    s = initial_state(Config())
    with pytest.raises(ActionNotEnabled, match="not offline") as err:
        step(s, StartBroker(1))
    assert err.value.action == StartBroker(1)
    with pytest.raises(ActionNotEnabled, match="unknown broker 9"):
        step(s, FenceBroker(9))
    with pytest.raises(ActionNotEnabled, match=r"count must be in 1\.\.0"):
        step(s, ReplicateMetadata(1, 1))


def test_pending_metadata_counts_the_records_a_broker_has_not_applied():
    s = initial_state(Config())
    assert [s.pending_metadata(b) for b in (1, 2, 3)] == [0, 0, 0]
    s = step(s, FenceBroker(3))  # the fence and the ISR shrink it causes (§8.1)
    assert [s.pending_metadata(b) for b in (1, 2, 3)] == [2, 2, 2]
    s = step(s, ReplicateMetadata(1, 1))
    assert [s.pending_metadata(b) for b in (1, 2, 3)] == [1, 2, 2]
    assert ReplicateMetadata(2, 3) not in set(enabled_actions(s))
    assert ReplicateMetadata(2, 2) in set(enabled_actions(s))
    with pytest.raises(ValueError, match="unknown broker 9"):
        s.pending_metadata(9)


def test_step_rejects_a_non_action():
    with pytest.raises(TypeError, match="not a replicheck action"):
        step(initial_state(Config()), "FenceBroker(1)")


def test_every_enabled_action_steps_and_every_step_is_enabled():
    s = initial_state(Config())
    s = step(s, FenceBroker(1))
    for a in enabled_actions(s):
        assert model.why_not_enabled(s, a) is None
        step(s, a)


def test_enabled_actions_of_some_classes_are_the_others_left_out_in_the_same_order():
    from check.random_walk import random_walk
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile="kafka-4.4.0")
    subsets = [frozenset(), frozenset(model.ACTION_TYPES), frozenset({ReplicateMetadata, model.Reassign}),
               frozenset(t for t in model.ACTION_TYPES if not model.KINDS[t].fault),
               frozenset({model.ProposeIsrShrinkMany, model.SendFetch, model.ReceiveFetchResponse})]
    seen: set[type] = set()
    for _, s in random_walk(config, 300, seed=1, policy="weighted"):   # a walk that reaches the three
        every = enabled_actions(s)
        seen |= {type(a) for a in every}
        for classes in subsets:
            assert enabled_actions(s, classes) == tuple(a for a in every if type(a) in classes)
    # The walk reached the classes whose enumeration the filter skips.
    assert {ReplicateMetadata, model.Reassign, model.ProposeIsrShrinkMany} <= seen


def test_action_reprs_read_as_scenario_steps():
    assert repr(FenceBroker(2)) == "FenceBroker(broker=2)"
    assert repr(model.UncleanShutdown(1, True)) == "UncleanShutdown(broker=1, lossy=True)"
    assert repr(model.Record(3, 7)) == "e3:7"


def test_every_action_class_has_a_family():
    for t in model.ACTION_TYPES:
        assert t in {c for cs in model.FAMILIES.values() for c in cs}
    with pytest.raises(ValueError, match="not a replicheck action"):
        model.family_of(object())
