"""Chapter 3 (log divergence) worked examples, replayed on the reference model.

Every test starts from ``initial_state(config)`` and moves only through public
actions (``model.step``, via ``scenario.Scenario``), then asserts the exact
numbers of the chapter: §3.1 steps 1–5 and the §3.3 cases A–G
(images/divergence_case_*.svg).

Notation: ``Record(epoch, value)``; Produce writes the unique values 1, 2, 3, ...
in order, so the n-th write of a scenario has value n.
"""

from __future__ import annotations

from typing import Optional

from model import Config, EpochEndOffset, FenceBroker, Reassign, Record, Role, epoch_entries
from scenario import Scenario


def assert_replica(sc: Scenario, broker: int, *, leo: int, hwm: int, leader_epoch: int,
                   log: Optional[tuple[Record, ...]] = None) -> None:
    r = sc.replica(broker)
    assert r is not None, f"broker {broker} hosts no replica"
    got = dict(leo=r.leo, hwm=r.hwm, leader_epoch=r.leader_epoch)
    want = dict(leo=leo, hwm=hwm, leader_epoch=leader_epoch)
    assert got == want, f"replica {broker}: {got} != {want}"
    if log is not None:
        assert r.log == log, f"replica {broker} log"


# --------------------------------------------------------------------- §3.1

def test_3_1_how_logs_can_diverge():
    """§3.1 steps 1–5: record B, written by leader 1 in epoch 1 but never
    replicated, is truncated from replica 1 once it follows replica 2 in epoch 2."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3)))
    A, B = Record(epoch=1, value=1), Record(epoch=1, value=2)

    # 1. Replicas [r1, r2, r3], ISR=[r1, r2, r3], Leader=r1;
    #    every replica LEO=0, HWM=0, LeaderEpoch=1, Log=[].
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.leader_epoch) == ((1, 2, 3), {1, 2, 3}, 1, 1)
    assert sc.replica(1).role == Role.LEADER
    for b in (1, 2, 3):
        assert_replica(sc, b, leo=0, hwm=0, leader_epoch=1, log=())

    # 2. Leader receives record A in epoch 1; r2 and r3 fetch at offset 0 and get A
    #    with HWM 0.
    sc.produce(1)
    reqs = [sc.send_fetch(f) for f in (2, 3)]
    resps = [sc.receive_fetch_request(req) for req in reqs]
    for req, resp in zip(reqs, resps):
        assert (req.fetch_offset, req.last_fetched_epoch) == (0, None)
        assert (resp.records, resp.hwm, resp.diverging_epoch) == ((A,), 0, None)
        sc.receive_fetch_response(resp)
    for b in (1, 2, 3):
        assert_replica(sc, b, leo=1, hwm=0, leader_epoch=1, log=(A,))

    # 3. r2 and r3 fetch at offset 1: every ISR member has offset 0, so the leader
    #    advances its HWM to 1; it also receives record B in epoch 1.
    #    The responses (carrying HWM 1) are still in flight: the followers keep HWM 0.
    reqs = [sc.send_fetch(f) for f in (2, 3)]
    assert [req.fetch_offset for req in reqs] == [1, 1]
    assert sc.replica(1).hwm == 0
    sc.receive_fetch_request(reqs[0])
    assert sc.replica(1).hwm == 0  # r3's fetch offset is still 0
    sc.receive_fetch_request(reqs[1])
    assert sc.replica(1).hwm == 1
    sc.produce(1)
    assert_replica(sc, 1, leo=2, hwm=1, leader_epoch=1, log=(A, B))
    assert_replica(sc, 2, leo=1, hwm=0, leader_epoch=1, log=(A,))
    assert_replica(sc, 3, leo=1, hwm=0, leader_epoch=1, log=(A,))

    # 4. Before B is replicated, the controller fences r1 and elects r2 in epoch 2.
    sc.do(FenceBroker(1))
    p = sc.partition
    assert (p.leader, p.leader_epoch, p.isr) == (2, 2, {2, 3})
    sc.sync_metadata(2)  # r2 learns it leads epoch 2
    assert sc.replica(2).role == Role.LEADER
    # The chapter prints "Replica 1: LEO=2, HWM=2" here. That is a typo: the HWM
    # is the offset every ISR member has reached, and neither follower has B, so
    # r1's HWM stays 1 (as in step 3); a fence does not move a replica's HWM.
    assert_replica(sc, 1, leo=2, hwm=1, leader_epoch=1, log=(A, B))
    assert_replica(sc, 2, leo=1, hwm=0, leader_epoch=2, log=(A,))
    assert_replica(sc, 3, leo=1, hwm=0, leader_epoch=1, log=(A,))

    # 5. r1 is told to become a follower in epoch 2; its first fetch detects the
    #    divergence and it removes offset 1 (record B) from its log.
    sc.sync_metadata(1)
    r1 = sc.replica(1)
    assert (r1.role, r1.leader, r1.leader_epoch) == (Role.FOLLOWER, 2, 2)
    req, resp = sc.deliver_fetch(1)
    assert (req.dst, req.leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (2, 2, 2, 1)
    # Leader r2's cache is [1 => 0, 2 => 1]: epoch 1 ends at offset 1 < fetch offset 2.
    assert resp.diverging_epoch == EpochEndOffset(epoch=1, end_offset=1)
    assert resp.records == ()
    assert_replica(sc, 1, leo=1, hwm=1, leader_epoch=2, log=(A,))
    assert_replica(sc, 2, leo=1, hwm=0, leader_epoch=2, log=(A,))


# --------------------------------------------------------------------- §3.3
#
# Each case builds the figure's two logs through elections (MinISR 1, brokers
# (1, 2, 3, 4); the controller elects the first ISR member in replica order and
# bumps the leader epoch on every leader change and on a completed reassignment,
# so a Reassign that only removes a replica bumps the epoch keeping the leader).
# Then both sides learn the new epoch and the follower sends its first fetch.
# Caches are written as the figures write them: [(epoch, start offset), ...].

CONFIG = dict(brokers=(1, 2, 3, 4), min_isr=1)


def check_first_fetch(sc: Scenario, *, follower: int, leader: int,
                      leader_epoch: int, leader_leo: int, leader_cache: list[tuple[int, int]],
                      follower_leo: int, follower_cache: list[tuple[int, int]],
                      fetch: tuple[int, int], diverging: Optional[EpochEndOffset],
                      truncate_to: Optional[int]) -> None:
    """Replicate metadata to both sides, check the figure's replica states, run the
    follower's first fetch in the new epoch and check request, response and the
    follower's log afterwards (truncated to ``truncate_to``, or, when None,
    the leader's records appended)."""
    sc.sync_metadata(leader)
    sc.sync_metadata(follower)
    ldr, fol = sc.replica(leader), sc.replica(follower)

    # The figure's "before" state: both replicas know the new leader epoch.
    assert ldr.role == Role.LEADER
    assert (fol.role, fol.leader) == (Role.FOLLOWER, leader)
    assert (ldr.leader_epoch, ldr.leo) == (leader_epoch, leader_leo)
    assert leader_cache_of(sc, leader) == leader_cache
    assert (fol.leader_epoch, fol.leo) == (leader_epoch, follower_leo)
    assert epoch_entries(fol.log) == follower_cache
    follower_log, leader_log = fol.log, ldr.log

    # Fetch request {fetchOffset, lastFetchedEpoch}.
    req = sc.send_fetch(follower)
    assert (req.dst, req.leader_epoch) == (leader, leader_epoch)
    assert (req.fetch_offset, req.last_fetched_epoch) == fetch

    # Response {divergingEpoch, records}.
    resp = sc.receive_fetch_request(req)
    assert resp.error is None
    assert resp.diverging_epoch == diverging
    sc.receive_fetch_response(resp)

    fol = sc.replica(follower)
    if truncate_to is None:
        # No divergence: the follower appends the returned records as normal.
        assert resp.records == leader_log[fetch[0]:] and resp.records
        assert fol.log == leader_log
    else:
        # Divergence: no records; the follower truncates to
        # min(own EOE(diverging epoch), leader EOE) (exclusive).
        assert resp.records == ()
        assert fol.leo == truncate_to
        assert fol.log == follower_log[:truncate_to]
    assert sc.replica(leader).log == leader_log  # the leader's log is untouched


def leader_cache_of(sc: Scenario, leader: int) -> list[tuple[int, int]]:
    """The leader's Start Offset for Leader Epoch cache, including the entry for
    its current epoch at its LESO (no record written in it yet)."""
    r = sc.replica(leader)
    return epoch_entries(r.log, (r.leader_epoch, r.leso))


def epochs(sc: Scenario, broker: int) -> list[int]:
    return [rec.epoch for rec in sc.replica(broker).log]


def test_3_3_1_case_a_follower_behind_same_epoch():
    """§3.3.1 Case A (Fig 4): the leader has extra epoch-1 records; no divergence."""
    sc = Scenario(Config(assignment=(1, 3, 2), **CONFIG))
    sc.produce(1, 2)
    sc.deliver_fetch(2)              # follower-to-be (2) gets offsets 0..1
    sc.produce(1, 2)
    sc.deliver_fetch(3)              # new-leader-to-be (3) gets offsets 0..3
    sc.do(FenceBroker(1))            # 3 is the first ISR member in replica order (1, 3, 2)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (3, 2)
    assert epochs(sc, 3) == [1, 1, 1, 1] and epochs(sc, 2) == [1, 1]

    check_first_fetch(
        sc, follower=2, leader=3,
        # New Leader: LeaderEpoch=2, LEO=4, LatestEpoch=1, Cache=[1 => 0, 2 => 4]
        leader_epoch=2, leader_leo=4, leader_cache=[(1, 0), (2, 4)],
        # Follower: LeaderEpoch=2, LEO=2, LatestEpoch=1, Cache=[1 => 0]
        follower_leo=2, follower_cache=[(1, 0)],
        # {fetchOffset=2, lastFetchedEpoch=1} -> {divergingEpoch=None, records=...}
        fetch=(2, 1), diverging=None, truncate_to=None)
    assert epochs(sc, 2) == [1, 1, 1, 1]


def test_3_3_2_case_b_follower_behind_higher_epoch():
    """§3.3.2 Case B (Fig 5): the leader has extra records of a higher epoch; no
    divergence. (Fig 5 prints the leader's LatestEpoch=3; its log's last record is
    of epoch 2 — epoch 3 is only in its cache, at the LEO.)"""
    sc = Scenario(Config(assignment=(1, 2, 3), **CONFIG))
    sc.produce(1, 2)
    sc.deliver_fetch(2)
    sc.deliver_fetch(3)              # everyone has [e1, e1]
    sc.do(FenceBroker(1))            # leader 2 in epoch 2
    sc.sync_metadata(2)
    sc.produce(2, 2)                 # leader 2 writes [e2, e2], not replicated
    sc.do(Reassign((2, 3)))          # drop replica 1: completes at once, epoch 3, leader still 2
    p = sc.partition
    assert (p.replicas, p.leader, p.leader_epoch, p.reassigning) == ((2, 3), 2, 3, False)
    assert epochs(sc, 2) == [1, 1, 2, 2]

    check_first_fetch(
        sc, follower=3, leader=2,
        # New Leader: LeaderEpoch=3, LEO=4, Cache=[1 => 0, 2 => 2, 3 => 4]
        leader_epoch=3, leader_leo=4, leader_cache=[(1, 0), (2, 2), (3, 4)],
        # Follower: LeaderEpoch=3, LEO=2, LatestEpoch=1, Cache=[1 => 0]
        follower_leo=2, follower_cache=[(1, 0)],
        # {fetchOffset=2, lastFetchedEpoch=1} -> {divergingEpoch=None, records=...}
        fetch=(2, 1), diverging=None, truncate_to=None)
    assert epochs(sc, 3) == [1, 1, 2, 2]


def test_3_3_3_case_c_follower_ahead_same_epoch():
    """§3.3.3 Case C (Fig 6): the follower has extra epoch-1 records.
    Truncation offset = min(local EOE(1)=4, leader EOE(1)=2) = 2."""
    sc = Scenario(Config(assignment=(1, 2, 3), **CONFIG))
    sc.produce(1, 2)
    sc.deliver_fetch(2)              # new-leader-to-be (2) gets offsets 0..1
    sc.produce(1, 2)
    sc.deliver_fetch(3)              # follower-to-be (3) gets offsets 0..3
    sc.do(FenceBroker(1))            # leader 2 in epoch 2
    assert (sc.partition.leader, sc.partition.leader_epoch) == (2, 2)

    check_first_fetch(
        sc, follower=3, leader=2,
        # New Leader: LeaderEpoch=2, LEO=2, LatestEpoch=1, Cache=[1 => 0, 2 => 2]
        leader_epoch=2, leader_leo=2, leader_cache=[(1, 0), (2, 2)],
        # Follower: LeaderEpoch=2, LEO=4, LatestEpoch=1, Cache=[1 => 0]
        follower_leo=4, follower_cache=[(1, 0)],
        # {fetchOffset=4, lastFetchedEpoch=1} -> {divergingEpoch={epoch=1, endOffset=2}}
        fetch=(4, 1), diverging=EpochEndOffset(epoch=1, end_offset=2), truncate_to=2)


def _case_d_prefix() -> Scenario:
    """[e1, e1] everywhere; leader 2 (epoch 2) writes [e2, e2] that nobody gets;
    then 2 is fenced and 3 leads epoch 3 with LEO 2."""
    sc = Scenario(Config(assignment=(1, 2, 3), **CONFIG))
    sc.produce(1, 2)
    sc.deliver_fetch(2)
    sc.deliver_fetch(3)
    sc.do(FenceBroker(1))            # leader 2, epoch 2
    sc.sync_metadata(2)
    sc.produce(2, 2)
    sc.do(FenceBroker(2))            # leader 3, epoch 3 (broker 2 still runs and can fetch)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (3, 3)
    assert epochs(sc, 2) == [1, 1, 2, 2] and epochs(sc, 3) == [1, 1]
    return sc


def test_3_3_4_case_d_follower_ahead_higher_epoch():
    """§3.3.4 Case D (Fig 7): the follower has extra records of epoch 2, which the
    leader never had. The leader answers epoch 1 ending at its epoch-3 start (the
    LEO 2). Truncation offset = min(local EOE(1)=2, leader EOE(1)=2) = 2."""
    sc = _case_d_prefix()
    check_first_fetch(
        sc, follower=2, leader=3,
        # New Leader: LeaderEpoch=3, LEO=2, Cache=[1 => 0, 3 => 2]
        leader_epoch=3, leader_leo=2, leader_cache=[(1, 0), (3, 2)],
        # Follower: LeaderEpoch=3, LEO=4, LatestEpoch=2, Cache=[1 => 0, 2 => 2]
        follower_leo=4, follower_cache=[(1, 0), (2, 2)],
        # {fetchOffset=4, lastFetchedEpoch=2} -> {divergingEpoch={epoch=1, endOffset=2}}
        fetch=(4, 2), diverging=EpochEndOffset(epoch=1, end_offset=2), truncate_to=2)


def test_3_3_5_case_e_forked_logs():
    """§3.3.5 Case E (Fig 8): follower fork [e2, e2] vs leader fork [e3, e3] after a
    common [e1, e1]. Truncation offset = min(2, 2) = 2."""
    sc = _case_d_prefix()
    sc.sync_metadata(3)
    sc.produce(3, 2)                 # leader 3 writes [e3, e3]
    sc.do(Reassign((2, 3)))          # drop replica 1: epoch 4, leader still 3
    p = sc.partition
    assert (p.replicas, p.leader, p.leader_epoch, p.reassigning) == ((2, 3), 3, 4, False)

    check_first_fetch(
        sc, follower=2, leader=3,
        # New Leader: LeaderEpoch=4, LEO=4, Cache=[1 => 0, 3 => 2, 4 => 4]
        leader_epoch=4, leader_leo=4, leader_cache=[(1, 0), (3, 2), (4, 4)],
        # Follower: LeaderEpoch=4, LEO=4, LatestEpoch=2, Cache=[1 => 0, 2 => 2]
        follower_leo=4, follower_cache=[(1, 0), (2, 2)],
        # {fetchOffset=4, lastFetchedEpoch=2} -> {divergingEpoch={epoch=1, endOffset=2}}
        fetch=(4, 2), diverging=EpochEndOffset(epoch=1, end_offset=2), truncate_to=2)


def test_3_3_6_case_f_forked_leader_has_more_epoch_1():
    """§3.3.6 Case F (Fig 9): follower [e1, e2, e2] vs leader [e1, e1]. The leader
    answers epoch 1 ending at 2, but the follower's own epoch 1 ends at 1.
    Truncation offset = min(1, 2) = 1."""
    sc = Scenario(Config(assignment=(1, 2, 3), **CONFIG))
    sc.produce(1)
    sc.deliver_fetch(2)              # follower-to-be (2) gets offset 0
    sc.produce(1)
    sc.deliver_fetch(3)              # new-leader-to-be (3) gets offsets 0..1
    sc.do(FenceBroker(1))            # leader 2, epoch 2
    sc.sync_metadata(2)
    sc.produce(2, 2)                 # leader 2 writes [e2, e2] at offsets 1..2
    sc.do(FenceBroker(2))            # leader 3, epoch 3
    assert (sc.partition.leader, sc.partition.leader_epoch) == (3, 3)

    check_first_fetch(
        sc, follower=2, leader=3,
        # New Leader: LeaderEpoch=3, LEO=2, Cache=[1 => 0, 3 => 2]
        leader_epoch=3, leader_leo=2, leader_cache=[(1, 0), (3, 2)],
        # Follower: LeaderEpoch=3, LEO=3, LatestEpoch=2, Cache=[1 => 0, 2 => 1]
        follower_leo=3, follower_cache=[(1, 0), (2, 1)],
        # {fetchOffset=3, lastFetchedEpoch=2} -> {divergingEpoch={epoch=1, endOffset=2}}
        fetch=(3, 2), diverging=EpochEndOffset(epoch=1, end_offset=2), truncate_to=1)


def test_3_3_7_case_g_no_common_epoch():
    """§3.3.7 Case G (Fig 10): follower [e2] vs leader [e1, e3]: no common epoch.
    The follower has no epoch <= 1, so its own lookup gives offset 0.
    Truncation offset = min(0, 1) = 0: the whole log goes.

    Fig 10 prints the follower's Cache=[1 => 0]; its only record is of epoch 2, so
    the cache is [2 => 0] (the text confirms: "the follower does not have an
    epoch 1 or any lower epoch")."""
    sc = Scenario(Config(assignment=(1, 2, 3), **CONFIG))
    sc.produce(1)
    sc.deliver_fetch(3)              # new-leader-to-be (3) gets [e1]; 2 gets nothing
    sc.do(FenceBroker(1))            # leader 2, epoch 2, empty log
    sc.sync_metadata(2)
    sc.produce(2)                    # leader 2 writes [e2]
    sc.do(FenceBroker(2))            # leader 3, epoch 3
    sc.sync_metadata(3)
    sc.produce(3)                    # leader 3 writes [e1, e3]
    sc.do(Reassign((2, 3)))          # drop replica 1: epoch 4, leader still 3
    p = sc.partition
    assert (p.replicas, p.leader, p.leader_epoch, p.reassigning) == ((2, 3), 3, 4, False)

    check_first_fetch(
        sc, follower=2, leader=3,
        # New Leader: LeaderEpoch=4, LEO=2, Cache=[1 => 0, 3 => 1, 4 => 2]
        leader_epoch=4, leader_leo=2, leader_cache=[(1, 0), (3, 1), (4, 2)],
        # Follower: LeaderEpoch=4, LEO=1, LatestEpoch=2, Cache=[2 => 0] (see docstring)
        follower_leo=1, follower_cache=[(2, 0)],
        # {fetchOffset=1, lastFetchedEpoch=2} -> {divergingEpoch={epoch=1, endOffset=1}}
        fetch=(1, 2), diverging=EpochEndOffset(epoch=1, end_offset=1), truncate_to=0)
