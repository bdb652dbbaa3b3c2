"""Chapter 4 (partition reassignment) worked examples, replayed on the reference model.

Every test starts from ``initial_state(config)`` and moves only through public
actions (``model.step``, via ``scenario.Scenario``). After every step the
controller's partition registration (``state.partition``) is compared with the
chapter's listing: Replicas, ISR, Leader, LeaderEpoch, PartitionEpoch, Adding,
Removing.
"""

from __future__ import annotations

import pytest

from model import (ActionNotEnabled, AlterPartitionRequest, AlterPartitionResponse,
                   CancelReassignment, Config, PartitionChangeRecord, ProposeIsrExpand, Reassign,
                   ReceiveAlterPartition, ReceiveAlterPartitionResponse, Record, Role,
                   enabled_actions)
from scenario import Scenario


def assert_partition(sc: Scenario, *, replicas: tuple[int, ...], isr: set[int], leader: int,
                     leader_epoch: int, partition_epoch: int, adding: set[int] = frozenset(),
                     removing: set[int] = frozenset()) -> None:
    """The controller's registration equals the chapter's listing."""
    p = sc.partition
    got = dict(replicas=p.replicas, isr=set(p.isr), leader=p.leader, leader_epoch=p.leader_epoch,
               partition_epoch=p.partition_epoch, adding=set(p.adding), removing=set(p.removing))
    want = dict(replicas=tuple(replicas), isr=set(isr), leader=leader, leader_epoch=leader_epoch,
                partition_epoch=partition_epoch, adding=set(adding), removing=set(removing))
    assert got == want, f"after {sc.trace[-1:]}: {got} != {want}"


def catch_up(sc: Scenario, follower: int) -> None:
    """Two fetches: the first brings the records, the second reports the new LEO
    to the leader (so the follower's fetch offset reaches the leader's HWM/LEO)."""
    sc.deliver_fetch(follower)
    req, resp = sc.deliver_fetch(follower)
    assert resp.error is None and resp.records == ()


def metadata_records(sc: Scenario) -> int:
    return len(sc.state.controller.metadata_log)


# ------------------------------------------------------------------- §4.4.1

def test_4_4_example_1_moving_one_replica():
    """§4.4.1 Example 1: move the replica on impaired broker 3 to broker 4,
    assignment [1, 2, 3] -> [1, 2, 4], MinISR 2."""
    sc = Scenario(Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2))
    assert_partition(sc, replicas=(1, 2, 3), isr={1, 2, 3}, leader=1, leader_epoch=1, partition_epoch=1)

    # Broker 3 is impaired: it never fetches. Leader 1 writes two records that
    # replica 2 replicates; the HWM waits for replica 3 until the leader shrinks it.
    sc.produce(1, 2)
    catch_up(sc, 2)
    assert sc.replica(1).hwm == 0
    sc.shrink(1, 3)
    assert sc.replica(1).hwm == 2

    # 1. Initial state: Replicas=[1, 2, 3], ISR=[1, 2], Leader=1, LeaderEpoch=1,
    #    PartitionEpoch=2, Adding=[], Removing=[]
    assert_partition(sc, replicas=(1, 2, 3), isr={1, 2}, leader=1, leader_epoch=1, partition_epoch=2)

    # 2. AlterPartitionReassignments starts the reassignment (grow):
    #    Replicas=[1, 2, 3, 4], ISR=[1, 2], Leader=1, LeaderEpoch=1, PartitionEpoch=3,
    #    Adding=[4], Removing=[3]
    sc.do(Reassign((1, 2, 4)))
    assert_partition(sc, replicas=(1, 2, 3, 4), isr={1, 2}, leader=1, leader_epoch=1, partition_epoch=3,
                     adding={4}, removing={3})

    # 3. Replica 4 learns it is a follower and catches up to the leader (the leader
    #    must learn the new replica set too, to serve broker 4's fetches).
    assert sc.replica(4) is None
    sc.sync_metadata(4)
    r4 = sc.replica(4)
    assert (r4.role, r4.leader, r4.leader_epoch, r4.log) == (Role.FOLLOWER, 1, 1, ())
    sc.sync_metadata(1)
    assert sc.replica(1).partition_epoch == 3
    req, resp = sc.deliver_fetch(4)
    assert (req.fetch_offset, len(resp.records)) == (0, 2)
    catch_up(sc, 4)
    assert sc.replica(4).leo == 2
    assert_partition(sc, replicas=(1, 2, 3, 4), isr={1, 2}, leader=1, leader_epoch=1, partition_epoch=3,
                     adding={4}, removing={3})

    # 4. The leader sends an AlterPartition request to add replica 4 to the ISR.
    alter = sc.do_sending(ProposeIsrExpand(1, 4), AlterPartitionRequest)
    assert (alter.isr, alter.leader_epoch, alter.partition_epoch) == ({1, 2, 4}, 1, 3)
    assert_partition(sc, replicas=(1, 2, 3, 4), isr={1, 2}, leader=1, leader_epoch=1, partition_epoch=3,
                     adding={4}, removing={3})

    # 5. The controller receives it and completes the reassignment. The catch-up
    #    state (ISR=[1, 2, 4], PartitionEpoch=3, Adding=[4], Removing=[3]) is only
    #    intermediate: catch-up and completion are ONE partition change record.
    before = metadata_records(sc)
    resp = sc.do_sending(ReceiveAlterPartition(alter.id), AlterPartitionResponse)
    assert metadata_records(sc) == before + 1
    assert isinstance(sc.state.controller.metadata_log[-1], PartitionChangeRecord)
    #    (complete - final state) Replicas=[1, 2, 4], ISR=[1, 2, 4], LeaderEpoch=2,
    #    PartitionEpoch=4, Adding=[], Removing=[]
    assert_partition(sc, replicas=(1, 2, 4), isr={1, 2, 4}, leader=1, leader_epoch=2, partition_epoch=4)
    assert (resp.error, resp.isr, resp.leader_epoch, resp.partition_epoch) == (None, {1, 2, 4}, 2, 4)

    # The leader, still in epoch 1, does not apply a response from epoch 2; it
    # moves to epoch 2 when it replicates the completion record (§2.10.3).
    sc.do(ReceiveAlterPartitionResponse(resp.id))
    assert sc.replica(1).leader_epoch == 1
    sc.sync_metadata(1)
    r1 = sc.replica(1)
    assert (r1.role, r1.leader_epoch, r1.partition_epoch, r1.isr, r1.leso) == (Role.LEADER, 2, 4, {1, 2, 4}, 2)

    # §4.3: the removed replica is deleted once broker 3 learns the change.
    sc.sync_metadata(3)
    assert sc.replica(3) is None

    # The leader acts in leader epoch 2: a new write is stamped e2 and committed
    # by the new ISR {1, 2, 4} once 2 and 4 follow it in epoch 2.
    sc.produce(1)
    assert sc.replica(1).log[-1] == Record(epoch=2, value=3)
    for f in (2, 4):
        sc.sync_metadata(f)
        assert sc.replica(f).leader_epoch == 2
        catch_up(sc, f)
    assert sc.replica(1).hwm == 3
    assert_partition(sc, replicas=(1, 2, 4), isr={1, 2, 4}, leader=1, leader_epoch=2, partition_epoch=4)


# ------------------------------------------------------------------- §4.4.1 (2)

def test_4_4_example_2_reducing_replication_factor():
    """§4.4.1 Example 2: reduce RF 5 -> 3, [1, 2, 3, 4, 5] -> [1, 2, 3], MinISR 2,
    leader 5, the ISR being exactly the two removed replicas {4, 5}.

    Only the chapter's transitions are reachable, not its absolute partition
    epochs: its initial state (PartitionEpoch=2 with ISR [4, 5]) is arbitrary. From
    the model's initial state (PE 1, ISR = all five) the leader shrinks 1, 2 and 3
    one change at a time, which gives ISR {4, 5} at PE 4. So the chapter's PEs
    2, 3, 4, 5 are 4, 5, 6, 7 here (each transition is the same +1). The assignment
    is written (5, 4, 1, 2, 3) so that 5 is the initial leader in leader epoch 1;
    the replica list keeps that order throughout the reassignment.
    """
    sc = Scenario(Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 1, 2, 3), min_isr=2))
    replicas = (5, 4, 1, 2, 3)
    sc.produce(5)
    catch_up(sc, 4)                  # only 4 follows; 1, 2, 3 lag
    for pe, lagging in enumerate((1, 2, 3), start=2):
        sc.shrink(5, lagging)
        assert sc.partition.partition_epoch == pe
    assert sc.replica(5).hwm == 1

    # 1. Initial state: Replicas=[1, 2, 3, 4, 5], ISR=[4, 5], Leader=5, LeaderEpoch=1,
    #    PartitionEpoch=2 (here 4), Adding=[], Removing=[]
    assert_partition(sc, replicas=replicas, isr={4, 5}, leader=5, leader_epoch=1, partition_epoch=4)

    # 2. AlterPartitionReassignments starts the reassignment; the final ISR would be
    #    empty (< MinISR), so it cannot complete: Replicas unchanged, ISR=[4, 5],
    #    Leader=5, LeaderEpoch=1, PartitionEpoch=3 (here 5), Adding=[], Removing=[4, 5]
    sc.do(Reassign((1, 2, 3)))
    assert_partition(sc, replicas=replicas, isr={4, 5}, leader=5, leader_epoch=1, partition_epoch=5,
                     removing={4, 5})

    # 3. Replica 1 catches up; the leader (knowing PE 5) asks to add it to the ISR.
    sc.sync_metadata(5)
    catch_up(sc, 1)
    assert sc.replica(1).leo == 1

    # 4. The controller adds 1; the final ISR would be [1] (< MinISR), so the
    #    reassignment remains ongoing: ISR=[1, 4, 5], Leader=5, LeaderEpoch=1,
    #    PartitionEpoch=4 (here 6), Adding=[], Removing=[4, 5]
    resp = sc.expand(5, 1)
    assert resp.error is None
    assert_partition(sc, replicas=replicas, isr={1, 4, 5}, leader=5, leader_epoch=1, partition_epoch=6,
                     removing={4, 5})
    assert sc.partition.reassigning
    assert sc.replica(5).isr == {1, 4, 5}

    # 5. Replica 2 catches up; the leader sends an AlterPartition request to add it.
    catch_up(sc, 2)
    alter = sc.do_sending(ProposeIsrExpand(5, 2), AlterPartitionRequest)
    # The catch-up (intermediate) ISR is the one the leader proposes: [1, 2, 4, 5]
    # (the chapter prints "ISR=[1, 2, 5]", dropping replica 4 — a slip: nothing has
    # removed 4 from the ISR yet).
    assert (alter.isr, alter.leader_epoch, alter.partition_epoch) == ({1, 2, 4, 5}, 1, 6)

    # 6. The controller adds 2: the final ISR [1, 2] meets MinISR and the
    #    reassignment completes in the same partition change:
    #    Replicas=[1, 2, 3], ISR=[1, 2], LeaderEpoch=2, PartitionEpoch=5 (here 7),
    #    Adding=[], Removing=[].
    #    The chapter says Leader=2. The old leader 5 is removed, so a new leader is
    #    elected from the new ISR in target-replica order, as Kafka's
    #    PartitionChangeBuilder does: the first of [1, 2, 3] in ISR {1, 2} is 1.
    before = metadata_records(sc)
    resp = sc.do_sending(ReceiveAlterPartition(alter.id), AlterPartitionResponse)
    assert metadata_records(sc) == before + 1
    assert_partition(sc, replicas=(1, 2, 3), isr={1, 2}, leader=1, leader_epoch=2, partition_epoch=7)
    assert (resp.error, resp.isr, resp.leader_epoch, resp.partition_epoch) == (None, {1, 2}, 2, 7)
    sc.do(ReceiveAlterPartitionResponse(resp.id))

    # The new leader takes over in epoch 2 with the committed record; the removed
    # replicas are deleted when their brokers learn the change (§4.3).
    sc.sync_metadata(1)
    r1 = sc.replica(1)
    assert (r1.role, r1.leader_epoch, r1.partition_epoch, r1.isr, r1.log) == \
        (Role.LEADER, 2, 7, {1, 2}, (Record(epoch=1, value=1),))
    for removed in (4, 5):
        sc.sync_metadata(removed)
        assert sc.replica(removed) is None


# ----------------------------------------------------------------------- §4.5

def _ongoing_move() -> Scenario:
    """[1, 2, 3] -> [1, 2, 4, 5] (MinISR 2): 4 catches up and joins the ISR, 5 does
    not, so the reassignment stays ongoing (not every adding replica is in the ISR)."""
    sc = Scenario(Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3), min_isr=2))
    sc.produce(1)
    catch_up(sc, 2)
    catch_up(sc, 3)
    assert sc.replica(1).hwm == 1
    sc.do(Reassign((1, 2, 4, 5)))
    assert_partition(sc, replicas=(1, 2, 3, 4, 5), isr={1, 2, 3}, leader=1, leader_epoch=1, partition_epoch=2,
                     adding={4, 5}, removing={3})
    for b in (1, 4, 5):
        sc.sync_metadata(b)
    catch_up(sc, 4)
    assert sc.expand(1, 4).error is None
    assert_partition(sc, replicas=(1, 2, 3, 4, 5), isr={1, 2, 3, 4}, leader=1, leader_epoch=1,
                     partition_epoch=3, adding={4, 5}, removing={3})
    return sc


def test_4_2_reassign_not_enabled_while_a_reassignment_is_ongoing():
    """§4.2: a partition with non-empty adding/removing has an ongoing
    reassignment; a new AlterPartitionReassignments is refused until it ends."""
    sc = _ongoing_move()
    for target in ((1, 2, 3), (1, 2, 4), (1, 2)):
        with pytest.raises(ActionNotEnabled) as err:
            sc.do(Reassign(target))
        assert "reassignment is already in progress" in err.value.reason
    assert not [a for a in enabled_actions(sc.state) if isinstance(a, Reassign)]
    assert_partition(sc, replicas=(1, 2, 3, 4, 5), isr={1, 2, 3, 4}, leader=1, leader_epoch=1,
                     partition_epoch=3, adding={4, 5}, removing={3})


def test_4_5_cancel_reassignment_reverts_an_ongoing_move():
    """§4.5: cancelling reverts to the original replicas, takes the adding replicas
    out of the ISR, and bumps the leader epoch (and the partition epoch)."""
    sc = _ongoing_move()
    assert CancelReassignment() in enabled_actions(sc.state)
    sc.do(CancelReassignment())
    assert_partition(sc, replicas=(1, 2, 3), isr={1, 2, 3}, leader=1, leader_epoch=2, partition_epoch=4)

    # Reassignments are accepted again.
    assert any(isinstance(a, Reassign) for a in enabled_actions(sc.state))

    # The leader moves to epoch 2; the added replicas are deleted (§4.3).
    sc.sync_metadata(1)
    r1 = sc.replica(1)
    assert (r1.role, r1.leader_epoch, r1.partition_epoch, r1.isr) == (Role.LEADER, 2, 4, {1, 2, 3})
    for added in (4, 5):
        sc.sync_metadata(added)
        assert sc.replica(added) is None


def test_4_5_cancel_refused_when_revert_would_break_min_isr():
    """§4.5: when too few original replicas are in the ISR, reverting would leave the
    ISR below MinISR; with unclean leader election disabled the cancellation
    aborts (the model: CancelReassignment is not enabled)."""
    sc = _ongoing_move()
    sc.shrink(1, 2)
    sc.shrink(1, 3)
    # Still ongoing: 5 (adding) is not in the ISR.
    assert_partition(sc, replicas=(1, 2, 3, 4, 5), isr={1, 4}, leader=1, leader_epoch=1,
                     partition_epoch=5, adding={4, 5}, removing={3})
    # Reverting would leave ISR {1} < MinISR 2.
    with pytest.raises(ActionNotEnabled) as err:
        sc.do(CancelReassignment())
    assert "MinISR" in err.value.reason
    assert CancelReassignment() not in enabled_actions(sc.state)
