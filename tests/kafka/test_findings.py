"""Findings: properties that fail under the Kafka profile, but not under the
chapters' rules, in stories the protocol promises them (inside the fault budget,
no unguarded election unless said). Each test tells the shortest story found,
asserts the property Kafka 4.4.0's rules break, and that the same story keeps
every property once the responsible rule is switched off (the chapters' rule in
its place). The README's "Findings" section explains each one.
"""

from __future__ import annotations

import pytest

import properties
from model import (KAFKA, PROFILES, rules_without, AdvanceTime, AlterMinIsr, AlterPartitionRequest, AlterPartitionResponse, CancelReassignment,
                   Config, FailOverController, FailOverFromSnapshot, FenceBroker, Reassign, ReceiveAlterPartition, Rule,
                   ReplicateMetadata, StartBroker, UncleanShutdown, UnfenceBroker, UpdateElrFeature, why_not_enabled, NO_LEADER, Role)

from properties.liveness import met_by
from scenario import Scenario

ON_OFF = pytest.mark.parametrize("follows", [True, False], ids=["kafka", "rule-off"])


def story(rule: Rule, follows: bool, **fields: object) -> Scenario:
    """A scenario under the Kafka profile (``rule`` off unless ``follows``) whose
    steps are not checked: the test checks the end."""
    rules = PROFILES[KAFKA] if follows else rules_without(PROFILES[KAFKA], rule)   # and the rules needing it
    return Scenario(Config(profile=KAFKA, rules=rules, **fields), check_properties=False)


def broken(sc: Scenario) -> set[str]:
    return {v.property for v in properties.check_all(sc.state)}


@ON_OFF
def test_last_known_leader_loses_committed_records(follows: bool):
    """RF 2 of 3 brokers, MinISR 2: a write acknowledged on both replicas; the
    controller fences 2 and then leader 1 (ELR [1, 2], last known leader 1).
    Replica 2 restarts uncleanly without loss; replica 1 restarts uncleanly and
    loses its unflushed suffix (one lossy shutdown: inside the fault budget). Kafka
    elects the last known leader 1 as soon as it is unfenced, with an empty log,
    while 2 holds the acknowledged write. The chapters keep both in the
    LastKnownELR and recover from the longer log. (The shortest story reduction
    found: 14 actions.)"""
    sc = story(Rule.LAST_KNOWN_LEADER, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2)
    sc.produce(1)
    sc.deliver_fetch(2)
    sc.receive_fetch_request(sc.send_fetch(2))      # the leader learns 2 has the write: acknowledged
    for action in (FenceBroker(2), FenceBroker(1), UncleanShutdown(2, False), StartBroker(2),
                   UncleanShutdown(1, True), StartBroker(1)):
        sc.do(action)
    sc.unfence(1)
    assert len(sc.trace) == 14 and properties.guarantees_apply(sc.state)
    if follows:
        assert sc.partition.leader == 1 and sc.replica(1).leo == 0 and sc.replica(2).leo == 1
        assert broken(sc) == {"LeaderCandidateCompleteness"}
        sc.sync_metadata(1)                          # 1 acts as leader: the write is gone from it
        assert "LeaderCompleteness" in broken(sc)
    else:
        assert broken(sc) == set()


@ON_OFF
def test_expansion_dropped_from_maximal_isr_lets_the_hwm_pass_an_isr_member(follows: bool):
    """No fault at all. Two writes are committed on all three replicas, 3 catching
    up 1 ms after 2. Leader 1 takes two more and, before 2 fetches them (a follower
    at the leader's LEO is never out of sync), at 30,001 ms, when 2 has not caught
    up for longer than replica.lag.time.max.ms but 3 has (the ISR check removes
    every follower out of sync at once), shrinks 2 out; it learns the new
    partition epoch from the AlterPartition response before the metadata record.
    2 fetches at the HWM (behind the leader's LEO) and 1, serving that fetch,
    proposes to add it back. Then 1 applies the shrink's record: Kafka's makeLeader
    accepts a registration of the partition epoch it already has and resets the
    ISR state, dropping the pending expansion from the Maximal ISR. Follower 3
    fetches, the HWM passes 2's LEO, and the controller accepts the expansion: ISR
    member 2 lacks committed records. (31 actions.)"""
    sc = story(Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
               min_isr=2)
    sc.produce(1, 2)
    sc.deliver_fetch(2)
    sc.deliver_fetch(3)
    sc.deliver_fetch(2)                                # at the leader's LEO: 2 caught up at 0 ms
    sc.do(AdvanceTime(1))
    sc.deliver_fetch(3)                                # 3 caught up at 1 ms
    sc.produce(1, 2)
    sc.shrink(1, 2)                                    # at 30,001 ms: 2 out of sync, 3 not yet
    sc.deliver_fetch(3)
    sc.receive_fetch_request(sc.send_fetch(2))        # 2 is at offset 2, the HWM: the leader proposes it
    (expansion,) = sc.in_flight(AlterPartitionRequest, src=1)
    sc.sync_metadata(1)                                # the shrink's record, after its response
    sc.deliver_fetch(3)
    resp = sc.do_sending(ReceiveAlterPartition(expansion.id), AlterPartitionResponse)
    assert len(sc.trace) == 31
    assert resp.error is None and sc.partition.isr == {1, 2, 3}
    assert properties.guarantees_apply(sc.state)
    if follows:
        assert (sc.replica(1).hwm, sc.replica(2).leo) == (4, 2)
        assert {"LeaderCandidateCompleteness", "ReplicationQuorumSuperset"} <= broken(sc)
    else:
        assert sc.replica(1).hwm == 2 and broken(sc) == set()


@ON_OFF
def test_completed_reassignment_keeps_a_removed_replica_in_the_elr(follows: bool):
    """[1,2] -> [1,3] with MinISR 2: leader 1 is fenced (ISR [2], ELR [1]); 3 catches
    up and leader 2's expansion completes the move with ISR [3] below MinISR.
    Kafka's ELR takes the removed ISR member 2, which no longer hosts a replica.
    (7 actions.)"""
    sc = story(Rule.ELR_KEEPS_REMOVED_REPLICAS, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2)
    sc.do(Reassign((1, 3)))
    sc.fence(1)
    sc.sync_metadata(2)
    sc.sync_metadata(3)
    sc.receive_fetch_request(sc.send_fetch(3))       # leader 2 proposes 3 serving its fetch
    (req,) = sc.in_flight(AlterPartitionRequest, src=2)
    resp = sc.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
    assert len(sc.trace) == 7 and resp.error == "NEW_LEADER_ELECTED"
    assert (sc.partition.replicas, sc.partition.isr) == ((1, 3), {3})
    if follows:
        assert sc.partition.elr == {1, 2}
        assert broken(sc) == {"ValidPartitionMetadata"}
    else:
        assert broken(sc) == set()


@ON_OFF
def test_cancelled_reassignment_puts_a_fenced_broker_in_the_isr(follows: bool):
    """With unclean.leader.election.enable, RF 1: the only replica 1 shuts down (ISR
    empty), a move to [2] starts and is cancelled. Kafka's revert makes the first
    original replica the ISR whether or not it is fenced: a fenced broker in the ISR.
    (An unguarded configuration: only the structural property is at stake.)"""
    sc = story(Rule.CANCEL_WITH_ANY_ISR, follows, brokers=(1, 2, 3), assignment=(1,), min_isr=1,
               unclean_leader_election=True)
    sc.stop(1)
    sc.do(Reassign((2,)))
    if follows:
        sc.do(CancelReassignment())
        assert sc.partition.isr == {1} and sc.state.registration(1).fenced
        assert broken(sc) == {"ValidPartitionMetadata"}
    else:
        assert why_not_enabled(sc.state, CancelReassignment()) is not None
        assert broken(sc) == set()


@ON_OFF
def test_raised_min_isr_lets_a_leader_on_the_old_one_shrink_the_isr_into_the_elr(follows: bool):
    """RF 2 of 3 brokers, MinISR 1; leader 1 takes a write. MinISR is raised to 2:
    Kafka writes the ConfigRecord and, the ELR being empty, no partition change, so
    the partition epoch stays. Before broker 1 applies the ConfigRecord, follower 2
    falls out of sync and 1's shrink, at the current partition epoch, is accepted:
    the controller (MinISR 2) puts 2 in the ELR since the ISR [1] is below MinISR,
    while the leader (its log config still MinISR 1) advances the HWM on ISR [1] and
    acknowledges the write. The controller fences 1 and elects ELR member 2, which
    lacks it. No crash, no lossy shutdown. The chapters' change moves the partition
    epoch, so the stale shrink is refused. (7 actions.)"""
    sc = story(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=1)
    sc.produce(1)
    sc.do(AlterMinIsr(2))
    resp = sc.shrink(1, 2)
    sc.do(FenceBroker(1))
    assert len(sc.trace) == 7 and properties.guarantees_apply(sc.state)
    if follows:
        assert resp.error is None and sc.state.history.acked and sc.partition.leader == 2
        assert sc.replica(2).leo == 0
        assert broken(sc) == {"LeaderCandidateCompleteness", "StrongIsr"}
    else:
        assert resp.error == "INVALID_UPDATE_VERSION" and not sc.state.history.acked
        assert broken(sc) == set()


@ON_OFF
def test_raised_min_isr_reaches_the_log_after_the_isr_shrink_of_its_batch(follows: bool):
    """RF 2 of 3 brokers, MinISR 1; leader 1 takes a write. MinISR is raised to 2
    and the controller fences follower 2: ISR [1] is below the new MinISR, so 2
    joins the ELR. Broker 1 applies both records in one batch: Kafka's
    BrokerMetadataPublisher hands the partition change to Partition.makeLeader
    (ReplicaManager.applyDelta), which advances the HWM on ISR [1] under the old
    MinISR 1, before the DynamicConfigPublisher brings MinISR 2 to the log. The
    write is acknowledged; 2 comes back and, once 1 is fenced, is elected from the
    ELR without it. The chapters apply the batch as one image, MinISR
    included. (6 actions.)"""
    sc = story(Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES, follows, brokers=(1, 2, 3), assignment=(1, 2),
               min_isr=1)
    sc.produce(1)
    for action in (AlterMinIsr(2), FenceBroker(2), ReplicateMetadata(1, 2), UnfenceBroker(2), FenceBroker(1)):
        sc.do(action)
    assert len(sc.trace) == 6 and properties.guarantees_apply(sc.state)
    assert sc.partition.leader == 2 and sc.replica(2).leo == 0
    if follows:
        assert [w.value for w in sc.state.history.acked] == [1]
        assert broken(sc) == {"LeaderCandidateCompleteness", "StrongIsr"}
    else:
        assert not sc.state.history.acked and broken(sc) == set()


def test_a_cancelled_reassignment_after_a_cleared_elr_records_no_leader_as_the_last_known_leader():
    """Finding 4 after a MinISR change, with unclean.leader.election.enable: RF 2,
    MinISR 2; fencing 2 and then 1 leaves ELR [1, 2], LastKnownELR [1]; lowering
    MinISR clears both (Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE). A move to [1, 2, 3] is
    cancelled: the revert drops 3, so the leader epoch moves with the leader still
    NoLeader, and PartitionChangeBuilder.maybeUpdateLastKnownLeader, finding the
    LastKnownELR empty, records that leader: LastKnownELR [-1], beside the fenced
    broker 1 put in the ISR."""
    sc = story(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, True, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
               unclean_leader_election=True)
    for action in (FenceBroker(2), FenceBroker(1), AlterMinIsr(1), Reassign((1, 2, 3)), CancelReassignment()):
        sc.do(action)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.last_known_elr) == (-1, {1}, {-1})
    assert broken(sc) == {"ValidPartitionMetadata"}


@ON_OFF
def test_an_elr_member_back_from_an_unclean_shutdown_with_the_elr_off_is_elected(follows: bool):
    """Finding 8. RF 2 of 3 brokers, MinISR 2: a write acknowledged on both
    replicas; the controller fences 2 (ISR [1], ELR [2]). The operator switches the
    ELR off (eligible.leader.replicas.version=0, a safe downgrade in Kafka's guide):
    the registration keeps its ELR. Replica 2 restarts uncleanly and loses its
    unflushed write (one lossy shutdown: inside the fault budget); with the feature
    off its registration takes it out of the ISR only, so it stays in the ELR. The
    controller fences leader 1: the ISR it leaves is empty, and Kafka's election
    reads the ELR whatever the feature, so 2 is elected, cleanly, with an empty
    log. With the rule off there is no feature level to switch; the same story
    without the downgrade takes 2 out of the ELR at its registration and leaves the
    partition leaderless. (14 actions.)"""
    sc = story(Rule.ELR_FEATURE_LEVEL, follows, brokers=(1, 2, 3), assignment=(1, 2), min_isr=2)
    sc.produce(1)
    sc.deliver_fetch(2)
    sc.deliver_fetch(2)                              # the HWM passes the write: acknowledged
    sc.do(FenceBroker(2))
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    if follows:
        sc.do(UpdateElrFeature(False))
    else:
        assert why_not_enabled(sc.state, UpdateElrFeature(False)) is not None
    for action in (UncleanShutdown(2, True), StartBroker(2)):
        sc.do(action)
    sc.unfence(2)
    sc.do(FenceBroker(1))
    assert properties.guarantees_apply(sc.state) and [w.value for w in sc.state.history.acked] == [1]
    if follows:
        assert len(sc.trace) == 14
        assert (sc.partition.leader, sc.partition.isr, sc.replica(2).leo) == (2, {2}, 0)
        assert broken(sc) == {"LeaderCandidateCompleteness", "UncleanExclusion"}
    else:
        assert sc.partition.leader == -1 and 2 not in sc.partition.elr and broken(sc) == set()


@ON_OFF
def test_with_the_elr_off_a_partition_whose_isr_is_empty_loses_its_elr_and_stays_offline(follows: bool):
    """Finding 9, a liveness goal. RF 1 on [1] of 3 brokers, MinISR 1: fencing 1
    leaves ISR [], ELR [1], LastKnownELR [1]. After the downgrade, broker 2's
    unfencing builds a change for the leaderless partition, which empties the ELR;
    unfencing 1 then elects nobody (no ISR, no ELR, and no last known leader with
    the feature off), and healing brings no leader: LeaderElected fails although
    every broker runs unfenced. With the rule off there is no downgrade, and 1 is
    elected from the ELR when it is unfenced."""
    sc = story(Rule.ELR_FEATURE_LEVEL, follows, brokers=(1, 2, 3), assignment=(1,), min_isr=1)
    sc.do(FenceBroker(1))
    if follows:
        sc.do(UpdateElrFeature(False))
    for action in (FenceBroker(2), UnfenceBroker(2), UnfenceBroker(1)):
        sc.do(action)
    met = met_by(sc.state)
    if follows:
        assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (-1, set(), set())
        assert met["LeaderElected"] is None and met["HwmReachesLeo"] is None
    else:
        assert sc.partition.leader == 1 and all(r is not None for r in met.values())


def test_with_the_elr_off_a_stale_elr_member_is_elected_without_any_crash():
    """Finding 8 with no crash: RF 3, MinISR 2; fencing 3 and then 2 leaves ISR [1],
    ELR [2]. The ELR is switched off and MinISR lowered to 1: with the feature off
    Kafka writes no ClearElrRecord, so ELR [2] stays beside an ISR of MinISR members,
    and leader 1 acknowledges a write 2 does not have. 2 is unfenced; fencing 1
    elects it from that ELR, cleanly: the acknowledged write is lost. (9 actions.)"""
    sc = story(Rule.ELR_FEATURE_LEVEL, True, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)
    sc.do(FenceBroker(3))
    sc.do(FenceBroker(2))
    sc.do(UpdateElrFeature(False))
    sc.do(AlterMinIsr(1))
    sc.sync_metadata(1)
    sc.produce(1)
    assert [w.value for w in sc.state.history.acked] == [1] and (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    assert broken(sc) == {"LeaderCandidateCompleteness", "ReplicationQuorumSuperset", "ValidPartitionMetadata"}
    sc.unfence(2)
    sc.fence(1)
    assert len(sc.trace) == 9 and properties.guarantees_apply(sc.state) and not sc.state.history.lossy_shutdowns
    assert (sc.partition.leader, sc.partition.isr, sc.replica(2).leo) == (2, {2}, 0)
    assert {"LeaderCandidateCompleteness", "StrongIsr"} <= broken(sc)


@ON_OFF
def test_a_restart_brings_back_a_truncated_epoch_and_committed_records_diverge(follows: bool):
    """Finding 10, its reproducer's trace (41 actions). Broker 2 led epoch 2 and wrote
    offset 1 (taken by 3); leader 1 (epoch 3) holds an epoch-1 record there. 2 truncates
    at 1, dropping its entry (2, 1), takes 1's record (epoch 1: no new entry, no write),
    and dies before the checkpoint write its truncation scheduled. Restarted, its cache
    holds (2, 1) again; its fetch to the new leader 3 carries epoch 2, which 3 ends at
    its LEO: no divergence, and 2 and 3 hold different records under their HWM. With the
    checkpoint written at the truncation, 2's fetch carries epoch 1 and it truncates."""
    from reproducers.findings import finding
    f = finding(10)
    sc = story(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, follows, brokers=f.config.brokers,
               assignment=f.config.assignment, min_isr=f.config.min_isr)
    for action in f.trace:
        sc.do(action)
    assert properties.guarantees_apply(sc.state) and sc.state.history.lossy_shutdowns == 0
    assert sc.replica(2).last_fetched_epoch == (2 if follows else 1)
    if follows:
        assert sc.replica(2).epoch_cache == ((1, 0), (2, 1))
        assert [r.epoch for r in sc.replica(2).log] == [1, 1] and [r.epoch for r in sc.replica(3).log] == [1, 2]
        assert broken(sc) == {"LogMatching"}
    else:
        assert broken(sc) == set()


@ON_OFF
def test_a_controller_that_loaded_a_snapshot_runs_a_partition_epoch_behind_the_brokers(follows: bool):
    """Finding 11. RF 3, MinISR 2: fencing 3 and then 2 leaves ISR [1], ELR [2]. The
    ELR is switched off (the registration keeps its ELR), and the active controller
    fails over to one that restarted and loaded a snapshot: written with the feature
    off, it holds no ELR, while the log and the brokers' images keep [2]. The ELR is
    switched on again and MinISR lowered to 1: Kafka writes a ClearElrRecord, whose
    replay moves the partition epoch of a registration holding an ELR only. The
    brokers' images move to partition epoch 4, the controller's stays at 3, and
    every AlterPartition the leader sends from then on carries an epoch the
    controller refuses: broker 2, unfenced and caught up, never rejoins the ISR.
    With the rule off, the snapshot keeps the ELR, and 2 rejoins."""
    sc = story(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED, follows, brokers=(1, 2, 3), assignment=(1, 2, 3),
               min_isr=2)
    sc.do(FenceBroker(3))
    sc.do(FenceBroker(2))
    sc.do(UpdateElrFeature(False))
    if follows:
        sc.do(FailOverFromSnapshot())
        assert sc.partition.elr == set() and broken(sc) == {"ControllerLogReplay"}
    else:
        assert why_not_enabled(sc.state, FailOverFromSnapshot()) is not None
        sc.do(FailOverController())
    sc.do(UpdateElrFeature(True))
    sc.do(AlterMinIsr(1))
    sc.sync_all()
    sc.unfence(2)
    sc.sync_all()
    epochs = {b.id: b.replica.partition_epoch for b in sc.state.brokers if b.replica is not None}
    met = met_by(sc.state)
    if follows:
        assert sc.partition.partition_epoch == 3 and epochs == {1: 4, 2: 4, 3: 4}
        assert broken(sc) == {"ControllerLogReplay", "EpochMonotonicity"}
        assert met["IsrRestored"] is None and met["AlterPartitionCompletes"] is None
    else:
        assert sc.partition.partition_epoch == 4 and broken(sc) == set() and met["IsrRestored"] is not None


@ON_OFF
def test_an_election_from_the_elr_keeps_a_stale_member_and_loses_an_acknowledged_write(follows: bool):
    """Finding 12, its reproducer's trace (12 actions). RF 2 on [1, 2], MinISR 2: fencing
    2 and then 1 leaves ISR [], ELR [1, 2]. The ELR is switched off, MinISR lowered to 1
    (no ClearElrRecord while the feature is off) and the ELR switched on again.
    Unfencing 1 elects it from the ELR: Kafka's builder populated the ELR from the
    empty target ISR before the election, so 2 stays in the ELR beside ISR [1] at
    MinISR 1. Leader 1 acknowledges a write with ISR [1]; fenced, it joins 2 in the
    ELR, and unfencing 2 elects 2, whose log is empty. No crash, no unclean election.
    With the chapters' order the election of 1 empties the ELR and 2 is not elected."""
    from reproducers.findings import finding
    f = finding(12)
    sc = story(Rule.ELR_POPULATED_BEFORE_ELECTION, follows, brokers=f.config.brokers,
               assignment=f.config.assignment, min_isr=f.config.min_isr)
    for action in f.trace[:6]:
        sc.do(action)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (1, {1}, {2} if follows else frozenset())
    for action in f.trace[6:-1]:
        sc.do(action)
    sc.sync_metadata(2)     # the trace's last step, ReplicateMetadata(2, 2): one record fewer with the rule off
    assert len(sc.trace) == 12 and properties.guarantees_apply(sc.state) and not sc.state.history.lossy_shutdowns
    assert [w.value for w in sc.state.history.acked] == [1] and sc.replica(1).hwm == 1
    if follows:
        assert (sc.partition.leader, sc.replica(2).leo, sc.replica(2).role) == (2, 0, Role.LEADER)
        assert broken(sc) == {"LeaderCandidateCompleteness", "LeaderCompleteness", "ReplicationQuorumSuperset",
                              "StrongIsr", "ValidPartitionMetadata"}
    else:
        assert sc.partition.leader == NO_LEADER and broken(sc) == set()
