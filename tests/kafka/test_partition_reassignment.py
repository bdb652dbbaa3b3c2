"""Apache Kafka's ``PartitionReassignmentReplicasTest`` and
``PartitionReassignmentRevertTest`` (metadata module, 4.3.1) restated on the
Kafka profile.

Kafka's tests call ``PartitionReassignmentReplicas`` (the replica set, adding and
removing of a move, and whether an ISR completes it) and
``PartitionReassignmentRevert`` (the replicas and ISR a cancellation goes back
to) on hand-built assignments. Here the move is an AlterPartitionReassignments
(``Reassign``), the ISR it is checked against is reached by fencings and
AlterPartitions, completion shows in the registration (replicas = target, nothing
adding or removing) and a revert is a ``CancelReassignment``; a revert that
needs an unclean election shows as one reported.

During a move Kafka lists the target first and then the removing replicas in id
order, so a registration with the removing replicas elsewhere (the revert
fixtures' [3,2,1] with removing [2]) is not reachable: the tests use the order a
reassignment produces, and a revert keeps that order (minus the adding replicas).
"""

from __future__ import annotations

from model import KAFKA, CancelReassignment, Config, Reassign, why_not_enabled

from scenario import Scenario

_SIX = "six brokers (0..5 or 0..3, 7, 9); the model has at most five"

NOT_EXPRESSIBLE = {
    "testAdditionsAndRemovals": _SIX,
    "testDoesNotCompleteReassignment": _SIX,
    "testCanCompleteReassignmentAllNewReplicas": _SIX,
    "testCanCompleteReassignmentWhenReplicationFactorIncreasesAndMissingAnExistingTargetReplicaFromIsr": _SIX,
    "testDoesNotCompleteReassignmentWhenReplicationFactorIncreasesAndMissingAnAddingReplicaFromIsr": _SIX,
    "testDoesNotCompleteReassignmentWhenReplicationFactorDecreasesAndMissingAnExistingTargetReplicaFromIsr": _SIX,
    "testDoesNotCompleteReassignmentWhenReplicationFactorDecreasesAndMissingAnAddingReplicasFromISR": _SIX,
}


# ------------------------------------------------------------------- helpers

def cluster(brokers: tuple[int, ...], assignment: tuple[int, ...], *, unclean: bool = False) -> Scenario:
    """Kafka 4.4.0's rules, MinISR 1 (the moves here are about replica sets, not
    the ELR); ``unclean``: unclean.leader.election.enable."""
    config = Config(brokers=brokers, assignment=assignment, min_isr=1, unclean_leader_election=unclean,
                    profile=KAFKA)
    return Scenario(config)


def join_isr(sc: Scenario, follower: int) -> None:
    """The current leader adds ``follower`` to the ISR once it has caught up."""
    sc.sync_all()
    sc.deliver_fetch(follower)
    sc.expand(sc.partition.leader, follower)


def leave_isr(sc: Scenario, *followers: int) -> None:
    """The current leader shrinks ``followers`` out of the ISR, one at a time, the
    others caught up (``lag_behind``)."""
    for f in followers:
        sc.sync_all()
        sc.lag_behind(sc.partition.leader, f)
        sc.shrink(sc.partition.leader, f)


def move(sc: Scenario) -> tuple:
    """(replicas, ISR, adding, removing) of the registration."""
    p = sc.partition
    return p.replicas, set(p.isr), set(p.adding), set(p.removing)


def unclean_elections(sc: Scenario) -> list[int]:
    return [e.leader for e in sc.state.history.unclean_elections]


def adding_4_5_led_by_4(target: tuple[int, ...]) -> Scenario:
    """Replicas [3,2,1] on brokers 1..5 moving to ``target`` (which adds 4 and 5):
    4 joins the ISR, leader 3 is fenced and 4, first in the replica set, leads; it
    shrinks 1 out: ISR [2,4]."""
    sc = cluster((1, 2, 3, 4, 5), (3, 2, 1), unclean=True)
    sc.do(Reassign(target))
    join_isr(sc, 4)
    sc.fence(3)
    assert sc.partition.leader == 4
    leave_isr(sc, 1)
    return sc


# --------------------------------------------------- PartitionReassignmentReplicasTest

def test_PartitionReassignmentReplicasTest_testNoneAddedOrRemoved():
    """PartitionReassignmentReplicasTest.testNoneAddedOrRemoved: [3,2,1] -> [3,2,1]
    adds and removes nothing and keeps the replicas. Kafka's controller then writes
    no record; the model refuses the move: either way the registration stays."""
    sc = cluster((1, 2, 3), (3, 2, 1))
    before = sc.partition
    assert why_not_enabled(sc.state, Reassign((3, 2, 1))) is not None
    assert sc.partition == before and not before.reassigning


def test_PartitionReassignmentReplicasTest_testAdditions():
    """PartitionReassignmentReplicasTest.testAdditions: [3,2,1] -> [3,6,2,1,5] adds
    [5,6], removes nothing, and the replicas are the target."""
    sc = cluster((1, 2, 3, 5, 6), (3, 2, 1))
    sc.do(Reassign((3, 6, 2, 1, 5)))
    assert move(sc) == ((3, 6, 2, 1, 5), {1, 2, 3}, {5, 6}, set())


def test_PartitionReassignmentReplicasTest_testRemovals():
    """PartitionReassignmentReplicasTest.testRemovals: [3,2,1,0] -> [3,1] removes
    [0,2] and lists the replicas [3,1,0,2] (target, then removing). 1 is out of the
    ISR so the shrinking move cannot complete at once and the list shows."""
    sc = cluster((0, 1, 2, 3), (3, 2, 1, 0))
    leave_isr(sc, 1)
    sc.do(Reassign((3, 1)))
    assert move(sc) == ((3, 1, 0, 2), {0, 2, 3}, set(), {0, 2})


def test_PartitionReassignmentReplicasTest_testRearrangement():
    """PartitionReassignmentReplicasTest.testRearrangement: [3,2,1,0] -> [0,1,3,2]
    adds and removes nothing; the replicas become [0,1,3,2]."""
    sc = cluster((0, 1, 2, 3), (3, 2, 1, 0))
    sc.do(Reassign((0, 1, 3, 2)))
    assert move(sc) == ((0, 1, 3, 2), {0, 1, 2, 3}, set(), set())


def test_PartitionReassignmentReplicasTest_testDoesNotCompleteReassignmentIfNoneOngoing():
    """PartitionReassignmentReplicasTest.testDoesNotCompleteReassignmentIfNoneOngoing:
    with no move under way an ISR [0,1,2] completes nothing: 2 leaving and rejoining
    the ISR leaves the replicas [0,1,2] and nothing adding or removing."""
    sc = cluster((0, 1, 2), (0, 1, 2))
    leave_isr(sc, 2)
    join_isr(sc, 2)
    assert move(sc) == ((0, 1, 2), {0, 1, 2}, set(), set())
    assert not sc.partition.reassigning


def test_PartitionReassignmentReplicasTest_testCanCompleteReassignmentSomeNewReplicas():
    """PartitionReassignmentReplicasTest.testCanCompleteReassignmentSomeNewReplicas:
    [0,1,2] -> [0,1,3] completes once the ISR is [0,1,2,3]: ISR [0,1,3], replicas
    [0,1,3]."""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3)))
    join_isr(sc, 3)
    assert move(sc) == ((0, 1, 3), {0, 1, 3}, set(), set())


def test_PartitionReassignmentReplicasTest_testIsReassignmentInProgress():
    """PartitionReassignmentReplicasTest.testIsReassignmentInProgress: a registration
    with adding and removing, with removing only, with adding only is reassigning;
    one with neither is not."""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    assert not sc.partition.reassigning
    sc.do(Reassign((0, 1, 3)))
    assert move(sc)[2:] == ({3}, {2}) and sc.partition.reassigning
    # removing only: [0,1,3,2] -> [0,1,3] while 1 is out of the ISR (so it cannot complete)
    sc = cluster((0, 1, 2, 3), (0, 1, 3, 2))
    leave_isr(sc, 1)
    sc.do(Reassign((0, 1, 3)))
    assert move(sc)[2:] == (set(), {2}) and sc.partition.reassigning
    # adding only
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3, 2)))
    assert move(sc) == ((0, 1, 3, 2), {0, 1, 2}, {3}, set()) and sc.partition.reassigning


def test_PartitionReassignmentReplicasTest_testCanCompleteReassignmentIfIsrDoesNotHaveAnExistingTargetReplica():
    """PartitionReassignmentReplicasTest.testCanCompleteReassignmentIfIsrDoesNotHaveAnExistingTargetReplica:
    [0,1,2] -> [0,1,3] with 1 out of sync completes on ISR [0,2,3]: ISR [0,3],
    replicas [0,1,3]."""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3)))
    leave_isr(sc, 1)
    join_isr(sc, 3)
    assert move(sc) == ((0, 1, 3), {0, 3}, set(), set())


def test_PartitionReassignmentReplicasTest_testCanCompleteReassignmentIfIsrDoesNotHaveBothExistingTargetReplica():
    """PartitionReassignmentReplicasTest.testCanCompleteReassignmentIfIsrDoesNotHaveBothExistingTargetReplica:
    [0,1,2] -> [0,1,3] with 0 and 1 out of sync completes on ISR [2,3]: ISR [3],
    replicas [0,1,3]. (0 and 1 were fenced, 2 led, and they came back.)"""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3)))
    sc.fence(0)
    sc.fence(1)
    sc.restart(0)
    sc.restart(1)
    assert (sc.partition.leader, sc.partition.isr) == (2, {2})
    join_isr(sc, 3)
    assert move(sc) == ((0, 1, 3), {3}, set(), set())


def test_PartitionReassignmentReplicasTest_testDoesNotCompleteReassignmentIfIsrDoesNotHaveAnAddingTargetReplica():
    """PartitionReassignmentReplicasTest.testDoesNotCompleteReassignmentIfIsrDoesNotHaveAnAddingTargetReplica:
    [0,1,2] -> [0,1,3] does not complete on ISR [0,1,2] (3 not in sync)."""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3)))
    leave_isr(sc, 2)
    join_isr(sc, 2)
    assert move(sc) == ((0, 1, 3, 2), {0, 1, 2}, {3}, {2})


def test_PartitionReassignmentReplicasTest_testOriginalReplicas():
    """PartitionReassignmentReplicasTest.testOriginalReplicas: the original replicas of
    [0,1,2] -> [0,1,3] are [0,1,2]: what cancelling the move goes back to."""
    sc = cluster((0, 1, 2, 3), (0, 1, 2))
    sc.do(Reassign((0, 1, 3)))
    sc.do(CancelReassignment())
    assert move(sc) == ((0, 1, 2), {0, 1, 2}, set(), set())


# ---------------------------------------------------- PartitionReassignmentRevertTest

def test_PartitionReassignmentRevertTest_testNoneAddedOrRemoved():
    """PartitionReassignmentRevertTest.testNoneAddedOrRemoved: with nothing adding or
    removing the revert is the registration itself (replicas [3,2,1], ISR [3,2],
    clean). The controller refuses to cancel when no move is under way
    (NO_REASSIGNMENT_IN_PROGRESS); the registration stays."""
    sc = cluster((1, 2, 3), (3, 2, 1))
    leave_isr(sc, 1)
    assert why_not_enabled(sc.state, CancelReassignment()) is not None
    assert move(sc) == ((3, 2, 1), {2, 3}, set(), set())


def test_PartitionReassignmentRevertTest_testSomeRemoving():
    """PartitionReassignmentRevertTest.testSomeRemoving: reverting a move that only
    removes keeps every replica, in the registration's order, and the ISR [3,2];
    clean. ([3,2,1] -> [3,1] with 1 out of sync: replicas [3,1,2], removing [2].)"""
    sc = cluster((1, 2, 3), (3, 2, 1))
    leave_isr(sc, 1)
    sc.do(Reassign((3, 1)))
    assert move(sc) == ((3, 1, 2), {2, 3}, set(), {2})
    sc.do(CancelReassignment())
    assert move(sc) == ((3, 1, 2), {2, 3}, set(), set())
    assert unclean_elections(sc) == []


def test_PartitionReassignmentRevertTest_testSomeAdding():
    """PartitionReassignmentRevertTest.testSomeAdding: reverting [3,2,1] ->
    [4,5,3,2,1] with ISR [4,2] (4 joined; leader 3 fenced) goes back to replicas
    [3,2,1] and ISR [2]; clean."""
    sc = adding_4_5_led_by_4((4, 5, 3, 2, 1))
    assert move(sc) == ((4, 5, 3, 2, 1), {2, 4}, {4, 5}, set())
    sc.do(CancelReassignment())
    assert move(sc) == ((3, 2, 1), {2}, set(), set())
    assert unclean_elections(sc) == []


def test_PartitionReassignmentRevertTest_testSomeRemovingAndAdding():
    """PartitionReassignmentRevertTest.testSomeRemovingAndAdding: reverting [3,2,1] ->
    [4,5,3,1] (adding [4,5], removing [2]) with ISR [4,2] goes back to the original
    replicas, ISR [2]; clean. The replicas keep the move's order: [3,1,2] (Kafka's
    fixture lists them [3,2,1])."""
    sc = adding_4_5_led_by_4((4, 5, 3, 1))
    assert move(sc) == ((4, 5, 3, 1, 2), {2, 4}, {4, 5}, {2})
    sc.do(CancelReassignment())
    assert move(sc) == ((3, 1, 2), {2}, set(), set())
    assert unclean_elections(sc) == []


def test_PartitionReassignmentRevertTest_testIsrSpecialCase():
    """PartitionReassignmentRevertTest.testIsrSpecialCase: when every ISR member is an
    adding replica (ISR [4]), the revert takes the first original replica, 3, as the
    ISR: an unclean election (allowed with unclean.leader.election.enable)."""
    sc = adding_4_5_led_by_4((4, 5, 3, 1))
    sc.restart(3)
    leave_isr(sc, 2)
    assert move(sc) == ((4, 5, 3, 1, 2), {4}, {4, 5}, {2})
    sc.do(CancelReassignment())
    assert move(sc) == ((3, 1, 2), {3}, set(), set())
    assert sc.partition.leader == 3
    assert unclean_elections(sc) == [3]
