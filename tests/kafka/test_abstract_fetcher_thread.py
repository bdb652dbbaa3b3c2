"""Apache Kafka's ``kafka.server.AbstractFetcherThreadTest`` (core, 4.3.1) restated
on replicheck's Kafka profile: a follower's fetches, truncation on a diverging
epoch (``getOffsetTruncationState``, Rule.TRUNCATION_IN_ROUNDS) and fetch errors.

Kafka's test gives a ``MockFetcherThread`` a replica log and a ``MockLeaderEndPoint``
a leader log, each with given leader epochs. Here both logs are reached through
the cluster's actions: two replicas, 0 and 1, lead one leader epoch after the
other (``_history``: the current leader is fenced, the other is elected,
uncleanly when it is outside the ISR, and the fenced one is unfenced), each
writing its records in its own epoch, which the other replicates or not. The
follower then fetches (``doWork``), and the test asserts where it truncates and
what it ends with. The model's fetch returns every record from the fetch offset
(Kafka's mock returns one batch per fetch), so "until the logs match" is fewer
rounds here.

Kafka's epochs start at 0, the model's at 1: Kafka's epoch k is the model's k+1.
"""

from __future__ import annotations

from model import KAFKA, Config, Reassign, Record, SendFetch, why_not_enabled
from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testMetricsRemovedOnShutdown": "metrics (fetcher thread shutdown)",
    "testConsumerLagRemovedWithPartition": "metrics (consumer lag)",
    "testDelay": "fetch backoff (thread machinery, time)",
    "testPartitionsInError": "several partitions, topic ID errors and backoff",
    "testUnknownLeaderEpochInTruncation": "OffsetsForLeaderEpoch requests (forced truncation phase)",
    "testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable":
        "a log without leader epochs (old message format): truncation to the HWM",
    "testTruncateToHighWatermarkDuringRemovePartitions": "thread machinery (a partition removed during truncation)",
    "testTruncationSkippedIfNoEpochChange": "OffsetsForLeaderEpoch requests (forced truncation phase) and "
                                            "re-adding a partition to the fetcher",
    "testTruncationOnFetchSkippedIfPartitionRemoved": "thread machinery (a partition removed from the fetcher)",
    "testFencedOffsetResetAfterOutOfRange": "log start offset (out-of-range reset to the leader's earliest offset)",
    "testFollowerFetchOutOfRangeLow": "log start offset",
    "testRetryAfterUnknownLeaderEpochInLatestOffsetFetch": "log start offset (ListOffsets to the leader)",
    "testReplicateBatchesUpToLeaderEpoch": "a leader log holding a record from an epoch above the leader's own "
                                           "(a leader writes only in its epoch)",
    "testCorruptMessage": "corrupt records (CRC)",
    "testParameterizedLeaderEpochChangeDuringFetchEpochsFromLeader": "OffsetsForLeaderEpoch requests",
    "testTruncateToEpochEndOffsetsDuringRemovePartitions": "OffsetsForLeaderEpoch requests and thread machinery",
    "testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs":
        "OffsetsForLeaderEpoch requests and several partitions",
    "testFetcherThreadHandlingPartitionFailureDuringAppending": "partition failures and several partitions",
    "testFetcherThreadHandlingPartitionFailureDuringTruncation": "partition failures and several partitions",
    "testMaybeUpdateTopicIds": "topic IDs",
    "testEmptyFollowerFetchTieredStorageDisabledLeaderLogStartOffsetZero":
        "offset gaps between batches (compaction) and the tiered-storage fetch path",
    "testEmptyFollowerFetchTieredStorageDisabledLeaderLogStartOffsetNonZero": "log start offset",
    **{name: "tiered storage" for name in (
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetZeroNoLocalDeletions",
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetZeroWithLocalDeletions",
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetNonZeroNoLocalDeletions",
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetNonZeroWithLocalDeletions",
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetZeroAllLocalSegmentsDeleted",
        "testEmptyFollowerFetchTieredStorageEnabledLeaderLogStartOffsetNonZeroAllLocalSegmentsDeleted",
        "testLastTieredOffsetWithEmptyLeaderLog",
        "testLastTieredOffsetWithNoSegmentsUploaded",
        "testLastTieredOffsetWithPartialUploadOnNewLeader",
        "testLastTieredOffsetWithSlowPartialUpload",
        "testLastTieredOffsetWithFastPartialUpload",
        "testLastTieredOffsetWithFullUploadCompleted",
        "testLastTieredOffsetWithInactiveLeaderFullUploadOnNewLeader",
        "testLastTieredOffsetWithInactiveLeaderFullUpload",
        "testLastTieredOffsetWithEmptyLeaderLogNonZeroLSOOnNewLeader",
        "testLastTieredOffsetWithEmptyLeaderLogStaleUploadOffset",
        "testLastTieredOffsetWithNonZeroLSOOnNewLeader",
        "testLastTieredOffsetWithNonZeroLSOStaleUploadOffset",
        "testLastTieredOffsetWithSlowUploadNoLocalDeletion",
        "testLastTieredOffsetWithFastUploadNoLocalDeletion",
        "testLastTieredOffsetWithFullUploadNoLocalDeletion",
        "testLastTieredOffsetWithPartialUploadOnNewLeaderNonZeroLSO",
        "testLastTieredOffsetWithPartialUploadAndStaleUploadOffset",
        "testLastTieredOffsetWithSlowUploadNonZeroLSO",
        "testLastTieredOffsetWithFastUploadNonZeroLSO",
        "testLastTieredOffsetWithFullUploadNonZeroLSO",
        "testLastTieredOffsetWithInactiveLeaderFullUploadNonZeroLSOOnNewLeader",
        "testLastTieredOffsetWithInactiveLeaderStaleUploadNonZeroLSO",
        "testLastTieredOffsetWithInactiveLeaderFullUploadNonZeroLSO",
        "testLastTieredOffsetStaleLocalLogOffsetNewLeader",
        "testLastTieredOffsetStaleLocalLogOffsetSlowUpload",
        "testLastTieredOffsetStaleLocalLogOffsetFastUpload",
        "testLastTieredOffsetStaleLocalLogOffsetFullUpload",
        "testLastTieredOffsetRetryableRemoteStorageException",
    )},
}


# ------------------------------------------------------------------- helpers

def _pair() -> Scenario:
    """Replicas [0, 1] (leader 0 in epoch 1), the other brokers idle; MinISR 1 and
    unclean leader election, so either replica can be elected whatever its log."""
    return Scenario(Config(brokers=(0, 1, 2), assignment=(0, 1), min_isr=1, unclean_leader_election=True,
                           profile=KAFKA))


def _three() -> Scenario:
    """Replicas [0, 1, 2] with leader 0 in epoch 1, MinISR 1."""
    return Scenario(Config(brokers=(0, 1, 2), assignment=(0, 1, 2), min_isr=1, profile=KAFKA))


def _lead(sc: Scenario, broker: int) -> None:
    """``broker`` leads the next leader epoch: the current leader is fenced, the
    controller elects ``broker`` (the only unfenced replica), and the fenced one is
    unfenced again once every broker applied the change."""
    old, epoch = sc.partition.leader, sc.partition.leader_epoch
    sc.fence(old)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (broker, epoch + 1)
    sc.sync_all()
    sc.unfence(old)
    sc.sync_all()


def _history(sc: Scenario, plan: list[tuple[int, int, bool]]) -> None:
    """One leader epoch per step of ``plan``, from epoch 1: ``(leader, records,
    replicated)``: ``leader`` leads it and writes ``records``; with ``replicated``
    the other replica fetches them (a second round trip when its first meets a
    diverging epoch: a replica that led an epoch without writing keeps it,
    Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH)."""
    for leader, records, replicated in plan:
        if sc.partition.leader != leader:
            _lead(sc, leader)
        sc.produce(leader, records)
        if replicated and sc.deliver_fetch(1 - leader)[1].diverging_epoch is not None:
            sc.deliver_fetch(1 - leader)


def _epochs(sc: Scenario, broker: int) -> list[int]:
    return [rec.epoch for rec in sc.replica(broker).log]


def _same_leader_new_epoch(sc: Scenario, sync: tuple[int, ...]) -> None:
    """The controller bumps the leader epoch, the leader unchanged (a reassignment
    dropping the last replica); only the brokers in ``sync`` apply it."""
    sc.do(Reassign(sc.partition.replicas[:-1]))
    for b in sync:
        sc.sync_metadata(b)


def _fetch_until_logs_match(sc: Scenario, follower: int, leader: int) -> list:
    """``doWork`` until the follower's log is the leader's (and a fetch brings
    nothing new); returns the responses, in order."""
    responses = []
    for _ in range(10):
        responses.append(sc.deliver_fetch(follower)[1])
        if sc.replica(follower).log == sc.replica(leader).log and not responses[-1].records:
            return responses
    raise AssertionError(f"logs never matched: {sc.replica(follower).log} vs {sc.replica(leader).log}")


def _assert_reconciled(sc: Scenario, follower: int, leader: int) -> None:
    """Kafka: the logs are equal, and so are the LEO and the HWM."""
    f, lead = sc.replica(follower), sc.replica(leader)
    assert (f.log, f.leo, f.hwm) == (lead.log, lead.leo, lead.hwm)


# --------------------------------------------------------------------- tests

def test_AbstractFetcherThreadTest_testSimpleFetch():
    """AbstractFetcherThreadTest.testSimpleFetch: an empty follower fetches a leader
    holding 2 records with HWM 2: it ends with LEO 2 and HWM 2. (The follower is
    outside the leader's ISR, so the HWM is already 2.)"""
    sc = _pair()
    sc.shrink(0, 1)
    sc.produce(0, 2)
    assert sc.replica(0).hwm == 2
    sc.deliver_fetch(1)
    assert (sc.replica(1).leo, sc.replica(1).hwm) == (2, 2)


def test_AbstractFetcherThreadTest_testFencedTruncation():
    """AbstractFetcherThreadTest.testFencedTruncation: an empty follower in an older
    leader epoch than the leader's (whose records are in its newer epoch) is
    answered FENCED_LEADER_EPOCH and makes no progress: Kafka's fetcher removes the
    partition and marks it failed (Rule.FENCED_FETCH_AWAITS_NEW_EPOCH), so the
    follower fetches no more until it applies the new leader epoch; then it
    fetches the leader's records."""
    sc = _three()
    _same_leader_new_epoch(sc, sync=(0,))
    sc.produce(0, 2)
    assert _epochs(sc, 0) == [2, 2] and sc.replica(1).leader_epoch == 1
    _, resp = sc.deliver_fetch(1)
    assert resp.error == "FENCED_LEADER_EPOCH"
    assert (sc.replica(1).leo, sc.replica(1).hwm) == (0, 0)
    assert "FENCED_LEADER_EPOCH" in why_not_enabled(sc.state, SendFetch(1))
    sc.sync_metadata(1)
    sc.deliver_fetch(1)
    assert _epochs(sc, 1) == [2, 2]


def test_AbstractFetcherThreadTest_testFencedFetch():
    """AbstractFetcherThreadTest.testFencedFetch: a follower caught up (LEO 2) fetches
    after the leader moved to a new leader epoch it has not applied yet: the fetch
    is answered FENCED_LEADER_EPOCH, the follower's log is unchanged, and it fetches
    no more in its leader epoch (Rule.FENCED_FETCH_AWAITS_NEW_EPOCH)."""
    sc = _three()
    sc.produce(0, 2)
    sc.deliver_fetch(1)
    assert sc.replica(1).leo == 2
    _same_leader_new_epoch(sc, sync=(0,))
    before = sc.replica(1)
    _, resp = sc.deliver_fetch(1)
    assert resp.error == "FENCED_LEADER_EPOCH"
    assert (sc.replica(1).log, sc.replica(1).hwm) == (before.log, before.hwm)
    assert "FENCED_LEADER_EPOCH" in why_not_enabled(sc.state, SendFetch(1))


def test_AbstractFetcherThreadTest_testUnknownLeaderEpochWhileFetching():
    """AbstractFetcherThreadTest.testUnknownLeaderEpochWhileFetching: a follower that
    fetched one of the leader's two records, then finds the leader in an older
    leader epoch than its own, is answered UNKNOWN_LEADER_EPOCH and stays at its
    offset; once the leader is in its epoch again it fetches the rest. (Kafka's
    leader epoch "rewinds"; here the follower applies the new epoch before the
    leader does.)"""
    sc = _three()
    sc.produce(0, 1)
    sc.deliver_fetch(1)
    sc.produce(0, 1)
    assert sc.replica(1).leo == 1
    _same_leader_new_epoch(sc, sync=(1,))
    _, resp = sc.deliver_fetch(1)
    assert resp.error == "UNKNOWN_LEADER_EPOCH" and sc.replica(1).leo == 1
    sc.sync_metadata(0)
    sc.deliver_fetch(1)
    assert sc.replica(1).leo == 2


def test_AbstractFetcherThreadTest_testTruncation():
    """AbstractFetcherThreadTest.testTruncation: follower log epochs [0,2,4], leader
    log [1,3,5] (Kafka's numbering), leader epoch 5: the follower truncates (here
    in rounds, one epoch at a time: Rule.TRUNCATION_IN_ROUNDS) until its log is the
    leader's; then LEO and HWM are the leader's."""
    sc = _pair()
    _history(sc, [(0, 1, False), (1, 1, False), (0, 1, False), (1, 1, False), (0, 1, False), (1, 1, False)])
    assert (_epochs(sc, 0), _epochs(sc, 1)) == ([1, 3, 5], [2, 4, 6])
    assert sc.replica(0).leader_epoch == sc.replica(1).leader_epoch == 6
    responses = _fetch_until_logs_match(sc, 0, 1)
    truncations = [(r.diverging_epoch.epoch, r.diverging_epoch.end_offset) for r in responses if r.diverging_epoch]
    assert truncations == [(4, 2), (2, 1), (1, 0)]
    _assert_reconciled(sc, 0, 1)


def test_AbstractFetcherThreadTest_testDivergingEpochs():
    """AbstractFetcherThreadTest.testDivergingEpochs: follower log [0,2,4], leader
    log [0,2,5] (the first two records shared): the first fetch truncates the
    follower to the end of epoch 2 (its last fetched epoch becomes 2); then it
    fetches the leader's record and its last fetched epoch is 5."""
    sc = _pair()
    _history(sc, [(0, 1, True), (1, 0, False), (0, 1, True), (1, 0, False), (0, 1, False), (1, 1, False)])
    assert (_epochs(sc, 0), _epochs(sc, 1)) == ([1, 3, 5], [1, 3, 6])
    assert sc.replica(0).last_fetched_epoch == 5
    _, resp = sc.deliver_fetch(0)
    assert (resp.diverging_epoch.epoch, resp.diverging_epoch.end_offset) == (3, 2)
    assert (sc.replica(0).leo, sc.replica(0).last_fetched_epoch) == (2, 3)
    _fetch_until_logs_match(sc, 0, 1)
    _assert_reconciled(sc, 0, 1)
    assert sc.replica(0).last_fetched_epoch == 6


def test_AbstractFetcherThreadTest_testTruncateOnFetchDoesNotProcessPartitionData():
    """AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData:
    follower log [0,0,2,4,4,4], leader log [0,0,2,5,5]: the fetch answered with a
    diverging epoch truncates the follower to 3 and appends nothing, nor takes the
    leader's HWM (the follower's HWM is only capped by its new LEO: Kafka's is 1
    and stays 1; here it was 6, as the follower led epoch 4 alone); later fetches
    bring the leader's records and HWM (LEO 5), with no further truncation."""
    sc = _pair()
    _history(sc, [(0, 2, True), (1, 0, False), (0, 1, True), (1, 0, False), (0, 3, False), (1, 2, False)])
    assert (_epochs(sc, 0), _epochs(sc, 1)) == ([1, 1, 3, 5, 5, 5], [1, 1, 3, 6, 6])
    before = sc.replica(0)
    _, resp = sc.deliver_fetch(0)
    assert resp.diverging_epoch is not None and resp.records == ()
    after = sc.replica(0)
    assert (after.log, after.hwm) == (before.log[:3], min(before.hwm, 3))
    assert after.hwm != resp.hwm
    responses = _fetch_until_logs_match(sc, 0, 1)
    assert all(r.diverging_epoch is None for r in responses)
    _assert_reconciled(sc, 0, 1)
    assert sc.replica(0).leo == 5 and sc.replica(0).last_fetched_epoch == 6


def test_AbstractFetcherThreadTest_testFollowerFetchOutOfRangeHigh():
    """AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh: a follower whose log
    is the leader's fetches nothing new; then the leader's log is empty while the
    follower's ends at 3, and the follower ends with LEO 0 and HWM 0. Kafka
    changes the mock leader's log in place, and its mock skips the divergence
    check for an empty log, so the fetch gets OFFSET_OUT_OF_RANGE; here the
    leader with an empty log is broker 2, an ISR member that never fetched,
    elected in a new leader epoch, and it answers a diverging epoch (end offset
    0), as Kafka's Partition does: the follower truncates to the same place."""
    sc = _three()
    sc.produce(0, 3)
    sc.deliver_fetch(1)
    _, resp = sc.deliver_fetch(1)
    assert resp.diverging_epoch is None and resp.records == () and sc.replica(1).leo == 3
    sc.fence(1)
    sc.fence(0)
    assert sc.partition.leader == 2 and sc.partition.isr == {2}
    sc.sync_all()
    sc.unfence(1)
    _, resp = sc.deliver_fetch(1)
    assert resp.diverging_epoch is not None and resp.diverging_epoch.end_offset == 0
    assert (sc.replica(1).leo, sc.replica(1).hwm) == (0, 0)


def test_AbstractFetcherThreadTest_testIgnoreFetchResponseWhenLeaderEpochChanged():
    """AbstractFetcherThreadTest.testIgnoreFetchResponseWhenLeaderEpochChanged: a fetch
    response to a request sent in the follower's previous leader epoch is ignored
    (the follower's LEO stays 0) once the follower is in a new leader epoch."""
    sc = _three()
    sc.produce(0, 1)
    resp = sc.receive_fetch_request(sc.send_fetch(1))
    assert resp.records == (Record(1, 1),)
    _same_leader_new_epoch(sc, sync=(0, 1))
    assert sc.replica(1).leader_epoch == resp.request_leader_epoch + 1
    sc.receive_fetch_response(resp)
    assert sc.replica(1).leo == 0
