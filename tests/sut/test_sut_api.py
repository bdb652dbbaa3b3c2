"""The SUT's public face: ``Cluster(config, bugs)``, ``apply``, ``is_enabled``,
``snapshot``; plus independence of deep copies (branching a run)."""

from __future__ import annotations

import copy

import pytest

import model
from model import (ActionNotEnabled, Config, FenceBroker, Produce, ReplicateMetadata, SendFetch, StartBroker,
                   initial_state)
from sut import Bug, Cluster

CONFIGS = [
    Config(),
    Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 3, 2), min_isr=3, unclean_recovery="proactive",
           unclean_leader_election=True),
    Config(brokers=(7, 8, 9), assignment=(8,), min_isr=1, unclean_recovery="manual"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "5-brokers", "rf1"])
def test_a_new_cluster_is_the_models_initial_state(config: Config):
    assert Cluster(config).snapshot() == initial_state(config)


def test_apply_refuses_a_disabled_action_with_a_reason():
    c = Cluster(Config())
    before = c.snapshot()
    with pytest.raises(ActionNotEnabled) as exc:
        c.apply(StartBroker(1))   # broker 1 is running
    assert exc.value.action == StartBroker(1) and exc.value.reason
    assert not c.is_enabled(StartBroker(1))
    assert c.snapshot() == before
    with pytest.raises(ActionNotEnabled):
        c.apply(Produce(1, 2))    # the next value is 1
    with pytest.raises(ActionNotEnabled):
        c.apply(ReplicateMetadata(9, 1))


def test_apply_rejects_a_non_action_and_unknown_bugs():
    c = Cluster(Config())
    with pytest.raises(TypeError):
        c.apply("FenceBroker(1)")
    with pytest.raises(TypeError):
        c.is_enabled(object())
    with pytest.raises(ValueError, match="unknown bug"):
        Cluster(Config(), {"off_by_one"})
    with pytest.raises(TypeError):
        Cluster(object())  # type: ignore[arg-type]


def test_snapshots_are_values_that_later_steps_do_not_change():
    c = Cluster(Config())
    c.apply(Produce(1, 1))
    snap = c.snapshot()
    c.apply(SendFetch(2))
    c.apply(FenceBroker(1))
    state = model.step(initial_state(Config()), Produce(1, 1))
    assert snap == state
    assert c.snapshot() != snap


def test_a_deep_copy_is_an_independent_branch():
    config = Config()
    c = Cluster(config)
    c.apply(Produce(1, 1))
    branch = copy.deepcopy(c)
    branch.apply(FenceBroker(1))
    branch.apply(ReplicateMetadata(2, 2))
    c.apply(SendFetch(2))
    s = model.step(initial_state(config), Produce(1, 1))
    assert c.snapshot() == model.step(s, SendFetch(2))
    assert branch.snapshot() == model.step(model.step(s, FenceBroker(1)), ReplicateMetadata(2, 2))


def test_every_bug_leaves_the_initial_state_alone():
    config = Config()
    for bug in Bug:
        assert Cluster(config, {bug}).snapshot() == initial_state(config), bug


def test_mirrored_step_runs_model_scenarios_on_the_sut_too():
    """``difftools.MirroredStep`` is the hook for running model-scenario tests on the
    SUT: a drop-in for ``model.step`` that mirrors each step, branches included."""
    from difftools import Divergence, MirroredStep
    mirror = MirroredStep()
    s0 = initial_state(Config())
    s1 = mirror(s0, Produce(1, 1))
    a = mirror(s1, SendFetch(2))
    b = mirror(s1, FenceBroker(1))            # a branch from s1
    assert mirror(b, ReplicateMetadata(2, 2)) == model.step(b, ReplicateMetadata(2, 2))
    assert a == model.step(s1, SendFetch(2))
    with pytest.raises(ActionNotEnabled):
        mirror(a, StartBroker(1))
    assert mirror.why_not_enabled(a, StartBroker(1)) is not None
    assert (mirror.steps, mirror.refusals, mirror.unmirrored) == (4, 1, 0)
    # A SUT that disagrees is reported.
    from difftools import lockstep
    broken = MirroredStep()
    buggy = lockstep(Config(), {Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH})
    assert buggy.step(Produce(1, 1)) is None
    broken.locksteps[s1] = buggy
    from model import ControlledShutdown
    with pytest.raises(Divergence, match="flushed"):
        broken(s1, ControlledShutdown(1))
