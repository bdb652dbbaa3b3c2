"""Apache Kafka's ``kafka.cluster.PartitionTest`` (core, 4.3.1) restated on
replicheck's Kafka profile: ``Partition`` with ``Replica`` on the leader
(fetch validation and divergence, follower fetch state, ISR expansion and
shrink, AlterPartition errors and the single request in flight, the HWM) and
on a follower (``makeFollower``).

Kafka's unit test hands one ``Partition`` a registration (``makeLeader`` /
``makeFollower``) and calls ``fetchRecords`` with any fetch state; here every
state is reached through the cluster's public actions:

- ``seedLogData(n, epoch e-1)`` then ``makeLeader(epoch e)`` (``_seeded``):
  broker 0 is the first leader and writes the n records; the broker under test
  (1, Kafka's ``brokerId``) replicates them, a remote replicates the number of
  them its first fetch in Kafka's test starts from; then broker 1 is elected in
  the next leader epoch (LESO = n) with Kafka's ISR and the remotes' fetch state
  unknown: as Kafka's ``makeLeader``, the ISR remotes caught up as of the
  election (``now_ms`` 0, Kafka's ``initializeTimeMs``), the others never (no
  state: Kafka's ``lastCaughtUpTimeMs`` 0). With every replica in Kafka's ISR a
  reassignment drops broker 0; otherwise the controller takes the remotes outside
  it out of the ISR (fencing and unfencing them) and fences broker 0, which stays
  a fenced replica outside the ISR.
- a registration with the same leader epoch and a newer partition epoch: a
  reassignment that only adds a replica (``_add_replica``).
- ``fetchFollower(replica, offset)``: that replica's fetch, its offset being its
  LEO (so a remote reaches the offset Kafka names by fetching what it lacks).
- the leader's automatic expansion inside a fetch is the AlterPartition the
  model's leader sends while serving it (Rule.EXPAND_ISR_ON_FETCH,
  ``Scenario.fetch_proposing``); Kafka's ``MockTime`` is the brokers' clock
  (Rule.REPLICA_LAG_TIME): ``time.sleep(ms)`` is ``AdvanceTime(ms)``,
  ``time.milliseconds`` is ``now_ms``, and ``lastCaughtUpTimeMs`` /
  ``lastFetchTimeMs`` are the follower state's ``last_caught_up_ms`` /
  ``last_fetch_ms`` (None for Kafka's 0, "never"); ``maybeShrinkIsr`` is
  ``ProposeIsrShrink`` for the one follower the ISR check finds out of sync now
  (none enabled when it finds none); ``alterPartitionManager``'s
  ``completeIsrUpdate`` / ``failIsrUpdate`` is the controller handling the
  request (the error comes from a state in which the controller answers it).
- "in flight": Kafka's ``PendingExpandIsr`` / ``PendingShrinkIsr`` state is the
  leader's ``pending_isr``; ``isrUpdates`` (the AlterPartitionManager's queue) is
  its ``pending_request`` and the AlterPartition request on the wire.

Kafka's epochs start at 0, the model's at 1: epochs are compared relatively.
"""

from __future__ import annotations

import attrs

from typing import Optional

import pytest

from model import (KAFKA, REPLICA_LAG_TIME_MAX_MS, AdvanceTime, AlterPartitionRequest, AlterPartitionResponse,
                   BeginControlledShutdown, Config, EpochEndOffset, FetchResponse, ListOffsets, ProposeIsrShrink, ProposeIsrShrinkMany,
                   Reassign, ReceiveAlterPartition, ReceiveAlterPartitionResponse, Role,
                   end_offset_for_epoch, epoch_entries, is_caught_up, why_not_enabled)
from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testMaybeReplaceCurrentWithFutureReplica": "future replica (log directories)",
    "testMakeFollowerWithWithFollowerAppendRecords": "concurrency of makeFollower and a follower append",
    "testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets": "future replica (log directories)",
    "testFetchOffsetSnapshotEpochValidationForLeader": "fetchOffsetSnapshot with a current leader epoch "
                                                      "(no such query in the model)",
    "testFetchOffsetSnapshotEpochValidationForFollower": "fetchOffsetSnapshot with a current leader epoch "
                                                        "(no such query in the model)",
    "testOffsetForLeaderEpochValidationForLeader": "OffsetsForLeaderEpoch requests",
    "testOffsetForLeaderEpochValidationForFollower": "OffsetsForLeaderEpoch requests",
    "testLeaderEpochValidationOnFollower": "consumer fetch from a follower (KIP-392)",
    "testFetchOffsetForTimestampEpochValidationForLeader": "timestamps (ListOffsets by timestamp)",
    "testFetchOffsetForTimestampEpochValidationForFollower": "timestamps (ListOffsets by timestamp)",
    "testAppendRecordsAsFollowerBelowLogStartOffset": "log start offset",
    "testListOffsetIsolationLevels": "transactions (READ_COMMITTED, last stable offset)",
    "testGetReplica": "a partition without a local log (internal API)",
    "testAppendRecordsToFollowerWithNoReplicaThrowsException": "a partition without a local log (internal API)",
    "testAtMinIsr": "metrics (AtMinIsr)",
    "testIsUnderMinIsr": "metrics (UnderMinIsr)",
    "testIsReplicaIsrEligibleWithEmptyReplicaMap": "topic deletion during a fetch",
    "testInvalidAlterPartitionRequestsAreNotRetried": "INVALID_REQUEST: the controller answers it only to a "
                                                      "requester that is not the leader in the current leader "
                                                      "epoch or an ISR outside the replicas, which the model's "
                                                      "leaders never send",
    "testAlterIsrUnknownTopic": "topic deletion (UNKNOWN_TOPIC_OR_PARTITION)",
    "testUseCheckpointToInitializeHighWatermark": "HWM checkpoint file",
    "testTopicIdAndPartitionMetadataFileForLeader": "topic IDs (partition metadata file)",
    "testTopicIdAndPartitionMetadataFileForFollower": "topic IDs (partition metadata file)",
    "testAddAndRemoveMetrics": "metrics",
    "testUnderReplicatedPartitionsCorrectSemantics": "metrics (UnderReplicated)",
    "testUpdateAssignmentAndIsr": "six brokers, and an internal API (updateAssignmentAndIsr)",
    "testLogConfigNotDirty": "log config",
    "testLogConfigDirtyAsTopicUpdated": "log config",
    "testLogConfigDirtyAsBrokerUpdated": "log config",
    "testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch":
        "a registration with an older partition epoch never reaches a leader: metadata is applied in "
        "order and the controller accepts an AlterPartition only at the current partition epoch",
    "testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch":
        "makeLeader with a registration naming another broker as leader (not a state metadata delivers)",
    "testAddAndRemoveListeners": "listeners",
    "testAddListenerFailsWhenPartitionIsDeleted": "listeners (topic deletion)",
    "testPartitionListenerWhenLogOffsetsChanged": "listeners",
    "testPartitionListenerWhenPartitionFailed": "listeners (partition failure)",
    "testPartitionListenerWhenPartitionIsDeleted": "listeners (topic deletion)",
    "testPartitionListenerWhenCurrentIsReplacedWithFutureLog": "listeners (future replica)",
    "testMaybeStartTransactionVerification": "transactions",
    "makeLeaderInvokesgetOrCreateLog_OnOnlineLogDir": "log directories",
    "makeFollowerInvokesgetOrCreateLog_OnOnlineLogDir": "log directories",
    "makeLeaderInvokesgetOrCreateLog_WhenNoLogDirOffline": "log directories",
    "makeFollowerInvokesgetOrCreateLog_WhenNoLogDirOffline": "log directories",
    "makeLeaderInvokesgetOrCreateLog_WhenTargetDirIsUnassigned": "log directories",
    "makeFollowerInvokesgetOrCreateLog_WhenTargetDirIsUnassigned": "log directories",
    "tryCompleteDelayedRequestsCatchesExceptions": "delayed operations (purgatory)",
    "testDeleteRecordsOnLeaderWithEmptyPolicy": "delete records",
    "testDeleteRecordsOnLeaderWithCompactPolicy": "delete records (cleanup policy)",
}

LEADER = 1  # Kafka's brokerId in the seeded tests
SEEDER = 0  # the first leader, which writes the seeded records and is then reassigned away


# ------------------------------------------------------------------- helpers

def _seeded(remotes: tuple[int, ...], *, seed: int = 10, fetched: Optional[dict[int, int]] = None,
            isr: Optional[tuple[int, ...]] = None, min_isr: int = 1, spare: bool = False) -> Scenario:
    """Kafka's ``seedLogData(seed)`` + ``makeLeader`` of broker 1 in the next leader
    epoch with replicas (1, *remotes) (see the module docstring). ``fetched[r]``:
    how many of the seeded records remote r holds; ``isr``: Kafka's ISR (default:
    every replica); ``spare``: one more broker, hosting no replica (for
    ``_add_replica``). The clock reads 0 ms at the election (Kafka's
    ``initializeTimeMs``).

    With every replica in Kafka's ISR, a reassignment drops broker 0, which elects
    1. Otherwise the controller first takes the remotes outside Kafka's ISR out of
    the ISR (it fences and unfences them), then fences broker 0, which elects 1
    with Kafka's ISR (a reassignment dropping 0 would wait for every remaining
    replica to be in the ISR): 0 stays a fenced replica outside the ISR."""
    brokers = (SEEDER, LEADER) + remotes
    brokers += (max(brokers) + 1,) if spare else ()
    sc = Scenario(Config(brokers=brokers, assignment=(SEEDER, LEADER) + remotes, min_isr=min_isr, profile=KAFKA))
    holds = {**(fetched or {}), LEADER: seed}
    written = 0
    for upto in sorted(set(holds.values())):
        sc.produce(SEEDER, upto - written)
        written = upto
        for b in sorted(b for b, n in holds.items() if n == upto):
            sc.deliver_fetch(b)
    outside = tuple(r for r in remotes if isr is not None and r not in isr)
    if outside:
        for r in outside:
            sc.fence(r)                 # the controller removes it from the ISR
            sc.unfence(r)
        sc.fence(SEEDER)
    else:
        sc.do(Reassign((LEADER,) + remotes))
    sc.sync_all()
    r = sc.replica(LEADER)
    assert (sc.partition.leader, r.role, r.leso, r.leo) == (LEADER, Role.LEADER, seed, seed)
    assert r.isr == set((LEADER,) + remotes if isr is None else isr) and sc.state.now_ms == 0
    return sc


def _sleep(sc: Scenario, ms: int) -> None:
    """Kafka's ``time.sleep(ms)``: the brokers' clock moves on (Rule.REPLICA_LAG_TIME)."""
    sc.do(AdvanceTime(ms))


def _caught_up_ms(sc: Scenario, follower: int, leader: int = LEADER) -> Optional[int]:
    """The follower's last caught-up time as the leader records it (Kafka's
    ``stateSnapshot.lastCaughtUpTimeMs``; None is Kafka's 0, never: a replica the
    leader has no state for has never caught up)."""
    fs = sc.replica(leader).follower(follower)
    return None if fs is None else fs.last_caught_up_ms


def _caught_up_now(sc: Scenario, follower: int, leader: int = LEADER) -> bool:
    """Kafka's ``ReplicaState.isCaughtUp`` at the clock's current time."""
    r = sc.replica(leader)
    return is_caught_up(sc.state.now_ms, r.leo, r.follower(follower))


def _fetch_offset(sc: Scenario, follower: int, leader: int = LEADER) -> Optional[int]:
    """The follower's LEO as the leader knows it (Kafka's ``stateSnapshot.logEndOffset``;
    None is UNKNOWN_OFFSET)."""
    fs = sc.replica(leader).follower(follower)
    return None if fs is None else fs.fetch_offset


def _isr(sc: Scenario, leader: int = LEADER) -> tuple[set[int], set[int]]:
    """The leader's (ISR, maximal ISR)."""
    r = sc.replica(leader)
    return set(r.isr), set(r.maximal_isr)


def _requests_in_flight(sc: Scenario, leader: int = LEADER) -> int:
    """Kafka's ``alterPartitionManager.isrUpdates.size``: 0 or 1."""
    pending = sc.replica(leader).pending_request
    assert (pending is not None) == bool(sc.in_flight(AlterPartitionRequest, src=leader) or
                                         sc.in_flight(AlterPartitionResponse, dst=leader))
    return int(pending is not None)


def _propose(sc: Scenario, action: object) -> AlterPartitionRequest:
    return sc.do_sending(action, AlterPartitionRequest)  # type: ignore[return-value]


def _answer(sc: Scenario, req: AlterPartitionRequest) -> AlterPartitionResponse:
    """The controller handles the request and the leader its response."""
    resp = sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
    sc.do(ReceiveAlterPartitionResponse(resp.id))
    return resp  # type: ignore[return-value]


def _add_replica(sc: Scenario, broker: Optional[int] = None) -> None:
    """A reassignment that only adds ``broker`` (default: the first broker hosting no
    replica): a new partition epoch in the same leader epoch (Kafka: "the leader
    epoch is not bumped when we add replicas")."""
    if broker is None:
        broker = next(b.id for b in sc.state.brokers if b.id not in sc.partition.replicas)
    sc.do(Reassign(sc.partition.replicas + (broker,)))


def _fetch(sc: Scenario, follower: int) -> FetchResponse:
    """One fetch round trip of the follower; the leader's answer."""
    return sc.deliver_fetch(follower)[1]


def _epochs(sc: Scenario) -> tuple[int, int]:
    p = sc.partition
    return p.leader_epoch, p.partition_epoch


def _lead_again(sc: Scenario, leader: int, interim: int) -> None:
    """Kafka's makeFollower then makeLeader of ``leader`` (leader epoch +2, no new
    records): it is fenced, ``interim`` is elected, ``leader`` rejoins its ISR by
    fetching, and ``interim`` is fenced. ``interim`` is left fenced."""
    epoch = sc.partition.leader_epoch
    sc.fence(leader)
    assert sc.partition.leader == interim
    sc.unfence(leader)
    sc.sync_all()
    sc.deliver_fetch(leader)
    sc.expand(interim, leader)
    sc.fence(interim)
    sc.sync_all()
    assert (sc.partition.leader, sc.replica(leader).leader_epoch) == (leader, epoch + 2)


# ------------------------------------------------------------- fetch validation

def test_PartitionTest_testLastFetchedOffsetValidation():
    """PartitionTest.testLastFetchedOffsetValidation: the leader answers a follower
    fetch with a diverging epoch (the end of the largest epoch at or below the
    last fetched epoch) when the follower's last fetched epoch or its offset is
    not in the leader's log, and with records otherwise.

    Reduced to the requests a follower can send: Kafka's leader log has epochs
    0,3,4,7,9 (17 records) in leader epoch 10; here leader 2 has epochs 1,3,5 (5
    records) in leader epoch 5, and each request comes from a follower whose log
    ends where Kafka's request says. Kafka's requests with a last fetched epoch
    above the leader's, an offset past the LEO in the leader's epoch, or a log
    start offset are not expressible."""
    sc = Scenario(Config(brokers=(0, 1, 2, 3, 4), assignment=(0, 1, 2, 3, 4), min_isr=1,
                         unclean_leader_election=True, profile=KAFKA))
    # epoch 1, leader 0: two records everyone replicates, two more only 0 holds
    sc.produce(0, 2)
    for f in (1, 2, 3, 4):
        sc.deliver_fetch(f)
    sc.produce(0, 2)
    # epoch 2, leader 1 (0 fenced): three records only 1 holds
    sc.fence(0)
    sc.sync_metadata(1)
    sc.produce(1, 3)
    # epoch 3, leader 2 (1 fenced): two records 3 replicates
    sc.fence(1)
    sc.sync_metadata(2)
    sc.sync_metadata(3)
    sc.produce(2, 2)
    sc.deliver_fetch(3)
    # epoch 4, leader 3 (2 fenced): one record only 3 holds
    sc.fence(2)
    sc.sync_metadata(3)
    sc.produce(3, 1)
    # epoch 5, leader 2 again (unclean: 4 and 3 fenced, 2 unfenced): one record
    sc.unfence(2)
    sc.fence(4)
    sc.fence(3)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (2, 5)
    sc.sync_metadata(2)
    sc.produce(2, 1)
    for b in (0, 1, 3, 4):
        sc.unfence(b)
    assert [rec.epoch for rec in sc.replica(2).log] == [1, 1, 3, 3, 5]

    def diverging(resp: FetchResponse) -> Optional[tuple[int, int]]:
        d = resp.diverging_epoch
        assert d is None or resp.records == ()
        return None if d is None else (d.epoch, d.end_offset)

    # Kafka read(lastFetchedEpoch=2, fetchOffset=5) -> (0, 2): an epoch the leader never had
    assert [rec.epoch for rec in sc.replica(1).log] == [1, 1, 2, 2, 2]
    assert diverging(_fetch(sc, 1)) == (1, 2)
    # Kafka read(0, 4) -> (0, 2): a known epoch, the offset past its end
    assert [rec.epoch for rec in sc.replica(0).log] == [1, 1, 1, 1]
    assert diverging(_fetch(sc, 0)) == (1, 2)
    # Kafka read(6, 6) / read(5, 9) -> (4, 13): the floor epoch is a later one
    assert [rec.epoch for rec in sc.replica(3).log] == [1, 1, 3, 3, 4]
    assert diverging(_fetch(sc, 3)) == (3, 4)
    # Kafka read(0, 2) -> no divergence: the end of a known epoch
    assert [rec.epoch for rec in sc.replica(4).log] == [1, 1]
    resp = _fetch(sc, 4)
    assert diverging(resp) is None and len(resp.records) == 3
    # Kafka read(7, 14): after truncating, 3 ends at the end of epoch 3: no divergence
    assert [rec.epoch for rec in sc.replica(3).log] == [1, 1, 3, 3]
    assert diverging(_fetch(sc, 3)) is None
    # Kafka read(9, 17) / read(10, 17): the leader's whole log, in its latest epoch
    assert diverging(_fetch(sc, 4)) is None


def test_PartitionTest_testMakeLeaderUpdatesEpochCache():
    """PartitionTest.testMakeLeaderUpdatesEpochCache: a replica with 4 records from
    older epochs becomes leader; its epoch cache answers the new leader epoch with
    end offset 4 (the epoch starts at its LEO)."""
    sc = _seeded((2,), seed=4)
    r = sc.replica(LEADER)
    assert r.leo == 4
    assert end_offset_for_epoch(r.log, r.leader_epoch, (r.leader_epoch, r.leso)) == EpochEndOffset(r.leader_epoch, 4)


def test_PartitionTest_testIsrNotExpandedIfReplicaIsInControlledShutdown():
    """PartitionTest.testIsrNotExpandedIfReplicaIsInControlledShutdown, its second
    half: a follower that fetched up to the leader's LEO in its leader epoch is not
    proposed for the ISR while the leader's metadata has its broker in controlled
    shutdown (``isBrokerShuttingDown``). Here broker 2 led [2, 1] and asked to shut
    down, which made 1 leader with ISR [1]. The first half (the leader not knowing
    yet, the controller answering INELIGIBLE_REPLICA, the leader rolling back) is
    not reached: 1 learns of the controlled shutdown in the batch that makes it
    leader."""
    sc = Scenario(Config(brokers=(0, 1, 2), assignment=(2, 1), min_isr=1, profile=KAFKA))
    sc.produce(2, 3)
    sc.deliver_fetch(1)
    sc.do(BeginControlledShutdown(2))
    sc.sync_all()
    assert (sc.partition.leader, sc.partition.isr) == (1, {1})
    assert sc.replica(2).role == Role.FOLLOWER
    assert sc.fetch_proposing(2) is None
    assert sc.fetch_proposing(2) is None
    leader = sc.replica(1)
    assert leader.follower(2).fetch_offset == leader.leo
    assert (leader.isr, leader.maximal_isr) == ({1}, {1})


def test_PartitionTest_testReplicaFetchToFollower():
    """PartitionTest.testReplicaFetchToFollower: a follower answers a replica fetch
    in a newer leader epoch UNKNOWN_LEADER_EPOCH and one in an older epoch
    FENCED_LEADER_EPOCH. (Kafka's fetches without a leader epoch or in the
    follower's own epoch cannot be sent: a follower fetches in its epoch from the
    leader of that epoch.)"""
    sc = Scenario(Config(brokers=(0, 1, 2), assignment=(0, 1, 2), min_isr=1, profile=KAFKA))
    old = sc.send_fetch(2)              # to leader 0 in epoch 1
    sc.fence(0)                         # leader 1 in epoch 2
    sc.sync_metadata(0)                 # 0 now follows 1 in epoch 2
    assert sc.replica(0).role == Role.FOLLOWER
    resp = sc.receive_fetch_request(old)
    assert resp.error == "FENCED_LEADER_EPOCH"
    sc.receive_fetch_response(resp)
    sc.sync_metadata(2)                 # 2 fetches from 1 in epoch 2, 1 still follows in epoch 1
    assert (sc.replica(1).role, sc.replica(1).leader_epoch) == (Role.FOLLOWER, 1)
    assert _fetch(sc, 2).error == "UNKNOWN_LEADER_EPOCH"


def test_PartitionTest_testFetchFromUnrecognizedFollower():
    """PartitionTest.testFetchFromUnrecognizedFollower: a fetch from a broker outside
    the leader's replica set fails with UNKNOWN_LEADER_EPOCH and creates no replica
    state; once the leader applies the reassignment adding it (same leader epoch),
    its fetches are served. (Kafka's fetch without a leader epoch is not
    expressible.)"""
    sc = Scenario(Config(brokers=(0, 1, 2, 3), assignment=(0, 1), min_isr=1, profile=KAFKA))
    sc.do(Reassign((0, 1, 2, 3)))
    epoch = sc.partition.leader_epoch
    for adding in (2, 3):
        sc.sync_metadata(adding)
        resp = _fetch(sc, adding)
        assert resp.error == "UNKNOWN_LEADER_EPOCH"
        assert _fetch_offset(sc, adding, leader=0) is None
    sc.sync_metadata(0)
    assert sc.replica(0).leader_epoch == epoch
    for adding in (2, 3):
        resp = _fetch(sc, adding)
        assert resp.error is None and resp.records == ()
        assert _fetch_offset(sc, adding, leader=0) == 0


def test_PartitionTest_testLeaderEpochValidationOnLeader():
    """PartitionTest.testLeaderEpochValidationOnLeader: the leader serves a fetch in
    its leader epoch, answers FENCED_LEADER_EPOCH to an older one and
    UNKNOWN_LEADER_EPOCH to a newer one. (The leader epoch moves with reassignments
    that drop a replica; Kafka's fetch without a leader epoch is not expressible.)"""
    sc = Scenario(Config(brokers=(0, 1, 2, 3), assignment=(0, 1, 2, 3), min_isr=1, profile=KAFKA))
    resp = _fetch(sc, 1)
    assert resp.error is None and resp.records == ()
    sc.do(Reassign((0, 1, 2)))          # leader epoch +1
    sc.sync_metadata(0)
    assert _fetch(sc, 1).error == "FENCED_LEADER_EPOCH"
    sc.do(Reassign((0, 1)))             # leader epoch +2; the follower learns it first
    sc.sync_metadata(1)
    assert sc.replica(1).leader_epoch == sc.replica(0).leader_epoch + 1
    assert _fetch(sc, 1).error == "UNKNOWN_LEADER_EPOCH"


# ----------------------------------------------------------------- ListOffsets

def test_PartitionTest_testFetchLatestOffsetIncludesLeaderEpoch():
    """PartitionTest.testFetchLatestOffsetIncludesLeaderEpoch: the leader's answer to
    ListOffsets(LATEST) carries its leader epoch. (The model's ListOffsets is a
    client's READ_UNCOMMITTED query, answered with the HWM; Kafka's test asks
    without an isolation level.)"""
    sc = _seeded((2,))
    sc.do(ListOffsets())
    answer = sc.state.history.list_offsets[-1]
    assert (answer.broker, answer.leader_epoch) == (LEADER, sc.partition.leader_epoch)


def test_PartitionTest_testMonotonicOffsetsAfterLeaderChange():
    """PartitionTest.testMonotonicOffsetsAfterLeaderChange (KIP-207): after the leader
    loses and regains leadership, ListOffsets(LATEST, READ_UNCOMMITTED) is answered
    OffsetNotAvailable until its HWM reaches the start offset of its leader epoch,
    then with the HWM. Lookups by timestamp and without an isolation level are not
    expressible; min.insync.replicas is 2 so that the ISR left after the leader is
    fenced holds the HWM back as Kafka's registration does. Kafka's first
    registration has ISR [0,2]: here 2 fetches at the leader's (empty) LEO, so
    that after the lag time the ISR check finds only 1 out of sync."""
    sc = Scenario(Config(brokers=(0, 1, 2), assignment=(0, 1, 2), min_isr=2, profile=KAFKA))
    sc.deliver_fetch(2)                 # 2 at the leader's LEO stays in sync
    sc.shrink(0, 1)                     # replicas [0,1,2], ISR [0,2] (after the lag time)
    sc.produce(0, 2)
    sc.deliver_fetch(1)
    sc.deliver_fetch(2)
    sc.produce(0, 3)
    assert sc.replica(0).hwm == 0
    sc.deliver_fetch(1)                 # the followers now fetch at offset 2
    sc.deliver_fetch(2)
    sc.expand(0, 1)                     # "Simulate successful ISR update"
    assert (sc.replica(0).leo, sc.replica(0).hwm) == (5, 2)
    sc.do(ListOffsets())
    assert sc.state.history.list_offsets[-1].hwm == 2
    # leader 0 becomes a follower (of 1), then leader again, without new records
    _lead_again(sc, 0, interim=1)
    r = sc.replica(0)
    assert r.leso == 5 and r.hwm < r.leso
    sc.do(ListOffsets())
    assert sc.state.history.list_offsets[-1].hwm is None    # OffsetNotAvailable
    sc.deliver_fetch(2)                 # the follower fetches at 5: the HWM moves up to 5
    assert sc.replica(0).hwm == 5
    sc.do(ListOffsets())
    assert sc.state.history.list_offsets[-1].hwm == 5


# ---------------------------------------------------- follower state and the ISR

def test_PartitionTest_testMakeFollowerWithNoLeaderIdChange():
    """PartitionTest.testMakeFollowerWithNoLeaderIdChange: a follower applies a new
    leader epoch with the same leader (the become-follower steps: it now fetches
    in the new epoch) and skips the become-follower steps for a registration in its
    current leader epoch (an ISR shrink of 2; 1's fetch keeps it in sync): Kafka's
    ``makeFollower`` answers False there, taking only the partition epoch
    (Rule.FOLLOWER_APPLIES_PARTITION_EPOCH)."""
    sc = Scenario(Config(brokers=(0, 1, 2, 3), assignment=(0, 1, 2, 3), min_isr=1, profile=KAFKA))
    epoch = sc.replica(1).leader_epoch
    sc.do(Reassign((0, 1, 2)))          # same leader 0, leader epoch +1
    sc.sync_all()
    r = sc.replica(1)
    assert (r.role, r.leader, r.leader_epoch) == (Role.FOLLOWER, 0, epoch + 1)
    req = sc.send_fetch(1)
    assert req.leader_epoch == epoch + 1
    sc.receive_fetch_response(sc.receive_fetch_request(req))  # 1 at the leader's LEO stays in sync
    assert sc.replica(1) == r
    sc.shrink(0, 2)                     # same leader, same leader epoch (after the lag time)
    sc.sync_metadata(1)
    assert sc.replica(1) == attrs.evolve(r, partition_epoch=sc.partition.partition_epoch)
    assert sc.partition.partition_epoch > r.partition_epoch


def test_PartitionTest_testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch():
    """PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch:
    after the leader loses and regains leadership (leader epoch +2, no new records),
    a follower outside the ISR fetching from the log start is not added; once it
    fetches at or past the start offset of the leader epoch it is proposed for
    the ISR (maximal ISR, not the ISR). The follower's second fetch is at the LEO
    it reached with its first (the model's fetch returns every record)."""
    sc = Scenario(Config(brokers=(0, 1, 2), assignment=(0, 1, 2), min_isr=1, profile=KAFKA))
    sc.deliver_fetch(2)                 # 2 at the leader's (empty) LEO stays in sync
    sc.shrink(0, 1)                     # replicas [0,1,2], ISR [0,2] (after the lag time)
    sc.produce(0, 2)                    # batch1
    sc.deliver_fetch(2)
    sc.produce(0, 3)                    # batch2
    sc.deliver_fetch(2)                 # fetch at lastOffsetOfFirstBatch + 1
    assert sc.replica(0).hwm == 2
    _lead_again(sc, 0, interim=2)
    sc.unfence(2)                       # the ISR is [0,2] again
    sc.sync_all()
    sc.deliver_fetch(2)
    sc.expand(0, 2)
    leso = sc.replica(0).leso
    assert leso == 5
    sc.produce(0, 2)                    # batch3
    assert sc.fetch_proposing(1) is None  # from the log start offset
    assert _fetch_offset(sc, 1, leader=0) == 0
    assert _isr(sc, 0) == ({0, 2}, {0, 2})
    req = sc.fetch_proposing(1)       # from past the leader epoch start offset
    assert _fetch_offset(sc, 1, leader=0) >= leso
    assert _isr(sc, 0) == ({0, 2}, {0, 1, 2})
    assert req.isr == {0, 1, 2}


def test_PartitionTest_testUpdateFollowerFetchState():
    """PartitionTest.testUpdateFollowerFetchState: a new leader knows nothing of an
    ISR follower's LEO but dates it caught up at the election; 500 ms later a
    fetch below the leader's LEO records the fetch offset and leaves the
    caught-up time; 500 ms later again one at the leader's LEO dates it caught up
    now."""
    sc = _seeded((2,), seed=6, fetched={2: 3})
    initialize_ms = sc.state.now_ms
    fs = sc.replica(LEADER).follower(2)
    assert (fs.fetch_offset, fs.last_caught_up_ms) == (None, initialize_ms)
    _sleep(sc, 500)
    sc.deliver_fetch(2)
    fs = sc.replica(LEADER).follower(2)
    assert (fs.fetch_offset, fs.last_caught_up_ms, fs.last_fetch_ms) == (3, initialize_ms, sc.state.now_ms)
    _sleep(sc, 500)
    sc.deliver_fetch(2)
    fs = sc.replica(LEADER).follower(2)
    assert (fs.fetch_offset, fs.last_caught_up_ms, fs.last_fetch_leader_leo) == (6, sc.state.now_ms, 6)
    assert sc.state.now_ms == initialize_ms + 1000


def test_PartitionTest_testIsrExpansion():
    """PartitionTest.testIsrExpansion: a follower outside the ISR has never caught
    up; below the HWM it is not added; once it fetches at the LEO it is caught up
    now and the leader proposes ISR + follower, naming every member's broker
    epoch, keeps the ISR and grows the maximal ISR; the controller's answer
    commits it."""
    sc = _seeded((2,), fetched={2: 3}, isr=(LEADER,))
    assert _isr(sc) == ({LEADER}, {LEADER}) and _fetch_offset(sc, 2) is None and _caught_up_ms(sc, 2) is None
    assert sc.fetch_proposing(2) is None
    assert _fetch_offset(sc, 2) == 3 and _isr(sc) == ({LEADER}, {LEADER}) and _caught_up_ms(sc, 2) is None
    req = sc.fetch_proposing(2)
    assert _fetch_offset(sc, 2) == 10 and _caught_up_ms(sc, 2) == sc.state.now_ms
    assert req.isr == {LEADER, 2}
    assert dict(req.added_broker_epochs) == {b: sc.state.registration(b).broker_epoch for b in (LEADER, 2)}
    assert _isr(sc) == ({LEADER}, {LEADER, 2}) and _requests_in_flight(sc) == 1
    assert _answer(sc, req).error is None
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2})


def _expansion_proposed() -> tuple[Scenario, AlterPartitionRequest]:
    """Kafka's handleAlterIsrFailure set-up: leader with ISR [1] (HWM 10), the
    remote (never caught up) fetches at the LEO, is caught up as of that fetch,
    and the leader proposes it."""
    sc = _seeded((2,), fetched={2: 10}, isr=(LEADER,), spare=True)
    assert sc.replica(LEADER).hwm == 10
    assert _fetch_offset(sc, 2) is None and _caught_up_ms(sc, 2) is None
    first_fetch_ms = sc.state.now_ms
    req = sc.fetch_proposing(2)
    assert _fetch_offset(sc, 2) == 10 and _caught_up_ms(sc, 2) == first_fetch_ms
    assert _isr(sc) == ({LEADER}, {LEADER, 2}) and _requests_in_flight(sc) == 1
    return sc, req


def _expansion_refused(concurrent, error: str) -> Scenario:
    """``_expansion_proposed``, then ``concurrent`` changes the partition at the
    controller before it handles the request, which it refuses with ``error``."""
    sc, req = _expansion_proposed()
    concurrent(sc)
    assert _answer(sc, req).error == error
    return sc


def _assert_expansion_kept_pending(sc: Scenario) -> None:
    """Kafka: ISR [1], maximal ISR [1,2] (still PendingExpandIsr), no request left and
    no retry (the leader proposes nothing until new metadata, not even on the
    follower's next fetch)."""
    assert _isr(sc) == ({LEADER}, {LEADER, 2})
    assert _requests_in_flight(sc) == 0
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    if sc.replica(LEADER).role == Role.LEADER:
        assert sc.fetch_proposing(2) is None and _requests_in_flight(sc) == 0


def test_PartitionTest_testIsrNotExpandedIfUpdateFails():
    """PartitionTest.testIsrNotExpandedIfUpdateFails: an expansion refused with
    INVALID_UPDATE_VERSION (a reassignment changed the partition epoch meanwhile)
    leaves the ISR, keeps the pending maximal ISR and is not retried."""
    _assert_expansion_kept_pending(_expansion_refused(_add_replica, "INVALID_UPDATE_VERSION"))


def test_PartitionTest_testAlterIsrInvalidVersion():
    """PartitionTest.testAlterIsrInvalidVersion (handleAlterIsrFailure with
    INVALID_UPDATE_VERSION): ISR [1], maximal ISR [1,2], nothing in flight."""
    _assert_expansion_kept_pending(_expansion_refused(_add_replica, "INVALID_UPDATE_VERSION"))


def test_PartitionTest_testAlterIsrUnexpectedError():
    """PartitionTest.testAlterIsrUnexpectedError (handleAlterIsrFailure with
    UNKNOWN_SERVER_ERROR, which Kafka retries): the retried request is a request
    still in flight: ISR [1], maximal ISR [1,2], one request. (The model's
    controller answers no unexpected error; a retry is a delay.)"""
    sc, _ = _expansion_proposed()
    assert _isr(sc) == ({LEADER}, {LEADER, 2}) and _requests_in_flight(sc) == 1


def test_PartitionTest_testAlterIsrNewLeaderElected():
    """PartitionTest.testAlterIsrNewLeaderElected (handleAlterIsrFailure with
    NEW_LEADER_ELECTED): the expansion completes a reassignment moving the
    partition to broker 2, so the controller elects 2 and answers
    NEW_LEADER_ELECTED; the leader keeps ISR [1], maximal ISR [1,2], nothing in
    flight."""
    sc = _seeded((2,), fetched={2: 10}, isr=(LEADER,))
    sc.do(Reassign((2,)))               # to [2]: waits for 2 to join the ISR
    sc.sync_metadata(LEADER)
    req = sc.fetch_proposing(2)
    assert _answer(sc, req).error == "NEW_LEADER_ELECTED"
    assert sc.partition.leader == 2
    _assert_expansion_kept_pending(sc)


@pytest.mark.parametrize("broker_state", ["fenced", "unfenced"])
def test_PartitionTest_testHighWatermarkIncreasesWithFencedOrShutdownFollower(broker_state: str):
    """PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower: a follower
    caught up to the LEO is removed from the ISR while the leader has appended
    more. If the leader's metadata has it unfenced it still holds the HWM (it is
    caught up and ISR-eligible); if fenced, the HWM moves to the LEO. (Kafka's
    "shutdown" case, a broker in controlled shutdown but not fenced, is not restated:
    in the model only a leader enters controlled shutdown, and this follower never
    led.) The controller removes it from the ISR when fencing it; in the
    "unfenced" case it is unfenced again before the leader applies the changes."""
    sc = _seeded((2,), fetched={2: 10})
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2})
    sc.deliver_fetch(2)
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (10, sc.state.now_ms)
    assert sc.replica(LEADER).hwm == 10
    sc.fence(2)
    if broker_state == "unfenced":
        sc.unfence(2)
    sc.produce(LEADER, 10)
    sc.sync_metadata(LEADER)
    r = sc.replica(LEADER)
    assert r.role == Role.LEADER and _isr(sc) == ({LEADER}, {LEADER})
    assert _caught_up_now(sc, 2)        # no time passed since its fetch at the LEO
    assert r.hwm == (10 if broker_state == "unfenced" else 20)


def test_PartitionTest_testIsrNotExpandedIfReplicaIsFencedOrShutdown():
    """PartitionTest.testIsrNotExpandedIfReplicaIsFencedOrShutdown (the fenced case):
    the controller refuses to add a fenced follower (INELIGIBLE_REPLICA) and the
    leader reverts to the ISR; once its metadata has the broker fenced, the
    leader does not propose it after its fetches; once unfenced again, it does
    and the expansion commits."""
    sc = _seeded((2,), fetched={2: 10}, isr=(LEADER,))
    req = sc.fetch_proposing(2)
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (10, sc.state.now_ms)
    assert _isr(sc) == ({LEADER}, {LEADER, 2}) and _requests_in_flight(sc) == 1
    sc.fence(2)
    assert _answer(sc, req).error == "INELIGIBLE_REPLICA"
    assert _isr(sc) == ({LEADER}, {LEADER}) and sc.replica(LEADER).pending_isr is None
    assert _requests_in_flight(sc) == 0
    sc.sync_metadata(LEADER)            # the leader learns that 2 is fenced
    assert sc.fetch_proposing(2) is None
    assert _isr(sc) == ({LEADER}, {LEADER}) and _requests_in_flight(sc) == 0
    sc.unfence(2)
    sc.sync_metadata(LEADER)
    req = sc.fetch_proposing(2)
    assert _isr(sc) == ({LEADER}, {LEADER, 2}) and sc.replica(LEADER).pending_isr is not None
    assert _answer(sc, req).error is None
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and sc.replica(LEADER).pending_isr is None
    assert _requests_in_flight(sc) == 0


def test_PartitionTest_testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache():
    """PartitionTest.testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache: a
    follower whose fetch carries an older broker epoch than the controller's
    registration is not added; after a fetch in its current broker epoch it is,
    and the request names each member's broker epoch, -1 (None) for an ISR member
    the leader has had no fetch from. Kafka's race (the metadata cache changing
    between the fetch's broker-epoch check and the eligibility check) cannot
    happen in the model, which serves a fetch at once: a fetch sent before the
    follower restarted and served before the leader applies its new
    registration is proposed with the old broker epoch, and the controller
    refuses it (INELIGIBLE_REPLICA), which rolls the expansion back — the same
    end as Kafka's, one request later."""
    sc = _seeded((2, 3), fetched={2: 10}, isr=(LEADER, 3))
    old_epoch = sc.state.broker(2).broker_epoch
    stale = sc.send_fetch(2)
    sc.restart(2)
    new_epoch = sc.state.broker(2).broker_epoch
    assert new_epoch > old_epoch
    sc.receive_fetch_request(stale)     # the leader still knows the old registration
    fs = sc.replica(LEADER).follower(2)
    assert (fs.fetch_offset, fs.broker_epoch, fs.last_caught_up_ms) == (10, old_epoch, sc.state.now_ms)
    (req,) = sc.in_flight(AlterPartitionRequest, src=LEADER)
    assert dict(req.added_broker_epochs)[2] == old_epoch
    assert _answer(sc, req).error == "INELIGIBLE_REPLICA"
    assert _isr(sc) == ({LEADER, 3}, {LEADER, 3}) and _requests_in_flight(sc) == 0
    sc.sync_metadata(LEADER)
    req = sc.fetch_proposing(2)
    fs = sc.replica(LEADER).follower(2)
    assert (fs.fetch_offset, fs.broker_epoch, fs.last_caught_up_ms) == (10, new_epoch, sc.state.now_ms)
    assert _isr(sc) == ({LEADER, 3}, {LEADER, 2, 3})
    assert dict(req.added_broker_epochs) == {LEADER: sc.state.broker(LEADER).broker_epoch, 2: new_epoch, 3: None}


def test_PartitionTest_testFenceFollowerFetchWithStaleBrokerEpoch():
    """PartitionTest.testFenceFollowerFetchWithStaleBrokerEpoch: a fetch carrying an
    older broker epoch than the leader's metadata holds is answered
    NOT_LEADER_OR_FOLLOWER and leaves the follower's fetch state as the fetch in
    its current broker epoch set it (the stale fetch was sent before a restart)."""
    sc = _seeded((2,), fetched={2: 10})
    stale = sc.send_fetch(2)
    sc.restart(2)
    sc.sync_metadata(LEADER)
    sc.deliver_fetch(2)
    expected = sc.replica(LEADER).follower(2)
    assert (expected.fetch_offset, expected.broker_epoch, expected.last_caught_up_ms) == \
        (10, sc.state.broker(2).broker_epoch, sc.state.now_ms)
    assert stale.broker_epoch < expected.broker_epoch
    assert sc.receive_fetch_request(stale).error == "NOT_LEADER_OR_FOLLOWER"
    assert sc.replica(LEADER).follower(2) == expected


# ------------------------------------------------------------------ ISR shrinks

def test_PartitionTest_testRetryShrinkIsr():
    """PartitionTest.testRetryShrinkIsr: replicaLagTimeMaxMs + 1 after the election
    the ISR check finds the silent follower out of sync; while the shrink is in
    flight the ISR and the maximal ISR keep the follower, the partition epoch is
    unchanged and the HWM stays at 0; once the controller commits it the ISR is
    the leader and the HWM reaches the LEO. (Kafka's NETWORK_EXCEPTION and retry
    are a delayed request: the model's AlterPartition stays in flight until
    answered.)"""
    sc = _seeded((2,))
    assert sc.replica(LEADER).hwm == 0
    _, partition_epoch = _epochs(sc)
    _sleep(sc, REPLICA_LAG_TIME_MAX_MS + 1)
    req = _propose(sc, ProposeIsrShrink(LEADER, 2))
    assert req.isr == {LEADER}
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and _requests_in_flight(sc) == 1
    assert sc.replica(LEADER).partition_epoch == partition_epoch and sc.replica(LEADER).hwm == 0
    assert _answer(sc, req).error is None
    assert sc.replica(LEADER).partition_epoch == partition_epoch + 1
    assert _isr(sc) == ({LEADER}, {LEADER}) and _requests_in_flight(sc) == 0
    assert sc.replica(LEADER).hwm == 10


def test_PartitionTest_testMaybeShrinkIsr():
    """PartitionTest.testMaybeShrinkIsr: right after the election the ISR check finds
    no follower out of sync (one it never heard from counts as caught up at the
    election); replicaLagTimeMaxMs + 1 later it finds that one (the other fetched
    at the leader's LEO) and the leader shrinks it out: the request names the
    remaining members with their broker epochs; until it commits, ISR and maximal
    ISR keep the follower and the HWM stays at 0; after it, the HWM reaches the
    LEO."""
    sc = _seeded((2, 3), fetched={2: 10})
    initialize_ms = sc.state.now_ms
    assert sc.replica(LEADER).hwm == 0
    sc.deliver_fetch(2)
    assert (_fetch_offset(sc, 3), _caught_up_ms(sc, 3)) == (None, initialize_ms)
    # on initialization the replica is caught up: the check finds nobody
    for shrink in (ProposeIsrShrink(LEADER, 2), ProposeIsrShrink(LEADER, 3), ProposeIsrShrinkMany(LEADER, (2, 3))):
        assert why_not_enabled(sc.state, shrink) is not None
    _sleep(sc, REPLICA_LAG_TIME_MAX_MS + 1)
    # 2 is at the leader's LEO: never out of sync, so 3 is the only one the check removes
    assert _caught_up_now(sc, 2) and not _caught_up_now(sc, 3)
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    assert why_not_enabled(sc.state, ProposeIsrShrinkMany(LEADER, (2, 3))) is not None
    _, partition_epoch = _epochs(sc)
    req = _propose(sc, ProposeIsrShrink(LEADER, 3))
    assert req.isr == {LEADER, 2}
    assert dict(req.added_broker_epochs) == {b: sc.state.registration(b).broker_epoch for b in (LEADER, 2)}
    assert _isr(sc) == ({LEADER, 2, 3}, {LEADER, 2, 3}) and sc.replica(LEADER).hwm == 0
    assert _answer(sc, req).error is None
    assert sc.replica(LEADER).partition_epoch == partition_epoch + 1 and _requests_in_flight(sc) == 0
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and sc.replica(LEADER).hwm == 10


def test_PartitionTest_testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp():
    """PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp: 5000 ms after
    the election the follower fetches at 5, below the leader's LEO 10: its
    caught-up time stays the election's and the HWM moves to 5; 5001 ms later the
    leader has appended 5 records and the follower fetches at 10, the leader's LEO
    at its previous fetch: it is dated caught up at that previous fetch
    (Replica.updateFetchStateOrThrow) and the HWM moves to 10; the ISR check
    does not shrink it out.

    Kafka's test ends there, where an election-dated follower would be in sync
    too (10001 ms < replicaLagTimeMaxMs). Beyond it: the follower stays in sync
    until exactly replicaLagTimeMaxMs after its first fetch, and is out of sync
    1 ms later (ReplicaState.isCaughtUp)."""
    sc = _seeded((2,), fetched={2: 5})
    initialize_ms = sc.state.now_ms
    assert sc.replica(LEADER).hwm == 0
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (None, initialize_ms)
    _sleep(sc, 5000)
    first_fetch_ms = sc.state.now_ms
    sc.deliver_fetch(2)
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (5, initialize_ms)
    assert sc.replica(LEADER).hwm == 5
    _sleep(sc, 5001)
    sc.produce(LEADER, 5)
    sc.deliver_fetch(2)
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (10, first_fetch_ms)
    assert sc.replica(LEADER).hwm == 10
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and _requests_in_flight(sc) == 0
    # beyond Kafka's test: the boundary of replica.lag.time.max.ms
    _sleep(sc, first_fetch_ms + REPLICA_LAG_TIME_MAX_MS - sc.state.now_ms)
    assert _caught_up_now(sc, 2) and why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    _sleep(sc, 1)
    assert not _caught_up_now(sc, 2) and why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is None


def test_PartitionTest_testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd():
    """PartitionTest.testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd: the follower
    fetches up to the leader's LEO at once (it is caught up now, and the HWM
    reaches it); 30001 ms later (longer than replicaLagTimeMaxMs) the leader does
    not shrink it out: a follower at the leader's LEO is never out of sync
    (ReplicaState.isCaughtUp, Rule.CAUGHT_UP_AT_LEADER_LEO). Nothing in flight,
    the ISR unchanged."""
    sc = _seeded((2,), fetched={2: 10})
    initialize_ms = sc.state.now_ms
    assert sc.replica(LEADER).hwm == 0
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (None, initialize_ms)
    sc.deliver_fetch(2)
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (10, sc.state.now_ms)
    assert sc.replica(LEADER).hwm == 10
    _sleep(sc, 30001)
    assert _caught_up_now(sc, 2)
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and _requests_in_flight(sc) == 0


def test_PartitionTest_testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR():
    """PartitionTest.testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR: with
    min.insync.replicas 3 and ISR [1,2], the HWM stays at 0 while the followers
    catch up, even once the maximal ISR has 3 members; when the expansion commits
    the partition is no longer under MinISR and the HWM reaches the LEO. (Broker
    0, fenced to elect 1 with ISR [1,2] below MinISR, is in the ELR, which Kafka's
    registration does not have; the test's outcomes do not depend on it.)"""
    sc = _seeded((2, 3), fetched={2: 10, 3: 10}, isr=(LEADER, 2), min_isr=3)
    assert len(sc.replica(LEADER).isr) < 3 and sc.replica(LEADER).hwm == 0
    sc.deliver_fetch(2)
    assert sc.replica(LEADER).hwm == 0
    req = sc.fetch_proposing(3)
    assert len(sc.replica(LEADER).maximal_isr) == 3 and _requests_in_flight(sc) == 1
    assert sc.replica(LEADER).hwm == 0
    assert _answer(sc, req).error is None
    assert len(sc.replica(LEADER).isr) == 3 and sc.replica(LEADER).hwm == 10


def test_PartitionTest_testAlterIsrLeaderAndIsrRace():
    """PartitionTest.testAlterIsrLeaderAndIsrRace: a registration in the same leader
    epoch with a newer partition epoch resets the leader's pending shrink to the
    committed ISR, but the leader proposes nothing more until the in-flight
    request is answered (one AlterPartition in flight); then it can shrink again.
    The answer is INVALID_UPDATE_VERSION here (the registration came from a
    reassignment adding a replica), a success in Kafka's test. Each shrink is
    tried replicaLagTimeMaxMs + 1 after the previous step, as in Kafka's."""
    sc = _seeded((2,))
    assert sc.replica(LEADER).hwm == 0
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (None, sc.state.now_ms)
    _sleep(sc, REPLICA_LAG_TIME_MAX_MS + 1)
    _propose(sc, ProposeIsrShrink(LEADER, 2))
    assert sc.replica(LEADER).pending_isr is not None
    _add_replica(sc)
    sc.sync_metadata(LEADER)
    assert sc.replica(LEADER).hwm == 0
    assert sc.replica(LEADER).pending_isr is None and _isr(sc) == ({LEADER, 2}, {LEADER, 2})
    _sleep(sc, REPLICA_LAG_TIME_MAX_MS + 1)
    assert not _caught_up_now(sc, 2)
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None
    (req,) = sc.in_flight(AlterPartitionRequest, src=LEADER)
    _answer(sc, req)
    _propose(sc, ProposeIsrShrink(LEADER, 2))
    assert sc.replica(LEADER).pending_isr == {LEADER}


def test_PartitionTest_testIsrNotShrunkIfUpdateFails():
    """PartitionTest.testIsrNotShrunkIfUpdateFails: a shrink refused with
    INVALID_UPDATE_VERSION (a reassignment changed the partition epoch meanwhile)
    stays pending (PendingShrinkIsr), the ISR keeps the follower, the HWM stays
    at 0 and nothing is retried. The shrink is proposed 30001 ms after the
    election, as in Kafka's test."""
    sc = _seeded((2,))
    assert sc.replica(LEADER).hwm == 0
    assert (_fetch_offset(sc, 2), _caught_up_ms(sc, 2)) == (None, sc.state.now_ms)
    _sleep(sc, 30001)
    req = _propose(sc, ProposeIsrShrink(LEADER, 2))
    assert _isr(sc) == ({LEADER, 2}, {LEADER, 2}) and sc.replica(LEADER).hwm == 0
    _add_replica(sc)
    assert _answer(sc, req).error == "INVALID_UPDATE_VERSION"
    r = sc.replica(LEADER)
    assert r.pending_isr == {LEADER} and r.isr == {LEADER, 2} and r.hwm == 0
    assert _requests_in_flight(sc) == 0
    assert why_not_enabled(sc.state, ProposeIsrShrink(LEADER, 2)) is not None


def _expansion_in_flight_rf4() -> tuple[Scenario, AlterPartitionRequest]:
    """Replicas [1,2,3,4], ISR [1,2,3]; 4 fetches at the LEO and is proposed."""
    sc = _seeded((2, 3, 4), fetched={4: 10}, isr=(LEADER, 2, 3))
    assert sc.replica(LEADER).hwm == 0
    req = sc.fetch_proposing(4)
    assert _isr(sc) == ({LEADER, 2, 3}, {LEADER, 2, 3, 4})
    return sc, req


def test_PartitionTest_testPartitionShouldRetryAlterPartitionRequest():
    """PartitionTest.testPartitionShouldRetryAlterPartitionRequest: an expansion whose
    request is retried (Kafka: UNKNOWN_SERVER_ERROR, then a success; here a delayed
    request) commits: ISR of all four, partition epoch +1, nothing in flight."""
    sc, req = _expansion_in_flight_rf4()
    _, partition_epoch = _epochs(sc)
    assert _answer(sc, req).error is None
    r = sc.replica(LEADER)
    assert r.isr == {LEADER, 2, 3, 4} and r.partition_epoch == partition_epoch + 1
    assert r.pending_isr is None and _requests_in_flight(sc) == 0


def test_PartitionTest_testSingleInFlightAlterIsr():
    """PartitionTest.testSingleInFlightAlterIsr: while an expansion is in flight the
    leader proposes no shrink, even replicaLagTimeMaxMs + 1 later when its ISR
    followers 2 and 3 are out of sync: one AlterPartition request stays the only
    one."""
    sc, _ = _expansion_in_flight_rf4()
    assert _requests_in_flight(sc) == 1
    _sleep(sc, REPLICA_LAG_TIME_MAX_MS + 1)
    assert not _caught_up_now(sc, 2) and not _caught_up_now(sc, 3)
    for shrink in (ProposeIsrShrink(LEADER, 2), ProposeIsrShrink(LEADER, 3), ProposeIsrShrinkMany(LEADER, (2, 3))):
        assert why_not_enabled(sc.state, shrink) is not None
    assert _requests_in_flight(sc) == 1 and len(sc.in_flight(AlterPartitionRequest)) == 1


# -------------------------------------------- registrations without a new leader epoch

def _leader_alone_in_isr() -> Scenario:
    """Replicas [2,1] with leader 1 and ISR [1]; broker 0 hosts no replica. As
    Kafka's makeLeader with ISR [leader]: 1 is elected with ISR [1] (2, the first
    leader, is fenced, then unfenced), so it has never heard from 2 nor counts it
    caught up (Kafka's lastCaughtUpTimeMs 0)."""
    sc = Scenario(Config(brokers=(0, 1, 2), assignment=(2, 1), min_isr=1, profile=KAFKA))
    sc.fence(2)
    sc.unfence(2)
    sc.sync_all()
    assert sc.partition.leader == 1 and _isr(sc, 1) == ({1}, {1})
    assert (_fetch_offset(sc, 2, leader=1), _caught_up_ms(sc, 2, leader=1)) == (None, None)
    return sc


def test_PartitionTest_testDoNotResetReplicaStateIfLeaderEpochIsNotBumped():
    """PartitionTest.testDoNotResetReplicaStateIfLeaderEpochIsNotBumped: a registration
    with the same leader epoch and a newer partition epoch (a reassignment adding
    a replica) updates the partition epoch and leaves the follower's fetch state
    (its LEO and its caught-up time, which its fetch at the leader's LEO set to
    now)."""
    sc = _leader_alone_in_isr()
    leader_epoch, partition_epoch = _epochs(sc)
    sc.deliver_fetch(2)
    fs = sc.replica(1).follower(2)
    assert (fs.fetch_offset, fs.last_caught_up_ms) == (0, sc.state.now_ms)
    _add_replica(sc)
    sc.sync_metadata(1)
    r = sc.replica(1)
    assert (r.leader_epoch, r.partition_epoch, r.isr) == (leader_epoch, partition_epoch + 1, {1})
    assert r.follower(2) == fs


def test_PartitionTest_testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped():
    """PartitionTest.testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped: after
    the leader wrote two records, a registration with the same leader epoch and a
    newer partition epoch leaves its leader epoch start offset (and the epoch
    cache's latest entry) at 0."""
    sc = _leader_alone_in_isr()
    leader_epoch, partition_epoch = _epochs(sc)
    r = sc.replica(1)
    assert r.leso == 0 and epoch_entries(r.log, (r.leader_epoch, r.leso))[-1] == (leader_epoch, 0)
    sc.produce(1, 2)
    _add_replica(sc)
    sc.sync_metadata(1)
    r = sc.replica(1)
    assert (r.leader_epoch, r.partition_epoch, r.isr, r.leso) == (leader_epoch, partition_epoch + 1, {1}, 0)
    assert epoch_entries(r.log, (r.leader_epoch, r.leso))[-1] == (leader_epoch, 0)


def test_PartitionTest_testFollowerShouldNotHaveAnyRemoteReplicaStates():
    """PartitionTest.testFollowerShouldNotHaveAnyRemoteReplicaStates: a leader tracks
    its followers; once it becomes a follower (the leader moves to 2 in the next
    leader and partition epoch) it has no ISR and no remote replica state, and the
    replica set is unchanged."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1, profile=KAFKA))
    r = sc.replica(1)
    leader_epoch, partition_epoch = _epochs(sc)
    assert (r.role, r.leader_epoch, r.partition_epoch, r.isr) == (Role.LEADER, leader_epoch, partition_epoch, {1, 2, 3})
    assert [b for b, _ in r.followers] == [2, 3]
    sc.fence(1)
    sc.sync_metadata(1)
    r = sc.replica(1)
    assert (r.role, r.leader, r.leader_epoch, r.partition_epoch) == \
        (Role.FOLLOWER, 2, leader_epoch + 1, partition_epoch + 1)
    assert r.isr == set() and r.followers == ()
    assert sc.state.broker(1).image.replicas == (1, 2, 3)
