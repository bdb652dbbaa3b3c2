"""Kafka's own ``kafka.cluster.Partition`` through a broker's whole life
(``kafka_bridge.partition``): as a follower (``makeFollower``, and Kafka's own
fetcher, ``AbstractFetcherThread``: the fetch answer's records appended, the
leader's HWM taken, truncation on a diverging epoch, a failed partition), its
flushes, crashes (lossy or not), controlled shutdowns and restarts, and its clock.
Each test pins one fact of Kafka's behaviour with exact numbers, several where it
is not what a log of (epoch, value) records, HWM = min(leader's HWM, LEO) and "a
lossy crash keeps the records below ``flushed``" would make of it."""

from __future__ import annotations

import pytest

from kafka_bridge.partition import CLOCK_BASE_MS, FetchAnswer, KafkaPartition, KafkaPartitionError
from sut.metadata import PartitionRegistration

EPOCHS = {1: 10, 2: 11, 3: 12}   # broker epochs


def broker(b: int, min_isr: int = 1) -> KafkaPartition:
    """Broker ``b``'s replica (no role yet), knowing every broker alive."""
    p = KafkaPartition(b, EPOCHS[b], min_isr)
    for other, epoch in EPOCHS.items():
        p.set_broker(other, epoch)
    return p


def reg(leader: int, leader_epoch: int, partition_epoch: int, isr=(1, 2), replicas=(1, 2)) -> PartitionRegistration:
    return PartitionRegistration(replicas, frozenset(isr), leader, leader_epoch, partition_epoch)


def replicate(leader: KafkaPartition, follower: KafkaPartition) -> tuple[tuple, FetchAnswer]:
    """One fetch of ``follower`` from ``leader`` through Kafka's fetcher (started for
    the follower's leader epoch, as ReplicaManager starts it after makeFollower,
    unless it runs): its request (fetch offset, last fetched epoch, leader epoch),
    the leader's answer, and the answer processed by the fetcher. Returns both."""
    state = follower.fetcher_state()
    if state is None or state[2] != follower.leader_epoch:
        follower.start_fetcher(leader.broker_id, follower.leader_epoch)
    request = follower.send_fetch()
    offset, last, epoch = request
    answer = leader.fetch(follower.broker_id, EPOCHS[follower.broker_id], epoch, offset, last)
    follower.process_fetch_response(offset, epoch, None, answer.high_watermark, answer.diverging_epoch,
                                    answer.records)
    return request, answer


def follower_with(records) -> KafkaPartition:
    """Broker 2 following broker 1 in leader epoch 1 (replicas [1, 2]), with
    ``records`` ((offset, epoch, value)) appended as a fetch answer in epoch
    ``max(epochs)``."""
    f = broker(2)
    assert f.make_follower(reg(1, max(e for _, e, _ in records), 1))
    f.append_as_follower(records, f.leader_epoch)
    return f


# ------------------------------------------------------------------ the follower

def test_a_follower_replicates_three_records_and_learns_the_hwm_a_fetch_later():
    """Leader 1 takes three writes; follower 2 (``makeFollower``: the leader epoch is
    new) fetches them at 0 with no last fetched epoch: its log is the leader's, one
    epoch entry (1, 0), HWM 0 (the answer's). Its fetch at 3 moves the leader's HWM
    to 3 but is answered with 0 (the HWM read before the fetch's update); the next
    one brings 3."""
    leader, f = broker(1), broker(2)
    assert leader.make_leader(reg(1, 1, 1))
    assert f.make_follower(reg(1, 1, 1))
    assert (f.leader, f.leader_epoch, f.partition_epoch, f.is_leader, f.latest_epoch) == (1, 1, 1, False, None)
    for v in (7, 8, 9):
        leader.append(v)
    replicate(leader, f)
    assert f.records == leader.records == ((0, 1, 7), (1, 1, 8), (2, 1, 9))
    assert (f.log_end_offset, f.high_watermark, f.epoch_entries, f.latest_epoch) == (3, 0, ((1, 0),), 1)
    replicate(leader, f)
    assert (leader.high_watermark, f.high_watermark) == (3, 0)
    replicate(leader, f)
    assert f.high_watermark == 3
    assert (f.recovery_point, f.log_start_offset) == (0, 0)   # nothing flushed


def test_make_follower_answers_whether_the_leader_epoch_is_new():
    """``makeFollower`` answers True only for a new leader epoch; a new partition
    epoch in the same leader epoch is taken, answered False; an older partition
    epoch is refused (False, nothing changes)."""
    f = broker(2)
    assert f.make_follower(reg(1, 1, 1))
    assert not f.make_follower(reg(1, 1, 2))
    assert (f.leader_epoch, f.partition_epoch) == (1, 2)
    assert not f.make_follower(reg(1, 2, 1))
    assert (f.leader_epoch, f.partition_epoch) == (1, 2)
    assert f.make_follower(reg(1, 2, 3))
    assert (f.leader_epoch, f.partition_epoch, f.isr, f.leader_epoch_start_offset) == (2, 3, frozenset(), None)


def test_the_followers_hwm_is_the_leaders_within_its_own_log_and_may_go_down():
    """``maybeUpdateHighWatermark``: the leader's HWM capped by the follower's LEO
    (2); a lower one is taken too (the HWM goes down); the same one changes nothing."""
    f = follower_with(((0, 1, 5), (1, 1, 6)))
    assert f.update_high_watermark(100) == 2
    assert f.update_high_watermark(100) is None
    assert (f.update_high_watermark(1), f.high_watermark) == (1, 1)


def test_batches_of_a_later_epoch_than_the_fetchs_are_not_appended():
    """``appendAsFollower`` in leader epoch 1 appends the batches up to the first one
    of a later epoch and none after it (KAFKA-18723)."""
    f = broker(2)
    f.make_follower(reg(1, 1, 1))
    assert f.append_as_follower(((0, 1, 5), (1, 2, 6), (2, 1, 7)), 1) == 1
    assert (f.records, f.epoch_entries) == (((0, 1, 5),), ((1, 0),))


def test_a_follower_takes_the_records_offsets_as_given():
    """The follower's log is not a list indexed by offset: Kafka appends a fetch
    answer at the offsets it carries, a gap included (offsets 2..4 never exist), and
    refuses one below its LEO (``UnexpectedAppendOffsetException``, which Kafka's
    error table calls UNKNOWN_SERVER_ERROR). Kafka's fetcher, started at LEO 2 before
    the gap, then has its fetch at 2 answered: the log end offset is no longer the
    fetch offset (ReplicaFetcherThread.processPartitionData's IllegalStateException),
    and the fetcher marks the partition failed."""
    f = follower_with(((0, 1, 5), (1, 1, 6)))
    f.start_fetcher(1, f.leader_epoch)
    assert f.send_fetch() == (2, 1, 1)
    assert f.append_as_follower(((5, 1, 7),), 1) == 6
    assert f.records == ((0, 1, 5), (1, 1, 6), (5, 1, 7))
    with pytest.raises(KafkaPartitionError) as e:
        f.append_as_follower(((2, 1, 8),), 1)
    assert e.value.error == "UNKNOWN_SERVER_ERROR"
    f.process_fetch_response(2, 1, None, 0, None, ())
    assert f.fetcher_state() is None and f.log_end_offset == 6


# ------------------------------------------------------------------ truncation

def _old_leader_and_new_leader() -> tuple[KafkaPartition, KafkaPartition]:
    """Broker 2 led epoch 1 and wrote a, b, c (0..2); broker 1 fetched a only. Broker
    1 leads epoch 2 (its Leader Epoch Start Offset 1) and writes d, e (1, 2); broker
    2 follows it in epoch 2 with its diverging suffix b, c of epoch 1."""
    old, new = broker(2), broker(1)
    assert old.make_leader(reg(2, 1, 1))
    assert new.make_follower(reg(2, 1, 1))
    old.append(1)
    replicate(old, new)
    old.append(2)
    old.append(3)
    assert new.make_leader(reg(1, 2, 2))
    assert new.leader_epoch_start_offset == 1
    new.append(4)
    new.append(5)
    assert old.make_follower(reg(1, 2, 2))
    return old, new


def test_a_follower_truncates_its_diverging_suffix_to_the_leaders_epoch_end():
    """Broker 2 fetches at 3 with last fetched epoch 1; the leader answers the
    diverging epoch (1, 1) (its epoch 1 ends at 1). Broker 2's own end of epoch 1 is
    its LEO 3, so it truncates to min(3, 1) = 1, without taking the answer's HWM;
    its next fetch, at 1, brings d and e."""
    old, new = _old_leader_and_new_leader()
    assert old.records == ((0, 1, 1), (1, 1, 2), (2, 1, 3))
    request, answer = replicate(new, old)
    assert (request, answer.diverging_epoch) == ((3, 1, 2), (1, 1))
    assert (old.records, old.epoch_entries, old.log_end_offset) == (((0, 1, 1),), ((1, 0),), 1)
    assert old.fetcher_state() == (1, 1, 2)
    replicate(new, old)
    assert old.records == new.records == ((0, 1, 1), (1, 2, 4), (2, 2, 5))
    assert old.epoch_entries == new.epoch_entries == ((1, 0), (2, 1))


def test_a_follower_that_does_not_know_the_diverging_epoch_truncates_in_rounds():
    """Truncation in rounds (``getOffsetTruncationState``). Broker 2 has a..e of
    epoch 1 (0..4) and x, y of epoch 3 (5, 6), an epoch it led alone; leader 1 of
    epoch 4 has a of epoch 1, b, c of epoch 2 and z of epoch 4. To the fetch at 7
    with last fetched epoch 3 the leader answers (2, 3). Broker 2 knows no epoch 2:
    its end offset for 2 is epoch 1's, 5, so it truncates to 5 (not to the leader's
    3), dropping x, y only; to its fetch at 5 with epoch 1 the leader answers (1, 1),
    an epoch both know: it truncates to 1; the fetch at 1 brings b, c, z."""
    f = broker(2)
    assert f.make_follower(reg(3, 1, 1, replicas=(1, 2, 3)))
    f.append_as_follower(tuple((o, 1, 10 + o) for o in range(5)), 1)
    assert f.make_leader(reg(2, 3, 3, replicas=(1, 2, 3)))
    f.append(8)
    f.append(9)
    leader = broker(1)
    assert leader.make_follower(reg(3, 2, 2, replicas=(1, 2, 3)))
    leader.append_as_follower(((0, 1, 10), (1, 2, 2), (2, 2, 3)), 2)
    assert leader.make_leader(reg(1, 4, 4, replicas=(1, 2, 3)))
    leader.append(4)
    assert f.make_follower(reg(1, 4, 4, replicas=(1, 2, 3)))
    assert (f.log_end_offset, f.epoch_entries, f.end_offset_for_epoch(2)) == (7, ((1, 0), (3, 5)), (1, 5))
    request, answer = replicate(leader, f)
    assert (request, answer.diverging_epoch) == ((7, 3, 4), (2, 3))
    assert (f.log_end_offset, f.epoch_entries, f.latest_epoch) == (5, ((1, 0),), 1)
    request, answer = replicate(leader, f)
    assert (request, answer.diverging_epoch) == ((5, 1, 4), (1, 1))
    assert f.records == ((0, 1, 10),)
    replicate(leader, f)
    assert f.records == leader.records == ((0, 1, 10), (1, 2, 2), (2, 2, 3), (3, 4, 4))


def test_truncating_at_the_log_end_drops_a_leader_epoch_without_records():
    """A replica that led epoch 2 without a write has the entry (2, 3) and latest
    epoch 2, which its fetcher sends as its last fetched epoch although no record
    of its log has epoch 2. ``truncateTo`` its LEO removes no record but drops the
    entry: the latest epoch is then 1, its last record's."""
    f = follower_with(((0, 1, 5), (1, 1, 6), (2, 1, 7)))
    assert f.make_leader(reg(2, 2, 2))
    assert f.make_follower(reg(1, 3, 3))
    assert (f.epoch_entries, f.latest_epoch) == (((1, 0), (2, 3)), 2)
    assert not f.truncate_to(3)
    assert (f.epoch_entries, f.latest_epoch, f.log_end_offset) == (((1, 0),), 1, 3)


# ------------------------------------------------------------------ flush and crashes

def _four_records_two_flushed() -> KafkaPartition:
    """Follower 2 with a, b of epoch 1 and c, d of epoch 2, flushed after b, HWM 3."""
    f = follower_with(((0, 1, 1), (1, 1, 2)))
    f.make_follower(reg(1, 2, 2))
    f.flush()
    assert f.recovery_point == 2
    f.append_as_follower(((2, 2, 3), (3, 2, 4)), 2)
    f.update_high_watermark(3)
    assert (f.log_end_offset, f.recovery_point, f.high_watermark, f.epoch_entries) == (4, 2, 3, ((1, 0), (2, 2)))
    return f


def test_a_lossy_crash_keeps_exactly_the_flushed_records_and_their_epochs():
    """The unflushed c, d are cut from the segment file; Kafka's recovery finds the
    log's end at 2 and drops the epoch entry (2, 2) the epoch checkpoint kept: epoch
    1, the latest, ends at 2 (epoch 2, above every cached epoch, has no end offset
    at all). The HWM checkpoint (3) is capped at the LEO: 2."""
    f = _four_records_two_flushed()
    f.unclean_shutdown(lossy=True)
    assert not f.is_running and not f.last_shutdown_clean
    assert f.records == ((0, 1, 1), (1, 1, 2))
    assert (f.epoch_entries, f.end_offset_for_epoch(1), f.end_offset_for_epoch(2)) == (((1, 0),), (1, 2), None)
    assert (f.log_end_offset, f.high_watermark, f.recovery_point) == (2, 2, 2)
    f.restart(21)
    assert (f.records, f.high_watermark, f.leader_epoch, f.leader) == (((0, 1, 1), (1, 1, 2)), 2, -1, None)


def test_a_lossless_crash_keeps_every_record_and_the_old_recovery_point():
    """Without loss every record survives, the HWM (3) too; the recovery point is the
    checkpoint's, 2: c and d are still unflushed, and a second, lossy crash loses
    them."""
    f = _four_records_two_flushed()
    f.unclean_shutdown(lossy=False)
    assert not f.last_shutdown_clean
    assert f.records == ((0, 1, 1), (1, 1, 2), (2, 2, 3), (3, 2, 4))
    assert (f.epoch_entries, f.high_watermark, f.recovery_point) == (((1, 0), (2, 2)), 3, 2)
    f.restart(21)
    f.unclean_shutdown(lossy=True)
    assert (f.log_end_offset, f.high_watermark) == (2, 2)


def test_a_clean_shutdown_flushes_and_keeps_all_four_records():
    """A controlled shutdown flushes (recovery point 4) and leaves the clean-shutdown
    marker, which the next start reads (no recovery); a lossy crash right after the
    restart loses nothing."""
    f = _four_records_two_flushed()
    f.controlled_shutdown()
    assert f.last_shutdown_clean
    assert f.records == ((0, 1, 1), (1, 1, 2), (2, 2, 3), (3, 2, 4))
    assert (f.epoch_entries, f.high_watermark, f.recovery_point) == (((1, 0), (2, 2)), 3, 4)
    f.restart(21)
    f.unclean_shutdown(lossy=True)
    assert (f.log_end_offset, f.high_watermark, f.recovery_point, f.last_shutdown_clean) == (4, 3, 4, False)


def test_a_restart_forgets_a_leader_epoch_without_records_even_after_a_clean_shutdown():
    """Loading a log truncates its epoch cache at the log end: the entry (2, 3) of an
    epoch led without a write is gone after a clean restart too."""
    f = follower_with(((0, 1, 5), (1, 1, 6), (2, 1, 7)))
    assert f.make_leader(reg(2, 2, 2))
    assert f.epoch_entries == ((1, 0), (2, 3))
    f.controlled_shutdown()
    assert (f.epoch_entries, f.latest_epoch, f.log_end_offset) == (((1, 0),), 1, 3)


def test_after_a_lossy_crash_the_replica_leads_again_from_its_log_end():
    """Restarted in broker epoch 21, the replica is a new Partition (no role, leader
    epoch -1, partition epoch 0); made leader of epoch 3, its Leader Epoch Start
    Offset is its LEO 2, the entry (3, 2) is assigned, its next write is at 2 in
    epoch 3, and a follower of it replicates a, b and that write."""
    f = _four_records_two_flushed()
    f.unclean_shutdown(lossy=True)
    f.restart(21)
    assert (f.is_running, f.leader_epoch, f.partition_epoch, f.is_leader) == (True, -1, 0, False)
    assert f.make_leader(reg(2, 3, 3, isr=(2,)))
    assert (f.is_leader, f.leader_epoch_start_offset, f.epoch_entries) == (True, 2, ((1, 0), (3, 2)))
    assert f.append(9) == 2
    other = broker(1)
    assert other.make_follower(reg(2, 3, 3, isr=(2,)))
    replicate(f, other)
    assert other.records == f.records == ((0, 1, 1), (1, 1, 2), (2, 3, 9))


def test_a_down_broker_takes_no_calls_but_shows_its_log():
    """Between a shutdown and ``restart`` the replica has no Partition: calls raise,
    reads show the log a restart will have; a running broker cannot be restarted."""
    f = follower_with(((0, 1, 5),))
    f.unclean_shutdown(lossy=False)
    for call in (lambda: f.append(1), lambda: f.flush(), lambda: f.make_follower(reg(1, 2, 2)),
                 lambda: f.append_as_follower(((1, 1, 6),), 1), lambda: f.truncate_to(0),
                 lambda: f.unclean_shutdown(lossy=True), lambda: f.controlled_shutdown()):
        with pytest.raises(RuntimeError):
            call()
    assert (f.records, f.is_leader, f.leader, f.isr, f.leader_epoch_start_offset) == (((0, 1, 5),), False, None,
                                                                                       frozenset(), None)
    f.restart(21)
    with pytest.raises(RuntimeError):
        f.restart(22)


# ------------------------------------------------------------------ the clock

def test_model_time_t_is_kafka_time_clock_base_plus_t():
    """The partition's clock starts at CLOCK_BASE_MS; ``set_now_ms`` sets it (model
    time 45 000 is Kafka's 1 045 000), never back; a follower's fetch is timed on it."""
    leader = broker(1)
    assert leader.now_ms == CLOCK_BASE_MS == 1_000_000
    leader.make_leader(reg(1, 1, 1))
    leader.set_now_ms(CLOCK_BASE_MS + 45_000)
    leader.fetch(2, EPOCHS[2], 1, 0, None)
    assert (leader.now_ms, leader.follower_state(2).last_fetch_time_ms) == (1_045_000, 1_045_000)
    with pytest.raises(ValueError):
        leader.set_now_ms(CLOCK_BASE_MS)
