"""Apache Kafka's own ``PartitionChangeBuilder`` (release ``model.KAFKA_RELEASE``)
deciding the SUT controller's partition changes, compared in lockstep with the
model under the Kafka profile: the implementation "kafka" (``kafka_bridge``).

Kafka's restated unit tests also run on it (``tests/kafka``, engine "kafka")."""

from __future__ import annotations

import functools

import attrs
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from check.lockstep import LockStep
from check.machine import machine_for
from check.random_walk import random_walk
from check.subject import Subject
from model import (KAFKA, NO_LEADER, PROFILES, AdvanceTime, Config, FenceBroker, Produce, ProposeIsrShrink,
                   ReceiveAlterPartition, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, Rule, SendFetch,
                   StartBroker, UncleanShutdown, UnfenceBroker, UpdateElrFeature, rules_without)
from scenario import with_shutdowns_let_go

#: Under CONFIGS[0], leader 1's ISR check removes 3: 2 fetches at the leader's LEO
#: (caught up, however long), time passes beyond 3's caught-up time at the start,
#: and the controller takes the shrink (the last step).
SHRINK_3 = (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), AdvanceTime(30_001),
            ProposeIsrShrink(1, 3), ReceiveAlterPartition(3))

CONFIGS = (
    Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA),
    Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA, unclean_leader_election=True),
    Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1, profile=KAFKA),
    Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3, 4), min_isr=3, profile=KAFKA),
)


def counting(monkeypatch: pytest.MonkeyPatch) -> list:
    """The records Kafka's builder returns (None for no change), as they come."""
    import kafka_bridge.change_builder as kcb
    made: list = []
    original = kcb.KafkaPartitionChangeBuilder.build_change

    def build_change(self, unclean_shutdown=frozenset(), unclean=True, preferred=False):
        made.append(original(self, unclean_shutdown, unclean, preferred))
        return made[-1]

    monkeypatch.setattr(kcb.KafkaPartitionChangeBuilder, "build_change", build_change)
    return made


@functools.cache
def known_findings() -> frozenset[str]:
    """The signatures of the disagreements Kafka's controller has at the profile's
    findings (finding 5: it throws), each replayed once on Kafka's code from the
    finding's trace: a walk goes on past them (``Subject.known``), as a campaign
    given them with ``--known`` does. Empty once Kafka agrees there."""
    import kafka_bridge
    from reproducers.findings import FINDINGS
    found = set()
    for f in FINDINGS:
        lockstep = LockStep(Subject.at(f.config, implementation=kafka_bridge.implementation, check_properties=False))
        verdicts = (lockstep.step(action) for action in f.trace)
        found |= {v.signature for v in verdicts if v is not None}
    return frozenset(found)


def composed(parts_name: str):
    """The SUT with Kafka's parts ``parts_name``: "controller" (Kafka's
    ClusterControlManager and ReplicationControlManager, and its epoch cache, under
    the SUT's Partition: ``CONTROLLER_COMPONENTS``; the implementation "kafka" with
    Kafka's Partition too is walked in test_kafka_replica) or "builder" (Kafka's
    PartitionChangeBuilder under the SUT's controller, and its epoch cache)."""
    import kafka_bridge
    from sut import Cluster
    kafka_bridge.start()
    parts = {"controller": kafka_bridge.CONTROLLER_COMPONENTS, "builder": kafka_bridge.BUILDER_COMPONENTS}[parts_name]
    return lambda config: Cluster(config, components=parts)


@pytest.mark.parametrize("parts", ["controller", "builder"])
@pytest.mark.parametrize("config", CONFIGS, ids=["rf3-minisr2", "rf3-unclean", "rf2-minisr1", "rf4-minisr3"])
def test_kafkas_controller_agrees_with_the_model_on_random_walks(config, parts, monkeypatch):
    """Every request Kafka's controller handles on eight 300-step weighted walks
    (registrations clean and unclean, heartbeats, session expiry, controlled
    shutdown, AlterPartition, reassignments and their cancellation, preferred
    elections), or every change Kafka's builder alone decides, leaves the SUT's
    state, outcomes and enablement equal to the model's, the known findings'
    disagreements aside (``known_findings``)."""
    from sut.metadata import PartitionChangeRecord
    made = counting(monkeypatch)
    changes = 0
    for seed in range(8):
        lockstep = LockStep(Subject.at(config, implementation=composed(parts), check_properties=False,
                                       known=known_findings()))
        implementation = lockstep.implementation   # None once detached at a known finding
        for action, _ in random_walk(config, 300, seed=seed, policy="weighted"):
            verdict = lockstep.step(action)
            assert verdict is None, verdict.text
        changes += sum(isinstance(r, PartitionChangeRecord) for r in implementation.controller.metadata_log)
    # not vacuous: Kafka's code decided changes (through the builder alone, or the controller)
    assert (sum(r is not None for r in made) if parts == "builder" else changes) >= 8
    assert (type(implementation.controller).__name__ == "KafkaQuorumController") == (parts == "controller")


def committing(monkeypatch: pytest.MonkeyPatch) -> list:
    """The records Kafka's controller emits (each batch a list), as they come."""
    import kafka_bridge.controller as kc
    batches: list = []
    original = kc.KafkaQuorumController.commit

    def commit(self, records, clean=False, configs=False):
        batches.append([str(r.message().getClass().getSimpleName()) for r in records])
        return original(self, records, clean, configs)

    monkeypatch.setattr(kc.KafkaQuorumController, "commit", commit)
    return batches


def test_the_machine_checks_kafkas_code_in_lockstep(monkeypatch):
    import kafka_bridge
    batches = committing(monkeypatch)
    machine = machine_for(Subject(implementation=kafka_bridge.implementation, profile=KAFKA, check_properties=False), name="KafkaInTheLoop")
    run_state_machine_as_test(machine, settings=settings(
        max_examples=20, stateful_step_count=40, derandomize=True, database=None, deadline=None,
        suppress_health_check=list(HealthCheck), phases=[Phase.generate]))
    kinds = {kind for batch in batches for kind in batch}
    assert machine.run_stats.steps > 0
    assert {"RegisterBrokerRecord", "BrokerRegistrationChangeRecord", "PartitionRecord", "PartitionChangeRecord"} <= kinds


def test_a_wrong_mapping_onto_kafkas_builder_is_a_divergence():
    """Kafka's builder handed MinISR + 1: an ISR shrink to MinISR (2 of 3) then puts
    the removed replica in Kafka's ELR, which the model does not — the lockstep says
    where, at the step the controller commits the change."""
    import kafka_bridge
    import kafka_bridge.change_builder as kcb
    from sut import Cluster

    class OffByOne(kcb.KafkaPartitionChangeBuilder):
        def __init__(self, *args):
            super().__init__(*args)
            self.min_isr += 1

    config = CONFIGS[0]
    from sut.components import Components
    parts = Components(change_builder=OffByOne, epoch_cache=kafka_bridge.KafkaLeaderEpochFileCache)
    lockstep = LockStep(Subject.at(config, implementation=lambda c: Cluster(c, components=parts), check_properties=False))
    verdicts = [lockstep.step(action) for action in SHRINK_3]
    assert verdicts[:-1] == [None] * (len(SHRINK_3) - 1)
    verdict = verdicts[-1]
    assert verdict is not None and verdict.kind == "divergence"
    assert "observed.partition.elr: model=frozenset() sut=frozenset({3})" in verdict.differences


def test_the_implementation_needs_the_whole_kafka_profile():
    import kafka_bridge
    with pytest.raises(ValueError, match=r"implementation kafka: Kafka's own code follows every rule"):
        kafka_bridge.implementation(Config())
    without = Config(profile=KAFKA, rules=PROFILES[KAFKA] - {Rule.ONE_ALTER_PARTITION_IN_FLIGHT})
    assert kafka_bridge.not_applicable(without) is not None
    assert kafka_bridge.not_applicable(CONFIGS[0]) is None


def test_missing_jars_name_the_command_that_fetches_them(tmp_path, monkeypatch):
    from kafka_bridge import jvm
    monkeypatch.setenv(jvm.LIB_ENV, str(tmp_path))
    assert jvm.unavailable() == (f"no kafka-metadata-4.4.0.jar in {tmp_path}: run `make kafka-jars` (Maven) or set "
                                 f"REPLICHECK_KAFKA_LIB to a folder holding Kafka 4.4.0's jars")
    with pytest.raises(jvm.KafkaUnavailable, match="make kafka-jars"):
        jvm.start()
    (tmp_path / "kafka-metadata-4.4.0.jar").touch()   # the core jar (kafka.cluster.Partition) is needed too
    assert jvm.unavailable().startswith(f"no kafka_2.13-4.4.0.jar in {tmp_path}")


@pytest.mark.parametrize("parts", ["controller", "builder"])
def test_only_the_controllers_decisions_go_to_kafka(parts, monkeypatch):
    """Only controller decisions go to Kafka: brokers applying metadata call nothing."""
    made, batches = counting(monkeypatch), committing(monkeypatch)
    lockstep = LockStep(Subject.at(CONFIGS[0], implementation=composed(parts), check_properties=False))
    calls = (lambda: len(made)) if parts == "builder" else (lambda: len(batches))
    for action in SHRINK_3[:-1]:
        assert lockstep.step(action) is None
    before = calls()
    assert lockstep.step(SHRINK_3[-1]) is None
    assert calls() == before + 1
    if parts == "builder":
        assert made[-1] is not None and made[-1].isr == frozenset({1, 2})
    else:
        assert batches[-1] == ["PartitionChangeRecord"]
    assert lockstep.step(ReplicateMetadata(2, 1)) is None and calls() == before + 1


def test_a_kafka_row_is_named_kafka_and_replays_with_kafkas_code():
    import kafka_bridge
    from check.implementations import named
    from check.subject import implementation_name
    assert implementation_name(kafka_bridge.implementation) == "kafka"
    assert named("kafka") is kafka_bridge.implementation


def test_kafkas_builder_keeps_the_elr_from_leading_while_the_isr_holds_a_fenced_member():
    """The first disagreement the Kafka campaign found (benchmarks/kafka_campaign.py,
    reduced to 7 steps): after a reverted move leaves ISR [1] (fenced) and 3 in the
    ELR, moving to [1,2,3] again makes Kafka's builder elect nobody. The Kafka profile
    now follows it (Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR); with that rule off the
    model tries 3 from the ELR (outside the replicas: its controller faults,
    Rule.LEADER_ACCEPTOR_READS_DIRECTORY), and Kafka's code disagrees at that step."""
    import kafka_bridge
    from model import CancelReassignment, ControlledShutdown, Reassign, SendFetch, StartBroker
    from sut import Cluster
    fields = dict(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, unclean_leader_election=True, profile=KAFKA)
    without = rules_without(PROFILES[KAFKA], Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR)
    for rules, fails in ((PROFILES[KAFKA], False), (without, True)):
        config = Config(rules=rules, **fields)
        # the controlled shutdowns wait for the active brokers (Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)
        trace = with_shutdowns_let_go(config, (SendFetch(2), ControlledShutdown(1), StartBroker(1),
                                               Reassign((1, 2, 3)), ControlledShutdown(2), CancelReassignment(),
                                               Reassign((1, 2, 3))))
        lockstep = LockStep(Subject.at(config, implementation=lambda c: Cluster(c, components=kafka_bridge.COMPONENTS), check_properties=False))
        verdicts = [lockstep.step(a) for a in trace]
        failed = next((i + 1 for i, v in enumerate(verdicts) if v is not None), None)
        assert failed == (len(trace) if fails else None)   # the second move's step
        if failed:
            assert "outcome.controller_fault: model='Replica 3 is not assigned to this partition.' sut=None" \
                in verdicts[failed - 1].differences


def test_an_isr_member_outside_the_replicas_reaches_kafkas_builder():
    """The second disagreement the Kafka campaign found (7 steps): a reverted move
    leaves replicas [2] (fenced) with LastKnownELR [1]; broker 2's unclean
    registration then lets Kafka's builder elect the last known leader 1, which is
    no longer a replica, with ISR [1]. Fencing 1 must hand Kafka's builder ISR [1]:
    a translation that listed only ISR members among the replicas handed it [] and
    Kafka's builder then kept ISR [1] and an empty ELR, where the model (and Kafka)
    has ISR [] and ELR [1]. The state itself is finding 4's (ValidPartitionMetadata
    fails on the model at step 4). Kafka's whole controller faults at the
    registration instead (LEADER_ACCEPTOR_READS_DIRECTORY, switched off here, with
    the SUT's acceptor that restates it): see test_kafka_findings.py."""
    from kafka_bridge.change_builder import in_replica_order
    from model import PROFILES, CancelReassignment, FenceBroker, Reassign, Rule, StartBroker, UncleanShutdown, rules_without
    trace = (Reassign((2,)), Reassign((1, 2, 3)), FenceBroker(2), CancelReassignment(),
             UncleanShutdown(2, lossy=False), StartBroker(2), FenceBroker(1))
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=1, unclean_leader_election=True,
                    profile=KAFKA, rules=rules_without(PROFILES[KAFKA], Rule.LEADER_ACCEPTOR_READS_DIRECTORY))
    lockstep = LockStep(Subject.at(config, implementation=composed("builder"), check_properties=False))
    assert [lockstep.step(a) for a in trace] == [None] * len(trace)
    partition = lockstep.implementation.controller.replication.partition
    assert (partition.replicas, partition.isr, partition.elr) == ((2,), frozenset(), frozenset({1}))
    assert in_replica_order(frozenset({1, 3}), (3, 2)) == [3, 1]


def test_a_min_isr_change_reaches_kafkas_log_config():
    """RF 3, MinISR 2, ISR [1, 2] after 3 is shrunk out. MinISR raised to 3: once
    leader 1 applies the ConfigRecord, Kafka's Partition (its UnifiedLog's LogConfig,
    ``UnifiedLog.updateConfig``) refuses an acks=all write with NOT_ENOUGH_REPLICAS,
    as the model does; lowered back to 2, it takes one again. The same config
    records go through Kafka's ConfigurationControlManager, whose MinISR the
    controller's view reads."""
    import kafka_bridge
    from model import AlterMinIsr, Produce, ReceiveAlterPartitionResponse, ReplicateMetadata
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=kafka_bridge.implementation, check_properties=False))
    for action in SHRINK_3 + (ReceiveAlterPartitionResponse(4),):
        assert lockstep.step(action) is None
    assert lockstep.state.partition.isr == {1, 2}
    for min_isr, refused in ((3, True), (2, False)):
        assert lockstep.step(AlterMinIsr(min_isr)) is None
        assert lockstep.step(ReplicateMetadata(1, lockstep.state.pending_metadata(1))) is None
        value = lockstep.state.history.next_value
        assert lockstep.step(Produce(1, value)) is None
        assert (value in lockstep.state.history.nacked) == refused
        assert lockstep.implementation.controller.replication.min_isr == min_isr


def test_a_preferred_election_is_decided_by_kafkas_elect_leaders():
    """Replicas reordered to [2, 3, 1] (a move that only reorders completes at once):
    ElectLeaders(PREFERRED) through Kafka's ReplicationControlManager elects 2 in a
    new leader epoch, as the model does; asked again, Kafka answers
    ELECTION_NOT_NEEDED and writes nothing, as the model refuses it (the probe
    asks Kafka's code before, when 1 leads, and after)."""
    import kafka_bridge
    from kafka_bridge.controller import preferred_election_error
    from model import ElectPreferredLeader, Reassign
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=kafka_bridge.implementation, check_properties=False))
    assert lockstep.probe([ElectPreferredLeader()]) is None
    assert lockstep.step(Reassign((2, 3, 1))) is None
    before = lockstep.state.partition
    assert lockstep.step(ElectPreferredLeader()) is None
    after = lockstep.state.partition
    assert (after.leader, after.leader_epoch, after.isr) == (2, before.leader_epoch + 1, before.isr)
    assert lockstep.probe([ElectPreferredLeader()]) is None
    again = lockstep.implementation.controller.shim.electPreferredLeader()
    assert preferred_election_error(again).startswith("ELECTION_NOT_NEEDED") and not list(again.records())


def test_a_preferred_election_that_elects_nobody_completes_a_reassignment_kafka_could_complete():
    """The campaign's first disagreement after preferred elections came in (3 steps,
    seed 20250101): RF 2 on [2, 3], unclean leader election on, a move to [3, 1]; 2
    shuts down, 3 is fenced, and 1 (an adding replica) is elected uncleanly, ISR
    [1], which lets the move complete, but no change has run since. The preferred
    replica 3 is fenced, so nobody new is elected, yet Kafka's ElectLeaders
    answers NONE with a change: its builder completes the move first
    (``completeReassignmentIfNeeded``). The model follows (the preferred election
    is a change like any other), and Kafka's code agrees at every step."""
    import kafka_bridge
    from model import ControlledShutdown, ElectPreferredLeader, FenceBroker, Reassign
    config = Config(brokers=(1, 2, 3), assignment=(2, 3), min_isr=1, unclean_leader_election=True, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=kafka_bridge.implementation, check_properties=False))
    for action in with_shutdowns_let_go(config, (Reassign((3, 1)), ControlledShutdown(2), FenceBroker(3),
                                                 ElectPreferredLeader())):
        assert lockstep.step(action) is None, action
    p = lockstep.state.partition
    assert (p.replicas, p.leader, p.isr, p.adding, p.removing) == ((3, 1), 1, {1}, set(), set())


def test_a_copy_of_kafkas_controller_keeps_what_a_controlled_shutdown_waits_for():
    """A branch of the lockstep (``copy.deepcopy``: a new controller replays the
    records) takes the heartbeat manager's state the records do not hold: 1's
    controlled shutdown offset, and the offset 3 reported as it stopped uncleanly
    before applying 1's batch. Without them the copy would let 1 go at once."""
    import copy

    import kafka_bridge
    from model import BeginControlledShutdown, ControlledShutdown, FenceBroker, UncleanShutdown
    from sut import Cluster
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=lambda c: Cluster(c, components=kafka_bridge.CONTROLLER_COMPONENTS)))
    for action in (BeginControlledShutdown(1), ReplicateMetadata(2, 2), UncleanShutdown(3, False)):
        assert lockstep.step(action) is None, action
    original = lockstep.implementation
    branch = copy.deepcopy(original)
    awaited = lockstep.state.registration(1).controlled_shutdown_offset
    for cluster in (original, branch):
        assert cluster.observe().registrations[0].controlled_shutdown_offset == awaited
        assert not cluster.is_enabled(ControlledShutdown(1))
    assert branch.apply(FenceBroker(3)) is not None and branch.is_enabled(ControlledShutdown(1))
    assert not original.is_enabled(ControlledShutdown(1))


def test_a_copy_of_kafkas_controller_loads_the_snapshot_where_the_original_did():
    """A branch of a lockstep whose active controller loaded a snapshot written with
    the ELR off (no ELR, where the log holds [2]) loads it at the same record
    (``snapshotAt``), then replays the records after it: it holds what the original
    holds, not the log's replay; both refuse the leader's AlterPartition ahead of
    them, and a failover to a standby that replayed the log gives ELR [2] back."""
    import copy

    import kafka_bridge
    from model import FailOverController, FailOverFromSnapshot, FenceBroker
    from sut import Cluster
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=lambda c: Cluster(c, components=kafka_bridge.CONTROLLER_COMPONENTS),
                                   check_properties=False))
    for action in (FenceBroker(3), FenceBroker(2), UpdateElrFeature(False), FailOverFromSnapshot(),
                   UpdateElrFeature(True)):
        assert lockstep.step(action) is None, action
    original = lockstep.implementation
    branch = copy.deepcopy(original)
    for cluster in (original, branch):
        assert cluster.observe().partition == lockstep.state.partition
        assert cluster.observe().partition.elr == frozenset()
        assert cluster.controller.shim.snapshotAt() == original.controller.shim.snapshotAt() > 0
    assert branch.apply(FailOverController()) is not None
    assert branch.observe().partition.elr == {2} and original.observe().partition.elr == frozenset()


#: RF 3, MinISR 2: all replicas have the write; 3 and then 2 are fenced (ELR [2]),
#: the ELR feature is downgraded, 2 restarts uncleanly and lossily (with the feature
#: off it leaves only the ISR: it stays in the ELR) and, 1 fenced, is elected from it.
ELR_OFF_LOSSY_RESTART = (
    Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), SendFetch(3),
    ReceiveFetchRequest(3), ReceiveFetchResponse(4), SendFetch(2), ReceiveFetchRequest(5), ReceiveFetchResponse(6),
    SendFetch(3), ReceiveFetchRequest(7), ReceiveFetchResponse(8), FenceBroker(3), FenceBroker(2),
    UpdateElrFeature(False), UncleanShutdown(2, lossy=True), StartBroker(2), ReplicateMetadata(2, 6),
    UnfenceBroker(2), FenceBroker(1))


def _elr_feature_story() -> tuple:
    """RF 3, MinISR 3 (tests/kafka/test_rules.py's ELR_FEATURE_LEVEL story): ELR
    [2, 3], a downgrade, 2 unfenced and elected from the ELR when 1 is fenced, 2
    fenced (kept in the ISR), an upgrade; the brokers then apply every record."""
    from scenario import Scenario
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3, profile=KAFKA))
    for action in (FenceBroker(3), FenceBroker(2), UpdateElrFeature(False)):
        sc.do(action)
    sc.unfence(2)
    sc.fence(1)
    sc.fence(2)
    sc.do(UpdateElrFeature(True))
    sc.sync_all()
    return tuple(sc.trace)


@pytest.mark.parametrize("parts", ["controller", "builder"])
@pytest.mark.parametrize("story", ["feature-story", "lossy-restart"])
def test_the_elr_feature_level_reaches_kafkas_controller_and_builder(parts, story):
    """With eligible.leader.replicas.version switched at run time, Kafka's controller
    (its FeatureControlManager read by its own builder), or Kafka's builder alone
    handed the SUT controller's level (eligibleLeaderReplicasEnabled), agrees with
    the model at every step: the ELR emptied and the ISR kept by the changes made
    with the feature off, the election from an ELR kept from before the downgrade."""
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    trace = ELR_OFF_LOSSY_RESTART
    if story == "feature-story":
        trace = _elr_feature_story()
        config = attrs.evolve(config, min_isr=3)
    lockstep = LockStep(Subject.at(config, implementation=composed(parts), check_properties=False))
    for action in trace:
        verdict = lockstep.step(action)
        assert verdict is None, verdict.text
    replication = lockstep.implementation.controller.replication
    assert replication.elr_enabled == (story == "feature-story")   # the story ends upgraded
    leader = NO_LEADER if story == "feature-story" else 2
    p = replication.partition
    assert (p.leader, p.isr, p.elr) == (leader, frozenset({2}), frozenset())
