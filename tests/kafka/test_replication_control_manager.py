"""Apache Kafka's ``ReplicationControlManagerTest`` (metadata module, 4.3.1)
restated on the Kafka profile: the tests about one partition's leader, ISR, ELR
and LastKnownELR as brokers are fenced, unfenced and re-registered, the
controller's answers to AlterPartition, reassignments and unclean leader election.

Kafka's tests register and unfence the brokers and create a topic first; the
model's initial state is that point (leader ``assignment[0]``, every replica in
the ISR). Kafka's epochs start at 0, the model's at 1: epochs are compared
relatively. A topic of several partitions becomes one scenario per partition when
each partition's story stands alone. Kafka's test context leaves
``min.insync.replicas`` at 1 unless a test sets it, and the ELR feature off unless
a test turns it on: with MinISR 1 the ELR only matters once the ISR would be
empty, where the one test that needs Kafka's ELR-less controller uses the model's
``Variant.NO_ELR`` (the last ISR member stays in the ISR when fenced).

``handleBrokerShutdown(id, clean, ...)``, which Kafka's tests call directly, is
what the controller runs when a broker registers again (ClusterControlManager.
registerBroker): here a shutdown (controlled or unclean), the fencing, and a
``StartBroker``.
"""

from __future__ import annotations

import pytest

from model import (KAFKA, NO_LEADER, AlterMinIsr, AlterPartitionRequest, AlterPartitionResponse,
                   AlterUncleanLeaderElection, BeginControlledShutdown, CancelReassignment, Config,
                   ControlledShutdownRecord, ElectPreferredLeader, PartitionChangeRecord, ProposeIsrShrink, ProposeIsrShrinkMany, Reassign,
                   ReceiveAlterPartition, ReceiveAlterPartitionResponse, ReplicateMetadata, UncleanLeaderElection,
                   Variant, why_not_enabled)

from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testExcessiveNumberOfTopicsCannotBeCreated": "topic creation (partition-count limit)",
    "testExcessiveNumberOfTopicsCannotBeCreatedWithAssignments": "topic creation (partition-count limit)",
    "testCreateTopics": "topic creation",
    "testCreateTopicsWithMutationQuotaExceeded": "topic creation (controller mutation quota)",
    "testCreateTopicsISRInvariants": "topic creation with fenced and shutting-down brokers",
    "testCreateTopicsWithConfigs": "topic creation and configs",
    "testCreateTopicsWithValidateOnlyFlag": "topic creation (validate-only, mutation quota)",
    "testInvalidCreateTopicsWithValidateOnlyFlag": "topic creation (validate-only)",
    "testCreateTopicsWithPolicy": "topic creation (CreateTopicPolicy)",
    "testCreateTopicsWithPolicyUnexpectedException": "topic creation (CreateTopicPolicy)",
    "testCreateTopicWithCollisionChars": "topic names",
    "testValidateNewTopicNames": "topic names",
    "testTopicNameCollision": "topic names",
    "testEligibleLeaderReplicas_DeleteTopic": "topic deletion (the broker-to-ELR index after RemoveTopicRecord)",
    "testEligibleLeaderReplicas_EffectiveMinIsr": "configs (min.insync.replicas set above the replication factor: "
                                                  "AlterMinIsr stays within the target replicas; the cap it asserts, "
                                                  "which a cancelled move reaches, is "
                                                  "Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS)",
    "testAlterPartitionHandleUnknownTopicIdOrName": "an unknown topic id (one partition, always there)",
    "testDeleteTopics": "topic deletion",
    "testDeleteTopicsWithMutationQuotaExceeded": "topic deletion (controller mutation quota)",
    "testCreatePartitions": "partition creation (several partitions)",
    "testCreatePartitionsWithMutationQuotaExceeded": "partition creation (controller mutation quota)",
    "testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown": "partition creation",
    "testCreatePartitionsISRInvariants": "partition creation with fenced and shutting-down brokers",
    "testValidateGoodManualPartitionAssignments": "manual partition assignment validation (topic creation)",
    "testValidateBadManualPartitionAssignments": "manual partition assignment validation (topic creation)",
    "testAlterPartitionDisallowReplicationFactorChange": "the allowReplicationFactorChange flag of "
                                                         "AlterPartitionReassignments, and a new reassignment "
                                                         "replacing an ongoing one",
    "testAlterPartitionShouldRejectShuttingDownBrokers": "a follower in controlled shutdown that never led, still "
                                                         "in the ISR (Kafka's test context writes the registration "
                                                         "change itself; a broker that leads nothing is fenced at "
                                                         "once, SHUTDOWN_NOW)",
    "testManualPartitionAssignmentOnAllFencedBrokers": "topic creation on fenced brokers",
    "testCreatePartitionsFailsWithManualAssignmentWithAllFenced": "partition creation on fenced brokers",
    "testElectUncleanLeaders_WithoutElr": "the ElectLeaders admin request (election type UNCLEAN) with the ELR "
                                          "disabled (metadata version 3.6), and several partitions",
    "testBalancePartitionLeaders": "several partitions (the leader imbalance the controller balances is over "
                                   "a broker's partitions)",
    "testKRaftClusterDescriber": "directories and the replica placer's usable brokers",
    "testProcessExpiredBrokerHeartbeat": "the heartbeat manager's metadata offsets (time)",
    "testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas":
        "six brokers, preferred leader election, a new reassignment replacing an ongoing one, and one "
        "AlterPartition adding several replicas",
    "testDuplicateTopicIdReplay": "topic records (duplicate topic id)",
    "testHandleAssignReplicasToDirsFailsOnOlderMv": "directory assignment (metadata version)",
    "testHandleAssignReplicasToDirs": "directory assignment",
    "testHandleDirectoriesOffline": "directories (offline log directories)",
    "testHandleDirectoriesCordoned": "directories (cordoned log directories)",
}


# --------------------------------------------------------------------- helpers

def kafka_scenario(brokers: tuple[int, ...], assignment: tuple[int, ...], min_isr: int = 1,
                   **fields: object) -> Scenario:
    """A scenario under the Kafka profile (MinISR defaults to Kafka's 1)."""
    return Scenario(Config(brokers=brokers, assignment=assignment, min_isr=min_isr, profile=KAFKA, **fields))


def epochs(sc: Scenario) -> tuple[int, int]:
    """The controller's (leader epoch, partition epoch)."""
    return sc.partition.leader_epoch, sc.partition.partition_epoch


def assert_leader_isr_elr(sc: Scenario, leader: int, isr: set[int], elr: set[int] = frozenset(),
                          last_known_elr: set[int] = frozenset()) -> None:
    p = sc.partition
    got = (p.leader, set(p.isr), set(p.elr), set(p.last_known_elr))
    assert got == (leader, set(isr), set(elr), set(last_known_elr)), f"(leader, ISR, ELR, LastKnownELR) = {got}"


def assert_consistent_response(sc: Scenario, resp: AlterPartitionResponse) -> None:
    """Kafka's assertConsistentAlterPartitionResponse: a successful answer carries the
    controller's registration (the model's answer names no leader: it goes to it)."""
    p = sc.partition
    assert resp.error is None, resp
    assert (resp.isr, resp.leader_epoch, resp.partition_epoch) == (p.isr, p.leader_epoch, p.partition_epoch)


def new_partition_changes(sc: Scenario, since: int) -> list[PartitionChangeRecord]:
    """The partition change records the controller wrote after metadata offset ``since``."""
    return [r for r in sc.state.controller.metadata_log[since:] if isinstance(r, PartitionChangeRecord)]


def propose_in_flight(sc: Scenario, propose: object) -> AlterPartitionRequest:
    """The leader proposes an ISR change; the request stays in flight."""
    return sc.do_sending(propose, AlterPartitionRequest)  # type: ignore[return-value]


def deliver_alter_partition(sc: Scenario, req: AlterPartitionRequest) -> AlterPartitionResponse:
    """The controller handles the request; returns its answer (still in flight)."""
    return sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)  # type: ignore[return-value]


# ----------------------------------------------------------- fencing and ISR

def test_ReplicationControlManagerTest_testRemoveLeaderships():
    """ReplicationControlManagerTest.testRemoveLeaderships: broker 0 leads the
    partitions whose first replica it is; once fenced it leads none.

    One scenario per partition of Kafka's topic."""
    for assignment in ((0, 1, 2), (1, 2, 3), (2, 3, 0), (0, 2, 1)):
        sc = kafka_scenario((0, 1, 2, 3), assignment)
        assert (sc.partition.leader == 0) == (assignment[0] == 0)
        sc.fence(0)
        assert sc.partition.leader != 0 and 0 not in sc.partition.isr, assignment


def test_ReplicationControlManagerTest_testShrinkAndExpandIsr():
    """ReplicationControlManagerTest.testShrinkAndExpandIsr: leader 0 shrinks the ISR
    to [0,1], then expands it back to [0,1,2]; both AlterPartitions succeed and their
    answers carry the controller's new ISR and epochs."""
    sc = kafka_scenario((0, 1, 2), (0, 1, 2))
    assert sc.partition.leader == 0
    sc.lag_behind(0, 2)  # 1 caught up, 2 not once time passes
    assert_consistent_response(sc, sc.shrink(0, 2))
    assert sc.partition.isr == {0, 1}
    sc.deliver_fetch(2)  # follower 2 fetches in the current leader epoch, caught up
    assert_consistent_response(sc, sc.expand(0, 2))
    assert sc.partition.isr == {0, 1, 2}


def test_ReplicationControlManagerTest_testFenceMultipleBrokers():
    """ReplicationControlManagerTest.testFenceMultipleBrokers: fencing brokers 2 and 3
    leaves each partition its replicas, the ISR without them, and a leader that is
    neither. One scenario per partition of Kafka's topic."""
    expected = {(1, 2, 3): ({1}, 1), (2, 3, 4): ({4}, 4), (0, 2, 1): ({0, 1}, None)}
    for assignment, (isr, leader) in expected.items():
        sc = kafka_scenario((0, 1, 2, 3, 4), assignment)
        sc.fence(2)
        sc.fence(3)
        p = sc.partition
        assert (p.replicas, p.isr) == (assignment, isr)
        assert p.leader != 2 and (leader is None or p.leader == leader), assignment


def test_ReplicationControlManagerTest_testProcessBrokerHeartbeatInControlledShutdown():
    """ReplicationControlManagerTest.testProcessBrokerHeartbeatInControlledShutdown:
    leader 0's heartbeat asks to shut down; the controller writes the registration
    change putting 0 in controlled shutdown, then one partition change moving the
    leadership to 1 with ISR [1,2]. Broker 0 stays unfenced."""
    sc = kafka_scenario((0, 1, 2), (0, 1, 2))
    since = len(sc.state.controller.metadata_log)
    sc.do(BeginControlledShutdown(0))
    assert sc.state.controller.metadata_log[since:] == (
        ControlledShutdownRecord(0), PartitionChangeRecord(leader=1, isr=frozenset({1, 2})))
    reg = sc.state.registration(0)
    assert reg.in_controlled_shutdown and not reg.fenced


# ------------------------------------------------------------------------ ELR

def test_ReplicationControlManagerTest_testEligibleLeaderReplicas_ShrinkAndExpandIsr():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkAndExpandIsr: RF 3,
    MinISR 2: leader 0's one AlterPartition to ISR [0] (Rule.SHRINK_ALL_OUT_OF_SYNC:
    Kafka's leader removes every follower out of sync at once) succeeds and puts
    both 1 and 2 in the ELR; expanding back to [0,1] reaches MinISR and empties the
    ELR. The LastKnownELR stays empty."""
    sc = kafka_scenario((0, 1, 2), (0, 1, 2), min_isr=2)
    assert sc.partition.leader == 0
    assert_consistent_response(sc, sc.alter_isr(ProposeIsrShrinkMany(0, (1, 2))))
    assert_leader_isr_elr(sc, 0, {0}, elr={1, 2})
    sc.deliver_fetch(1)  # follower 1 fetches in the current leader epoch, caught up
    assert_consistent_response(sc, sc.expand(0, 1))
    assert_leader_isr_elr(sc, 0, {0, 1}, elr=set())


def test_ReplicationControlManagerTest_testEligibleLeaderReplicas_ShrinkToEmptyIsr():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkToEmptyIsr: RF 3,
    MinISR 3: fencing 1 and 2 leaves ISR [0], ELR [1,2]; after leader 0's clean
    shutdown the ISR is empty, the ELR [0,1,2] and the LastKnownELR [0]."""
    sc = kafka_scenario((0, 1, 2), (0, 1, 2), min_isr=3)
    sc.fence(1)
    sc.fence(2)
    assert_leader_isr_elr(sc, 0, {0}, elr={1, 2})
    sc.restart(0, clean=True, unfence=False)  # controlled shutdown, then a clean registration
    assert_leader_isr_elr(sc, NO_LEADER, set(), elr={0, 1, 2}, last_known_elr={0})


def test_ReplicationControlManagerTest_testEligibleLeaderReplicas_BrokerFence():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_BrokerFence: RF 4,
    MinISR 3. Fencing 2 then 3 puts only 3 in the ELR (the ISR [0,1,3] still had
    MinISR members when 2 left); fencing 1 too gives ELR [1,3]; unfencing every
    broker leaves the ELR as it is (leader 0 stays). The LastKnownELR stays empty."""
    sc = kafka_scenario((0, 1, 2, 3), (0, 1, 2, 3), min_isr=3)
    assert sc.partition.leader == 0
    sc.fence(2)
    sc.fence(3)
    assert_leader_isr_elr(sc, 0, {0, 1}, elr={3})
    sc.fence(1)
    assert_leader_isr_elr(sc, 0, {0}, elr={1, 3})
    for b in (1, 2, 3):
        sc.unfence(b)
    assert_leader_isr_elr(sc, 0, {0}, elr={1, 3})


def test_ReplicationControlManagerTest_testEligibleLeaderReplicas_CleanElection():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection: RF 4,
    MinISR 3. Fencing 1, 2, 3 gives ISR [0], ELR [2,3]. With 2 and 3 unfenced again,
    fencing leader 0 elects ELR member 2 (a clean election): leader 2, ISR [2],
    ELR [0,3], LastKnownELR empty."""
    sc = kafka_scenario((0, 1, 2, 3), (0, 1, 2, 3), min_isr=3)
    for b in (1, 2, 3):
        sc.fence(b)
    assert_leader_isr_elr(sc, 0, {0}, elr={2, 3})
    sc.unfence(2)
    sc.unfence(3)  # Kafka's fenceBrokers({0, 1}) keeps every other broker heartbeating
    sc.fence(0)
    assert_leader_isr_elr(sc, 2, {2}, elr={0, 3})


def test_ReplicationControlManagerTest_testEligibleLeaderReplicas_UncleanShutdown():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown: RF 4,
    MinISR 3, fencing 1, 2, 3 gives ISR [0], ELR [2,3]. ELR member 3 comes back from
    an unclean shutdown: it leaves the ELR ([2]). Then leader 0, the last ISR member,
    does: ELR [2], LastKnownELR [0] (the last known leader).

    Kafka's test runs the registration clean-up on leader 0 while it is unfenced; a
    new incarnation can register only once the old session is gone, so here 0 is
    fenced first (ELR [0,2] for a moment) and its registration takes it out again."""
    sc = kafka_scenario((0, 1, 2, 3), (0, 1, 2, 3), min_isr=3)
    for b in (1, 2, 3):
        sc.fence(b)
    assert_leader_isr_elr(sc, 0, {0}, elr={2, 3})
    sc.restart(3, clean=False, unfence=False)
    assert_leader_isr_elr(sc, 0, {0}, elr={2})
    sc.restart(0, clean=False, unfence=False)
    assert_leader_isr_elr(sc, NO_LEADER, set(), elr={2}, last_known_elr={0})


# --------------------------------------------------------------- AlterPartition

def test_ReplicationControlManagerTest_testInvalidAlterPartitionRequests():
    """ReplicationControlManagerTest.testInvalidAlterPartitionRequests, its one
    expressible case: an AlterPartition carrying a stale broker epoch is refused
    (Kafka: StaleBrokerEpochException): leader 0's proposal is still in flight when 0
    restarts with a new broker epoch.

    Not expressible: a request from a replica that is not the leader in the current
    leader epoch (INVALID_REQUEST; any leader change bumps the leader epoch), leader
    or partition epochs ahead of the controller's (NOT_CONTROLLER), an ISR naming a
    non-replica or leaving the leader out (leaders propose one follower at a time).
    Its two leader recovery cases (requests marked RECOVERING, which no leader
    sends) are handed to the controllers directly in
    ``tests/sut/test_leader_recovery_validation.py``, Kafka's included."""
    sc = kafka_scenario((0, 1, 2), (0, 1, 2))
    sc.lag_behind(0, 1)
    sc.lag_out(0, 1)  # 1 out of sync, 2 caught up
    req = propose_in_flight(sc, ProposeIsrShrink(0, 1))
    sc.restart(0)
    assert sc.state.registration(0).broker_epoch != req.broker_epoch
    assert deliver_alter_partition(sc, req).error == "STALE_BROKER_EPOCH"


def test_ReplicationControlManagerTest_testAlterPartitionShouldRejectFencedBrokers():
    """ReplicationControlManagerTest.testAlterPartitionShouldRejectFencedBrokers:
    replicas [1,2,3,4]; fencing 3 gives ISR [1,2,4] (partition epoch +1, leader epoch
    kept). Leader 1 proposes 3 back: INELIGIBLE_REPLICA while 3 is fenced; once 3 is
    unfenced the same proposal succeeds: ISR [1,2,3,4], leader epoch kept, partition
    epoch +1.

    Leader 1 proposes 3, on 3's fetch, after applying the partition change but
    before the fence record that follows it (Kafka writes them in that order), so
    it does not know 3 is fenced."""
    sc = kafka_scenario((0, 1, 2, 3, 4), (1, 2, 3, 4))
    sc.deliver_fetch(3)
    le, pe = epochs(sc)
    sc.fence(3)
    assert (sc.partition.replicas, sc.partition.isr, sc.partition.leader) == ((1, 2, 3, 4), {1, 2, 4}, 1)
    assert epochs(sc) == (le, pe + 1)
    sc.do(ReplicateMetadata(1, 1))
    req = sc.fetch_proposing(3)
    assert req.isr == {1, 2, 3, 4}
    resp = deliver_alter_partition(sc, req)
    assert resp.error == "INELIGIBLE_REPLICA"
    sc.do(ReceiveAlterPartitionResponse(resp.id))
    sc.unfence(3)
    sc.sync_metadata(1)
    resp = sc.expand(1, 3)
    assert (resp.error, resp.isr, resp.leader_epoch, resp.partition_epoch) == (None, {1, 2, 3, 4}, le, pe + 2)


def test_ReplicationControlManagerTest_testAlterPartitionShouldRejectBrokersWithStaleEpoch():
    """ReplicationControlManagerTest.testAlterPartitionShouldRejectBrokersWithStaleEpoch
    (AlterPartition version 3 and later, which carry the members' broker epochs):
    replicas [1,2,3,4], ISR shrunk to [1,2,3]. Leader 1 proposes 4 back on its
    fetch; before the
    request arrives broker 4 fails silently, registers again and is unfenced: the
    late request names 4's old broker epoch and is refused with INELIGIBLE_REPLICA.
    (Versions before 3 carry no broker epochs: not modelled.)"""
    sc = kafka_scenario((0, 1, 2, 3, 4), (1, 2, 3, 4))
    sc.lag_behind(1, 4)  # 2 and 3 caught up, 4 not once time passes
    sc.shrink(1, 4)
    assert sc.partition.isr == {1, 2, 3}
    req = sc.fetch_proposing(4)
    sc.restart(4, clean=False)
    assert sc.state.registration(4).broker_epoch not in (None, dict(req.added_broker_epochs)[4])
    assert not sc.state.registration(4).fenced
    assert deliver_alter_partition(sc, req).error == "INELIGIBLE_REPLICA"


# --------------------------------------------------------------- reassignment

def _reassigning_3_2_1_to_0_2_1() -> Scenario:
    """Kafka's partition foo-1 of testReassignPartitions: [3,2,1] reassigned to [0,2,1]."""
    sc = kafka_scenario((0, 1, 2, 3), (3, 2, 1))
    sc.do(Reassign((0, 2, 1)))
    return sc


def test_ReplicationControlManagerTest_testReassignPartitions():
    """ReplicationControlManagerTest.testReassignPartitions, partition foo-1: [3,2,1]
    reassigned to [0,2,1] lists replicas [0,2,1,3], adding [0], removing [3].
    Cancelling writes one change: replicas [2,1,3] (the current order without the
    adding replica), leader 3 again (a leader epoch bump), no adding or removing
    replicas. Not cancelled instead, leader 3's AlterPartition adding 0 to the ISR
    completes the reassignment, which moves the leadership: NEW_LEADER_ELECTED, and
    no reassignment remains.

    Not restated: the other partitions (a reassignment to the same replicas in
    another order, an unknown partition, a topic without reassignment: cancelling
    with nothing in progress is refused)."""
    sc = _reassigning_3_2_1_to_0_2_1()
    p = sc.partition
    assert (p.replicas, p.adding, p.removing) == ((0, 2, 1, 3), {0}, {3})

    since = len(sc.state.controller.metadata_log)
    sc.do(CancelReassignment())
    assert new_partition_changes(sc, since) == [
        PartitionChangeRecord(leader=3, replicas=(2, 1, 3), adding=frozenset(), removing=frozenset())]
    assert why_not_enabled(sc.state, CancelReassignment()) is not None  # NO_REASSIGNMENT_IN_PROGRESS

    sc = _reassigning_3_2_1_to_0_2_1()
    sc.sync_all()
    sc.deliver_fetch(0)
    resp = sc.expand(3, 0)
    assert resp.error == "NEW_LEADER_ELECTED"
    assert not sc.partition.reassigning and sc.partition.replicas == (0, 2, 1)


def test_ReplicationControlManagerTest_testDisallowReplicationFactorChangeNoEffectWhenCancelAlterPartition():
    """ReplicationControlManagerTest.testDisallowReplicationFactorChangeNoEffectWhenCancelAlterPartition:
    [0,1,2] reassigned to [1,2,3] lists replicas [1,2,3,0], adding [3], removing [0];
    cancelling it succeeds and leaves no reassignment. (Kafka sends the cancellation
    with allowReplicationFactorChange=false, a flag the model lacks and which, the
    test shows, a cancellation ignores.)"""
    sc = kafka_scenario((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((1, 2, 3)))
    p = sc.partition
    assert (p.replicas, p.adding, p.removing) == ((1, 2, 3, 0), {3}, {0})
    sc.do(CancelReassignment())
    assert not sc.partition.reassigning


def test_ReplicationControlManagerTest_testCancelReassignPartitions():
    """ReplicationControlManagerTest.testCancelReassignPartitions, partitions foo-0 and
    bar-0, after broker 3 is fenced:

    foo-0 [1,2,3,4] (ISR [1,2,4]) reassigned to [1,2,4] completes at once: replicas
    and ISR [1,2,4], leader 1, leader and partition epochs +1; cancelling it then
    is refused (NO_REASSIGNMENT_IN_PROGRESS).

    bar-0 [4,3,2] (ISR [4,2]) reassigned to [1,2,3,4,0]: replicas [1,2,3,4,0], adding
    [0,1], leader 4, leader epoch kept, partition epoch +1. Cancelling writes one
    change (leader 4 again, replicas [2,3,4], no adding replicas): replicas [2,3,4],
    ISR [4,2], leader 4, leader and partition epochs +1.

    Not restated: the AlterPartition Kafka sends for bar-0 (adding two replicas at
    once; its result is not applied), foo-1 (the same replicas in another order),
    and the invalid targets of foo-2 and foo-3."""
    sc = kafka_scenario((0, 1, 2, 3, 4), (1, 2, 3, 4))
    sc.fence(3)
    assert (sc.partition.isr, sc.partition.leader) == ({1, 2, 4}, 1)
    le, pe = epochs(sc)
    sc.do(Reassign((1, 2, 4)))
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.reassigning) == ((1, 2, 4), {1, 2, 4}, 1, False)
    assert epochs(sc) == (le + 1, pe + 1)
    assert why_not_enabled(sc.state, CancelReassignment()) is not None

    sc = kafka_scenario((0, 1, 2, 3, 4), (4, 3, 2))
    sc.fence(3)
    assert (sc.partition.isr, sc.partition.leader) == ({4, 2}, 4)
    le, pe = epochs(sc)
    sc.do(Reassign((1, 2, 3, 4, 0)))
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing) == ((1, 2, 3, 4, 0), {4, 2}, 4, {0, 1}, set())
    assert epochs(sc) == (le, pe + 1)
    since = len(sc.state.controller.metadata_log)
    sc.do(CancelReassignment())
    assert new_partition_changes(sc, since) == [
        PartitionChangeRecord(leader=4, replicas=(2, 3, 4), adding=frozenset())]
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.reassigning) == ((2, 3, 4), {4, 2}, 4, False)
    assert epochs(sc) == (le + 1, pe + 2)


# ---------------------------------------------------------- unclean election

@pytest.mark.parametrize("unclean_config", ["none", "static"])
def test_ReplicationControlManagerTest_testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions(
        unclean_config: str):
    """ReplicationControlManagerTest.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions,
    ELR disabled (Variant.NO_ELR): with every broker fenced each partition keeps ISR
    [4] and no leader. Unfencing 2: with unclean.leader.election.enable set
    statically the unfencing itself elects 2 uncleanly (ISR [2]) where 2 is a
    replica ([1,2,4], [0,2,4]), and [1,3,4] stays leaderless; without it nothing
    changes. Either way the periodic unclean election then has nothing to do.

    Not restated: the config set at run time (cluster, node or topic level) before
    the periodic election. One scenario per partition of Kafka's topic."""
    static = unclean_config == "static"
    for assignment in ((1, 2, 4), (1, 3, 4), (0, 2, 4)):
        sc = kafka_scenario((0, 1, 2, 3, 4), assignment, unclean_leader_election=static,
                            variants={Variant.NO_ELR})
        assert sc.partition.leader != NO_LEADER
        for b in (0, 1, 2, 3, 4):
            sc.fence(b)
        assert (sc.partition.isr, sc.partition.leader) == ({4}, NO_LEADER)
        sc.unfence(2)
        if static and 2 in assignment:
            assert (sc.partition.isr, sc.partition.leader) == ({2}, 2), assignment
        else:
            assert (sc.partition.isr, sc.partition.leader) == ({4}, NO_LEADER), assignment
        assert why_not_enabled(sc.state, UncleanLeaderElection()) is not None


@pytest.mark.parametrize("elr", [False, True], ids=["without ELR", "with ELR"])
def test_ReplicationControlManagerTest_testPreferredElectionDoesNotTriggerUncleanElection(elr: bool):
    """ReplicationControlManagerTest.testPreferredElectionDoesNotTriggerUncleanElection:
    replicas [1,2,3]; 2 and 3 fenced, then 1: no leader; 2 unfenced; unclean leader
    election switched on at run time. ElectLeaders(PREFERRED) elects nobody (Kafka:
    PREFERRED_LEADER_NOT_AVAILABLE, no record): the preferred replica 1 is fenced,
    and a preferred election is never unclean, although the unclean election would
    elect 2 now. Kafka's test context has the ELR off (Variant.NO_ELR: ISR [1]); with
    it on (the profile's), 1 is in the ELR and the ISR is empty, and the scenario
    also runs on Kafka's own code."""
    sc = kafka_scenario((1, 2, 3, 4), (1, 2, 3), variants=frozenset() if elr else {Variant.NO_ELR})
    for b in (2, 3, 1):
        sc.fence(b)
    sc.unfence(2)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == \
        ((NO_LEADER, set(), {1}) if elr else (NO_LEADER, {1}, set()))
    sc.do(AlterUncleanLeaderElection(True))
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    assert why_not_enabled(sc.state, UncleanLeaderElection()) is None


def test_ReplicationControlManagerTest_testElectPreferredLeaders():
    """ReplicationControlManagerTest.testElectPreferredLeaders, one partition at a time.
    foo-0 [1,2,3] with its preferred replica 1 in controlled shutdown (registered and
    unfenced; here 1 led and asked to shut down, which moved the leadership to 2):
    PREFERRED_LEADER_NOT_AVAILABLE; once 1 has registered again, is unfenced and back
    in the ISR through 2's AlterPartition, the election writes one record holding
    only leader 1. foo-1 [2,3,4], led by its preferred replica: ELECTION_NOT_NEEDED.
    foo-2 [0,2,1] with 0 fenced: 2 leads, PREFERRED_LEADER_NOT_AVAILABLE and no
    record; once 0 is registered, unfenced and back in the ISR, leader 0 alone."""
    sc = kafka_scenario((0, 1, 2, 3, 4), (1, 2, 3))
    sc.do(BeginControlledShutdown(1))
    assert_leader_isr_elr(sc, 2, {2, 3})
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    _preferred_back(sc, 1, 2)
    sc = kafka_scenario((0, 1, 2, 3, 4), (2, 3, 4))
    assert sc.partition.leader == 2
    assert "ELECTION_NOT_NEEDED" in why_not_enabled(sc.state, ElectPreferredLeader())
    sc = kafka_scenario((0, 1, 2, 3, 4), (0, 2, 1))
    sc.fence(0)
    assert_leader_isr_elr(sc, 2, {1, 2})
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    _preferred_back(sc, 0, 2)


def _preferred_back(sc: Scenario, preferred: int, leader: int) -> None:
    """``preferred`` registers again and rejoins the ISR through ``leader``'s
    AlterPartition; the preferred election then writes one record, its leadership."""
    sc.restart(preferred)
    sc.sync_all()
    sc.deliver_fetch(preferred)
    sc.expand(leader, preferred)
    sc.sync_all()
    isr = set(sc.partition.isr)
    assert preferred in isr and sc.partition.leader == leader
    since = len(sc.state.controller.metadata_log)
    sc.do(ElectPreferredLeader())
    assert new_partition_changes(sc, since) == [PartitionChangeRecord(leader=preferred)]
    assert_leader_isr_elr(sc, preferred, isr)


# ------------------------------------------------------------ configuration

def test_ReplicationControlManagerTest_testElrsRemovedOnMinIsrUpdate():
    """ReplicationControlManagerTest.testElrsRemovedOnMinIsrUpdate (topic level,
    IncrementalAlterConfigs): MinISR 2, replicas [1,2,4]; fencing 4 and then the
    leader 1 leaves ELR [1]; setting the topic's min.insync.replicas to 1 empties it
    (a ClearElrRecord). Kafka's second topic, which a topic-level change leaves
    alone, the cluster-level change and the legacy AlterConfigs are not restated
    (one topic, one partition, topic-level IncrementalAlterConfigs only)."""
    sc = kafka_scenario((1, 2, 3, 4), (1, 2, 4), min_isr=2)
    sc.fence(4)
    sc.fence(1)
    assert sc.partition.elr == {1}
    sc.do(AlterMinIsr(1))
    assert sc.partition.elr == set() and sc.state.min_isr == 1


def test_ReplicationControlManagerTest_testElrsRemovedShouldNotBumpPartitionEpochIfNoChange():
    """ReplicationControlManagerTest.testElrsRemovedShouldNotBumpPartitionEpochIfNoChange:
    a ClearElrRecord leaves the partition epoch of a partition without an ELR as it
    was; here written by a MinISR change, as Kafka writes it (finding 6 is what this
    lets a leader still on the old MinISR do)."""
    sc = kafka_scenario((1, 2, 3, 4), (1, 2, 4), min_isr=2)
    before, offset = epochs(sc), len(sc.state.controller.metadata_log)
    sc.do(AlterMinIsr(1))
    assert epochs(sc) == before and not new_partition_changes(sc, offset)
