"""Apache Kafka's ``PartitionChangeBuilderTest`` (metadata module, 4.3.1) restated
on the Kafka profile.

Kafka's tests hand the builder a ``PartitionRegistration`` and an
``isAcceptableLeader`` predicate; here the registration is reached through
public actions (fencing, restarts, ISR shrinks and expansions, reassignments)
and the builder runs as the controller runs it: on a fencing, an unfencing, a
registration, an AlterPartition or a reassignment. A broker Kafka's predicate
refuses is a fenced one. Kafka's fixtures:

* FOO: replicas [2,1,3], ISR [2,1,3], leader 1 (MinISR 2);
* BAR: replicas [1,2,3,4], ISR [1,2,3], adding [4], removing [1], leader 1. A
  reassignment [1,2,3] -> [2,3,4] lists the target first (Kafka's own
  ``PartitionReassignmentReplicas``), so the reachable BAR is [2,3,4,1];
* BAZ: replicas [2,1,3], ISR [1,3], leader 3.

Tests parameterized over the PartitionChangeRecord version run as version 2 (the
ELR enabled, Kafka 4.4.0's default). Epochs are compared relatively (the model
starts at 1, Kafka's fixtures at 100).
The controller never calls ``setUseLastKnownLeaderInBalancedRecovery(false)``,
so the LastKnownELR is the one Kafka's default builder (last known leader on)
computes; ``PartitionChangeRecord`` fields are the model's record fields.
"""

from __future__ import annotations

from typing import Optional

import pytest

from model import (KAFKA, NO_LEADER, RECOVERED, RECOVERING, CancelReassignment, Config, ElectPreferredLeader, PartitionChangeRecord,
                   ProposeIsrShrinkMany, Reassign, UncleanLeaderElection, why_not_enabled)

from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testChangeRecordIsNoOp": "the PartitionChangeRecord schema (versions, tagged fields, directories, a record "
                              "setting only the leader recovery state): no partition scenario",
    "testLeaderEpochBumpOnIsrShrink": "metadata versions 3.4/3.5, which bump the leader epoch on an ISR shrink "
                                      "(KAFKA-15021)",
    "testNoLeaderEpochBumpOnEmptyTargetIsr": "metadata versions before 4.0 (the ISR-shrink epoch bump, "
                                             "KAFKA-16624) and an empty target replica set",
    "testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders":
        "adding replicas in the ISR that are not acceptable leaders (controlled shutdown in progress), and a "
        "metadata version without the ELR",
    "testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhenNoLeader":
        "a leader that is no acceptable leader yet stays in the ISR (offline log directory or controlled "
        "shutdown in progress): fencing would take it out of the ISR, and the test asserts the ISR is unchanged",
    "testKeepsDirectoriesAfterReassignment": "directory assignment",
    "testUpdateDirectories": "directory assignment",
}

ELECTIONS = pytest.mark.parametrize("unclean", [False, True], ids=["ONLINE", "UNCLEAN"])


# ------------------------------------------------------------------- helpers

def kafka(assignment: tuple[int, ...], brokers: tuple[int, ...] = (1, 2, 3), min_isr: int = 2,
          unclean: bool = False) -> Scenario:
    """A scenario under Kafka 4.4.0's rules; ``unclean``: unclean.leader.election.enable
    (the controller builds with Election.UNCLEAN instead of ONLINE)."""
    return Scenario(Config(brokers=brokers, assignment=assignment, min_isr=min_isr,
                           unclean_leader_election=unclean, profile=KAFKA))


def rejoin(sc: Scenario, leader: int, follower: int) -> None:
    """``follower`` catches up and ``leader`` adds it to the ISR; everyone applies the change."""
    sc.sync_all()
    sc.deliver_fetch(follower)
    sc.expand(leader, follower)
    sc.sync_all()


def shrink(sc: Scenario, leader: int, *followers: int) -> None:
    """``leader`` shrinks ``followers`` out of the ISR, one AlterPartition each, the
    others caught up (``lag_behind``)."""
    for f in followers:
        sc.lag_behind(leader, f)
        sc.shrink(leader, f)
        sc.sync_all()


def foo(brokers: tuple[int, ...] = (1, 2, 3), unclean: bool = False) -> Scenario:
    """FOO: replicas [2,1,3], ISR all, leader 1 (2 was fenced, came back and rejoined)."""
    sc = kafka((2, 1, 3), brokers, unclean=unclean)
    sc.fence(2)
    sc.restart(2)
    rejoin(sc, 1, 2)
    assert (sc.partition.replicas, sc.partition.isr, sc.partition.leader) == ((2, 1, 3), {1, 2, 3}, 1)
    return sc


def bar(brokers: tuple[int, ...] = (1, 2, 3, 4), unclean: bool = False) -> Scenario:
    """BAR: [1,2,3] -> [2,3,4] under way, 4 not yet in the ISR, leader 1."""
    sc = kafka((1, 2, 3), brokers, unclean=unclean)
    sc.do(Reassign((2, 3, 4)))
    p = sc.partition
    assert (p.replicas, p.isr, p.adding, p.removing, p.leader) == ((2, 3, 4, 1), {1, 2, 3}, {4}, {1}, 1)
    return sc


def baz(brokers: tuple[int, ...] = (1, 2, 3), unclean: bool = False) -> Scenario:
    """BAZ: replicas [2,1,3], ISR [1,3], leader 3, every broker unfenced."""
    sc = kafka((2, 1, 3), brokers, unclean=unclean)
    sc.fence(2)
    sc.fence(1)
    sc.restart(1)
    rejoin(sc, 3, 1)
    sc.restart(2)
    sc.sync_all()
    assert (sc.partition.replicas, sc.partition.isr, sc.partition.leader) == ((2, 1, 3), {1, 3}, 3)
    return sc


def only_member_unacceptable(unclean: bool) -> Scenario:
    """FOO whose ISR comes down to [3] with 1 and 2 live outside ISR and ELR (1 shrunk
    2 out; 1 was fenced, 3 elected, 1 restarted uncleanly so left the ELR); then 3,
    the only ISR member, is fenced."""
    sc = foo(unclean=unclean)
    shrink(sc, 1, 2)
    sc.fence(1)
    sc.restart(1, clean=False)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (3, {3}, frozenset())
    sc.fence(3)
    return sc


def registration(sc: Scenario) -> tuple:
    """(leader, ISR, ELR, LastKnownELR) of the controller's registration."""
    p = sc.partition
    return p.leader, set(p.isr), set(p.elr), set(p.last_known_elr)


def epochs(sc: Scenario) -> tuple[int, int]:
    return sc.partition.leader_epoch, sc.partition.partition_epoch


def changes(sc: Scenario) -> list[PartitionChangeRecord]:
    """The PartitionChangeRecords of the metadata log, in order."""
    return [r for r in sc.state.controller.metadata_log if isinstance(r, PartitionChangeRecord)]


def last_change(sc: Scenario) -> Optional[PartitionChangeRecord]:
    return changes(sc)[-1] if changes(sc) else None


def fence_in_turn(sc: Scenario, *brokers: int) -> None:
    for b in brokers:
        sc.fence(b)


def elr_story(min_isr: int = 3, unclean: bool = False) -> Scenario:
    """Replicas [1,2,3,4] on brokers 1..4, leader 1, the given MinISR."""
    return kafka((1, 2, 3, 4), (1, 2, 3, 4), min_isr=min_isr, unclean=unclean)


def all_fenced(min_isr: int = 3, unclean: bool = False) -> Scenario:
    """Replicas [1,2,3,4]: the controller fences 4, 3, 2 and leader 1, one at a time;
    the last ones land in the ELR and 1 is the last known leader."""
    sc = elr_story(min_isr, unclean)
    fence_in_turn(sc, 4, 3, 2, 1)
    assert (sc.partition.leader, sc.partition.last_known_elr) == (NO_LEADER, {1})
    return sc


# ------------------------------------------------------------------ elections

@ELECTIONS
def test_PartitionChangeBuilderTest_testElectLeader(unclean: bool):
    """PartitionChangeBuilderTest.testElectLeader (ONLINE and UNCLEAN elections): a
    valid current leader is kept whatever the replica order; with no acceptable ISR
    member ONLINE elects nobody and UNCLEAN the first live replica, uncleanly.
    (PREFERRED: ``..._testElectLeader_PREFERRED``; an ISR of only an adding replica,
    the [4] case, is unreachable: the reassignment completes when it joins.)"""
    # FOO with 3 unacceptable: leader 1 stays although 2 comes first in the replicas.
    sc = foo(unclean=unclean)
    leader_epoch = sc.partition.leader_epoch
    sc.fence(3)
    assert registration(sc)[:2] == (1, {1, 2})
    assert sc.partition.leader_epoch == leader_epoch
    # FOO, target ISR [1, 3]: the leader stays.
    sc = foo(unclean=unclean)
    shrink(sc, 1, 2)
    assert registration(sc)[:2] == (1, {1, 3})
    # Target ISR [3], 3 unacceptable: no leader (ONLINE) or 2, uncleanly (UNCLEAN).
    sc = only_member_unacceptable(unclean)
    if unclean:
        assert registration(sc)[:2] == (2, {2})
        assert [e.leader for e in sc.state.history.unclean_elections] == [2]
    else:
        assert registration(sc)[:2] == (NO_LEADER, set())
        assert not sc.state.history.unclean_elections
    # BAZ: leader 3 is kept though 1 precedes it in the replicas (2 rejoining runs the builder).
    sc = baz(unclean=unclean)
    leader_epoch = sc.partition.leader_epoch
    rejoin(sc, 3, 2)
    assert registration(sc)[:2] == (3, {1, 2, 3})
    assert sc.partition.leader_epoch == leader_epoch


def test_PartitionChangeBuilderTest_testElectLeader_PREFERRED():
    """PartitionChangeBuilderTest.testElectLeader, its Election.PREFERRED cases, as the
    controller runs them (ElectLeaders with ElectionType.PREFERRED): on FOO the
    preferred replica 2 (first in [2,1,3], in the ISR, acceptable) takes over from
    leader 1, cleanly, with a new leader epoch; on BAZ the preferred replica 2 is out
    of the ISR, so leader 3 stays and nothing is written (testNoChange's BAZ under
    PREFERRED: Kafka's build() is empty, ElectLeaders answers
    PREFERRED_LEADER_NOT_AVAILABLE)."""
    sc = foo()
    leader_epoch = sc.partition.leader_epoch
    sc.do(ElectPreferredLeader())
    assert registration(sc)[:2] == (2, {1, 2, 3})
    assert sc.partition.leader_epoch == leader_epoch + 1
    assert last_change(sc) == PartitionChangeRecord(leader=2)
    assert not sc.state.history.unclean_elections
    sc = baz()
    before, written = sc.partition, len(changes(sc))
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    assert sc.partition == before and len(changes(sc)) == written


@pytest.mark.parametrize("fixture", ["FOO", "OFFLINE_WITH_ELR"])
def test_PartitionChangeBuilderTest_testUncleanLeaderElection(fixture: str):
    """PartitionChangeBuilderTest.testUncleanLeaderElection: Election.UNCLEAN on FOO
    with ISR [3] (3 unacceptable) elects 2 with ISR [2], the ELR untouched (empty);
    on the leaderless partition with ISR [], ELR [3], LastKnownELR [2] where only 1 is
    acceptable it elects 1 with ISR [1] and clears ELR and LastKnownELR, the record
    marking the registration RECOVERING."""
    if fixture == "FOO":
        sc = only_member_unacceptable(unclean=True)
        assert registration(sc) == (2, {2}, set(), set())
        return
    # Replicas [2,1,3], leader 2: 1, 3 and 2 are fenced, 2 restarts uncleanly.
    sc = kafka((2, 1, 3), unclean=True)
    fence_in_turn(sc, 1, 3, 2)
    sc.restart(2, clean=False, unfence=False)
    assert registration(sc) == (NO_LEADER, set(), {3}, {2})
    leader_epoch = sc.partition.leader_epoch
    sc.restart(1)
    assert last_change(sc) == PartitionChangeRecord(leader=1, isr=frozenset({1}), elr=frozenset(),
                                                    last_known_elr=frozenset(), leader_recovery_state=RECOVERING)
    assert sc.partition.leader_epoch == leader_epoch + 1
    assert [e.leader for e in sc.state.history.unclean_elections] == [1]


def test_PartitionChangeBuilderTest_testUncleanSetsLeaderRecoveringState():
    """PartitionChangeBuilderTest.testUncleanSetsLeaderRecoveringState: replicas
    [1,2,3], no leader, ISR [2,3] unacceptable, only 1 acceptable, Election.UNCLEAN:
    the record elects 1 with ISR [1] and sets the leader recovery state RECOVERING,
    which the merged registration holds. Here (the ELR on; Kafka's test runs at a
    metadata version without it) FOO's ISR comes down to [3] with 1 and 2 outside
    ISR and ELR, and fencing 3 elects 2 uncleanly."""
    sc = only_member_unacceptable(unclean=True)
    change = last_change(sc)
    assert change is not None and (change.leader, change.isr) == (2, {2})
    assert change.leader_recovery_state == RECOVERING
    assert sc.partition.leader_recovery_state == RECOVERING


def test_PartitionChangeBuilderTest_testChangeInLeadershipDoesNotChangeRecoveryState():
    """PartitionChangeBuilderTest.testChangeInLeadershipDoesNotChangeRecoveryState:
    a RECOVERING registration with ISR [leader]: the leader going offline writes
    NO_LEADER and no leader recovery state, and so does electing it again; the
    registration stays RECOVERING throughout. Here 2, elected uncleanly (as in
    testUncleanSetsLeaderRecoveringState), is fenced once 1 is, so nobody is
    acceptable (2 joins the ELR: the ELR on, where Kafka's test has no ELR and keeps
    it in the ISR), and unfenced."""
    sc = only_member_unacceptable(unclean=True)
    assert (sc.partition.leader, sc.partition.leader_recovery_state) == (2, RECOVERING)
    sc.fence(1)
    sc.fence(2)
    offline = last_change(sc)
    assert offline is not None and offline.leader == NO_LEADER and offline.leader_recovery_state is None
    assert (sc.partition.leader, sc.partition.leader_recovery_state) == (NO_LEADER, RECOVERING)
    sc.unfence(2)
    online = last_change(sc)
    assert online is not None and online.leader == 2 and online.leader_recovery_state is None
    assert (sc.partition.leader, sc.partition.leader_recovery_state) == (2, RECOVERING)
    assert sc.partition.leader_recovery_state != RECOVERED


# ------------------------------------------------------------ leader epochs

def test_PartitionChangeBuilderTest_testNoLeaderEpochBumpIfNothingChanged():
    """PartitionChangeBuilderTest.testNoLeaderEpochBumpIfNothingChanged: when nothing
    changes (FOO, broker 4 outside the partition restarts) no record is written and
    the leader epoch stays."""
    sc = foo(brokers=(1, 2, 3, 4))
    before, written = epochs(sc), len(changes(sc))
    sc.restart(4)
    assert epochs(sc) == before
    assert len(changes(sc)) == written


def test_PartitionChangeBuilderTest_testNoLeaderEpochBumpOnIsrShrink():
    """PartitionChangeBuilderTest.testNoLeaderEpochBumpOnIsrShrink (metadata 3.6 and
    later): FOO's ISR shrinking to [2,1] keeps the leader and its epoch."""
    sc = foo()
    leader_epoch, partition_epoch = epochs(sc)
    shrink(sc, 1, 3)
    assert registration(sc)[:2] == (1, {1, 2})
    assert epochs(sc) == (leader_epoch, partition_epoch + 1)


def test_PartitionChangeBuilderTest_testNoLeaderEpochBumpOnIsrExpansion():
    """PartitionChangeBuilderTest.testNoLeaderEpochBumpOnIsrExpansion: an ISR expansion
    keeps the leader epoch (FOO less 3, then 3 rejoins; Kafka's target ISR adds 4,
    which no replica set holds)."""
    sc = foo()
    shrink(sc, 1, 3)
    leader_epoch = sc.partition.leader_epoch
    rejoin(sc, 1, 3)
    assert registration(sc)[:2] == (1, {1, 2, 3})
    assert sc.partition.leader_epoch == leader_epoch


def test_PartitionChangeBuilderTest_testLeaderEpochBumpOnNewReplicaSetDisjoint():
    """PartitionChangeBuilderTest.testLeaderEpochBumpOnNewReplicaSetDisjoint: FOO's
    replicas becoming [2,1,4] (3 dropped) bump the leader epoch, leader unchanged:
    the reassignment to [2,1,4] completes when 4 joins the ISR."""
    sc = foo(brokers=(1, 2, 3, 4))
    sc.do(Reassign((2, 1, 4)))
    leader_epoch = sc.partition.leader_epoch
    rejoin(sc, 1, 4)
    assert (sc.partition.replicas, sc.partition.leader) == ((2, 1, 4), 1)
    assert sc.partition.leader_epoch == leader_epoch + 1


def test_PartitionChangeBuilderTest_testNoChange():
    """PartitionChangeBuilderTest.testNoChange: building FOO, BAR (a reassignment
    waiting for its adding replica) and BAZ with nothing to change, ONLINE or UNCLEAN,
    writes no record: with unclean.leader.election.enable the unclean election has
    nothing to do, and a broker outside the partition restarting changes nothing.
    (BAZ under PREFERRED: ``..._testElectLeader_PREFERRED``.)"""
    for sc in (foo((1, 2, 3, 4), unclean=True), bar((1, 2, 3, 4, 5), unclean=True),
               baz((1, 2, 3, 4), unclean=True)):
        before, written = sc.partition, len(changes(sc))
        assert why_not_enabled(sc.state, UncleanLeaderElection()) is not None
        sc.restart(sc.state.config.brokers[-1])
        assert sc.partition == before and len(changes(sc)) == written


def test_PartitionChangeBuilderTest_testIsrChangeDoesntBumpLeaderEpoch():
    """PartitionChangeBuilderTest.testIsrChangeDoesntBumpLeaderEpoch: FOO's target ISR
    [2,1] is a record holding only the ISR."""
    sc = foo()
    shrink(sc, 1, 3)
    assert last_change(sc) == PartitionChangeRecord(isr=frozenset({1, 2}))


def test_PartitionChangeBuilderTest_testIsrChangeAndLeaderChange():
    """PartitionChangeBuilderTest.testIsrChangeAndLeaderChange: FOO's ISR becoming
    [2,3] without leader 1 elects 2: the record holds the ISR and leader 2 (here 1 is
    fenced)."""
    sc = foo()
    leader_epoch = sc.partition.leader_epoch
    sc.fence(1)
    assert last_change(sc) == PartitionChangeRecord(leader=2, isr=frozenset({2, 3}))
    assert sc.partition.leader_epoch == leader_epoch + 1


# ------------------------------------------------------------- reassignments

def test_PartitionChangeBuilderTest_testReassignmentRearrangesReplicas():
    """PartitionChangeBuilderTest.testReassignmentRearrangesReplicas: FOO reassigned to
    [3,2,1] gets replicas [3,2,1] in a record with nothing else (leader and its epoch
    unchanged, nothing adding or removing)."""
    sc = foo()
    leader_epoch = sc.partition.leader_epoch
    sc.do(Reassign((3, 2, 1)))
    assert last_change(sc) == PartitionChangeRecord(replicas=(3, 2, 1))
    assert (sc.partition.leader, sc.partition.leader_epoch) == (1, leader_epoch)


def test_PartitionChangeBuilderTest_testIsrEnlargementCompletesReassignment():
    """PartitionChangeBuilderTest.testIsrEnlargementCompletesReassignment: BAR's ISR
    growing to [1,2,3,4] completes the move: replicas [2,3,4], ISR [2,3,4], leader 2,
    nothing adding or removing."""
    sc = bar()
    leader_epoch = sc.partition.leader_epoch
    rejoin(sc, 1, 4)
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing) == ((2, 3, 4), {2, 3, 4}, 2, set(), set())
    assert p.leader_epoch == leader_epoch + 1


def test_PartitionChangeBuilderTest_testRevertReassignment():
    """PartitionChangeBuilderTest.testRevertReassignment: reverting BAR keeps the ISR
    [1,2,3] and leader 1 (its epoch bumped), drops the adding 4 and clears adding and
    removing. The reverted replicas are the registration's minus the adding ones, in
    its order: [2,3,1] for the reachable BAR ([1,2,3] for Kafka's fixture)."""
    sc = bar()
    leader_epoch = sc.partition.leader_epoch
    sc.do(CancelReassignment())
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing) == ((2, 3, 1), {1, 2, 3}, 1, set(), set())
    assert p.leader_epoch == leader_epoch + 1


def test_PartitionChangeBuilderTest_testRemovingReplicaReassignment():
    """PartitionChangeBuilderTest.testRemovingReplicaReassignment: FOO reassigned to
    [1,2] (removing 3) completes at once: replicas [1,2], ISR [2,1], leader 1 with its
    epoch bumped."""
    sc = foo()
    leader_epoch = sc.partition.leader_epoch
    sc.do(Reassign((1, 2)))
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing) == ((1, 2), {1, 2}, 1, set(), set())
    assert p.leader_epoch == leader_epoch + 1


def test_PartitionChangeBuilderTest_testAddingReplicaReassignment():
    """PartitionChangeBuilderTest.testAddingReplicaReassignment: FOO reassigned to
    [1,2,3,4]: a record with replicas [1,2,3,4] and adding [4] only."""
    sc = foo(brokers=(1, 2, 3, 4))
    sc.do(Reassign((1, 2, 3, 4)))
    assert last_change(sc) == PartitionChangeRecord(replicas=(1, 2, 3, 4), adding=frozenset({4}))


# ---------------------------------------------------------------------- ELR

def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_IsrShrinkBelowMinISR():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrShrinkBelowMinISR (ELR
    enabled): ISR [1,2,3,4] shrinking to [1,2] below MinISR 3 puts 3 and 4 in the ELR,
    LastKnownELR empty, leader unchanged. Kafka's leader removes both in one
    AlterPartition (Rule.SHRINK_ALL_OUT_OF_SYNC), 2 caught up (``lag_behind``)."""
    sc = elr_story()
    leader_epoch = sc.partition.leader_epoch
    sc.lag_behind(1, 3, 4)
    sc.alter_isr(ProposeIsrShrinkMany(1, (3, 4)))
    sc.sync_all()
    assert registration(sc) == (1, {1, 2}, {3, 4}, set())
    assert sc.partition.leader_epoch == leader_epoch


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_IsrExpandAboveMinISR():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrExpandAboveMinISR: ISR
    [1,2], ELR [3], MinISR 3: the ISR growing to [1,2,3] clears the ELR and the
    LastKnownELR. (Kafka's LastKnownELR [4] beside a leader needs the last known
    leader off.)"""
    sc = elr_story()
    shrink(sc, 1, 4, 3)
    assert registration(sc) == (1, {1, 2}, {3}, set())
    rejoin(sc, 1, 3)
    assert registration(sc) == (1, {1, 2, 3}, set(), set())


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_IsrAddNewMemberNotInELR():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrAddNewMemberNotInELR:
    ISR [1], ELR [3], MinISR 3: 4, not in the ELR, joining (ISR [1,4], still below
    MinISR) leaves ELR and LastKnownELR as they are (2 left the ELR by an unclean
    restart)."""
    sc = elr_story()
    shrink(sc, 1, 4, 2, 3)
    sc.restart(2, clean=False)
    assert registration(sc) == (1, {1}, {3}, set())
    rejoin(sc, 1, 4)
    assert registration(sc) == (1, {1, 4}, {3}, set())


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr:
    ISR [1], ELR [2,3], MinISR 3: 3's unclean shutdown (its registration) takes it out
    of the ELR: ELR [2], ISR and leader unchanged. Kafka's LastKnownELR [3] is the
    last-known-leader-off builder's; the controller's keeps it empty."""
    sc = elr_story()
    shrink(sc, 1, 4, 3, 2)
    assert registration(sc) == (1, {1}, {2, 3}, set())
    leader_epoch = sc.partition.leader_epoch
    sc.restart(3, clean=False, unfence=False)
    assert registration(sc) == (1, {1}, {2}, set())
    assert sc.partition.leader_epoch == leader_epoch


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_ElrCanBeElected():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElrCanBeElected (last
    known leader on, the controller's setting): ISR [1], ELR [3], MinISR 3; leader 1
    goes offline (fenced): ELR member 3 is elected, ISR [3], ELR [1], LastKnownELR
    unchanged."""
    sc = elr_story()
    shrink(sc, 1, 4, 2, 3)
    sc.restart(2, clean=False)
    assert registration(sc) == (1, {1}, {3}, set())
    leader_epoch = sc.partition.leader_epoch
    sc.fence(1)
    assert last_change(sc) == PartitionChangeRecord(leader=3, isr=frozenset({3}), elr=frozenset({1}))
    assert registration(sc) == (3, {3}, {1}, set())
    assert sc.partition.leader_epoch == leader_epoch + 1


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_IsrCanShrinkToZero():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrCanShrinkToZero (last
    known leader on): every replica of ISR [1,2,3,4] going offline leaves ISR [],
    no leader, ELR [1,2,3,4], LastKnownELR [1]; 2's unclean shutdown then leaves the
    LastKnownELR out of its record. The brokers are fenced one at a time, so with
    MinISR 4 (Kafka's: 3) each lands in the ELR."""
    sc = all_fenced(min_isr=4)
    assert registration(sc) == (NO_LEADER, set(), {1, 2, 3, 4}, {1})
    sc.restart(2, clean=False, unfence=False)
    change = last_change(sc)
    assert change is not None and change.elr == {1, 3, 4} and change.last_known_elr is None
    assert registration(sc) == (NO_LEADER, set(), {1, 3, 4}, {1})


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_ElectLastKnownLeader():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElectLastKnownLeader: ISR
    [], ELR [], LastKnownELR [1], every broker acceptable: the last known leader 1 is
    elected, ISR [1], LastKnownELR cleared. Here 2, 3 and 1 restart uncleanly, so
    leave the ELR, and 1 is elected when it is unfenced; the record marks the
    registration RECOVERING."""
    sc = all_fenced()
    for b in (2, 3, 4):
        sc.restart(b, clean=b == 4)
    sc.restart(1, clean=False, unfence=False)
    assert registration(sc) == (NO_LEADER, set(), set(), {1})
    leader_epoch = sc.partition.leader_epoch
    sc.unfence(1)
    assert last_change(sc) == PartitionChangeRecord(leader=1, isr=frozenset({1}), last_known_elr=frozenset(),
                                                    leader_recovery_state=RECOVERING)
    assert registration(sc) == (1, {1}, set(), set())
    assert sc.partition.leader_epoch == leader_epoch + 1
    assert [(e.mechanism, e.leader) for e in sc.state.history.unclean_elections] == [("last_known_leader", 1)]


def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail:
    ISR [], ELR [3] (3 unacceptable), LastKnownELR [1]: the last known leader is not
    elected while the ELR is non-empty, so 1 being unfenced writes nothing (2 and 1
    restarted uncleanly, so left the ELR)."""
    sc = all_fenced()
    sc.restart(2, clean=False)
    sc.restart(1, clean=False, unfence=False)
    assert registration(sc) == (NO_LEADER, set(), {3}, {1})
    before, written = sc.partition, len(changes(sc))
    sc.unfence(1)
    assert sc.partition == before and len(changes(sc)) == written


@ELECTIONS
def test_PartitionChangeBuilderTest_testEligibleLeaderReplicas_NotEligibleLastKnownLeader(unclean: bool):
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_NotEligibleLastKnownLeader
    (ONLINE and UNCLEAN; PREFERRED is preferred leader election): ISR [], ELR [],
    LastKnownELR [1] and no acceptable broker: nothing is elected. Here 1's unclean
    registration leaves the partition leaderless, and the unclean election cannot run."""
    sc = all_fenced(unclean=unclean)
    for b in (2, 3, 1):
        sc.restart(b, clean=False, unfence=False)
    assert registration(sc) == (NO_LEADER, set(), set(), {1})
    assert why_not_enabled(sc.state, UncleanLeaderElection()) is not None
