"""The model is a pure function of values: hashable states, inputs never
changed, the same action on the same state gives the same next state."""

import enum
import pickle
import random

import attrs
import pytest

from check.random_walk import choose
from model import ClusterState, Config, enabled_actions, initial_state, step

CONFIGS = [
    Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_recovery="balanced"),
    Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3, 4), min_isr=3, unclean_recovery="proactive",
           unclean_leader_election=True),
]


def _fingerprint(state: ClusterState) -> tuple[int, ...]:
    # ClusterState caches its hash; its parts recompute theirs, so this sees any
    # in-place change below the top.
    return (hash(state.config), hash(state.controller), hash(state.brokers), hash(state.network),
            hash(state.history))


def _assert_immutable(value: object, path: str = "state") -> None:
    if value is None or isinstance(value, (bool, int, str, enum.Enum)):
        return
    if isinstance(value, (tuple, frozenset)):
        for i, item in enumerate(value):
            _assert_immutable(item, f"{path}[{i}]")
        return
    assert attrs.has(type(value)) and type(value).__setattr__ is not object.__setattr__, \
        f"{path} is a mutable {type(value).__name__}"
    for field in attrs.fields(type(value)):
        _assert_immutable(getattr(value, field.name), f"{path}.{field.name}")


@pytest.mark.parametrize("config", CONFIGS, ids=["3-brokers", "5-brokers"])
def test_seeded_random_walk_is_pure(config):
    # Families are chosen uniformly: a plain uniform choice is dominated by broker
    # churn and would rarely reach the data path.
    rng = random.Random(20261121)
    state = initial_state(config)
    seen = set()
    for i in range(5_000):
        actions = enabled_actions(state)
        assert actions, "the model must never deadlock: some action is always enabled"
        assert enabled_actions(state) == actions  # deterministic order
        action = choose(actions, rng, "family")
        seen.add(type(action).__name__)
        before = _fingerprint(state)
        frozen = pickle.dumps(state) if i % 100 == 0 else None
        nxt = step(state, action)
        assert _fingerprint(state) == before, f"step changed its input on {action!r}"
        if frozen is not None:
            assert pickle.loads(frozen) == state
            _assert_immutable(nxt)
            assert hash(nxt) == hash(pickle.loads(pickle.dumps(nxt)))
        assert step(state, action) == nxt, f"step is not deterministic on {action!r}"
        hash(nxt)
        state = nxt
    assert {"SendFetch", "ReceiveFetchRequest", "ReceiveFetchResponse", "Produce", "StartBroker",
            "ReceiveAlterPartition", "Reassign"} <= seen
