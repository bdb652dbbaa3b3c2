"""The worked examples of chapter 6 (replication correctness), replayed on the
reference model through public actions only.

Each test starts from ``initial_state(config)`` and drives the model with
``checked_step`` (``model.step``, then every property of ``properties.ALL`` must
hold in the new state); after every step the chapter lists, it asserts the exact partition
state (leader, ISR, ELR, epochs) and the replicas' LEO/HWM/LESO/Maximal ISR.

Kafka wording -> model: "the controller fences broker b" is ``FenceBroker(b)``;
"broker b restarts after an unclean shutdown" is ``UncleanShutdown(b, lossy=True)``
followed (once fenced) by ``StartBroker(b)``, which registers it with an empty
broker epoch; a broker only acts on a controller change once it has replicated
the metadata record (``ReplicateMetadata``).
"""

from __future__ import annotations

from typing import Iterable, Optional

import pytest

from model import (AlterPartitionRequest, AlterPartitionResponse, BrokerStatus, ClusterState,
                   Config, Consume, DropMessage, FenceBroker, Flush, ListOffsets, ProposeIsrExpand,
                   ProposeIsrShrink, Produce, Reassign, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchResponse, Record, ReplicateMetadata,
                   Role, StartBroker, UncleanShutdown, UnfenceBroker, initial_state,
                   why_not_enabled)

from scenario import (assert_partition, assert_replica, checked_step, deliver_fetch, only_new_message,
                      receive_fetch_request, send_fetch, sync_all)

# --------------------------------------------------------------------------- helpers


def _propose(state: ClusterState, leader: int, follower: int, expand: bool) -> tuple[ClusterState, int]:
    """ProposeIsrExpand/Shrink; returns the state and the AlterPartitionRequest's id."""
    action = ProposeIsrExpand(leader, follower) if expand else ProposeIsrShrink(leader, follower)
    after = checked_step(state, action)
    return after, only_new_message(state, after, AlterPartitionRequest)


def _controller_handles(state: ClusterState, req_id: int) -> tuple[ClusterState, AlterPartitionResponse]:
    """ReceiveAlterPartition; returns the state and the response in flight."""
    after = checked_step(state, ReceiveAlterPartition(req_id))
    resp = after.network.get(only_new_message(state, after, AlterPartitionResponse))
    return after, resp


def _alter(state: ClusterState, leader: int, follower: int, expand: bool) -> ClusterState:
    """Propose + the controller accepting it + the leader handling the response."""
    state, req = _propose(state, leader, follower, expand)
    state, resp = _controller_handles(state, req)
    assert resp.error is None, f"AlterPartition rejected: {resp.error}"
    return checked_step(state, ReceiveAlterPartitionResponse(resp.id))


def _produce(state: ClusterState, leader: int, n: int) -> ClusterState:
    for _ in range(n):
        state = checked_step(state, Produce(leader, state.history.next_value))
    return state


def _replicate_fully(state: ClusterState, leader: int, followers: Iterable[int]) -> ClusterState:
    """Fetch rounds until every follower has the leader's whole log and the leader's
    HWM equals its LEO (three rounds suffice: data, fetch offsets, HWM)."""
    followers = tuple(followers)
    for _ in range(3):
        for f in followers:
            state = deliver_fetch(state, f)
    r = state.replica(leader)
    assert r.hwm == r.leo
    for f in followers:
        assert (state.replica(f).leo, state.replica(f).hwm) == (r.leo, r.hwm)
    return state


def _assert_leader_isr(state: ClusterState, leader: int, *, isr: Iterable[int],
                       pending: Optional[Iterable[int]], maximal: Iterable[int]) -> None:
    """The leader replica's committed ISR, proposed (pending) ISR and Maximal ISR."""
    r = state.replica(leader)
    assert r.role == Role.LEADER
    assert r.isr == set(isr)
    assert r.pending_isr == (None if pending is None else set(pending))
    assert r.maximal_isr == set(maximal)


def _last_list_offsets(state: ClusterState) -> tuple[int, int, Optional[int]]:
    """The last ListOffsets answer as (answering leader, its leader epoch, HWM or None)."""
    a = state.history.list_offsets[-1]
    return (a.broker, a.leader_epoch, a.hwm)


def _assert_acked_writes_on(state: ClusterState, broker: int) -> None:
    log = state.replica(broker).log
    for w in state.history.acked:
        assert w.offset < len(log) and log[w.offset].value == w.value, \
            f"acked write {w} lost on broker {broker} (log {log})"


# ------------------------------------------------------------ §6.4.1 / §6.4.2


def test_lagging_local_hwm_and_list_offsets_6_4_1_and_6_4_2():
    """§6.4.1 Example of a lagging Local HWM, continued with §6.4.2: the newly elected
    leader answers ListOffsets with "unknown" until its Local HWM reaches its LESO.

    RF 3, MinISR 2. (The chapter's "Leader=0" / "Replica 0" at steps 1-2 and
    "Leader=1" at step 6 are typos for r1 and r2: the text elects replica 2.)
    """
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))

    # 1. Replicas=[r1,r2,r3], ISR=[r1,r2,r3], Leader=r1; every replica LEO=0, HWM=0.
    assert_partition(s, leader=1, isr=[1, 2, 3], leader_epoch=1)
    for b in (1, 2, 3):
        assert_replica(s, b, leo=0, hwm=0)

    # 2. The leader receives a write with one record: Replica 1: LEO=1, HWM=0.
    s = checked_step(s, Produce(1, 1))
    assert_replica(s, 1, leo=1, hwm=0)

    # 3. r2 and r3 fetch with fetchOffset=0; the leader responds with its one record.
    s = deliver_fetch(s, 2)
    s = deliver_fetch(s, 3)
    for b in (1, 2, 3):
        assert_replica(s, b, leo=1, hwm=0)

    # 4. r2 and r3 fetch with fetchOffset=1: the leader advances the HWM to 1, the True
    #    HWM is 1. Their responses (carrying HWM 1) have not arrived: the followers'
    #    HWM is still 0. (They never arrive; the network loses them.)
    s, req2 = send_fetch(s, 2)
    s, req3 = send_fetch(s, 3)
    s, resp2 = receive_fetch_request(s, req2)
    assert_replica(s, 1, leo=1, hwm=0)         # still waiting for r3
    s, resp3 = receive_fetch_request(s, req3)
    s = checked_step(s, DropMessage(resp2))
    s = checked_step(s, DropMessage(resp3))
    assert_replica(s, 1, leo=1, hwm=1)
    assert_replica(s, 2, leo=1, hwm=0)
    assert_replica(s, 3, leo=1, hwm=0)
    assert s.history.true_hwm == 1
    assert [(w.value, w.offset) for w in s.history.acked] == [(1, 0)]

    # 5. A consumer consumes offset 0 (and commits its consumer offset 1).
    s = checked_step(s, Consume())
    assert s.history.consumed == (Record(1, 1),)
    s = checked_step(s, ListOffsets())
    assert _last_list_offsets(s) == (1, 1, 1)

    # 6. The controller fences r1 and elects r2: ISR=[r2,r3], Leader=r2.
    s = checked_step(s, FenceBroker(1))
    assert_partition(s, leader=2, isr=[2, 3], elr=[], leader_epoch=2)
    # The new leader is not acting in leader epoch 2 yet: clients get no answer.
    assert why_not_enabled(s, ListOffsets()) is not None
    assert why_not_enabled(s, Consume()) is not None
    s = sync_all(s, 2)
    r2 = s.replica(2)
    assert (r2.role, r2.leader_epoch) == (Role.LEADER, 2)
    assert_replica(s, 1, leo=1, hwm=1)
    assert_replica(s, 2, leo=1, hwm=0)         # leader with a stale Local HWM (< True HWM 1)
    assert_replica(s, 3, leo=1, hwm=0)
    assert s.history.true_hwm == 1

    # §6.4.2: on election the leader sets LESO = LEO = 1. HWM 0 < LESO 1, so the leader
    # cannot know it has reached the True HWM: ListOffsets answers "unknown".
    assert r2.leso == 1
    s = checked_step(s, ListOffsets())
    assert _last_list_offsets(s) == (2, 2, None)
    # The consumer cannot go backwards either: nothing new below the leader's HWM.
    assert why_not_enabled(s, Consume()) is not None

    # Follower r3 learns of the new leader and fetches from it at offset 1: the leader
    # advances its HWM to 1 = LESO, and ListOffsets answers 1 again (monotonic).
    s = sync_all(s, 3)
    assert (s.replica(3).role, s.replica(3).leader, s.replica(3).leader_epoch) == (Role.FOLLOWER, 2, 2)
    s = deliver_fetch(s, 3)
    assert_replica(s, 2, leo=1, hwm=1)
    assert_replica(s, 3, leo=1, hwm=1)
    s = checked_step(s, ListOffsets())
    assert _last_list_offsets(s) == (2, 2, 1)
    assert [a.hwm for a in s.history.list_offsets] == [1, None, 1]


# ------------------------------------------------------------------ §6.5.3


def test_isr_expansion_waits_for_leso_with_lagging_hwm_6_5_3():
    """§6.5.3 ISR expansion and Applied HWM Monotonicity, on the §6.4.1 situation: a
    new leader whose Local HWM (0) lags the True HWM (1) must not add an out-of-sync
    follower whose fetch offset reached its Local HWM but not its LESO.

    Brokers and assignment (1,2,3,4), MinISR 2; r4 is out of sync with an empty log.
    (No numbered example in the chapter: built from its §6.4.1 example.)
    """
    s = initial_state(Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3, 4), min_isr=2))
    s = _alter(s, 1, 4, expand=False)
    assert_partition(s, leader=1, isr=[1, 2, 3], elr=[], leader_epoch=1, partition_epoch=2)

    # §6.4.1 steps 2-4: offset 0 committed (True HWM 1); r2, r3 never learn HWM 1.
    s = checked_step(s, Produce(1, 1))
    s = deliver_fetch(s, 2)
    s = deliver_fetch(s, 3)
    for f in (2, 3):
        s, req = send_fetch(s, f)
        s, resp = receive_fetch_request(s, req)
        s = checked_step(s, DropMessage(resp))
    assert_replica(s, 1, leo=1, hwm=1)
    assert s.history.true_hwm == 1
    assert_replica(s, 4, leo=0, hwm=0)

    # §6.4.1 step 6: r1 is fenced, r2 elected: LEO=1, HWM=0, LESO=1.
    s = checked_step(s, FenceBroker(1))
    assert_partition(s, leader=2, isr=[2, 3], elr=[], leader_epoch=2)
    s = sync_all(s, 2)
    r2 = s.replica(2)
    assert (r2.role, r2.leo, r2.hwm, r2.leso) == (Role.LEADER, 1, 0, 1)

    # r4 fetches in leader epoch 2 at offset 0: it has reached the Local HWM (0) and
    # fetched in this epoch, but not the LESO (1) -- it lacks committed offset 0.
    s = sync_all(s, 4)
    s, req = send_fetch(s, 4)
    s, resp = receive_fetch_request(s, req)
    fs = s.replica(2).follower(4)
    assert (fs.fetch_offset, fs.last_fetch_leader_epoch) == (0, 2)
    assert "below the LESO" in why_not_enabled(s, ProposeIsrExpand(2, 4))

    # Once r4 has fetched offset 0 and fetches at 1 (= LESO), it is in-sync, even
    # though the leader's Local HWM is still 0 (r3 has not fetched in epoch 2).
    s = checked_step(s, ReceiveFetchResponse(resp))
    s = deliver_fetch(s, 4)
    assert_replica(s, 2, leo=1, hwm=0)
    assert why_not_enabled(s, ProposeIsrExpand(2, 4)) is None
    s = _alter(s, 2, 4, expand=True)
    assert_partition(s, leader=2, isr=[2, 3, 4], elr=[], leader_epoch=2)
    _assert_acked_writes_on(s, 4)


# ------------------------------------------------------------------ §6.5.1


def _committed_three_records(min_isr: int) -> ClusterState:
    """Leader 1, ISR [1,2,3]; offsets 0-2 written, replicated and acknowledged
    everywhere; only offset 0 is flushed on every broker."""
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=min_isr))
    s = checked_step(s, Produce(1, 1))
    s = _replicate_fully(s, 1, (2, 3))
    for b in (1, 2, 3):
        s = checked_step(s, Flush(b))                   # flushed offset 1 everywhere
    s = _produce(s, 1, 2)
    s = _replicate_fully(s, 1, (2, 3))          # LEO 3 = HWM 3 everywhere
    assert [w.offset for w in s.history.acked] == [0, 1, 2]
    return s


@pytest.mark.parametrize("min_isr", [2, 3])
def test_unclean_leader_is_fenced_and_excluded_until_caught_up_6_5_1_case_1(min_isr):
    """§6.5.1 Case 1: the elected leader restarts uncleanly and loses data. The
    controller fences it (no leader, no ISR), it registers with an empty broker
    epoch (removed from the ELR if a member, here with MinISR 3), and it is an
    out-of-sync follower until it has caught up with the new leader.

    RF 3. With MinISR 2 the fence leaves ISR [2,3] >= MinISR (§5.2.1 case D: not
    added to the ELR); with MinISR 3 it is added to the ELR (case C) and removed
    again by the unclean registration.
    """
    s = _committed_three_records(min_isr)
    assert_partition(s, leader=1, isr=[1, 2, 3], leader_epoch=1)

    # The leader's broker restarts uncleanly and its partition loses data (offsets 1-2).
    s = checked_step(s, UncleanShutdown(1, lossy=True))
    assert_replica(s, 1, leo=1, hwm=1)
    # A new registration needs the previous broker epoch fenced first.
    assert why_not_enabled(s, StartBroker(1)) is not None

    # "On the controller the broker is fenced, which removes the replica from
    # leadership and the ISR."
    s = checked_step(s, FenceBroker(1))
    elr_at_fence = [1] if min_isr == 3 else []
    assert_partition(s, leader=2, isr=[2, 3], elr=elr_at_fence, leader_epoch=2, partition_epoch=2)

    # "During start-up, the broker registers with an empty broker epoch value (marking
    # it as unclean) and the controller removes it from the ELR if it is a member."
    old_epoch = s.registration(1).broker_epoch
    s = checked_step(s, StartBroker(1))
    assert s.registration(1).broker_epoch > old_epoch
    assert_partition(s, leader=2, isr=[2, 3], elr=[],
                      last_known_elr=[1] if min_isr == 3 else [], leader_epoch=2)

    # The new leader takes over (LESO 3) and follower 3 fetches in leader epoch 2.
    s = sync_all(s, 2)
    s = sync_all(s, 3)
    assert s.replica(2).leso == 3
    s = deliver_fetch(s, 3)
    assert_replica(s, 2, leo=3, hwm=3)

    # "The replica is now an out-of-sync follower which becomes clean again by
    # fetching from the new leader."
    s = sync_all(s, 1)
    s = checked_step(s, UnfenceBroker(1))
    r1 = s.replica(1)
    assert (s.broker(1).status, r1.role, r1.leader, r1.leader_epoch) == \
        (BrokerStatus.RUNNING, Role.FOLLOWER, 2, 2)
    assert why_not_enabled(s, ProposeIsrExpand(2, 1)) is not None    # no fetch yet
    s = deliver_fetch(s, 1)                                         # fetch @1: gets offsets 1-2
    assert "below the HWM" in why_not_enabled(s, ProposeIsrExpand(2, 1))
    assert_replica(s, 1, leo=3, hwm=3)

    # "It can only be readded to the ISR once it has caught up."
    s = deliver_fetch(s, 1)                                         # fetch @3
    s = _alter(s, 2, 1, expand=True)
    assert_partition(s, leader=2, isr=[1, 2, 3], elr=[], last_known_elr=[], leader_epoch=2)
    _assert_acked_writes_on(s, 1)
    _assert_acked_writes_on(s, 2)


@pytest.mark.parametrize("min_isr", [2, 3])
def test_unclean_in_sync_follower_is_fenced_and_excluded_until_caught_up_6_5_1_case_2(min_isr):
    """§6.5.1 Case 2: the leader successfully adds a replica to the ISR, then that
    replica's broker restarts uncleanly and loses data. As in case 1: fenced (out of
    the ISR), registers with an empty broker epoch (not in the ELR), and rejoins the
    ISR only after catching up.

    RF 3. Follower 2 is first shrunk out (MinISR 2 only: with MinISR 3 the shrink
    would block produce) and re-added by the leader. As the leader epoch does not
    change, the leader keeps r2's pre-crash follower state; a proposal based on it is
    rejected by the controller's broker-epoch check (the case 3 mechanism).
    """
    s = _committed_three_records(min_isr)

    # "The leader successfully adds a replica to the ISR": r2 leaves and rejoins.
    if min_isr == 2:
        s = _alter(s, 1, 2, expand=False)
        assert_partition(s, leader=1, isr=[1, 3], partition_epoch=2)
        s = checked_step(s, Produce(1, s.history.next_value))   # offset 3 written without r2
        s = deliver_fetch(s, 3)
        s = deliver_fetch(s, 3)
        assert_replica(s, 1, leo=4, hwm=4)
        s = deliver_fetch(s, 2)                        # r2 catches up: @3, gets offset 3
        s = deliver_fetch(s, 2)                        # @4 = HWM = LEO
        s = _alter(s, 1, 2, expand=True)
        assert_partition(s, leader=1, isr=[1, 2, 3], partition_epoch=3)
    leo = s.replica(1).leo
    pe = s.partition.partition_epoch
    assert_replica(s, 2, leo=leo, hwm=leo)

    # The in-sync follower's broker restarts uncleanly: only offset 0 was flushed.
    s = checked_step(s, UncleanShutdown(2, lossy=True))
    assert_replica(s, 2, leo=1, hwm=1)

    # Fenced: out of the ISR; the leader is unchanged (no leader epoch bump).
    s = checked_step(s, FenceBroker(2))
    elr_at_fence = [2] if min_isr == 3 else []
    assert_partition(s, leader=1, isr=[1, 3], elr=elr_at_fence, leader_epoch=1, partition_epoch=pe + 1)

    # Registers with an empty broker epoch: not (or no longer) an ELR member.
    s = checked_step(s, StartBroker(2))
    assert_partition(s, leader=1, isr=[1, 3], elr=[],
                      last_known_elr=[2] if min_isr == 3 else [], leader_epoch=1)

    # The leader applies the shrink; follower 2 restarts as an out-of-sync follower.
    s = sync_all(s, 1)
    _assert_leader_isr(s, 1, isr=[1, 3], pending=None, maximal=[1, 3])
    s = sync_all(s, 2)
    s = checked_step(s, UnfenceBroker(2))
    assert (s.replica(2).role, s.replica(2).leader) == (Role.FOLLOWER, 1)

    # The leader is still in leader epoch 1 and still holds r2's follower state from
    # before the crash (fetch offset = LEO, old broker epoch), so its own checks let it
    # propose r2 again. As in case 3, the controller rejects the stale broker epoch.
    old_fs = s.replica(1).follower(2)
    assert old_fs.fetch_offset == leo and old_fs.broker_epoch != s.registration(2).broker_epoch
    s, req = _propose(s, 1, 2, expand=True)
    s, resp = _controller_handles(s, req)
    assert resp.error == "INELIGIBLE_REPLICA"
    s = checked_step(s, ReceiveAlterPartitionResponse(resp.id))
    assert_partition(s, leader=1, isr=[1, 3], elr=[],
                      last_known_elr=[2] if min_isr == 3 else [], leader_epoch=1)
    _assert_leader_isr(s, 1, isr=[1, 3], pending=None, maximal=[1, 3])

    s = deliver_fetch(s, 2)                            # fetch @1: gets the rest
    assert "below the HWM" in why_not_enabled(s, ProposeIsrExpand(1, 2))
    assert_replica(s, 2, leo=leo, hwm=s.replica(1).hwm)
    s = deliver_fetch(s, 2)                            # fetch @LEO: caught up
    s = _alter(s, 1, 2, expand=True)
    assert_partition(s, leader=1, isr=[1, 2, 3], elr=[], last_known_elr=[], leader_epoch=1)
    _assert_acked_writes_on(s, 2)


@pytest.mark.parametrize("unfenced_again", [True, False], ids=["re-registered+unfenced", "re-registered"])
@pytest.mark.parametrize("min_isr", [1, 2])
def test_stale_broker_epoch_rejects_isr_expansion_6_5_1_case_3(min_isr, unfenced_again):
    """§6.5.1 Case 3: an out-of-sync follower sends a fetch request at a high offset,
    then restarts uncleanly and loses data. It is fenced (not in the ISR: the
    partition epoch is unchanged), and re-registers with a new broker epoch. The
    leader then receives the OLD fetch request, judges the follower in-sync and
    proposes adding it with the OLD broker epoch; the controller rejects the
    AlterPartition (INELIGIBLE_REPLICA) and the leader rolls back.

    RF 3, MinISR 1 or 2. ``unfenced_again``: broker 3 has also been unfenced with its
    new broker epoch when the controller checks the request, so only the stale broker
    epoch can reject it.
    """
    s = _committed_three_records(min_isr)

    # r3 falls out of the ISR; offsets 3-4 are written and committed without it.
    s = _alter(s, 1, 3, expand=False)
    assert_partition(s, leader=1, isr=[1, 2], elr=[], partition_epoch=2)
    s = _produce(s, 1, 2)
    s = _replicate_fully(s, 1, (2,))
    assert_replica(s, 1, leo=5, hwm=5)

    # r3 (out-of-sync) fetches the missing records, then sends a fetch at offset 5
    # (= the leader's HWM and LEO) which is still in flight.
    s = deliver_fetch(s, 3)
    assert_replica(s, 3, leo=5, hwm=5)
    s, stale_fetch = send_fetch(s, 3)
    old_epoch = s.broker(3).broker_epoch
    assert s.network.get(stale_fetch).fetch_offset == 5
    assert s.network.get(stale_fetch).broker_epoch == old_epoch
    assert s.replica(1).follower(3).fetch_offset == 3      # the leader's view so far

    # r3's broker restarts uncleanly; only offset 0 survives.
    s = checked_step(s, UncleanShutdown(3, lossy=True))
    assert_replica(s, 3, leo=1, hwm=1)

    # "The broker gets fenced but no change to the partition ISR is required (as the
    # replica is not a member) so the partition epoch remains unchanged."
    s = checked_step(s, FenceBroker(3))
    assert_partition(s, leader=1, isr=[1, 2], elr=[], leader_epoch=1, partition_epoch=2)

    # It registers again (empty broker epoch) and gets a new broker epoch.
    s = checked_step(s, StartBroker(3))
    new_epoch = s.registration(3).broker_epoch
    assert new_epoch > old_epoch and s.broker(3).broker_epoch == new_epoch
    assert_partition(s, leader=1, isr=[1, 2], elr=[], leader_epoch=1, partition_epoch=2)
    if unfenced_again:
        s = sync_all(s, 3)
        s = checked_step(s, UnfenceBroker(3))
        assert not s.registration(3).fenced

    # "Concurrently, the leader receives the fetch request from the now unclean replica
    # and determines that the replica is now in-sync."
    s, stale_resp = receive_fetch_request(s, stale_fetch)
    fs = s.replica(1).follower(3)
    assert (fs.fetch_offset, fs.broker_epoch, fs.last_fetch_leader_epoch) == (5, old_epoch, 1)
    assert why_not_enabled(s, ProposeIsrExpand(1, 3)) is None

    # "The leader sends an AlterPartition request to the controller to add the replica
    # ... the leader includes the broker epoch of the added follower" (the stale one).
    s, req_id = _propose(s, 1, 3, expand=True)
    req = s.network.get(req_id)
    assert req.isr == {1, 2, 3}
    assert dict(req.added_broker_epochs) == {3: old_epoch}
    assert req.partition_epoch == 2                         # matches the controller: not the reason
    _assert_leader_isr(s, 1, isr=[1, 2], pending=[1, 2, 3], maximal=[1, 2, 3])

    # "The controller rejects the AlterPartition request because the broker epoch of the
    # added replica is lower than the new broker epoch."
    s, resp = _controller_handles(s, req_id)
    assert resp.error == "INELIGIBLE_REPLICA"
    assert_partition(s, leader=1, isr=[1, 2], elr=[], leader_epoch=1, partition_epoch=2)

    # The leader rolls back to its last committed ISR.
    s = checked_step(s, ReceiveAlterPartitionResponse(resp.id))
    _assert_leader_isr(s, 1, isr=[1, 2], pending=None, maximal=[1, 2])

    # The stale fetch response is discarded by the restarted follower (if it runs).
    if unfenced_again:
        s = checked_step(s, ReceiveFetchResponse(stale_resp))
        assert_replica(s, 3, leo=1, hwm=1)
    else:
        s = checked_step(s, DropMessage(stale_resp))
        s = sync_all(s, 3)
        s = checked_step(s, UnfenceBroker(3))

    # Unclean Exclusion: r3 rejoins only after really catching up, with its new epoch.
    s = deliver_fetch(s, 3)                                # fetch @1 with the new broker epoch
    assert "below the HWM" in why_not_enabled(s, ProposeIsrExpand(1, 3))
    assert_replica(s, 3, leo=5, hwm=5)
    s = deliver_fetch(s, 3)                                # fetch @5
    assert s.replica(1).follower(3).broker_epoch == new_epoch
    s = _alter(s, 1, 3, expand=True)
    assert_partition(s, leader=1, isr=[1, 2, 3], elr=[], leader_epoch=1, partition_epoch=3)
    _assert_acked_writes_on(s, 3)


# ------------------------------------------------------------------ §6.5.2


def _isr_1_2_with_follower_3_in_sync(min_isr: int) -> ClusterState:
    """All parties see ISR [1,2]; out-of-sync r3 has fetched in the current leader
    epoch and reached the HWM and the LESO (the leader could add it back)."""
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=min_isr))
    s = _alter(s, 1, 3, expand=False)
    for b in (1, 2, 3):
        s = sync_all(s, b)
    assert_partition(s, leader=1, isr=[1, 2], elr=[], leader_epoch=1, partition_epoch=2)
    s = deliver_fetch(s, 2)
    s = deliver_fetch(s, 3)
    assert why_not_enabled(s, ProposeIsrExpand(1, 3)) is None
    return s


def test_maximal_isr_pending_expansion_6_5_2():
    """§6.5.2 The Maximal ISR, expanding the ISR: "The leader adds r3 to the ISR but
    the controller has not yet received the request and also could reject it."

    RF 3, MinISR 2.
    """
    s = _isr_1_2_with_follower_3_in_sync(min_isr=2)
    _assert_leader_isr(s, 1, isr=[1, 2], pending=None, maximal=[1, 2])

    s, req = _propose(s, 1, 3, expand=True)
    # Leader: Current ISR=[r1,r2], Proposed ISR=[r1,r2,r3], Maximal ISR=[r1,r2,r3]
    # Controller: ISR=[r1,r2]
    _assert_leader_isr(s, 1, isr=[1, 2], pending=[1, 2, 3], maximal=[1, 2, 3])
    assert_partition(s, leader=1, isr=[1, 2], partition_epoch=2)

    # A write now waits for r3 too (HWM advancement is based on the Maximal ISR).
    s = checked_step(s, Produce(1, 1))
    s = deliver_fetch(s, 2)
    s = deliver_fetch(s, 2)                    # r2 at 1
    assert_replica(s, 1, leo=1, hwm=0)         # r3 still at 0
    s = deliver_fetch(s, 3)
    s = deliver_fetch(s, 3)
    assert_replica(s, 1, leo=1, hwm=1)

    # The controller accepts; the leader commits (Maximal ISR = ISR = [1,2,3]).
    s, resp = _controller_handles(s, req)
    assert resp.error is None
    assert_partition(s, leader=1, isr=[1, 2, 3], partition_epoch=3)
    _assert_leader_isr(s, 1, isr=[1, 2], pending=[1, 2, 3], maximal=[1, 2, 3])
    s = checked_step(s, ReceiveAlterPartitionResponse(resp.id))
    _assert_leader_isr(s, 1, isr=[1, 2, 3], pending=None, maximal=[1, 2, 3])
    assert s.replica(1).partition_epoch == 3


def test_maximal_isr_pending_shrink_hwm_waits_for_removed_follower_6_5_2():
    """§6.5.2 The Maximal ISR, shrinking the ISR: "The leader removes r3 from the
    ISR". Until the controller's answer the Maximal ISR still holds r3, so the HWM
    keeps waiting for r3's fetch offset; once committed, it advances without r3.

    RF 3, MinISR 2.
    """
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    s = deliver_fetch(s, 2)                    # the leader knows both fetch offsets (0)
    s = deliver_fetch(s, 3)

    s, req = _propose(s, 1, 3, expand=False)
    # Leader: Current ISR=[r1,r2,r3], Proposed ISR=[r1,r2], Maximal ISR=[r1,r2,r3]
    # Controller: ISR=[r1,r2,r3]
    _assert_leader_isr(s, 1, isr=[1, 2, 3], pending=[1, 2], maximal=[1, 2, 3])
    assert_partition(s, leader=1, isr=[1, 2, 3], partition_epoch=1)

    # A write replicated to r2 only: the HWM still waits for r3 (fetch offset 0).
    s = checked_step(s, Produce(1, 1))
    s = deliver_fetch(s, 2)                    # r2 fetches @0, gets offset 0
    s = deliver_fetch(s, 2)                    # r2 fetches @1
    assert s.replica(1).follower(2).fetch_offset == 1
    assert s.replica(1).follower(3).fetch_offset == 0
    assert_replica(s, 1, leo=1, hwm=0)
    assert s.history.acked == ()

    # The controller accepts the shrink; ISR [1,2] >= MinISR so r3 is not in the ELR.
    s, resp = _controller_handles(s, req)
    assert resp.error is None
    assert_partition(s, leader=1, isr=[1, 2], elr=[], partition_epoch=2)
    assert_replica(s, 1, leo=1, hwm=0)         # the leader has not heard yet
    s = checked_step(s, ReceiveAlterPartitionResponse(resp.id))
    _assert_leader_isr(s, 1, isr=[1, 2], pending=None, maximal=[1, 2])
    assert_replica(s, 1, leo=1, hwm=1)         # advanced on committing the shrink
    assert [(w.value, w.offset) for w in s.history.acked] == [(1, 0)]


def test_maximal_isr_not_a_superset_below_min_isr_6_5_2():
    """§6.5.2: the Maximal ISR is not a superset of the election quorum once the ISR
    is below MinISR (the leader cannot see the ELR) — but then the HWM cannot advance.

    RF 3, MinISR 2.
    """
    # 1. All parties see ISR=[1,2] and the controller ELR is empty.
    s = _isr_1_2_with_follower_3_in_sync(min_isr=2)
    _assert_leader_isr(s, 1, isr=[1, 2], pending=None, maximal=[1, 2])
    hwm = s.replica(1).hwm

    # 2. The controller fences broker 2. Controller: ISR=[1], ELR=[2];
    #    Leader: ISR=[1], MaximalISR=[1] (once it applies the change).
    s = checked_step(s, FenceBroker(2))
    assert_partition(s, leader=1, isr=[1], elr=[2], leader_epoch=1, partition_epoch=3)
    s = sync_all(s, 1)
    _assert_leader_isr(s, 1, isr=[1], pending=None, maximal=[1])

    # 3. The leader sends an AlterPartition request to add replica 3; it is in flight.
    #    Controller: ISR=[1], ELR=[2]; Leader: ISR=[1], MaximalISR=[1,3]
    s, req = _propose(s, 1, 3, expand=True)
    assert_partition(s, leader=1, isr=[1], elr=[2], partition_epoch=3)
    _assert_leader_isr(s, 1, isr=[1], pending=[1, 3], maximal=[1, 3])
    # The replication quorum [1,3] is not a superset of the election quorum ISR+ELR [1,2] ...
    assert not (s.partition.isr | s.partition.elr) <= s.replica(1).maximal_isr
    # ... but the leader's ISR [1] is below MinISR: writes fail, the HWM cannot advance.
    value = s.history.next_value
    s = checked_step(s, Produce(1, value))
    assert value in s.history.nacked
    assert s.replica(1).hwm == hwm

    # The controller accepts: ISR [1,3] reaches MinISR, so the ELR is emptied (case G).
    s, resp = _controller_handles(s, req)
    assert resp.error is None
    assert_partition(s, leader=1, isr=[1, 3], elr=[], partition_epoch=4)
    s = checked_step(s, ReceiveAlterPartitionResponse(resp.id))
    _assert_leader_isr(s, 1, isr=[1, 3], pending=None, maximal=[1, 3])


# ------------------------------------------------------------------ §6.5.4


@pytest.mark.parametrize("min_isr", [1, 2])
def test_remove_then_readd_in_one_metadata_batch_6_5_4(min_isr):
    """§6.5.4 ISR expansion and reassignments: r3 is removed from the replica set and
    quickly re-added; the leader applies both changes in ONE metadata batch and still
    holds r3's old follower state (fetch offset = HWM = LESO), but r3's replica was
    deleted and recreated empty. The third condition — a fetch from the follower in
    the current leader epoch — keeps r3 out of the ISR until it has really caught up.

    Brokers (1,2,3,4), assignment (1,2,3).
    """
    s = initial_state(Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=min_isr))
    s = _produce(s, 1, 2)
    s = _replicate_fully(s, 1, (2, 3))
    r1 = s.replica(1)
    assert (r1.leo, r1.hwm, r1.leso) == (2, 2, 0)
    assert r1.follower(3).fetch_offset == 2

    # Removal: completes at once (final ISR [1,2] >= MinISR) and bumps the leader epoch.
    s = checked_step(s, Reassign((1, 2)))
    assert_partition(s, leader=1, isr=[1, 2], leader_epoch=2, partition_epoch=2)
    assert s.partition.replicas == (1, 2) and not s.partition.reassigning
    # Re-addition: the grow phase, adding {3} (not in the ISR).
    s = checked_step(s, Reassign((1, 2, 3)))
    assert_partition(s, leader=1, isr=[1, 2], leader_epoch=2, partition_epoch=3)
    assert s.partition.replicas == (1, 2, 3) and s.partition.adding == {3}

    # The leader receives both records in the same metadata fetch: it only sees the
    # final state (r3 still a replica, no longer in the ISR, leader epoch 2).
    pending = s.pending_metadata(1)
    assert pending == 2
    s = checked_step(s, ReplicateMetadata(1, pending))
    r1 = s.replica(1)
    assert (r1.role, r1.leader_epoch, r1.isr) == (Role.LEADER, 2, {1, 2})
    # On the new leader epoch the LESO is the LEO: 2.
    assert (r1.leo, r1.hwm, r1.leso) == (2, 2, 2)

    # Broker 3 applies them separately: its replica is deleted, then recreated empty.
    s = checked_step(s, ReplicateMetadata(3, 1))
    assert s.replica(3) is None
    s = checked_step(s, ReplicateMetadata(3, 1))
    r3 = s.replica(3)
    assert (r3.leo, r3.hwm, r3.role, r3.leader, r3.leader_epoch) == (0, 0, Role.FOLLOWER, 1, 2)

    # The leader's follower state for r3 is the old one: fetch offset 2 = HWM = LESO,
    # which satisfies the first two conditions ...
    fs = s.replica(1).follower(3)
    assert fs.fetch_offset == 2 == r1.hwm == r1.leso
    # ... but r3 has not fetched in leader epoch 2: it is NOT in-sync.
    reason = why_not_enabled(s, ProposeIsrExpand(1, 3))
    assert reason is not None and "has not fetched in leader epoch 2" in reason

    # r3 fetches in the new epoch from its empty log: now its real offset (0) is known.
    s = sync_all(s, 2)
    s, req = send_fetch(s, 3)
    assert s.network.get(req).fetch_offset == 0
    s, resp = receive_fetch_request(s, req)
    assert s.replica(1).follower(3).fetch_offset == 0
    assert "below the HWM" in why_not_enabled(s, ProposeIsrExpand(1, 3))
    s = checked_step(s, ReceiveFetchResponse(resp))
    assert_replica(s, 3, leo=2, hwm=2)

    # Once it has caught up to the HWM and LESO, in this epoch, it may rejoin.
    s = deliver_fetch(s, 3)
    assert why_not_enabled(s, ProposeIsrExpand(1, 3)) is None
    s = _alter(s, 1, 3, expand=True)
    # The adding replica is in the ISR: the reassignment completes (leader epoch bump).
    assert_partition(s, leader=1, isr=[1, 2, 3], leader_epoch=3)
    assert s.partition.replicas == (1, 2, 3) and not s.partition.reassigning
    _assert_acked_writes_on(s, 3)
