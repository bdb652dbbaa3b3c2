"""The worked examples of chapter 5 (asynchronous storage and recovery), replayed
on the reference model through public actions only.

Each test starts from ``initial_state(config)`` and drives the model with
``checked_step`` (``model.step``, then every property of ``properties.ALL`` must
hold in the new state); after every step the chapter lists, it asserts the exact partition
state (leader, ISR, ELR, LastKnownELR, epochs) and the replicas' LEO/HWM.

Kafka wording -> model: "the controller fences broker b" is ``FenceBroker(b)``;
"broker b restarts after an unclean shutdown" is ``UncleanShutdown(b, lossy=True)``
followed (once fenced) by ``StartBroker(b)``, which registers it with an empty
broker epoch; a broker only acts on a controller change once it has replicated
the metadata record (``ReplicateMetadata``).
"""

from __future__ import annotations


from model import (NO_LEADER, AlterPartitionRequest, AlterPartitionResponse, BrokerStatus,
                   ClusterState, Config, DropMessage, FenceBroker, Flush, ProposeIsrExpand,
                   ProposeIsrShrink, Produce, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                   Role, StartBroker, UncleanRecovery, UncleanShutdown, UnfenceBroker,
                   initial_state, why_not_enabled)

from scenario import (assert_partition, assert_replica, checked_step, deliver_fetch, only_new_message,
                      receive_fetch_request, send_fetch, sync_all)

# --------------------------------------------------------------------------- helpers


def _alter(state: ClusterState, leader: int, follower: int, expand: bool) -> ClusterState:
    """ProposeIsrExpand/Shrink + the controller handling it + the leader handling the
    response. Asserts the controller accepted it."""
    action = ProposeIsrExpand(leader, follower) if expand else ProposeIsrShrink(leader, follower)
    after = checked_step(state, action)
    req = only_new_message(state, after, AlterPartitionRequest)
    state, after = after, checked_step(after, ReceiveAlterPartition(req))
    resp_id = only_new_message(state, after, AlterPartitionResponse)
    resp = after.network.get(resp_id)
    assert resp.error is None, f"AlterPartition rejected: {resp.error}"
    return checked_step(after, ReceiveAlterPartitionResponse(resp_id))


def _produce(state: ClusterState, leader: int, n: int) -> ClusterState:
    for _ in range(n):
        state = checked_step(state, Produce(leader, state.history.next_value))
    return state


def _assert_acked_writes_on(state: ClusterState, broker: int) -> None:
    """Every acknowledged (acks=all) write is at its offset in ``broker``'s log."""
    log = state.replica(broker).log
    for w in state.history.acked:
        assert w.offset < len(log) and log[w.offset].value == w.value, \
            f"acked write {w} lost on broker {broker} (log {log})"


# ------------------------------------------------------------------ §5.2.2


def test_clean_elr_based_recovery_5_2_2():
    """§5.2.2 Clean ELR-based recovery: the leader, sole ISR member, has a lossy
    unclean shutdown; the ELR member 3 is elected and no acked write is lost.

    RF 3, MinISR 2.
    """
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))

    # 1. Initial state: Leader=1, ISR=[1,2,3], ELR=[]
    assert_partition(s, leader=1, isr=[1, 2, 3], leader_epoch=1, partition_epoch=1)

    # Some acks=all writes while the ISR is full: 3 records, committed everywhere.
    s = _produce(s, 1, 3)
    for _ in range(2):  # 2nd round: the leader learns the fetch offsets (3) and advances the HWM
        s = deliver_fetch(s, 2)
        s = deliver_fetch(s, 3)
    assert_replica(s, 1, leo=3, hwm=3)
    assert [w.offset for w in s.history.acked] == [0, 1, 2]
    assert_replica(s, 3, leo=3, hwm=3)

    # 2a. "First replica 2 is removed from the ISR. The ISR is still large enough for
    #     the HWM to advance therefore replica 2 is not added to the ELR":
    #     Leader=1, ISR=[1,3], ELR=[]
    s = _alter(s, 1, 2, expand=False)
    assert_partition(s, leader=1, isr=[1, 3], elr=[], leader_epoch=1, partition_epoch=2)
    assert s.replica(1).isr == {1, 3}

    # 2b. "Then replica 3 is removed from the ISR. The ISR is now smaller than the
    #     MinISR and so replica 3 is added to the ELR": Leader=1, ISR=[1], ELR=[3]
    s = _alter(s, 1, 3, expand=False)
    assert_partition(s, leader=1, isr=[1], elr=[3], leader_epoch=1, partition_epoch=3)
    assert s.replica(1).isr == {1}

    # "as soon as the ISR shrank only to the leader the HWM could not have advanced":
    # an acks=all produce now fails with NotEnoughReplicas and is never written.
    value = s.history.next_value
    s = checked_step(s, Produce(1, value))
    assert value in s.history.nacked
    assert_replica(s, 1, leo=3, hwm=3)

    # 3. "Replica 1, the leader and sole member of the ISR experiences an unclean
    #    shutdown. The controller fences replica 1 and elects replica 3 as the new
    #    leader." Nothing of replica 1's log was flushed: it loses everything.
    s = checked_step(s, UncleanShutdown(1, lossy=True))
    assert_replica(s, 1, leo=0, hwm=0)
    s = checked_step(s, FenceBroker(1))
    # The model follows §2.8 / §5.2.1 case C: "If the new ISR is smaller than the
    # MinISR, then add the fenced former leader to the ELR", so at the fence the
    # ELR holds 1 (a clean restart of 1 would keep it a leader candidate).
    assert_partition(s, leader=3, isr=[3], elr=[1], last_known_elr=[],
                      leader_epoch=2, partition_epoch=4)
    # The chapter's "Leader=3, ISR=[3], ELR=[]" is the state once broker 1 has
    # re-registered with an empty broker epoch (§5.2): the controller moves the
    # unclean replica from the ELR to the LastKnownELR, so it is no leader candidate.
    s = checked_step(s, StartBroker(1))
    assert s.registration(1).broker_epoch == s.broker(1).broker_epoch is not None
    assert_partition(s, leader=3, isr=[3], elr=[], last_known_elr=[1],
                      leader_epoch=2, partition_epoch=5)

    # Replica 3 takes over as leader once it applies the change; it is complete.
    s = sync_all(s, 3)
    r3 = s.replica(3)
    assert (r3.role, r3.leader_epoch, r3.leso) == (Role.LEADER, 2, 3)
    _assert_acked_writes_on(s, 3)

    # 4. "Replica 1 reregisters, catches up to the leader and gets readded to the ISR."
    s = sync_all(s, 1)
    s = checked_step(s, UnfenceBroker(1))
    assert s.broker(1).status == BrokerStatus.RUNNING
    assert (s.replica(1).role, s.replica(1).leader) == (Role.FOLLOWER, 3)
    # Unclean Exclusion: not re-added before it has fetched and caught up.
    assert why_not_enabled(s, ProposeIsrExpand(3, 1)) is not None
    s = deliver_fetch(s, 1)            # fetch @0: gets offsets 0-2
    assert_replica(s, 1, leo=3, hwm=3)
    assert why_not_enabled(s, ProposeIsrExpand(3, 1)) is not None  # leader saw fetch offset 0 only
    s = deliver_fetch(s, 1)            # fetch @3: reached the HWM and the LESO
    s = _alter(s, 3, 1, expand=True)
    # Leader=3, ISR=[1,3], ELR=[]; the ISR reached MinISR so the LastKnownELR is cleared too.
    assert_partition(s, leader=3, isr=[1, 3], elr=[], last_known_elr=[],
                      leader_epoch=2, partition_epoch=6)
    assert s.replica(3).isr == {1, 3}

    # No acks=all write was lost, on the leader or on the recovered replica.
    assert [w.offset for w in s.history.acked] == [0, 1, 2]
    _assert_acked_writes_on(s, 3)
    _assert_acked_writes_on(s, 1)
    assert s.history.unclean_elections == ()


# ------------------------------------------------------------------ §5.3.3


def _balanced_initial_state() -> ClusterState:
    """Step 1 of §5.3.3: Leader=1, ISR=[1,2,3];
    Replica 1: LEO=15, HWM=10 / Replica 2: LEO=12, HWM=8 / Replica 3: LEO=10, HWM=8.
    Flushed offsets: replicas 1 and 3 at 8, replica 2 at 12."""
    s = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2,
                             unclean_recovery="balanced"))
    s = _produce(s, 1, 8)                       # offsets 0-7
    s = deliver_fetch(s, 2)                    # 2 fetches @0, gets 0-7
    s = deliver_fetch(s, 3)                    # 3 fetches @0, gets 0-7
    assert_replica(s, 1, leo=8, hwm=0)
    s = checked_step(s, Flush(1))
    s = checked_step(s, Flush(3))
    s = _produce(s, 1, 2)                       # offsets 8-9
    s = deliver_fetch(s, 2)                    # 2 fetches @8, gets 8-9; leader HWM 0 (3 is at 0)
    assert_replica(s, 2, leo=10, hwm=0)
    s = deliver_fetch(s, 3)                    # 3 fetches @8: leader HWM -> 8; 3 gets 8-9, HWM 8
    assert_replica(s, 1, leo=10, hwm=8)
    assert_replica(s, 3, leo=10, hwm=8)
    s = _produce(s, 1, 2)                       # offsets 10-11
    s = deliver_fetch(s, 2)                    # 2 fetches @10, gets 10-11, HWM 8
    s, req = send_fetch(s, 3)                  # 3 fetches @10 ...
    s, resp = receive_fetch_request(s, req)    # ... the leader advances its HWM to 10 ...
    s = checked_step(s, DropMessage(resp))              # ... but the response is lost
    s = _produce(s, 1, 3)                       # offsets 12-14
    s = checked_step(s, Flush(2))
    return s


def test_balanced_unclean_recovery_5_3_3():
    """§5.3.3 Balanced recovery: a power outage (lossy unclean shutdown of every
    broker); the controller fences them one by one, they re-register with empty
    broker epochs, the ISR and ELR end up empty, and balanced unclean recovery
    inspects the LastKnownELR and elects replica 2 (highest epoch and offset).

    RF 3, MinISR 2, unclean.recovery.strategy=balanced.
    """
    s = _balanced_initial_state()

    # 1. Leader=1, ISR=[1,2,3], ELR=[], LastKnownELR=[]
    assert_partition(s, leader=1, isr=[1, 2, 3], elr=[], last_known_elr=[], leader_epoch=1)
    assert_replica(s, 1, leo=15, hwm=10)   # Replica 1: LEO=15, HWM=10
    assert_replica(s, 2, leo=12, hwm=8)    # Replica 2: LEO=12, HWM=8
    assert_replica(s, 3, leo=10, hwm=8)    # Replica 3: LEO=10, HWM=8
    # Committed (HWM 10) = acknowledged: offsets 0-9.
    assert [w.offset for w in s.history.acked] == list(range(10))
    assert s.history.true_hwm == 10

    # 2. A power outage: unclean shutdown on all brokers, page caches discarded.
    for b in (1, 2, 3):
        s = checked_step(s, UncleanShutdown(b, lossy=True))
    assert_replica(s, 1, leo=8, hwm=8)     # lost offsets 8-14 (committed 8-9 among them)
    assert_replica(s, 2, leo=12, hwm=8)    # flushed everything: no loss
    assert_replica(s, 3, leo=8, hwm=8)     # lost offsets 8-9 (committed)
    # The outstanding writes 10-14 were never acknowledged.
    assert [w.offset for w in s.history.acked] == list(range(10))
    assert s.history.pending == ()

    # 3. The controller fences broker 1 first and elects replica 2 as leader.
    s = checked_step(s, FenceBroker(1))
    assert_partition(s, leader=2, isr=[2, 3], elr=[], last_known_elr=[], leader_epoch=2)

    # 4. The controller fences broker 2 and elects replica 3 as leader.
    s = checked_step(s, FenceBroker(2))
    assert_partition(s, leader=3, isr=[3], elr=[2], last_known_elr=[], leader_epoch=3)

    # 5. The controller fences broker 3 and sets NoLeader.
    s = checked_step(s, FenceBroker(3))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[2, 3], last_known_elr=[], leader_epoch=4)

    # 6. Broker 1 registers with an empty broker epoch; not an ELR member: no change.
    epoch_before = s.partition.partition_epoch
    s = checked_step(s, StartBroker(1))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[2, 3], last_known_elr=[])
    assert s.partition.partition_epoch == epoch_before

    # 7. Broker 2 registers with an empty broker epoch: moved from ELR to LastKnownELR.
    s = checked_step(s, StartBroker(2))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[3], last_known_elr=[2])

    # 8. Broker 3 likewise.
    s = checked_step(s, StartBroker(3))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[], last_known_elr=[2, 3])

    # 9. The controller cannot perform a clean election and triggers unclean recovery,
    #    asking every LastKnownELR replica for its log (GetReplicaLogInfo). It must
    #    wait for all of them: while broker 3 cannot answer, recovery does not run.
    s = sync_all(s, 2)
    s = checked_step(s, UnfenceBroker(2))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[], last_known_elr=[2, 3])  # no clean election
    assert why_not_enabled(s, UncleanRecovery()) is not None
    s = sync_all(s, 3)
    s = checked_step(s, UnfenceBroker(3))
    assert_partition(s, leader=NO_LEADER, isr=[], elr=[], last_known_elr=[2, 3])
    assert why_not_enabled(s, UncleanRecovery()) is None

    # 10. It chooses replica 2, the log with the highest epoch and offset (LEO 12 vs 8).
    s = checked_step(s, UncleanRecovery())
    assert s.partition.leader == 2
    assert s.partition.isr == {2}
    assert s.partition.elr == frozenset()
    assert s.partition.leader_epoch == 5
    # The controller cannot tell a loss-free unclean recovery from a lossy one, so it
    # reports every unclean recovery as potential data loss (§5.3.2).
    assert [(r.mechanism, r.leader, r.leader_epoch) for r in s.history.unclean_elections] == \
        [("balanced", 2, 5)]

    # "In the end, no committed data was lost": the new leader holds offsets 0-9.
    s = sync_all(s, 2)
    r2 = s.replica(2)
    assert (r2.role, r2.leader_epoch) == (Role.LEADER, 5)
    assert_replica(s, 2, leo=12, hwm=8)
    _assert_acked_writes_on(s, 2)
    assert sorted(w.offset for w in s.history.acked) == list(range(10))
