"""Every rule of the Kafka profile changes what happens: each test tells one short
story under the Kafka profile with the rule in force (Kafka 4.4.0's behaviour)
and with only that rule switched off (the chapters' rule in its place), and
asserts the two outcomes. A rule whose test passed with the rule off would be
a rule that changes nothing.

Stories that break a property (a finding about Kafka) run with
``check_properties=False`` and name the property.
"""

from __future__ import annotations

import attrs
import pytest

import properties

from model import (ELR_FEATURE, KAFKA, MIN_INSYNC_REPLICAS, NO_LEADER, PROFILES, STATIC_MIN_INSYNC_REPLICAS, AdvanceTime, BeginControlledShutdown, ControlledShutdown, AlterClusterMinIsr, FailOverController, FailOverFromSnapshot, RegisterBrokerRecord, ResendRegistration, AlterMinIsr, AlterUncleanLeaderElection, FollowerState, AlterPartitionRequest, AlterPartitionResponse,
                   CancelReassignment, Config, ConfigRecord, FeatureLevelRecord, FenceBroker, FetchResponse,
                   FenceBrokerRecord,
                   PartitionChangeRecord, ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, Reassign,
                   ReceiveAlterPartition, ReceiveAlterPartitionResponse, ReceiveFetchRequest, Rule, SendFetch,
                   rules_without,
                   StartBroker, UncleanShutdown, UnfenceBroker, UpdateElrFeature, WriteEpochCheckpoint, ReplicateMetadata, ElectPreferredLeader,
                   enabled_actions, why_not_enabled)

from scenario import Scenario

#: Every test is parametrized on whether its rule is in force.
ON_OFF = pytest.mark.parametrize("follows", [True, False], ids=["kafka", "rule-off"])


def config(rule: Rule, follows: bool, **fields: object) -> Config:
    """The Kafka profile, with ``rule`` switched off unless ``follows`` (and the rules
    that require it, ``RuleDoc.requires``, with it)."""
    rules = PROFILES[KAFKA] if follows else rules_without(PROFILES[KAFKA], rule)
    return Config(profile=KAFKA, rules=rules, **fields)


def replicate_all(sc: Scenario, leader: int, *followers: int) -> None:
    """Two fetch rounds of each follower: it has the leader's log and the leader
    knows it (the HWM reaches it)."""
    for _ in range(2):
        for f in followers:
            sc.deliver_fetch(f)


# ------------------------------------------------------------------ controller

@ON_OFF
def test_last_known_leader_is_elected_once_isr_and_elr_are_empty(follows: bool):
    """All three replicas fenced: leader 1 last. LastKnownELR records 1 (Kafka) or
    stays empty (the chapters). Replica 2 and then 1 restart uncleanly: Kafka drops
    them from the ELR and elects 1 when it is unfenced, uncleanly; the chapters move
    them to the LastKnownELR and wait for unclean recovery."""
    sc = Scenario(config(Rule.LAST_KNOWN_LEADER, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    for b in (3, 2, 1):
        sc.fence(b)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (NO_LEADER, frozenset(), {1, 2})
    assert sc.partition.last_known_elr == ({1} if follows else frozenset())
    sc.restart(2, clean=False, unfence=False)
    sc.restart(1, clean=False)
    p = sc.partition
    if follows:
        assert (p.leader, p.isr, p.elr, p.last_known_elr) == (1, {1}, frozenset(), frozenset())
        assert [e.mechanism for e in sc.state.history.unclean_elections] == ["last_known_leader"]
    else:
        assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, frozenset(), frozenset(), {1, 2})


@ON_OFF
def test_completed_reassignment_leaves_removed_replica_in_elr(follows: bool):
    """[1,2] -> [1,3] with MinISR 2: 1 is fenced (ISR [2], ELR [1]); 3 joins and the
    expansion completes the move with the ISR [3] below MinISR. Kafka puts the
    removed ISR member 2 in the ELR (ValidPartitionMetadata: not a replica) and
    answers leader 2 NEW_LEADER_ELECTED."""
    sc = Scenario(config(Rule.ELR_KEEPS_REMOVED_REPLICAS, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=2), check_properties=not follows)  # ValidPartitionMetadata fails under Kafka
    sc.do(Reassign((1, 3)))
    sc.fence(1)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (2, {2}, {1})
    sc.sync_all()
    sc.deliver_fetch(3)
    resp = sc.expand(2, 3)
    p = sc.partition
    assert resp.error == "NEW_LEADER_ELECTED"
    assert (p.replicas, p.leader, p.isr) == ((1, 3), 3, {3})
    assert p.elr == ({1, 2} if follows else {1})


@ON_OFF
def test_fencing_the_last_isr_member_elects_uncleanly_at_once(follows: bool):
    """unclean.leader.election.enable, RF 2, MinISR 1: follower 2 left the ISR; fencing
    leader 1 elects 2 uncleanly in the same change (Kafka) instead of leaving the
    partition leaderless for the periodic unclean election."""
    sc = Scenario(config(Rule.UNCLEAN_ELECTION_IN_CHANGES, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=1, unclean_leader_election=True))
    sc.shrink(1, 2)
    sc.fence(1)
    if follows:
        assert (sc.partition.leader, sc.partition.isr) == (2, {2})
        assert [e.mechanism for e in sc.state.history.unclean_elections] == ["unclean_leader_election"]
    else:
        assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (NO_LEADER, frozenset(), {1})


@ON_OFF
def test_replica_order_during_a_move(follows: bool):
    """[1,2,3] -> [1,2,4]: Kafka lists the target first, then the removing replicas."""
    sc = Scenario(config(Rule.REASSIGNMENT_REPLICA_ORDER, follows, brokers=(1, 2, 3, 4), assignment=(1, 2, 3)))
    sc.do(Reassign((1, 2, 4)))
    assert sc.partition.replicas == ((1, 2, 4, 3) if follows else (1, 2, 3, 4))
    assert (sc.partition.adding, sc.partition.removing) == ({4}, {3})


@ON_OFF
def test_reassignment_completes_below_min_isr(follows: bool):
    """[1,2,3] -> [1,2,4] with MinISR 3 after 2 left the ISR: when 4 joins, Kafka
    completes the move with the final ISR [1,4] below MinISR; the chapters wait."""
    sc = Scenario(config(Rule.REASSIGNMENT_COMPLETION, follows, brokers=(1, 2, 3, 4), assignment=(1, 2, 3),
                         min_isr=3), check_properties=not follows)  # ValidPartitionMetadata: ELR keeps removed 3
    sc.do(Reassign((1, 2, 4)))
    sc.sync_all()
    sc.lag_behind(1, 2)
    sc.shrink(1, 2)
    sc.deliver_fetch(4)
    sc.expand(1, 4)
    p = sc.partition
    if follows:
        assert (p.replicas, p.isr, p.adding, p.removing) == ((1, 2, 4), {1, 4}, frozenset(), frozenset())
        assert p.elr == {2, 3}
    else:
        assert (p.isr, p.adding, p.removing) == ({1, 3, 4}, {4}, {3})


@ON_OFF
def test_completion_that_only_adds_keeps_the_leader_epoch(follows: bool):
    """[1,2,3] -> [1,2,3,4] completes when 4 joins; Kafka bumps the leader epoch only
    when the replica set loses a member."""
    sc = Scenario(config(Rule.LEADER_EPOCH_BUMP_ON_REMOVAL, follows, brokers=(1, 2, 3, 4), assignment=(1, 2, 3)))
    before = sc.partition.leader_epoch
    sc.do(Reassign((1, 2, 3, 4)))
    sc.sync_all()
    sc.deliver_fetch(4)
    sc.expand(1, 4)
    assert not sc.partition.reassigning
    assert sc.partition.leader_epoch == (before if follows else before + 1)


@ON_OFF
def test_cancel_with_isr_below_min_isr(follows: bool):
    """[1,2] -> [1,2,3] with MinISR 2, then 2 leaves the ISR: reverting keeps ISR [1],
    below MinISR. Kafka allows it (one member is enough); the chapters refuse."""
    sc = Scenario(config(Rule.CANCEL_WITH_ANY_ISR, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2))
    sc.do(Reassign((1, 2, 3)))
    sc.sync_all()
    sc.lag_behind(1, 2)
    sc.shrink(1, 2)
    assert (why_not_enabled(sc.state, CancelReassignment()) is None) == follows


def reverted_move(rule: Rule, follows: bool) -> Scenario:
    """[1,2] with MinISR 2 and unclean leader election on: 1 shuts down and restarts,
    still fenced; a move to [1,2,3] starts and 2 shuts down; the move is cancelled
    (ISR [1], fenced, no leader, 3 in the ELR)."""
    sc = Scenario(config(rule, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
                         unclean_leader_election=True),
                  check_properties=False)  # ValidPartitionMetadata: 3 in the ELR outside the replicas (finding 3)
    sc.stop(1)
    sc.restart(1, unfence=False)
    sc.do(Reassign((1, 2, 3)))
    sc.stop(2)
    sc.do(CancelReassignment())
    return sc


@ON_OFF
def test_an_isr_of_fenced_members_keeps_the_elr_from_leading(follows: bool):
    """[1,2] with MinISR 2 and unclean leader election on: 1 shuts down and restarts,
    still fenced (ISR [2], ELR [1]); a move to [1,2,3] starts and 2 shuts down, so 3
    is elected uncleanly; cancelling reverts to [1,2] with ISR [1] (the first original
    replica, fenced), no leader, and 3 in the ELR. Moving to [1,2,3] again: Kafka's
    builder elects an ELR member only while the ISR is empty, so the partition stays
    leaderless; the chapters elect 3 from the ELR. Under Kafka's other rules that
    election of 3, outside the registration's replicas, would fault the controller
    (LEADER_ACCEPTOR_READS_DIRECTORY). (Found by running Kafka's own
    PartitionChangeBuilder in lockstep: benchmarks/kafka_campaign.py.)"""
    sc = reverted_move(Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR, follows)
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.elr) == ((1, 2), {1}, NO_LEADER, {3})
    sc.do(Reassign((1, 2, 3)))
    # the model alone, the acceptor's rule off too: the chapters' election
    from model import initial_state, step
    chapters = initial_state(attrs.evolve(sc.state.config, rules=sc.state.config.rules
                                          - {Rule.LEADER_ACCEPTOR_READS_DIRECTORY}))
    for action in sc.trace:
        chapters = step(chapters, action)
    p = sc.partition
    if follows:
        assert (p.leader, p.isr, p.elr) == (NO_LEADER, {1}, {3}) and not sc.state.history.controller_faults
    else:
        assert sc.state.history.controller_faults == ("Replica 3 is not assigned to this partition.",)
        assert (p.leader, p.isr, p.elr) == (NO_LEADER, {1}, {3})
        p = chapters.partition
        assert (p.leader, p.isr, p.elr) == (3, {1, 3}, frozenset())


@ON_OFF
def test_a_fenced_isr_member_leaves_the_isr_when_its_session_expires(follows: bool):
    """The reverted move above: ISR [1], the first original replica, fenced while it
    starts again (its session runs from its registration), no leader, 3 in the ELR.
    1's session expires: Kafka runs the fencing again and takes 1 out of the ISR,
    into the ELR beside 3 (the ISR is below MinISR 2); in the chapters 1 is fenced
    already, with no session left to expire, and stays the ISR. (Found by running
    Kafka's own ReplicationControlManager in lockstep: a broker fenced by its
    controlled shutdown, put back in the ISR by a revert, left it at its session's
    expiry.)"""
    sc = reverted_move(Rule.FENCED_BROKER_SESSION_EXPIRES, follows)
    assert (sc.partition.isr, sc.partition.leader, sc.partition.elr) == ({1}, NO_LEADER, {3})
    assert sc.state.registration(1).fenced and sc.state.registration(1).session
    if not follows:
        assert why_not_enabled(sc.state, FenceBroker(1)) == "broker 1 is already fenced"
        return
    epoch = sc.partition.partition_epoch
    sc.do(FenceBroker(1))
    p = sc.partition
    assert (p.isr, p.leader, p.elr, p.partition_epoch) == (set(), NO_LEADER, {1, 3}, epoch + 1)
    assert not sc.state.registration(1).session
    assert why_not_enabled(sc.state, FenceBroker(1)) == "broker 1 is already fenced"


@ON_OFF
def test_the_controller_caps_min_isr_at_the_replica_count(follows: bool):
    """RF 1 on [1] of 3 brokers, MinISR 1: a move to [3] completes; a move to [3, 1]
    starts, MinISR is raised to 2 (the target's size) and unclean leader election
    turned on; 3 is fenced, so 1 (adding) is elected uncleanly; the move is
    cancelled: back on [3] with ISR [3] (fenced), no leader, 1 in the ELR and the
    LastKnownELR, and MinISR 2 above the replica count. Kafka's controller reads
    MinISR capped at the replica count (getTopicEffectiveMinIsr): ISR [3] has it,
    so a preferred election, which elects no one, empties the ELR, a change; with
    MinISR read as configured the ISR is below it and nothing changes
    (PREFERRED_LEADER_NOT_AVAILABLE). (Found by the Kafka controller's random walks.)"""
    from model import ElectPreferredLeader
    sc = Scenario(config(Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS, follows, brokers=(1, 2, 3), assignment=(1,),
                         min_isr=1), check_properties=False)  # ValidPartitionMetadata: 1 in the ELR outside the replicas
    sc.do(Reassign((3,)))
    sc.sync_all()
    sc.deliver_fetch(3)
    sc.do(ReceiveAlterPartition(sc.in_flight(AlterPartitionRequest)[0].id))
    sc.do(Reassign((3, 1)))
    sc.do(AlterMinIsr(2))
    sc.do(AlterUncleanLeaderElection(True))
    sc.do(FenceBroker(3))
    sc.do(CancelReassignment())
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.elr, p.last_known_elr) == ((3,), {3}, NO_LEADER, {1}, {1})
    why = why_not_enabled(sc.state, ElectPreferredLeader())
    if not follows:
        assert why == "PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica 3 cannot lead and nothing else changes"
        return
    assert why is None
    sc.do(ElectPreferredLeader())
    p = sc.partition
    assert (p.isr, p.leader, p.elr, p.last_known_elr) == ({3}, NO_LEADER, set(), {1})


@ON_OFF
def test_a_registration_sent_again_is_amended(follows: bool):
    """RF 3, MinISR 2: 3 restarts and replicates the metadata log, still fenced.
    It sends its registration again (its lifecycle manager's retry): Kafka amends
    the registration it holds, a RegisterBrokerRecord with the broker epoch and
    the fencing kept, and 3 is unfenced only once it has replicated that record
    too. Leader 1 sending its own again changes nothing but the log: its broker
    epoch, its unfencing and the partition stay, and broker 2's metadata still
    has 1 unfenced. The chapters' broker registers once per broker epoch."""
    sc = Scenario(config(Rule.REGISTRATION_AMENDED, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    sc.restart(3, unfence=False)
    sc.sync_metadata(3)
    assert why_not_enabled(sc.state, UnfenceBroker(3)) is None
    if not follows:
        assert why_not_enabled(sc.state, ResendRegistration(3)) == \
            "the chapters' broker registers once per broker epoch (Rule.REGISTRATION_AMENDED)"
        return
    epoch = sc.state.registration(3).broker_epoch
    sc.do(ResendRegistration(3))
    assert sc.state.controller.metadata_log[-1] == RegisterBrokerRecord(3, epoch, True, True, False)
    assert why_not_enabled(sc.state, UnfenceBroker(3)).startswith("broker 3 has not replicated its own registration")
    sc.unfence(3)
    assert (sc.state.registration(3).broker_epoch, sc.state.registration(3).fenced) == (epoch, False)
    partition, registration = sc.partition, sc.state.registration(1)
    sc.do(ResendRegistration(1))
    sc.sync_all()
    assert (sc.partition, sc.state.registration(1)) == (partition, registration)
    from model.replica import known_registration
    assert known_registration(sc.state, 2, 1) == (registration.broker_epoch, False, False)


@ON_OFF
def test_after_a_controller_failover_a_fenced_broker_has_no_session(follows: bool):
    """The reverted move above: ISR [1], fenced while it starts again, its session
    running from its registration; 2 fenced by its controlled shutdown, its session
    running from its last heartbeat; 3 unfenced; no leader. The controller fails
    over: the new active controller writes nothing, and starts a session for the
    unfenced broker only (ClusterControlManager.activate), so neither 1 nor 2 has a
    session left to expire, and 1 stays in the ISR where the expiry of the old
    controller's session would have taken it out (the story above). 1's next
    heartbeat starts its session again."""
    sc = reverted_move(Rule.CONTROLLER_FAILOVER, follows)
    if not follows:
        assert why_not_enabled(sc.state, FailOverController()) == \
            "the chapters' controller never fails over (Rule.CONTROLLER_FAILOVER)"
        return
    assert [sc.state.registration(b).session for b in (1, 2, 3)] == [True, True, True]
    partition, log = sc.partition, sc.state.controller.metadata_log
    sc.do(FailOverController())
    assert (sc.partition, sc.state.controller.metadata_log) == (partition, log)
    assert [sc.state.registration(b).session for b in (1, 2, 3)] == [False, False, True]
    assert why_not_enabled(sc.state, FenceBroker(1)) == "broker 1 is already fenced"
    sc.do(FailOverController())   # nothing left to change: the same again
    assert [sc.state.registration(b).session for b in (1, 2, 3)] == [False, False, True]
    sc.unfence(1)
    assert sc.state.registration(1).session and (sc.partition.leader, sc.partition.isr) == (1, {1})


def _snapshot_story(follows: bool) -> Scenario:
    """RF 3, MinISR 2: fencing 3 and then 2 leaves ISR [1], ELR [2]; the ELR feature
    is switched off, which leaves the registration as it is."""
    sc = Scenario(config(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED, follows, brokers=(1, 2, 3),
                         assignment=(1, 2, 3), min_isr=2), check_properties=False)
    for action in (FenceBroker(3), FenceBroker(2), UpdateElrFeature(False)):
        sc.do(action)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    return sc


@ON_OFF
def test_a_controller_that_loaded_a_snapshot_written_with_the_elr_off_holds_no_elr(follows: bool):
    """The story above; the active controller fails over to one that restarted and
    loaded a snapshot of the log: written with the feature off, its partition record
    carries no ELR (PartitionRegistration.toRecord), so the new controller holds
    none, while the log, and every broker's image, still give ELR [2]. Every
    registration was replayed at the snapshot's last offset: broker 3, registered
    long before, is unfenced only once it has applied the whole snapshot. A failover
    to a standby that replayed the log brings ELR [2] back."""
    sc = _snapshot_story(follows)
    if not follows:
        assert why_not_enabled(sc.state, FailOverFromSnapshot()) == (
            "a controller loads no snapshot that differs from the log it replaces "
            "(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED)")
        return
    log = sc.state.controller.metadata_log
    sc.do(FailOverFromSnapshot())
    assert sc.state.controller.metadata_log == log and sc.partition.elr == set()
    assert sc.state.controller.log_partition.elr == {2} and sc.state.controller.elr_entries(2) == 0
    sc.do(ReplicateMetadata(3, len(log) - 1 - sc.state.broker(3).metadata_offset))
    assert "has not replicated its own registration record" in why_not_enabled(sc.state, UnfenceBroker(3))
    sc.do(ReplicateMetadata(3, 1))
    sc.do(UnfenceBroker(3))
    assert sc.partition.elr == set() and sc.state.controller.log_partition.elr == {2}
    sc.do(FailOverController())
    assert sc.partition.elr == {2} and sc.state.controller.elr_entries(2) == 1
    assert sc.state.controller.replayed is None


@ON_OFF
def test_an_alter_partition_ahead_of_a_controller_that_loaded_a_snapshot_is_sent_again(follows: bool):
    """The snapshot story above, then the ELR switched on and MinISR lowered to 1: the
    ClearElrRecord moves the partition epoch of every registration with an ELR, the
    log's (the brokers') to 4, not the controller's, which holds none (3). Leader 1's
    expansion for 2 carries partition epoch 4: Kafka's controller answers
    NOT_CONTROLLER (validateAlterPartitionData takes itself for a deposed one), and
    Kafka's leader sends the same request again (handleAlterPartitionError: "Retrying"),
    answered the same, for ever."""
    sc = _snapshot_story(follows)
    sc.do(FailOverFromSnapshot() if follows else FailOverController())
    sc.do(UpdateElrFeature(True))
    sc.do(AlterMinIsr(1))
    sc.sync_all()
    assert sc.partition.partition_epoch == (3 if follows else 4) and sc.replica(1).partition_epoch == 4
    sc.unfence(2)
    sc.sync_all()
    sc.deliver_fetch(2)
    request = sc.in_flight(AlterPartitionRequest)[0]
    assert (request.isr, request.partition_epoch) == ({1, 2}, 4)
    response = sc.do_sending(ReceiveAlterPartition(request.id), AlterPartitionResponse)
    if not follows:
        assert response.error is None
        return
    assert response.error == "NOT_CONTROLLER"
    again = sc.do_sending(ReceiveAlterPartitionResponse(response.id), AlterPartitionRequest)
    assert (again.isr, again.partition_epoch, again.added_broker_epochs) == \
        (request.isr, request.partition_epoch, request.added_broker_epochs)
    assert sc.replica(1).pending_isr == {1, 2} and sc.replica(1).pending_request == again.id


def _waits_for(sc: Scenario, broker: int, other: int) -> str:
    """The model's refusal of ``broker``'s ControlledShutdown while ``other`` has not
    reported its controlled shutdown offset (``other``'s report read from the state)."""
    awaited = sc.state.registration(broker).controlled_shutdown_offset
    if awaited is None:   # a leader's whole shutdown: the offset its first heartbeat would set
        awaited = len(sc.state.controller.metadata_log) + 2   # its controlled shutdown record, the move
    reported = 0 if other in sc.state.controller.unheard else sc.state.broker(other).metadata_offset
    return (f"broker {broker}'s controlled shutdown waits for broker {other} to report metadata offset {awaited} "
            f"(it reported {reported}; Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)")


@ON_OFF
def test_a_controlled_shutdown_waits_for_the_active_brokers_to_hear_of_it(follows: bool):
    """RF 3, MinISR 2, leader 1 asks to shut down: the heartbeat's batch moves its
    leadership to 2, and Kafka sets 1's controlled shutdown offset to the batch's
    end. 1 is let go only once every active broker has reported that offset in
    its heartbeats: not while 2, then 3, has not applied the batch; 3, stopped
    uncleanly before it did, holds 1 until its session expires. Leader 2 cannot
    shut down in one heartbeat meanwhile: its first writes records 3 has not
    applied. The chapters let 1 go at its next heartbeat."""
    sc = Scenario(config(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS, follows, brokers=(1, 2, 3),
                         assignment=(1, 2, 3), min_isr=2))
    sc.do(BeginControlledShutdown(1))
    end = len(sc.state.controller.metadata_log)
    assert sc.partition.leader == 2 and sc.state.registration(1).in_controlled_shutdown
    assert sc.state.registration(1).controlled_shutdown_offset == (end if follows else None)
    if not follows:
        assert why_not_enabled(sc.state, ControlledShutdown(1)) is None
        assert why_not_enabled(sc.state, ControlledShutdown(2)) is None
        return
    assert why_not_enabled(sc.state, ControlledShutdown(1)) == _waits_for(sc, 1, 2)
    sc.sync_metadata(2)
    assert why_not_enabled(sc.state, ControlledShutdown(1)) == _waits_for(sc, 1, 3)
    assert why_not_enabled(sc.state, ControlledShutdown(2)) == _waits_for(sc, 2, 3)
    sc.do(UncleanShutdown(3, lossy=False))
    assert why_not_enabled(sc.state, ControlledShutdown(1)) == _waits_for(sc, 1, 3)
    sc.fence(3)
    assert why_not_enabled(sc.state, ControlledShutdown(1)) is None
    sc.do(ControlledShutdown(1))
    reg = sc.state.registration(1)
    assert reg.fenced and reg.controlled_shutdown_offset is None


@ON_OFF
def test_a_failover_forgets_the_controlled_shutdown_offsets(follows: bool):
    """As above, 1 in controlled shutdown and 3 stopped uncleanly without having
    applied the batch, its session running. The controller fails over: the new
    heartbeat manager holds no controlled shutdown offset, so 1 is let go at its
    next heartbeat; and it has heard nothing from 3 (reported: none), so leader
    2's whole shutdown waits for 3's session to expire, however much 3 applied."""
    sc = Scenario(config(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS, follows, brokers=(1, 2, 3),
                         assignment=(1, 2, 3), min_isr=2))
    sc.do(BeginControlledShutdown(1))
    sc.sync_metadata(2)
    sc.do(UncleanShutdown(3, lossy=False))
    sc.do(FailOverController())
    assert sc.state.registration(1).controlled_shutdown_offset is None
    assert sc.state.controller.unheard == (frozenset({3}) if follows else frozenset())
    assert why_not_enabled(sc.state, ControlledShutdown(1)) is None
    sc.do(ControlledShutdown(1))
    if follows:
        assert why_not_enabled(sc.state, ControlledShutdown(2)) == _waits_for(sc, 2, 3)
        sc.fence(3)
    assert why_not_enabled(sc.state, ControlledShutdown(2)) is None


@ON_OFF
def test_the_periodic_unclean_election_replaces_an_isr_of_fenced_members(follows: bool):
    """The story above, Kafka's way: moving to [1,2,3] again leaves the partition
    leaderless with ISR [1] (fenced) and 3 (unfenced, adding) in the ELR. Kafka's
    periodic unclean election (maybeElectUncleanLeaders) runs the builder's whole
    election with Election.UNCLEAN and elects 3, the first unfenced replica, with
    ISR [3]; the chapters' legacy election waits for an empty ISR. (Found by
    running Kafka's own ReplicationControlManager in lockstep.)"""
    from model import UncleanLeaderElection
    sc = reverted_move(Rule.PERIODIC_UNCLEAN_ELECTION, follows)
    sc.do(Reassign((1, 2, 3)))
    assert (sc.partition.isr, sc.partition.leader, sc.partition.elr) == ({1}, NO_LEADER, {3})
    why = why_not_enabled(sc.state, UncleanLeaderElection())
    if not follows:
        assert why == "legacy unclean leader election is disabled or not possible (ch7)"
        return
    assert why is None
    sc.do(UncleanLeaderElection())
    p = sc.partition
    assert (p.leader, p.isr, p.elr) == (3, {3}, frozenset())
    assert [e.mechanism for e in sc.state.history.unclean_elections][-1] == "unclean_leader_election"


@ON_OFF
def test_deposed_leader_gets_fenced_leader_epoch(follows: bool):
    """Leader 1's shrink is still in flight when 1 is fenced and 2 elected: Kafka
    answers FENCED_LEADER_EPOCH (the leader epoch is checked first), the chapters
    NOT_LEADER_OR_FOLLOWER."""
    sc = Scenario(config(Rule.ALTER_PARTITION_VALIDATION, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    lag_out_alone(sc, 1, 3)
    req = sc.do_sending(ProposeIsrShrink(1, 3), AlterPartitionRequest)
    sc.fence(1)
    resp = sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
    assert resp.error == ("FENCED_LEADER_EPOCH" if follows else "NOT_LEADER_OR_FOLLOWER")


@ON_OFF
def test_fencing_writes_the_partition_change_first(follows: bool):
    """Fencing leader 1: Kafka's metadata log has the partition change, then the
    fence record (a broker applying one record at a time sees them in that order)."""
    sc = Scenario(config(Rule.METADATA_RECORD_ORDER, follows, brokers=(1, 2, 3), assignment=(1, 2, 3)))
    sc.fence(1)
    kinds = [type(r) for r in sc.state.controller.metadata_log[-2:]]
    assert kinds == ([PartitionChangeRecord, FenceBrokerRecord] if follows
                     else [FenceBrokerRecord, PartitionChangeRecord])


# ---------------------------------------------------------------------- broker

def lag_out_alone(sc: Scenario, leader: int, follower: int) -> None:
    """The leader's ISR check would find ``follower`` alone out of sync now
    (``Scenario.lag_behind``, then ``lag_out``; Rule.REPLICA_LAG_TIME)."""
    sc.lag_behind(leader, follower)
    sc.lag_out(leader, follower)


def proposes(sc: Scenario, leader: int) -> bool:
    """Whether ``leader`` may propose an ISR shrink now (one follower or several)."""
    return any(isinstance(a, (ProposeIsrShrink, ProposeIsrShrinkMany)) and a.leader == leader
               for a in enabled_actions(sc.state))


def _shrink_refused_by_stale_epoch(follows_rule: Rule, follows: bool) -> Scenario:
    """Leader 1 proposes to shrink 3 out; meanwhile the controller fences 3 (a newer
    partition epoch), so the proposal is answered INVALID_UPDATE_VERSION."""
    sc = Scenario(config(follows_rule, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1))
    lag_out_alone(sc, 1, 3)
    req = sc.do_sending(ProposeIsrShrink(1, 3), AlterPartitionRequest)
    sc.fence(3)
    resp = sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
    assert resp.error == "INVALID_UPDATE_VERSION"
    sc.do(ReceiveAlterPartitionResponse(resp.id))
    return sc


@ON_OFF
def test_refused_change_stays_pending_until_new_metadata(follows: bool):
    """Kafka rolls a refused change back only for INELIGIBLE_REPLICA: after
    INVALID_UPDATE_VERSION leader 1 keeps its Maximal ISR and proposes nothing until
    it applies the newer registration."""
    sc = _shrink_refused_by_stale_epoch(Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING, follows)
    r = sc.replica(1)
    assert r.pending_isr == ({1, 2} if follows else None)
    assert proposes(sc, 1) != follows
    sc.sync_metadata(1)
    assert sc.replica(1).pending_isr is None and sc.replica(1).isr == {1, 2}


@ON_OFF
def test_one_alter_partition_in_flight_across_metadata(follows: bool):
    """Leader 1's shrink of 3 is in flight when it applies a newer registration
    (2 fenced): its pending change is dropped, but Kafka's AlterPartitionManager still
    holds the request, so no new proposal until it is answered."""
    sc = Scenario(config(Rule.ONE_ALTER_PARTITION_IN_FLIGHT, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    lag_out_alone(sc, 1, 3)
    req = sc.do_sending(ProposeIsrShrink(1, 3), AlterPartitionRequest)
    sc.fence(2)
    sc.sync_metadata(1)
    assert sc.replica(1).pending_isr is None
    assert sc.replica(1).pending_request == (req.id if follows else None)
    assert (why_not_enabled(sc.state, ProposeIsrShrink(1, 3)) is None) != follows
    resp = sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
    sc.do(ReceiveAlterPartitionResponse(resp.id))
    assert why_not_enabled(sc.state, ProposeIsrShrink(1, 3)) is None


@ON_OFF
def test_leader_applies_registration_of_the_partition_epoch_it_knows(follows: bool):
    """Leader 1 learns the new partition epoch from the AlterPartition response of a
    shrink, then proposes another shrink; the metadata record of the first arrives:
    Kafka's makeLeader applies it (same partition epoch), dropping the second
    proposal from the Maximal ISR; the chapters ignore it."""
    sc = Scenario(config(Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH, follows, brokers=(1, 2, 3),
                         assignment=(1, 2, 3), min_isr=1))
    sc.lag_behind(1, 3)
    sc.shrink(1, 3)
    sc.lag_out(1, 2)
    sc.do_sending(ProposeIsrShrink(1, 2), AlterPartitionRequest)
    assert sc.replica(1).pending_isr == {1}
    sc.sync_metadata(1)
    assert sc.replica(1).pending_isr == (None if follows else {1})
    assert sc.replica(1).isr == {1, 2}


@ON_OFF
def test_leader_does_not_propose_a_fenced_follower(follows: bool):
    """Follower 3, out of the ISR, is fenced by the controller and leader 1 applies
    that; 3, still running, then fetches up to the leader's LEO: Kafka's leader does
    not propose it; the chapters' leader does (and the controller refuses)."""
    sc = Scenario(config(Rule.LEADER_CHECKS_ISR_ELIGIBILITY, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    sc.lag_behind(1, 3)
    sc.shrink(1, 3)
    sc.sync_all()
    sc.fence(3)
    sc.sync_metadata(1)
    assert (sc.fetch_proposing(3) is None) == follows


@ON_OFF
def test_fetch_from_a_previous_broker_session_is_fenced(follows: bool):
    """Follower 3's fetch is still in flight when 3 restarts (a new broker epoch) and
    leader 1 applies its new registration: Kafka answers the old fetch
    NOT_LEADER_OR_FOLLOWER without recording it; the chapters serve it."""
    sc = Scenario(config(Rule.STALE_BROKER_EPOCH_FETCH_FENCED, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    req = sc.send_fetch(3)
    sc.restart(3, clean=False)
    sc.sync_metadata(1)
    resp = sc.do_sending(ReceiveFetchRequest(req.id), FetchResponse)
    assert resp.error == ("NOT_LEADER_OR_FOLLOWER" if follows else None)


@ON_OFF
def test_hwm_waits_for_a_caught_up_follower_outside_the_isr(follows: bool):
    """Follower 3 was shrunk out, then fetched up to the leader's LEO (1) while the
    leader's shrink of 2 was in flight (so 3 was not proposed); the leader takes a
    second write and 2 fetches it: Kafka counts 3 as caught up and the HWM waits
    for it at 1; the chapters advance on the Maximal ISR [1,2] to 2."""
    sc = Scenario(config(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS, follows, brokers=(1, 2, 3),
                         assignment=(1, 2, 3), min_isr=1))
    sc.lag_behind(1, 3)
    sc.shrink(1, 3)
    sc.sync_all()
    sc.lag_out(1, 2)
    sc.do_sending(ProposeIsrShrink(1, 2), AlterPartitionRequest)
    for _ in range(2):
        assert sc.fetch_proposing(3) is None
    assert sc.replica(1).follower(3).fetch_offset == sc.replica(1).leo == 1
    sc.produce(1)
    replicate_all(sc, 1, 2)
    assert sc.replica(1).hwm == (1 if follows else 2)


@ON_OFF
def test_the_leader_proposes_an_expansion_inside_the_fetch(follows: bool):
    """Follower 3, shrunk out, fetches up to leader 1's LEO: Kafka's leader sends the
    AlterPartition adding 3 while it serves the fetch, before the fetch's answer,
    and never enables ProposeIsrExpand; the chapters' leader sends nothing until it
    takes that step."""
    sc = Scenario(config(Rule.EXPAND_ISR_ON_FETCH, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1))
    sc.lag_behind(1, 3)
    sc.shrink(1, 3)
    sc.sync_all()
    req = sc.fetch_proposing(3)
    enabled = why_not_enabled(sc.state, ProposeIsrExpand(1, 3)) is None
    if follows:
        assert req is not None and req.isr == {1, 2, 3} and not enabled
    else:
        assert req is None and enabled
    assert sc.replica(1).maximal_isr == ({1, 2, 3} if follows else {1, 2})


@ON_OFF
def test_stale_fetch_to_a_deposed_leader_is_fenced_first(follows: bool):
    """Follower 3's fetch of leader epoch 1 reaches broker 1 after 1 was deposed and
    became a follower in a newer epoch: Kafka compares the leader epoch first
    (FENCED_LEADER_EPOCH); the chapters answer NOT_LEADER_OR_FOLLOWER."""
    sc = Scenario(config(Rule.FETCH_ERROR_ORDER, follows, brokers=(1, 2, 3), assignment=(1, 2, 3)))
    req = sc.send_fetch(3)
    sc.fence(1)
    sc.do(UnfenceBroker(1))
    sc.sync_metadata(1)
    resp = sc.do_sending(ReceiveFetchRequest(req.id), FetchResponse)
    assert resp.error == ("FENCED_LEADER_EPOCH" if follows else "NOT_LEADER_OR_FOLLOWER")


@ON_OFF
def test_the_fetch_that_advances_the_hwm_is_answered_with_the_previous_one(follows: bool):
    """One record, fetched by followers 2 and 3; 2 then fetches at 1. Follower 3's
    fetch at 1 moves leader 1's HWM to 1: Kafka read the records and the HWM before
    recording the fetch (Partition.fetchRecords) and answers 0; the chapters answer
    1. 3 learns the HWM one fetch later. (Found by driving Kafka's own Partition.)"""
    sc = Scenario(config(Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=2))
    sc.produce(1)
    for follower in (2, 3, 2):
        sc.deliver_fetch(follower)
    req, resp = sc.deliver_fetch(3)
    assert (req.fetch_offset, sc.replica(1).hwm) == (1, 1)
    assert resp.hwm == (0 if follows else 1)
    assert sc.replica(3).hwm == resp.hwm
    _, resp = sc.deliver_fetch(3)
    assert resp.hwm == sc.replica(3).hwm == 1


@ON_OFF
def test_the_isr_check_removes_every_lagging_follower_in_one_alter_partition(follows: bool):
    """Neither follower of leader 1 has fetched (ISR [1,2,3], MinISR 2). Kafka's ISR
    check finds both out of sync and removes them in one AlterPartition
    (Partition.maybeShrinkIsr): the ISR drops below MinISR in one change and both
    join the ELR. The chapters' leader removes one follower per proposal: 2 leaves
    while the ISR keeps MinISR members, so only 3 joins the ELR. (Found by driving
    Kafka's own Partition.)"""
    sc = Scenario(config(Rule.SHRINK_ALL_OUT_OF_SYNC, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=2))
    sc.lag_out(1, 2, 3)
    both = ProposeIsrShrinkMany(1, (2, 3))
    assert (why_not_enabled(sc.state, both) is None) == follows
    if follows:
        req = sc.do_sending(both, AlterPartitionRequest)
        assert req.isr == {1}
        sc.do(ReceiveAlterPartition(req.id))
    else:
        sc.shrink(1, 2)
        assert (sc.partition.isr, sc.partition.elr) == ({1, 3}, frozenset())
        sc.shrink(1, 3)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2, 3} if follows else {3})


@ON_OFF
def test_a_follower_at_the_leaders_leo_is_never_out_of_sync(follows: bool):
    """Followers 2 and 3 have fetched leader 1's one write, and fall silent. However
    long they stay so, Kafka's leader never finds a follower at its LEO out of sync
    (ReplicaState.isCaughtUp), so it proposes no shrink; the next write it takes
    makes them out of sync (their last caught-up time is their last fetch). The
    chapters' leader may shrink a silent follower out at any time. (Found by
    driving Kafka's own Partition.)"""
    sc = Scenario(config(Rule.CAUGHT_UP_AT_LEADER_LEO, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=2))
    sc.produce(1)
    replicate_all(sc, 1, 2, 3)
    assert (sc.replica(1).leo, sc.replica(1).follower(2).fetch_offset) == (1, 1)
    sc.lag_out(1, 2, 3)   # with Kafka's clock: long past the lag
    shrinks = (ProposeIsrShrink(1, 2), ProposeIsrShrink(1, 3))
    assert [why_not_enabled(sc.state, a) is None for a in shrinks] == [not follows] * 2
    sc.produce(1)
    if follows:   # both caught up last at the same moment: the check finds both
        assert why_not_enabled(sc.state, ProposeIsrShrinkMany(1, (2, 3))) is None
        sc.alter_isr(ProposeIsrShrinkMany(1, (2, 3)))
        assert sc.partition.isr == {1}
        return
    assert [why_not_enabled(sc.state, a) is None for a in shrinks] == [True] * 2
    sc.shrink(1, 2)
    assert sc.partition.isr == {1, 3}


@ON_OFF
def test_the_isr_check_finds_exactly_the_followers_whose_caught_up_time_expired(follows: bool):
    """Leader 1 takes a write; follower 2 fetches it 10 s later, follower 3 never
    does. Another write leaves both behind the LEO. With Kafka's clock the check
    finds neither out of sync within the lag, and, 30,001 ms after the start, 3
    alone (caught up last at the start; 2 at 10 s): a shrink of 2 is not a choice.
    Without the clock either may be shrunk out at any time."""
    sc = Scenario(config(Rule.REPLICA_LAG_TIME, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1))
    sc.produce(1)
    sc.deliver_fetch(2)                       # 2 at 0 of 1: not caught up by this fetch
    if follows:
        sc.do(AdvanceTime(10_000))
    sc.deliver_fetch(2)                       # 2 at the LEO: caught up now
    sc.produce(1)                             # neither follower at the LEO
    shrinks = (ProposeIsrShrink(1, 2), ProposeIsrShrink(1, 3))
    if not follows:
        assert why_not_enabled(sc.state, AdvanceTime(1)) is not None
        assert [why_not_enabled(sc.state, a) is None for a in shrinks] == [True, True]
        return
    fs = sc.replica(1).follower(2)
    assert (fs.fetch_offset, fs.last_fetch_ms, fs.last_caught_up_ms, fs.last_fetch_leader_leo) == (1, 10_000, 10_000, 1)
    assert [why_not_enabled(sc.state, a) is None for a in shrinks] == [False, False]
    sc.lag_out(1, 3)
    assert sc.state.now_ms == 30_001
    assert [why_not_enabled(sc.state, a) is None for a in shrinks] == [False, True]
    sc.shrink(1, 3)
    assert sc.partition.isr == {1, 2}


@ON_OFF
def test_a_replica_added_in_the_leaders_epoch_starts_at_kafkas_empty_state(follows: bool):
    """Leader 1 (RF 2) takes two writes; a reassignment adds 3 in leader epoch 1.
    With Kafka's clock the leader's new Replica starts at ReplicaState.EMPTY, whose
    leader LEO at the last fetch is 0 (unknown, -1, after a new leader epoch); its
    first fetch, at 0, reaches that 0 but not the leader's LEO, so 3 has still
    never caught up. Without the clock the leader knows nothing of 3.
    (Found by running Kafka's own Partition as the brokers' replica.)"""
    sc = Scenario(config(Rule.REPLICA_LAG_TIME, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    sc.produce(1, 2)
    sc.do(Reassign((3, 1)))
    sc.sync_metadata(1)
    assert sc.replica(1).leader_epoch == 1
    assert sc.replica(1).follower(3) == (FollowerState(last_fetch_leader_leo=0) if follows else None)
    sc.sync_metadata(3)
    sc.deliver_fetch(3)
    fs = sc.replica(1).follower(3)
    assert (fs.fetch_offset, fs.last_fetch_leader_leo, fs.last_caught_up_ms) == (0, 2, None)   # the same either way


@ON_OFF
def test_a_follower_takes_the_partition_epoch_of_a_change_in_its_leader_epoch(follows: bool):
    """Leader 1 shrinks 3 out (partition epoch 2, leader epoch 1 still); follower 2
    applies the change: Kafka's makeFollower takes its partition epoch, and only
    the leader epoch restarts the fetcher; the chapters' follower changes nothing.
    (Found by running Kafka's own Partition as the brokers' replica.)"""
    sc = Scenario(config(Rule.FOLLOWER_APPLIES_PARTITION_EPOCH, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    sc.lag_behind(1, 3)
    sc.shrink(1, 3)
    sc.sync_metadata(2)
    r = sc.replica(2)
    assert (r.leader_epoch, r.partition_epoch) == (1, 2 if follows else 1)


@ON_OFF
def test_a_leader_deposed_before_it_wrote_fetches_with_its_own_epoch(follows: bool):
    """1 writes a record, replicated to 2 and 3. 2 leads epoch 2 and writes nothing;
    3 leads epoch 3. Kafka: 2's epoch cache keeps (2, LEO 1), so its fetch carries
    last fetched epoch 2, leader 3 answers the diverging epoch (1, 1), 2 truncates
    at its LEO (dropping the entry) and fetches again with epoch 1. The chapters:
    the cache is the records' epochs, and the first fetch carries 1 and is served.
    (Found by running Kafka's own Partition as the brokers' replica.)"""
    sc = Scenario(config(Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    sc.produce(1)
    replicate_all(sc, 1, 2, 3)
    sc.fence(1)
    sc.sync_all()
    assert (sc.partition.leader, sc.partition.leader_epoch) == (2, 2)
    sc.fence(2)
    sc.sync_all()
    assert (sc.partition.leader, sc.partition.leader_epoch) == (3, 3)
    req, resp = sc.deliver_fetch(2)
    assert req.last_fetched_epoch == (2 if follows else 1)
    if follows:
        assert (resp.diverging_epoch.epoch, resp.diverging_epoch.end_offset) == (1, 1)
        req, resp = sc.deliver_fetch(2)
        assert req.last_fetched_epoch == 1
    assert resp.diverging_epoch is None and resp.error is None
    assert sc.replica(2).log == sc.replica(3).log


@ON_OFF
def test_the_elr_is_populated_before_the_election(follows: bool):
    """RF 2 on [1, 2], MinISR 2: fencing 2 then 1 leaves ISR [], ELR [1, 2]. With the
    ELR off, MinISR is lowered to 1 (no ELR is cleared: the feature is off), then the
    ELR is switched on again. Unfencing 1 elects it from the ELR: Kafka's builder
    populated the ELR from the empty target ISR before the election
    (maybePopulateTargetElr, then tryElection), so 2 stays in the ELR beside ISR [1]
    at MinISR 1; the chapters' order empties it. What that costs under Kafka's order:
    1 takes a write acknowledged with ISR [1]; fencing 1 puts it back in the ELR with
    2, and unfencing 2 elects 2, which lacks the acknowledged write
    (LeaderCandidateCompleteness, StrongIsr; ValidPartitionMetadata from the
    election of 1 on). Found by the per-release campaign (4.1.2); every step agrees
    with Kafka 4.4.0's code (the "kafka" engine)."""
    sc = Scenario(config(Rule.ELR_POPULATED_BEFORE_ELECTION, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=2), check_properties=False)
    for action in (FenceBroker(2), FenceBroker(1), UpdateElrFeature(False), AlterMinIsr(1), UpdateElrFeature(True)):
        sc.do(action)
    assert (sc.partition.isr, sc.partition.elr) == (frozenset(), {1, 2})
    sc.do(UnfenceBroker(1))
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (1, {1}, {2} if follows else frozenset())
    sc.sync_metadata(1)
    sc.produce(1)
    assert [w.offset for w in sc.state.history.acked] == [0]
    sc.do(FenceBroker(1))
    assert sc.partition.elr == ({1, 2} if follows else {1})
    sc.sync_metadata(2)
    sc.do(UnfenceBroker(2))
    sc.sync_metadata(2)
    if follows:   # 2 leads without the acknowledged write
        assert (sc.partition.leader, sc.replica(2).log) == (2, ())
        assert {v.property for v in properties.check_all(sc.state)} >= {"LeaderCandidateCompleteness", "StrongIsr"}
    else:         # 2 is in neither ISR nor ELR: no leader
        assert sc.partition.leader == NO_LEADER


@ON_OFF
def test_a_fenced_follower_awaits_a_new_leader_epoch(follows: bool):
    """RF 3, leader 1: a reassignment dropping 3 bumps the leader epoch, which leader 1
    applies and follower 2 does not. 2's fetch in epoch 1 is answered
    FENCED_LEADER_EPOCH: Kafka's fetcher removes the partition (marked failed) and
    sends nothing until 2 applies the new leader epoch; the chapters' follower
    fetches again at once. After 2 applies it, it fetches either way."""
    sc = Scenario(config(Rule.FENCED_FETCH_AWAITS_NEW_EPOCH, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    sc.do(Reassign((1, 2)))
    sc.sync_metadata(1)
    _, resp = sc.deliver_fetch(2)
    assert resp.error == "FENCED_LEADER_EPOCH"
    why = why_not_enabled(sc.state, SendFetch(2))
    assert (why is not None and "FENCED_LEADER_EPOCH" in why) == follows
    sc.produce(1)
    sc.sync_metadata(2)
    sc.deliver_fetch(2)
    assert sc.replica(2).log == sc.replica(1).log and sc.replica(2).leo == 1


@ON_OFF
def test_follower_lacking_the_diverging_epoch_truncates_in_rounds(follows: bool):
    """Follower 3 holds four epoch-1 records and one of epoch 3; leader 2 (epoch 4,
    elected uncleanly) holds two epoch-1 records and one of epoch 2. The leader
    answers diverging epoch (2, end 3); 3 has no epoch 2, so Kafka truncates to its
    own end of epoch 1 (4) and fetches again, where the chapters take min(4, 3)."""
    sc = Scenario(config(Rule.TRUNCATION_IN_ROUNDS, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1,
                         unclean_leader_election=True))
    sc.produce(1, 2)
    replicate_all(sc, 1, 2, 3)
    sc.produce(1, 2)
    sc.deliver_fetch(3)                       # only 3 gets offsets 2 and 3
    sc.fence(1)                               # 2 leads epoch 2
    sc.sync_metadata(2)
    sc.produce(2)                             # 2 writes offset 2 in epoch 2
    sc.fence(2)                               # 3 leads epoch 3
    sc.sync_metadata(3)
    sc.produce(3)                             # 3 writes offset 4 in epoch 3
    sc.do(UnfenceBroker(2))
    sc.do(FenceBroker(3))                     # unclean election of 2 (epoch 4)
    assert sc.partition.leader == 2
    sc.sync_metadata(2)
    sc.do(UnfenceBroker(3))
    sc.sync_metadata(3)
    assert [r.epoch for r in sc.replica(3).log] == [1, 1, 1, 1, 3]
    sc.deliver_fetch(3)
    assert sc.replica(3).leo == (4 if follows else 3)
    sc.deliver_fetch(3)
    assert sc.replica(3).leo == 2


# ------------------------------------------------------------ configuration

@ON_OFF
def test_a_min_isr_change_clears_the_elr_whatever_the_isr(follows: bool):
    """RF 3, MinISR 2: fencing 3 and then 2 leaves ISR [1], ELR [2]. MinISR raised to
    3: Kafka empties the ELR (a ClearElrRecord); the chapters keep it, the ISR being
    below the new MinISR (the HWM is still frozen). Either way the partition epoch
    moves. Then, with the ELR empty, MinISR back to 2: Kafka writes no partition
    change (the partition epoch stays), the chapters write one that moves it."""
    sc = Scenario(config(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=2))
    sc.fence(3)
    sc.fence(2)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    epoch = sc.partition.partition_epoch
    sc.do(AlterMinIsr(3))
    assert sc.partition.partition_epoch == epoch + 1
    assert sc.partition.elr == (set() if follows else {2})
    if follows:
        epoch = sc.partition.partition_epoch
        sc.do(AlterMinIsr(2))
        assert sc.partition.partition_epoch == epoch
    else:
        sc.do(AlterMinIsr(1))                   # the ISR [1] now has MinISR members: case G
        assert sc.partition.elr == set() and sc.partition.partition_epoch == epoch + 2


@ON_OFF
def test_a_cluster_level_min_isr_change_clears_the_elr_of_a_topic_with_its_own(follows: bool):
    """RF 3, the topic created with its own MinISR 2: fencing 3 and then 2 leaves
    ISR [1], ELR [2]. The cluster-level default set to 2, the value in force:
    Kafka writes its ConfigRecord and a ClearElrRecord for every topic, so the
    ELR is emptied and the partition epoch moves, while the topic's MinISR, and
    leader 1's once it applied the records, stay 2. Set again with nothing left
    to clear: the ConfigRecord alone. The chapters have no cluster-level default."""
    sc = Scenario(config(Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=2))
    sc.fence(3)
    sc.fence(2)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    if not follows:
        assert "no cluster-level default" in why_not_enabled(sc.state, AlterClusterMinIsr(2))
        assert AlterClusterMinIsr(2) not in enabled_actions(sc.state)
        return
    epoch, offset = sc.partition.partition_epoch, len(sc.state.controller.metadata_log)
    sc.do(AlterClusterMinIsr(2))
    assert (sc.partition.elr, sc.partition.last_known_elr) == (set(), set())
    assert sc.partition.partition_epoch == epoch + 1 and len(sc.state.controller.metadata_log) == offset + 2
    sc.do(AlterClusterMinIsr(1))
    assert sc.partition.partition_epoch == epoch + 1 and len(sc.state.controller.metadata_log) == offset + 3
    sc.sync_metadata(1)
    assert sc.state.min_isr == 2 and sc.state.leader_min_isr(1) == 2


def _written_by(sc: Scenario, action: object) -> list:
    """The metadata records ``action`` writes."""
    offset = len(sc.state.controller.metadata_log)
    sc.do(action)
    return list(sc.state.controller.metadata_log[offset:])


@ON_OFF
def test_the_elr_feature_level_switches_the_elr_at_run_time(follows: bool):
    """RF 3, MinISR 3: fencing 3 and then 2 leaves ISR [1], ELR [2, 3]. Kafka's
    downgrade of eligible.leader.replicas.version to 0 writes its FeatureLevelRecord
    alone: the ELR stays. 2 is unfenced, and fencing leader 1 still elects it, cleanly,
    from that ELR (isValidNewLeader reads it whatever the level) and, ELR off, empties
    the rest of it: 3 goes, and 1 does not join. Fencing 2, the last ISR member, leaves
    the partition leaderless with 2 still in the ISR (never written empty with ELR off)
    and no last known leader. The upgrade writes the cluster-level min.insync.replicas
    (the static 1; the topic keeps its 3) before the level, the second one the level
    alone. The chapters have no feature level: the ELR stays on."""
    sc = Scenario(config(Rule.ELR_FEATURE_LEVEL, follows, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3))
    sc.fence(3)
    sc.fence(2)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2, 3})
    if follows:
        epoch = sc.partition.partition_epoch
        assert _written_by(sc, UpdateElrFeature(False)) == [FeatureLevelRecord(ELR_FEATURE, 0)]
        assert not sc.state.elr_enabled
        assert (sc.partition.elr, sc.partition.partition_epoch) == ({2, 3}, epoch)
    else:
        assert "no feature level" in why_not_enabled(sc.state, UpdateElrFeature(False))
        assert UpdateElrFeature(False) not in enabled_actions(sc.state)
    sc.unfence(2)
    sc.fence(1)
    p = sc.partition
    assert (p.leader, p.isr, p.elr, p.leader_recovery_state) == (2, {2}, set() if follows else {1, 3}, "RECOVERED")
    assert not sc.state.history.unclean_elections
    sc.fence(2)
    p = sc.partition
    if not follows:
        assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, set(), {1, 2, 3}, {2})
        return
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, {2}, set(), set())
    cluster_min_isr = ConfigRecord(MIN_INSYNC_REPLICAS, STATIC_MIN_INSYNC_REPLICAS, cluster_default=True)
    assert _written_by(sc, UpdateElrFeature(True)) == [cluster_min_isr, FeatureLevelRecord(ELR_FEATURE, 1)]
    assert sc.state.elr_enabled and sc.state.min_isr == 3 and sc.partition == p
    sc.do(UpdateElrFeature(False))
    assert _written_by(sc, UpdateElrFeature(True)) == [FeatureLevelRecord(ELR_FEATURE, 1)]
    sc.sync_all()   # the brokers apply every record: Kafka's log has as many as the model's


def test_with_the_elr_feature_off_an_unfencing_empties_a_leaderless_partitions_elr():
    """RF 3 on four brokers, MinISR 2, 4 fenced: fencing 3, 2 and then 1 leaves the
    partition leaderless, ISR [], ELR [1, 2], LastKnownELR [1]. After the downgrade,
    unfencing 4, no replica, still has Kafka's controller build a change for the
    leaderless partition (handleBrokerUnfenced): it elects nobody but, ELR off,
    empties the ELR, and is written. Unfencing 2 then elects nobody (no ELR, and no
    last known leader with ELR off) and writes nothing. Once upgraded, unfencing 1
    elects it, the last known leader, uncleanly."""
    sc = Scenario(Config(profile=KAFKA, brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2))
    for b in (4, 3, 2, 1):
        sc.fence(b)
    p = sc.partition
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, set(), {1, 2}, {1})
    sc.do(UpdateElrFeature(False))
    epoch = sc.partition.partition_epoch
    sc.unfence(4)
    p = sc.partition
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, set(), set(), {1})
    assert p.partition_epoch == epoch + 1
    sc.unfence(2)
    assert sc.partition == p
    sc.do(UpdateElrFeature(True))
    sc.unfence(1)
    p = sc.partition
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (1, {1}, set(), set())
    assert [e.mechanism for e in sc.state.history.unclean_elections] == ["last_known_leader"]


@ON_OFF
def test_a_batch_reaches_the_leader_before_its_min_isr(follows: bool):
    """RF 2, MinISR 1; leader 1 takes a write. MinISR raised to 2 and follower 2
    fenced (ISR [1]); leader 1 applies both in one batch. Kafka's leader acts on the
    ISR change under the old MinISR and advances the HWM (finding 6); the chapters'
    leader applies the batch as one image, MinISR 2 included, and the HWM stays."""
    sc = Scenario(config(Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=1), check_properties=False)
    sc.produce(1)
    sc.do(AlterMinIsr(2))
    sc.fence(2)
    sc.sync_metadata(1)
    assert sc.replica(1).isr == {1} and sc.state.leader_min_isr(1) == 2
    assert sc.replica(1).hwm == (1 if follows else 0)


@ON_OFF
def test_a_cleared_elr_member_stays_indexed(follows: bool):
    """RF 2, MinISR 1: fencing 1 and then 2 leaves ELR [2]. Raising MinISR clears
    it, but Kafka's broker-to-ELR index keeps 2's entry. Unclean leader election is
    switched on and 2, unfenced, is elected; it restarts uncleanly and is fenced
    again: back in the ELR, and indexed a second time. When it registers again,
    Kafka's controller writes the change taking it out of the ELR once per index
    entry: twice, the same record, so the partition epoch moves by 2 (finding 7)."""
    sc = Scenario(config(Rule.CLEARED_ELR_STAYS_INDEXED, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=1))
    for action in (FenceBroker(1), FenceBroker(2), AlterMinIsr(2), AlterUncleanLeaderElection(True),
                   UnfenceBroker(2), UncleanShutdown(2, False), FenceBroker(2)):
        sc.do(action)
    assert sc.partition.elr == {2}
    assert sc.state.controller.elr_entries(2) == (2 if follows else 0)
    offset, epoch = len(sc.state.controller.metadata_log), sc.partition.partition_epoch
    sc.do(StartBroker(2))
    changes = [r for r in sc.state.controller.metadata_log[offset:] if isinstance(r, PartitionChangeRecord)]
    assert len(changes) == (2 if follows else 1) and len(set(changes)) == 1
    assert sc.partition.partition_epoch == epoch + len(changes) and sc.partition.elr == set()


@ON_OFF
def test_an_unclean_election_leaves_the_partition_recovering_until_the_leaders_first_isr_change(follows: bool):
    """unclean.leader.election.enable, RF 2, MinISR 1: follower 2 left the ISR and
    fencing leader 1 elects 2 uncleanly. Kafka marks the registration RECOVERING;
    1 comes back, catches up, and 2's expansion, which carries the RECOVERED 2
    marked itself with on becoming leader, ends it. Without the rule nothing records
    the unclean election."""
    sc = Scenario(config(Rule.LEADER_RECOVERY_STATE, follows, brokers=(1, 2, 3), assignment=(1, 2),
                         min_isr=1, unclean_leader_election=True))
    sc.shrink(1, 2)
    sc.fence(1)
    assert (sc.partition.leader, sc.partition.isr) == (2, {2})
    assert sc.partition.leader_recovery_state == ("RECOVERING" if follows else "RECOVERED")
    sc.unfence(1)
    sc.sync_all()
    sc.deliver_fetch(1)
    sc.deliver_fetch(1)
    sc.expand(2, 1)
    change = [r for r in sc.state.controller.metadata_log if isinstance(r, PartitionChangeRecord)][-1]
    assert sc.partition.isr == {1, 2} and sc.partition.leader_recovery_state == "RECOVERED"
    assert change.leader_recovery_state == ("RECOVERED" if follows else None)


@ON_OFF
def test_a_restart_brings_back_an_epoch_a_truncation_removed_and_replicas_diverge(follows: bool):
    """RF 3 on [1, 2, 3], MinISR 1. 1 writes offset 0 (epoch 1, everywhere) and 1
    (epoch 1, only its own). After a move to [2, 1, 3] the preferred election makes
    2 leader (epoch 2) before 1 applies it; 2 writes offset 1 in epoch 2 and 3 takes
    it. 2 is fenced and 1 leads epoch 3: 2 truncates at 1, dropping its entry (2, 1),
    and takes 1's epoch-1 record at offset 1. Kafka: the truncation only schedules
    the checkpoint's write, and 2 dies before it runs; the restart reads (2, 1) back,
    although offset 1 is an epoch-1 record. 1 is fenced, 3 leads epoch 4; 2's fetch
    carries epoch 2, which 3 ends at 2: no divergence, and 2 keeps its offset 1 under
    the HWM, the record 3 does not have (LogMatching). The chapters: the restart
    reads the cache without (2, 1), the fetch carries epoch 1, and 2 truncates."""
    sc = Scenario(config(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1), check_properties=not follows)   # LogMatching fails under Kafka
    sc.produce(1)
    replicate_all(sc, 1, 2, 3)
    sc.produce(1)                              # offset 1 in epoch 1, on 1 only
    sc.do(Reassign((2, 1, 3)))
    sc.do(ElectPreferredLeader())
    sc.sync_metadata(2)
    sc.sync_metadata(3)
    sc.produce(2)                              # offset 1 in epoch 2, taken by 3
    sc.deliver_fetch(3)
    sc.fence(2)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (1, 3)
    sc.sync_metadata(1)
    sc.sync_metadata(3)
    sc.unfence(2)
    _, resp = sc.deliver_fetch(2)
    assert (resp.diverging_epoch.epoch, resp.diverging_epoch.end_offset) == (1, 2)
    sc.deliver_fetch(2)                        # 1's offset 1 (epoch 1): no new entry, no write
    assert [r.epoch for r in sc.replica(2).log] == [1, 1]
    assert sc.replica(2).epoch_checkpoint == (((1, 0), (2, 1)) if follows else None)
    assert why_not_enabled(sc.state, WriteEpochCheckpoint(2)) is None if follows else not None
    sc.stop(2, clean=False)
    sc.fence(1)
    assert (sc.partition.leader, sc.partition.leader_epoch) == (3, 4)
    sc.sync_metadata(3)
    sc.restart(2)
    req, resp = sc.deliver_fetch(2)
    assert req.last_fetched_epoch == (2 if follows else 1)
    assert (resp.diverging_epoch is None) == follows
    sc.produce(3)
    replicate_all(sc, 3, 2)
    assert sc.replica(2).hwm == sc.replica(3).hwm == 3
    assert (sc.replica(2).log[1] == sc.replica(3).log[1]) != follows


def test_the_scheduled_epoch_checkpoint_write_closes_the_window():
    """The story above with the scheduler's write run before 2 dies: the restart
    reads the cache without (2, 1), and 2 truncates at 3's answer."""
    sc = Scenario(config(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, True, brokers=(1, 2, 3), assignment=(1, 2, 3),
                         min_isr=1))
    sc.produce(1)
    replicate_all(sc, 1, 2, 3)
    sc.produce(1)
    sc.do(Reassign((2, 1, 3)))
    sc.do(ElectPreferredLeader())
    sc.sync_metadata(2)
    sc.sync_metadata(3)
    sc.produce(2)
    sc.deliver_fetch(3)
    sc.fence(2)
    sc.sync_metadata(1)
    sc.sync_metadata(3)
    sc.unfence(2)
    sc.deliver_fetch(2)
    sc.deliver_fetch(2)
    sc.do(WriteEpochCheckpoint(2))
    assert sc.replica(2).epoch_checkpoint is None
    assert why_not_enabled(sc.state, WriteEpochCheckpoint(2)) is not None
    sc.stop(2, clean=False)
    sc.fence(1)
    sc.sync_metadata(3)
    sc.restart(2)
    req, resp = sc.deliver_fetch(2)
    assert req.last_fetched_epoch == 1 and resp.diverging_epoch is not None
    sc.produce(3)
    replicate_all(sc, 3, 2)
    assert sc.replica(2).log == sc.replica(3).log


def test_a_restart_reads_the_epoch_checkpoint_back_truncated_at_the_log_end():
    """Leader 1's write (epoch 1, offset 0) is not flushed and a lossy crash loses it;
    the checkpoint still holds the epoch's entry (1, 0), and the load truncates it at
    the log end offset 0 (LogLoader.load): restarted, 1 fetches from the new leader 2
    with no last fetched epoch."""
    sc = Scenario(config(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, True, brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    sc.produce(1)
    sc.stop(1, clean=False, lossy=True)
    assert sc.partition.leader == 2
    sc.sync_metadata(2)
    sc.restart(1)
    assert sc.replica(1).log == () and sc.replica(1).epoch_cache is None
    req, _ = sc.deliver_fetch(1)
    assert req.last_fetched_epoch is None


def test_an_unfencing_completes_a_reassignment_whose_adding_replicas_are_the_isr():
    """The 14 actions a Kafka campaign found (seed 1): [1, 2, 3] -> [1, 2, 3, 4] of 4
    brokers, MinISR 3, unclean elections on. Every broker fenced, the ELR off, 4
    elected uncleanly and fenced in turn: the ISR keeps its last member 4 (the ELR
    off), no leader. With the ELR back on, 3's unfencing builds the change of the
    leaderless partition (handleBrokerUnfenced): it elects no one, but the adding
    replica 4 is the whole ISR, so the builder completes the reassignment and the
    change is written (completeReassignmentIfNeeded), leader or not."""
    sc = Scenario(Config(profile=KAFKA, brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=3,
                         unclean_leader_election=True), check_properties=False)
    for action in (FenceBroker(1), FenceBroker(2), FenceBroker(3), UpdateElrFeature(False), AdvanceTime(1),
                   UnfenceBroker(3), Reassign((1, 2, 3, 4)), AdvanceTime(1), FenceBroker(3), FenceBroker(4),
                   ReplicateMetadata(3, 1), UpdateElrFeature(True), AlterUncleanLeaderElection(False)):
        sc.do(action)
    p = sc.partition
    assert (p.leader, p.isr, p.adding, p.replicas) == (NO_LEADER, {4}, {4}, (1, 2, 3, 4))
    epoch = p.partition_epoch
    sc.do(UnfenceBroker(3))
    p = sc.partition
    assert (p.leader, p.isr, p.adding, p.removing, p.partition_epoch) == (NO_LEADER, {4}, frozenset(), frozenset(),
                                                                         epoch + 1)
    assert p.replicas == (1, 2, 3, 4)


def test_every_rule_has_a_test():
    """One test per rule above (by the rule named in its ``config`` call)."""
    import inspect
    source = inspect.getsource(inspect.getmodule(test_every_rule_has_a_test))
    missing = [r.name for r in Rule if f"Rule.{r.name}" not in source]
    assert not missing, f"rules without a test: {missing}"



def test_the_last_known_leader_waits_for_the_elr_the_change_populates():
    """RF 2 on [1, 3], MinISR 2: fencing 1 and then 3 leaves ISR [], ELR [1, 3],
    LastKnownELR [3]. With the ELR off, unfencing 1 elects it from the ELR, which the
    change empties; the LastKnownELR, written only with the feature on, stays [3]
    beside leader 1. Once the feature is on again, fencing 1 empties the ISR: Kafka's
    builder puts 1 in the ELR (maybePopulateTargetElr) before the election, so
    canElectLastKnownLeader finds an ELR and elects nobody. (Found by a 10-minute
    Kafka campaign: the model had elected the last known leader 3 from the ELR it
    had before the change.)"""
    sc = Scenario(Config(profile=KAFKA, brokers=(1, 2, 3), assignment=(1, 3), min_isr=2))
    sc.fence(1)
    sc.fence(3)
    sc.do(UpdateElrFeature(False))
    sc.unfence(1)
    sc.unfence(3)
    assert (sc.partition.leader, sc.partition.elr, sc.partition.last_known_elr) == (1, set(), {3})
    sc.do(UpdateElrFeature(True))
    sc.fence(1)
    p = sc.partition
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, set(), {1}, {3})
    assert not sc.state.history.unclean_elections


def test_a_clean_registration_takes_a_last_member_the_elr_off_kept_out_of_the_isr():
    """RF 1 on [2], MinISR 1. With the ELR off, leader 2's controlled shutdown leaves
    it in the ISR, the last member, the partition leaderless. Once the feature is on
    again, 2 registers after its clean shutdown: Kafka's registerBroker handles every
    new incarnation (handleBrokerShutdown), a clean one as a fencing, so 2 leaves the
    ISR for the ELR. (Found by a 10-minute Kafka campaign: the model took a clean
    registration to change nothing, true only of a broker out of the ISR.)"""
    sc = Scenario(Config(profile=KAFKA, brokers=(1, 2, 3), assignment=(2,), min_isr=1))
    sc.do(UpdateElrFeature(False))
    sc.do(BeginControlledShutdown(2))
    sc.sync_metadata(1)
    sc.sync_metadata(3)
    sc.do(ControlledShutdown(2))
    assert (sc.partition.leader, sc.partition.isr) == (NO_LEADER, {2})
    sc.do(UpdateElrFeature(True))
    sc.do(StartBroker(2))
    p = sc.partition
    assert (p.leader, p.isr, p.elr) == (NO_LEADER, set(), {2})
    assert not sc.state.history.unclean_elections


def test_a_fenced_broker_shutting_down_runs_its_fencing_again():
    """RF 1 on [1], MinISR 1. With the ELR off, the expiry of 1's session fences it
    and leaves it in the ISR, the last member. Once the feature is on again, 1 shuts
    down: its heartbeat asking to, from a fenced broker, is answered SHUTDOWN_NOW and
    Kafka runs handleBrokerFenced again, so 1 leaves the ISR for the ELR. (Found by
    a 10-minute Kafka campaign.)"""
    sc = Scenario(Config(profile=KAFKA, brokers=(1, 2, 3), assignment=(1,), min_isr=1))
    sc.do(UpdateElrFeature(False))
    sc.fence(1)
    assert (sc.partition.leader, sc.partition.isr) == (NO_LEADER, {1})
    sc.do(UpdateElrFeature(True))
    sc.do(ControlledShutdown(1))
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (NO_LEADER, set(), {1})


def test_the_periodic_unclean_election_completes_a_move_first_and_elects_among_the_replicas_left():
    """RF 2 on [1, 2], unclean leader election on: a move to [3] (replicas [3, 1, 2],
    adding 3); leader 1 shrinks 2 out, and its fencing elects 3 uncleanly (ISR [3]).
    With the ELR off, 3's fencing keeps it in the ISR, leaderless. The periodic
    unclean election (maybeElectUncleanLeaders) builds its change as every change is
    built: the move completes first (every adding replica is in the ISR), leaving
    replicas [3], and the election then finds no unfenced replica among them. So it
    elects nobody, though broker 2, unfenced, was a replica before the completion."""
    from model import UncleanLeaderElection
    sc = Scenario(config(Rule.PERIODIC_UNCLEAN_ELECTION, True, brokers=(1, 2, 3), assignment=(1, 2), min_isr=1,
                         unclean_leader_election=True), check_properties=False)
    sc.do(Reassign((3,)))
    sc.sync_metadata(1)
    sc.do(AdvanceTime(30_001))
    sc.shrink(1, 2)
    for action in (FenceBroker(1), AlterUncleanLeaderElection(False), UpdateElrFeature(False), FenceBroker(3),
                   AlterUncleanLeaderElection(True)):
        sc.do(action)
    p = sc.partition
    assert (p.replicas, p.isr, p.leader, p.adding) == ((3, 1, 2), {3}, NO_LEADER, {3})
    assert not sc.state.registration(2).fenced
    assert why_not_enabled(sc.state, UncleanLeaderElection()) == \
        "legacy unclean leader election is disabled or not possible (ch7)"


@ON_OFF
def test_a_last_known_leader_outside_the_replicas_faults_the_controller_at_every_attempt(follows: bool):
    """Finding 5's trace: a cancelled move leaves 1, no longer a replica, as the last
    known leader of a partition on [2]. Broker 2's registration after an unclean
    shutdown tries the last known leader: Kafka's leader acceptor looks up 1's log
    directory in the registration, which throws. The registration writes nothing,
    the controller fails over, and 2 stays down; each attempt faults again, and
    healing never brings it back. With the rule off, 1 is elected (the builder's
    own reading) and 2 registers."""
    from model import BrokerStatus, healing
    from properties.liveness import met_by
    from reproducers.findings import finding
    f = finding(5)
    sc = Scenario(config(Rule.LEADER_ACCEPTOR_READS_DIRECTORY, follows, brokers=f.config.brokers,
                         assignment=f.config.assignment, min_isr=f.config.min_isr,
                         unclean_leader_election=True), check_properties=False)
    for action in f.trace:
        sc.do(action)
    fault = "Replica 1 is not assigned to this partition."
    if follows:
        assert sc.state.history.controller_faults == (fault,) and sc.state.broker(2).status is BrokerStatus.OFFLINE_DIRTY
        assert (sc.partition.leader, sc.partition.last_known_elr) == (NO_LEADER, {1})
        sc.do(StartBroker(2))
        assert sc.state.history.controller_faults == (fault, fault)
        assert met_by(healing.heal(sc.state))["BrokersStarted"] is None
    else:
        assert sc.state.history.controller_faults == () and sc.state.broker(2).status is BrokerStatus.STARTING
        assert sc.partition.leader == 1
