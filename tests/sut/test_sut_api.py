"""The SUT's public face, the implementation interface of ``check.lockstep``:
``Cluster(config, bugs)``, ``apply`` (returning the action's ``model.Outcome``),
``is_enabled``, ``observe``; plus independence of deep copies (branching a run)."""

from __future__ import annotations

import copy

import pytest

import model
from model import (ActionNotEnabled, Config, FenceBroker, ListOffsets, ListOffsetsResult, Outcome, Produce,
                   ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch, StartBroker,
                   initial_state, observe)
from sut import Bug, Cluster

CONFIGS = [
    Config(),
    Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 3, 2), min_isr=3, unclean_recovery="proactive",
           unclean_leader_election=True),
    Config(brokers=(7, 8, 9), assignment=(8,), min_isr=1, unclean_recovery="manual"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "5-brokers", "rf1"])
def test_a_new_cluster_shows_the_models_initial_state(config: Config):
    assert Cluster(config).observe() == observe(initial_state(config))


def test_apply_refuses_a_disabled_action_with_a_reason():
    c = Cluster(Config())
    before = c.observe()
    with pytest.raises(ActionNotEnabled) as exc:
        c.apply(StartBroker(1))   # broker 1 is running
    assert exc.value.action == StartBroker(1) and exc.value.reason
    assert not c.is_enabled(StartBroker(1))
    assert c.observe() == before
    with pytest.raises(ActionNotEnabled):
        c.apply(Produce(2, 1))    # broker 2 is a follower
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


def test_apply_returns_what_the_action_visibly_did():
    """On RF 2 (MinISR 1) a write is appended at offset 0, its fetch request is sent,
    and the follower's next fetch acknowledges it; ListOffsets answers the HWM."""
    config = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1)
    c = Cluster(config)
    assert c.apply(Produce(1, 1)) == Outcome(appended=((1, 0),))
    (request,) = c.apply(SendFetch(2)).sent
    (response,) = c.apply(ReceiveFetchRequest(request.id)).sent
    assert response.records and not c.apply(ReceiveFetchResponse(response.id)).acknowledged
    (request,) = c.apply(SendFetch(2)).sent
    assert c.apply(ReceiveFetchRequest(request.id)).acknowledged == ((1, 0),)
    assert c.apply(ListOffsets()).list_offsets == ListOffsetsResult(1, 1, 1)


def test_observations_are_values_that_later_steps_do_not_change():
    c = Cluster(Config())
    c.apply(Produce(1, 1))
    seen = c.observe()
    c.apply(SendFetch(2))
    c.apply(FenceBroker(1))
    assert seen == observe(model.step(initial_state(Config()), Produce(1, 1)))
    assert c.observe() != seen


def test_a_deep_copy_is_an_independent_branch():
    config = Config()
    c = Cluster(config)
    c.apply(Produce(1, 1))
    branch = copy.deepcopy(c)
    branch.apply(FenceBroker(1))
    branch.apply(ReplicateMetadata(2, 2))
    c.apply(SendFetch(2))
    s = model.step(initial_state(config), Produce(1, 1))
    assert c.observe() == observe(model.step(s, SendFetch(2)))
    assert branch.observe() == observe(model.step(model.step(s, FenceBroker(1)), ReplicateMetadata(2, 2)))


def test_every_bug_leaves_the_initial_state_alone():
    config = Config()
    for bug in Bug:
        assert Cluster(config, {bug}).observe() == observe(initial_state(config)), bug


def test_the_sut_keeps_no_ghost_history():
    """Nothing of ``model.History`` (the True HWM, acknowledged writes, consumed
    records, unclean elections) is in the SUT: it answers with outcomes."""
    c = Cluster(Config())
    c.apply(Produce(1, 1))
    names = {n for obj in (c, c.controller, c.brokers[1], c.brokers[1].replica_manager) for n in vars(obj)}
    assert not names & {"history", "committed", "acked", "true_hwm", "unclean_elections"}


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
    broken.locksteps[s1] = (buggy, tuple(buggy.trace))
    from model import ControlledShutdown
    with pytest.raises(Divergence, match="flushed"):
        broken(s1, ControlledShutdown(1))


def test_a_deep_copy_reads_its_own_metadata_under_the_kafka_profile():
    """A branch's leader checks ISR eligibility (Kafka's rule) against its own
    broker's metadata image, not the original's: after the copy, leader 1 learns
    that broker 2 re-registered, and 2's fetch makes it propose the expansion
    (Rule.EXPAND_ISR_ON_FETCH), as in the model."""
    from model import KAFKA, AlterPartitionRequest, ControlledShutdown, ReceiveFetchRequest, StartBroker, UnfenceBroker
    config = Config(brokers=(1, 2, 3, 4), assignment=(2, 1, 3), min_isr=2, profile=KAFKA)
    trace = [FenceBroker(2), ControlledShutdown(2), StartBroker(2), ReplicateMetadata(2, 3), UnfenceBroker(2),
             ReplicateMetadata(1, 4), ReplicateMetadata(2, 1), ReplicateMetadata(3, 4), ReplicateMetadata(4, 4),
             SendFetch(2), ReceiveFetchRequest(1)]
    c, s = Cluster(config), initial_state(config)
    for i, action in enumerate(trace):
        if i == 5:   # branch before broker 1 applies the re-registration
            c = copy.deepcopy(c)
        c.apply(action)
        s = model.step(s, action)
    expansion = s.network.get(2)
    assert isinstance(expansion, AlterPartitionRequest) and (expansion.src, expansion.isr) == (1, {1, 2, 3})
    assert c.network.get(2) == expansion