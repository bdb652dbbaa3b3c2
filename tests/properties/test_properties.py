"""Each property of ``properties.ALL`` on hand-built states.

For every property: states that satisfy it (most reached through ``model.step``
only, where every property must hold) and states that violate it (a model state
changed with ``attrs.evolve`` through the builders of ``states.py``), with the
exact violations expected from that property. Then the fault model: each
property's main violating state is put in every fault context (lossy unclean
shutdowns inside / beyond the §6.2 budget, balanced / proactive unclean
recovery, legacy unclean leader election) and must be reported, or exempted,
exactly as its description promises. Finally the registry itself.

Base state (``replicated(2)``): brokers 1, 2, 3, MinISR 2, leader 1 in leader
epoch 1; values 1 and 2 written at offsets 0 and 1 and fully replicated
(LEO = HWM = 2 everywhere, both writes acknowledged, True HWM 2).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import attrs
import pytest

import properties
from model import (NO_LEADER, AckedWrite, ClusterState, Config, Consume, FenceBroker, ListOffsets,
                   ListOffsetsAnswer, PartitionRecord, ProposeIsrExpand, ProposeIsrShrink, Reassign,
                   ReceiveAlterPartition, ReceiveAlterPartitionResponse, Record, RegisterBrokerRecord,
                   ReplicateMetadata, StartBroker, UncleanElectionReport, UncleanShutdown, UnfenceBroker,
                   initial_state, step)
from properties import ALL, BY_NAME, Property, Violation, check_all
from states import (append_metadata, leaderless_after_unclean_restarts, produce, replicate, replicated, run,
                    sync, with_broker, with_history, with_log, with_partition, with_registration, with_replica)

E1 = 1  # the leader epoch of every record of the base state


def rec(value: int, epoch: int = E1) -> Record:
    return Record(epoch, value)


FOUR_BROKERS = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2)


# ---------------------------------------------------------------------- expectations

@attrs.frozen
class Expect:
    """One expected violation: fragments its message must contain, and (when
    given) its exact replicas / offsets / epochs fields."""

    fragments: tuple[str, ...]
    replicas: Optional[tuple[int, ...]] = None
    offsets: Optional[tuple[int, ...]] = None
    epochs: Optional[tuple[int, ...]] = None


def expect(*fragments: str, replicas=None, offsets=None, epochs=None) -> Expect:
    return Expect(fragments, replicas, offsets, epochs)


def assert_violations(name: str, got: Sequence[Violation], expected: Sequence[Expect]) -> None:
    shown = "\n".join(f"  {v!r}" for v in got) or "  (none)"
    assert len(got) == len(expected), f"{name}: expected {len(expected)} violation(s), got:\n{shown}"
    for v, e in zip(got, expected):
        assert v.property == name, f"violation of another property:\n{shown}"
        for fragment in e.fragments:
            assert fragment in v.message, f"{fragment!r} not in {v.message!r}"
        for field in ("replicas", "offsets", "epochs"):
            want = getattr(e, field)
            if want is not None:
                assert getattr(v, field) == want, f"{field} of {v!r}"
        assert str(v) == f"{name}: {v.message}"


def check(name: str, state: ClusterState) -> tuple[Violation, ...]:
    return BY_NAME[name].check(state)


# ================================================================ satisfying states
#
# Each builder returns a state; ``everything`` says whether the state is a real
# model state where every property holds (else only the named property is asked).

def s_replicated() -> ClusterState:
    return replicated(2)


def s_divergent_suffix_above_hwm() -> ClusterState:
    """Replica 3 has an extra uncommitted record of its own above every HWM."""
    s = replicated(2)
    return with_log(s, 3, s.replica(3).log + (rec(77),), hwm=2)


def s_difference_hidden_by_lower_hwm() -> ClusterState:
    """Replica 3 differs at offset 1 but its local HWM is 1: below min(HWM) = 1 all agree."""
    s = replicated(2)
    return with_log(s, 3, (rec(1), rec(42)), hwm=1)


def s_offline_candidate_lacks_committed() -> ClusterState:
    """ISR member 3 lacks offset 1 but its broker is not running."""
    s = with_log(replicated(2), 3, (rec(1),))
    return with_broker(s, 3, status=s.broker(3).status.OFFLINE_CLEAN)


def s_shrink_in_flight() -> ClusterState:
    """Leader 1 proposed ISR [1, 2]: Maximal ISR = [1, 2, 3] still covers the controller's ISR."""
    return run(replicated(2), ProposeIsrShrink(1, 3))


def s_pending_isr_covers_quorum() -> ClusterState:
    s = replicated(2)
    return with_replica(s, 1, isr=frozenset({1, 2}), pending_isr=frozenset({1, 2, 3}))


def s_leader_isr_below_min_isr() -> ClusterState:
    """The leader's ISR [1] is below MinISR: its HWM cannot advance, nothing to cover."""
    return with_replica(replicated(2), 1, isr=frozenset({1}))


def s_unclean_replica_excluded() -> ClusterState:
    """Replica 3 shut down uncleanly (lossy), was fenced and restarted: unclean, out of the ISR."""
    s = run(replicated(2), UncleanShutdown(3, lossy=True), FenceBroker(3), StartBroker(3))
    assert s.history.unclean == {3} and 3 not in s.partition.isr
    return s


def s_unclean_replica_caught_up() -> ClusterState:
    """... then unfenced, caught up by fetches (no longer unclean) and back in the ISR."""
    s = s_unclean_replica_excluded()
    s = sync(s, 3)
    s = run(s, UnfenceBroker(3))
    for b in (1, 2, 3):
        s = sync(s, b)
    s = replicate(s, [3, 2])
    assert s.history.unclean == frozenset()
    s = run(s, ProposeIsrExpand(1, 3))
    req = s.network.messages[-1].id
    s = run(s, ReceiveAlterPartition(req))
    s = run(s, ReceiveAlterPartitionResponse(s.network.messages[-1].id))
    assert s.partition.isr == {1, 2, 3} and s.replica(1).isr == {1, 2, 3}
    return s


def s_list_offsets_answered() -> ClusterState:
    s = run(replicated(2), ListOffsets())
    assert s.history.list_offsets == (ListOffsetsAnswer(1, 1, 2, 2),)
    return s


def s_unknown_answer_is_skipped() -> ClusterState:
    """An "unknown" answer (HWM below LESO) between two equal answers is not a decrease."""
    return with_history(replicated(2), list_offsets=(
        ListOffsetsAnswer(1, 1, 2, 2), ListOffsetsAnswer(2, 2, None, 2), ListOffsetsAnswer(2, 2, 2, 2)))


def s_leaderless_recovery_quorum() -> ClusterState:
    """No leader, ISR = ELR = [], LastKnownELR = [1, 2] (MinISR members)."""
    return leaderless_after_unclean_restarts()


def s_brokers_lag_behind_log() -> ClusterState:
    """Broker 3 fenced: the controller's log grew; broker 2 applied part of it, 1 and 3 none."""
    s = run(replicated(2), FenceBroker(3), ReplicateMetadata(2, 1))
    assert len({b.metadata_offset for b in s.brokers}) == 2
    return s


def s_consumed() -> ClusterState:
    s = run(replicated(2), Consume())
    assert s.history.consumed == (rec(1), rec(2))
    return s


def s_acked_write_survives_on_one_replica() -> ClusterState:
    """Replicas 1 and 2 lost offset 1; replica 3 (offline) still holds it."""
    s = with_log(with_log(replicated(2), 1, (rec(1),)), 2, (rec(1),))
    return with_broker(s, 3, status=s.broker(3).status.OFFLINE_DIRTY)


def s_concurrent_writes_acked_out_of_order() -> ClusterState:
    """Values 1 and 2 were both produced before either ack: any offset order is linearizable."""
    s = replicated(2)
    return with_history(s, committed=(rec(2), rec(1)),
                        acked=(AckedWrite(2, 0, produced_before=3), AckedWrite(1, 1, produced_before=3)))


def s_reassignment_in_progress() -> ClusterState:
    """Reassignment [1, 2, 3] -> [1, 2, 4] in progress: replicas = [1, 2, 3, 4], adding [4], removing [3]."""
    s = run(replicated(2, FOUR_BROKERS), Reassign((1, 2, 4)))
    for b in (1, 2, 3, 4):
        s = sync(s, b)
    assert s.partition.adding == {4} and s.partition.removing == {3}
    return s


def s_new_leader_after_fencing() -> ClusterState:
    """Leader 1 fenced: broker 2 leads in leader epoch 2 and replicates to 3."""
    s = run(replicated(2), FenceBroker(1))
    for b in (1, 2, 3):
        s = sync(s, b)
    s = replicate(s, [3])
    assert s.partition.leader == 2 and s.partition.leader_epoch == 2
    return s


def s_leader_hwm_zero() -> ClusterState:
    """Leader 1 wrote a record that nobody fetched (HWM 0); replica 3 differs there."""
    s = produce(initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)), 1, 1)
    return with_log(s, 3, (rec(9),), hwm=0)


def s_leaderless_empty_isr() -> ClusterState:
    """KRaft: the last ISR member fenced leaves NoLeader and an empty ISR."""
    s = leaderless_after_unclean_restarts()
    assert s.partition.leader == NO_LEADER and not s.partition.isr
    return s


SATISFYING: list[tuple[str, Callable[[], ClusterState], bool]] = [
    ("LeaderCompleteness", s_replicated, True),
    ("LeaderCompleteness", s_new_leader_after_fencing, True),
    ("LeaderCompleteness", s_leaderless_empty_isr, True),
    ("LogMatching", s_replicated, True),
    ("LogMatching", s_divergent_suffix_above_hwm, True),
    ("LogMatching", s_difference_hidden_by_lower_hwm, False),
    ("LeaderCandidateCompleteness", s_replicated, True),
    ("LeaderCandidateCompleteness", s_unclean_replica_excluded, True),
    ("LeaderCandidateCompleteness", s_offline_candidate_lacks_committed, False),
    ("ReplicationQuorumSuperset", s_replicated, True),
    ("ReplicationQuorumSuperset", s_shrink_in_flight, True),
    ("ReplicationQuorumSuperset", s_pending_isr_covers_quorum, False),
    ("ReplicationQuorumSuperset", s_leader_isr_below_min_isr, False),
    ("UncleanExclusion", s_unclean_replica_excluded, True),
    ("UncleanExclusion", s_unclean_replica_caught_up, True),
    ("AppliedHwmMonotonicity", s_list_offsets_answered, True),
    ("AppliedHwmMonotonicity", s_unknown_answer_is_skipped, True),
    ("MinIsrRecoveryQuorum", s_leaderless_recovery_quorum, True),
    ("MinIsrRecoveryQuorum", s_replicated, True),
    ("MetadataLogMatching", s_replicated, True),
    ("MetadataLogMatching", s_brokers_lag_behind_log, True),
    ("MetadataLogMatching", s_reassignment_in_progress, True),
    ("ConsistentRead", s_consumed, True),
    ("NoCommittedRecordLostGlobally", s_replicated, True),
    ("NoCommittedRecordLostGlobally", s_acked_write_survives_on_one_replica, False),
    ("AckedWritesLinearizable", s_replicated, True),
    ("AckedWritesLinearizable", s_concurrent_writes_acked_out_of_order, False),
    ("ValidPartitionMetadata", s_replicated, True),
    ("ValidPartitionMetadata", s_reassignment_in_progress, True),
    ("ValidPartitionMetadata", s_leaderless_empty_isr, True),
    ("EpochMonotonicity", s_new_leader_after_fencing, True),
    ("EpochMonotonicity", s_unclean_replica_caught_up, True),
    ("ControllerLogReplay", s_replicated, True),
    ("ControllerLogReplay", s_new_leader_after_fencing, True),
    ("WeakIsr", s_replicated, True),
    ("WeakIsr", s_leader_hwm_zero, False),
    ("StrongIsr", s_replicated, True),
    ("StrongIsr", s_leader_hwm_zero, False),
    ("LeaderInIsr", s_replicated, True),
    ("LeaderInIsr", s_leaderless_empty_isr, True),
]


def test_every_property_has_a_satisfying_case():
    assert {name for name, _, _ in SATISFYING} == set(BY_NAME)


@pytest.mark.parametrize("name, build, everything", SATISFYING,
                         ids=[f"{n}-{b.__name__[2:]}" for n, b, _ in SATISFYING])
def test_satisfying_state(name, build, everything):
    state = build()
    assert check(name, state) == ()
    if everything:
        assert check_all(state) == (), "a model-reached state must satisfy every property"


# ================================================================= violating states

def v_leader_truncated() -> ClusterState:
    """Leader 1 lost committed offset 1 (and acked value 2)."""
    s = replicated(2)
    return with_log(s, 1, s.replica(1).log[:1])


def v_leader_overwritten() -> ClusterState:
    """Leader 1 holds value 9 where value 2 was committed."""
    return with_log(replicated(2), 1, (rec(1), rec(9)), hwm=2)


def v_acked_write_beyond_leader() -> ClusterState:
    """An ack for value 3 at offset 2, which leader 1 (LEO 2) does not hold."""
    s = replicated(2)
    return with_history(s, acked=s.history.acked + (AckedWrite(3, 2, 3),))


def v_follower_differs_below_hwm() -> ClusterState:
    """Replica 3 holds value 42 at committed offset 1 with local HWM 2."""
    return with_log(replicated(2), 3, (rec(1), rec(42)), hwm=2)


def v_isr_member_lacks_committed() -> ClusterState:
    """ISR member 3 (running) holds only offset 0 of the committed [1, 2]."""
    return with_log(replicated(2), 3, (rec(1),))


def v_elr_member_lacks_committed() -> ClusterState:
    """ISR [1] + ELR [3]; ELR member 3 holds only offset 0."""
    s = with_partition(replicated(2), isr={1}, elr={3})
    return with_log(s, 3, (rec(1),))


def v_leader_isr_misses_controller_isr() -> ClusterState:
    """Leader 1 believes ISR [1, 2] (>= MinISR) while the controller's ISR is [1, 2, 3]."""
    return with_replica(replicated(2), 1, isr=frozenset({1, 2}))


def v_leader_isr_misses_elr() -> ClusterState:
    """Controller: ISR [1], ELR [3]; leader 1 advances its HWM on [1, 2]."""
    s = with_partition(replicated(2), isr={1}, elr={3})
    return with_replica(s, 1, isr=frozenset({1, 2}))


def v_unclean_in_isr() -> ClusterState:
    return with_history(replicated(2), unclean=frozenset({3}))


def v_unclean_leader() -> ClusterState:
    return with_history(replicated(2), unclean=frozenset({1}))


def v_unclean_in_elr() -> ClusterState:
    s = with_partition(replicated(2), isr={1}, elr={3})
    return with_history(s, unclean=frozenset({3}))


def v_unclean_readmitted() -> ClusterState:
    """The real unclean restart of 3, then the controller's ISR wrongly names 3 again."""
    return with_partition(s_unclean_replica_excluded(), isr={1, 2, 3})


def v_list_offsets_backwards() -> ClusterState:
    return with_history(replicated(2), list_offsets=(
        ListOffsetsAnswer(1, 1, 2, 2), ListOffsetsAnswer(2, 2, 1, 2)))


def v_list_offsets_backwards_across_unknown() -> ClusterState:
    return with_history(replicated(2), list_offsets=(
        ListOffsetsAnswer(1, 1, 2, 2), ListOffsetsAnswer(2, 2, None, 2), ListOffsetsAnswer(2, 2, 1, 2)))


def v_list_offsets_above_true_hwm() -> ClusterState:
    return with_history(replicated(2), list_offsets=(ListOffsetsAnswer(1, 1, 3, 2),))


def v_recovery_quorum_too_small() -> ClusterState:
    return with_partition(leaderless_after_unclean_restarts(), last_known_elr={1})


def v_recovery_quorum_empty() -> ClusterState:
    return with_partition(leaderless_after_unclean_restarts(), last_known_elr=frozenset())


def v_image_disagrees() -> ClusterState:
    """Broker 2's materialized partition says ISR [1, 2]; the log says [1, 2, 3]."""
    s = replicated(2)
    return with_broker(s, 2, image=attrs.evolve(s.broker(2).image, isr=frozenset({1, 2})))


def v_metadata_offset_beyond_log() -> ClusterState:
    return with_broker(replicated(2), 2, metadata_offset=8)


def v_image_of_an_unwritten_record() -> ClusterState:
    """The controller fenced 3 but broker 1 materialized a change (ISR [1, 2]) the
    log does not hold at its offset: its image is ahead of the records it applied."""
    s = run(replicated(2), FenceBroker(3))
    return with_broker(s, 1, image=s.partition)


def v_consumed_value_changed() -> ClusterState:
    return with_history(s_consumed(), consumed=(rec(1), rec(99)))


def v_consumed_record_gone_from_leader() -> ClusterState:
    s = s_consumed()
    return with_log(s, 1, (rec(1),))


def v_acked_write_on_no_replica() -> ClusterState:
    s = replicated(2)
    for b in (1, 2, 3):
        s = with_log(s, b, (rec(1),))
    return s


def v_acked_write_overwritten_everywhere() -> ClusterState:
    s = replicated(2)
    for b in (1, 2, 3):
        s = with_log(s, b, (rec(1), rec(5, epoch=2)))
    return s


def v_acked_offset_holds_other_record() -> ClusterState:
    return with_history(replicated(2), committed=(rec(1), rec(5)))


def v_acked_beyond_committed() -> ClusterState:
    return with_history(replicated(2), committed=(rec(1),))


def v_acked_against_real_time_order() -> ClusterState:
    """Value 1 acked at offset 1 before value 2 was produced; value 2 then acked at offset 0."""
    return with_history(replicated(2), committed=(rec(2), rec(1)),
                        acked=(AckedWrite(1, 1, produced_before=2), AckedWrite(2, 0, produced_before=3)))


def _four(name: str, **changes) -> Callable[[], ClusterState]:
    """The base state on brokers 1-4 (replicas [1, 2, 3]) with ``changes`` committed
    to the controller's partition."""
    def build() -> ClusterState:
        return with_partition(replicated(2, FOUR_BROKERS), **changes)
    build.__name__ = "v_" + name
    return build


def v_fenced_broker_in_isr() -> ClusterState:
    """Broker 3's registration is fenced while the controller's ISR still names it."""
    return with_registration(replicated(2), 3, fenced=True)


def v_fenced_broker_outside_replicas_in_isr() -> ClusterState:
    s = with_partition(replicated(2, FOUR_BROKERS), isr={1, 2, 3, 4})
    return with_registration(s, 4, fenced=True)


def v_register_broker_epoch_reused() -> ClusterState:
    """Broker 2 registers again with broker epoch 1 (the log already gave out epoch 2)."""
    return append_metadata(replicated(2), RegisterBrokerRecord(2, 1, True))


def v_controller_partition_not_log_result() -> ClusterState:
    return with_partition(replicated(2), raw=True, leader_epoch=5)


def v_replica_ahead_in_leader_epoch() -> ClusterState:
    return with_replica(replicated(2), 2, leader_epoch=2)


def v_replica_ahead_in_partition_epoch() -> ClusterState:
    return with_replica(replicated(2), 1, partition_epoch=3)


def v_controller_isr_shrunk_leader_isr_not() -> ClusterState:
    """Controller ISR [1, 2] while leader 1 still has ISR [1, 2, 3]; replica 3 differs below HWM 2."""
    s = with_partition(v_follower_differs_below_hwm(), isr={1, 2})
    return s


def v_leader_isr_shrunk_controller_isr_not() -> ClusterState:
    """Leader 1 has ISR [1, 2]; the controller's is [1, 2, 3]; replica 3 differs below HWM 2."""
    return with_replica(v_follower_differs_below_hwm(), 1, isr=frozenset({1, 2}))


def v_stale_leader() -> ClusterState:
    """The controller moved leadership to 2 (leader epoch 2); broker 1 still acts as
    leader in epoch 1 with HWM 2, and replica 3 differs below it."""
    return with_partition(v_follower_differs_below_hwm(), leader=2)


def v_isr_member_hosts_no_replica() -> ClusterState:
    return with_broker(replicated(2), 3, replica=None)


def v_leader_not_in_isr() -> ClusterState:
    return with_partition(replicated(2), isr={2, 3})


def v_leader_with_empty_isr() -> ClusterState:
    return with_partition(replicated(2), isr=frozenset())


LC, LM, LCC, RQS = "LeaderCompleteness", "LogMatching", "LeaderCandidateCompleteness", "ReplicationQuorumSuperset"
UE, AHM, MIRQ, MLM = "UncleanExclusion", "AppliedHwmMonotonicity", "MinIsrRecoveryQuorum", "MetadataLogMatching"
CR, NCRL, AWL, VPM = "ConsistentRead", "NoCommittedRecordLostGlobally", "AckedWritesLinearizable", "ValidPartitionMetadata"
EM, WI, SI, LII = "EpochMonotonicity", "WeakIsr", "StrongIsr", "LeaderInIsr"
CLR = "ControllerLogReplay"

VIOLATING: list[tuple[str, Callable[[], ClusterState], tuple[Expect, ...]]] = [
    (LC, v_leader_truncated, (
        expect("leader 1 (leader epoch 1, LEO 1) lacks committed offset 1",
               "its log has no record, the committed log 1:1:2 (True HWM 2)", replicas=(1,), offsets=(1, 2),
               epochs=(1,)),
        expect("leader 1 (leader epoch 1) does not hold acknowledged write value 2 at offset 1",
               replicas=(1,), offsets=(1,), epochs=(1,)))),
    (LC, v_leader_overwritten, (
        expect("leader 1 (leader epoch 1, LEO 2) lacks committed offset 1",
               "its log has 1:1:9, the committed log 1:1:2", offsets=(1, 2)),
        expect("does not hold acknowledged write value 2 at offset 1", offsets=(1,)))),
    (LC, v_acked_write_beyond_leader, (
        expect("leader 1 (leader epoch 1) does not hold acknowledged write value 3 at offset 2",
               replicas=(1,), offsets=(2,)),)),
    (LM, v_follower_differs_below_hwm, (
        expect("replicas 1 and 3 differ at offset 1 below min(local HWM) = 2: 1 has 1:1:2, 3 has 1:1:42",
               replicas=(1, 3), offsets=(1, 2)),
        expect("replicas 2 and 3 differ at offset 1 below min(local HWM) = 2: 2 has 1:1:2, 3 has 1:1:42",
               replicas=(2, 3), offsets=(1, 2)))),
    (LCC, v_isr_member_lacks_committed, (
        expect("replica 3 is in the controller's ISR (ISR [1, 2, 3], ELR [])",
               "lacks committed offset 1 (LEO 1, True HWM 2)", replicas=(3,), offsets=(1, 2), epochs=(1,)),)),
    (LCC, v_elr_member_lacks_committed, (
        expect("replica 3 is in the controller's ELR (ISR [1], ELR [3])",
               "lacks committed offset 1 (LEO 1, True HWM 2)", replicas=(3,), offsets=(1, 2)),)),
    (RQS, v_leader_isr_misses_controller_isr, (
        expect("leader 1 advances the HWM on Maximal ISR [1, 2] (ISR [1, 2] >= MinISR 2)",
               "election quorum ISR [1, 2, 3] + ELR [] also has [3]", replicas=(1, 3), epochs=(1,)),)),
    (RQS, v_leader_isr_misses_elr, (
        expect("Maximal ISR [1, 2]", "election quorum ISR [1] + ELR [3] also has [3]", replicas=(1, 3)),)),
    (UE, v_unclean_in_isr, (
        expect("replica 3 restarted after an unclean shutdown and has not caught up, yet is in the ISR "
               "(leader 1, ISR [1, 2, 3], ELR [], leader epoch 1)", replicas=(3,), epochs=(1,)),)),
    (UE, v_unclean_leader, (
        expect("replica 1 restarted after an unclean shutdown", "yet is leader and in the ISR", replicas=(1,)),)),
    (UE, v_unclean_in_elr, (
        expect("replica 3", "yet is in the ELR (leader 1, ISR [1], ELR [3], leader epoch 1)", replicas=(3,)),)),
    (UE, v_unclean_readmitted, (
        expect("replica 3", "yet is in the ISR (leader 1, ISR [1, 2, 3]", replicas=(3,)),)),
    (AHM, v_list_offsets_backwards, (
        expect("ListOffsets went backwards: leader 1 answered 2 in leader epoch 1, then leader 2 answered 1 "
               "in leader epoch 2", replicas=(1, 2), offsets=(2, 1), epochs=(1, 2)),)),
    (AHM, v_list_offsets_backwards_across_unknown, (
        expect("ListOffsets went backwards: leader 1 answered 2", "then leader 2 answered 1"),)),
    (AHM, v_list_offsets_above_true_hwm, (
        expect("ListOffsets on leader 1 (leader epoch 1) answered HWM 3 above the True HWM 2",
               replicas=(1,), offsets=(3, 2), epochs=(1,)),)),
    (MIRQ, v_recovery_quorum_too_small, (
        expect("ISR and ELR are empty but LastKnownELR [1] has only 1 members, fewer than MinISR = 2",
               replicas=(1,)),)),
    (MIRQ, v_recovery_quorum_empty, (
        expect("LastKnownELR [] has only 0 members, fewer than MinISR = 2", replicas=()),)),
    (MLM, v_image_disagrees, (
        expect("broker 2's materialized partition metadata after 7 records is",
               "isr=frozenset({1, 2})", "but the controller's log prefix gives", replicas=(2,), offsets=(7,)),)),
    (MLM, v_metadata_offset_beyond_log, (
        expect("broker 2 has applied 8 metadata records but the controller's log has only 7",
               replicas=(2,), offsets=(8, 7)),)),
    (MLM, v_image_of_an_unwritten_record, (
        expect("broker 1's materialized partition metadata after 7 records", replicas=(1,), offsets=(7,)),)),
    (CR, v_consumed_value_changed, (
        expect("offset 1 was consumed as 1:1:99 but leader 1 (leader epoch 1) now has 1:1:2 there",
               replicas=(1,), offsets=(1,), epochs=(1,)),)),
    (CR, v_consumed_record_gone_from_leader, (
        expect("offset 1 was consumed as 1:1:2 but leader 1 (leader epoch 1) now has no record there",
               offsets=(1,)),)),
    (NCRL, v_acked_write_on_no_replica, (
        expect("acknowledged write value 2 at offset 1 is on no replica (replica LEOs: 1=1, 2=1, 3=1)",
               replicas=(1, 2, 3), offsets=(1,)),)),
    (NCRL, v_acked_write_overwritten_everywhere, (
        expect("acknowledged write value 2 at offset 1 is on no replica (replica LEOs: 1=2, 2=2, 3=2)"),)),
    (NCRL, v_acked_write_beyond_leader, (   # every replica holds the committed log, but not this ack
        expect("acknowledged write value 3 at offset 2 is on no replica (replica LEOs: 1=2, 2=2, 3=2)",
               offsets=(2,)),)),
    (AWL, v_acked_offset_holds_other_record, (
        expect("write value 2 was acknowledged at offset 1 but the committed log holds 1:1:5 there",
               offsets=(1,)),)),
    (AWL, v_acked_beyond_committed, (
        expect("write value 2 was acknowledged at offset 1 but the committed log holds no record there",
               offsets=(1,)),)),
    (AWL, v_acked_against_real_time_order, (
        expect("write value 1 was acknowledged at offset 1 before write value 2 was produced, yet value 2 "
               "was acknowledged at the lower offset 0", offsets=(1, 0)),)),
    (VPM, _four("isr_outside_replicas", isr={1, 2, 3, 4}), (
        expect("ISR [1, 2, 3, 4] is not within replicas [1, 2, 3]", replicas=(1, 2, 3), epochs=(1,)),)),
    (VPM, _four("elr_outside_replicas", isr={1}, elr={4}), (expect("ELR [4] is not within replicas [1, 2, 3]"),)),
    (VPM, _four("last_known_elr_outside_replicas", last_known_elr={4}), (expect("LastKnownELR [4] is not within replicas [1, 2, 3]"),)),
    (VPM, _four("isr_elr_overlap", isr={1}, elr={1}), (expect("ISR [1] and ELR [1] overlap"),)),
    (VPM, _four("elr_with_min_isr_members", isr={1, 2}, elr={3}), (expect("ISR [1, 2] has MinISR 2 members but ELR is [3]"),)),
    (VPM, v_fenced_broker_in_isr, (expect("fenced broker(s) [3] in the ISR [1, 2, 3]"),)),
    (VPM, v_leader_not_in_isr, (expect("leader 1 is not in the ISR [2, 3]"),)),
    (VPM, _four("adding_outside_replicas", adding={4}), (expect("adding [4] / removing [] inconsistent with replicas [1, 2, 3]"),)),
    (VPM, _four("adding_and_removing_overlap", replicas=(1, 2, 3, 4), adding={4}, removing={4}),
     (expect("adding [4] / removing [4] inconsistent with replicas [1, 2, 3, 4]", replicas=(1, 2, 3, 4)),)),
    (VPM, _four("replicas_repeat", replicas=(1, 2, 3, 3)), (expect("replicas [1, 2, 3, 3] repeat a broker"),)),
    (VPM, _four("recovering_with_followers", leader_recovery_state="RECOVERING"),
     (expect("the leader recovery state is RECOVERING with ISR [1, 2, 3]"),)),
    (VPM, v_fenced_broker_outside_replicas_in_isr, (
        expect("ISR [1, 2, 3, 4] is not within replicas [1, 2, 3]"),
        expect("fenced broker(s) [4] in the ISR [1, 2, 3, 4]"))),
    (EM, v_register_broker_epoch_reused, (
        expect("broker 2 registered with broker epoch 1, not above the earlier broker epoch 2",
               replicas=(2,), offsets=(7,)),)),
    (CLR, v_controller_partition_not_log_result, (
        expect("the active controller's partition registration differs from its metadata log's replay",
               "leader_epoch 5 where the log gives 1"),)),
    (EM, v_replica_ahead_in_leader_epoch, (
        expect("replica 2 acts in leader epoch 2 / partition epoch 1, ahead of the controller's 1 / 1",
               replicas=(2,), epochs=(2, 1)),)),
    (EM, v_replica_ahead_in_partition_epoch, (
        expect("replica 1 acts in leader epoch 1 / partition epoch 3, ahead of the controller's 1 / 1",
               replicas=(1,)),)),
    (WI, v_follower_differs_below_hwm, (
        expect("leader 1 (HWM 2) and its ISR member 3 differ at offset 1", replicas=(1, 3), offsets=(1, 2),
               epochs=(1,)),)),
    (WI, v_controller_isr_shrunk_leader_isr_not, (
        expect("leader 1 (HWM 2) and its ISR member 3 differ at offset 1"),)),
    (WI, v_isr_member_hosts_no_replica, (
        expect("leader 1 (HWM 2) and its ISR member 3 differ at offset 0", offsets=(0, 2)),)),
    (SI, v_follower_differs_below_hwm, (
        expect("leader 1 (HWM 2) and controller's ISR member 3 differ at offset 1", replicas=(1, 3),
               offsets=(1, 2), epochs=(1,)),)),
    (SI, v_leader_isr_shrunk_controller_isr_not, (
        expect("leader 1 (HWM 2) and controller's ISR member 3 differ at offset 1"),)),
    (SI, v_stale_leader, (
        expect("leader 1 (HWM 2) and controller's ISR member 3 differ at offset 1", epochs=(1,)),)),
    (LII, v_leader_not_in_isr, (
        expect("leader 1 is not in the ISR [2, 3]", replicas=(1,), epochs=(1,)),)),
    (LII, v_leader_with_empty_isr, (expect("leader 1 is not in the ISR []"),)),
]


def _id(name: str, build: Callable) -> str:
    return f"{name}-{build.__name__[2:]}"


def test_every_property_has_a_violating_case():
    assert {name for name, _, _ in VIOLATING} == set(BY_NAME)


@pytest.mark.parametrize("name, build, expected", VIOLATING, ids=[_id(n, b) for n, b, _ in VIOLATING])
def test_violating_state(name, build, expected):
    state = build()
    assert_violations(name, check(name, state), expected)
    # check_all reports the same violations, among those of other properties.
    mine = tuple(v for v in check_all(state) if v.property == name)
    assert mine == check(name, state)


# Where one hand-built fault is seen by one property and not by a related one.

@pytest.mark.parametrize("build, silent", [
    (v_controller_isr_shrunk_leader_isr_not, SI),   # controller's ISR no longer names 3
    (v_leader_isr_shrunk_controller_isr_not, WI),   # the leader's own ISR no longer names 3
    (v_stale_leader, WI),                            # WeakIsr only judges the current leader epoch
    (s_difference_hidden_by_lower_hwm, LM),
    (s_offline_candidate_lacks_committed, LCC),
    (s_acked_write_survives_on_one_replica, NCRL),
])
def test_related_property_stays_silent(build, silent):
    assert check(silent, build()) == ()


def test_stale_leader_is_not_current_for_leader_completeness():
    """LeaderCompleteness and ConsistentRead judge only the non-stale leader: once the
    controller moved leadership to 2, broker 1's truncated log is not a violation."""
    s = with_partition(v_leader_truncated(), leader=2)
    assert check(LC, s) == ()
    assert check(CR, with_history(s, consumed=(rec(1), rec(2)))) == ()


def test_strict_real_time_bound():
    """A write produced exactly when another was acked (value == produced_before) came
    after it: acking it at a lower offset is a violation."""
    s = with_history(replicated(2), committed=(rec(2), rec(1)),
                     acked=(AckedWrite(1, 1, produced_before=2), AckedWrite(2, 0, produced_before=3)))
    assert check(AWL, s) != ()
    ok = with_history(s, acked=(AckedWrite(1, 1, produced_before=3), AckedWrite(2, 0, produced_before=3)))
    assert check(AWL, ok) == ()


def test_partition_epoch_going_back_along_the_log_is_a_violation():
    s = run(replicated(2), FenceBroker(3))                     # partition epoch 1 -> 2 in the log
    assert s.partition.partition_epoch == 2
    s = append_metadata(s, PartitionRecord(attrs.evolve(s.partition, partition_epoch=1)))  # 2 -> 1
    assert check(EM, s) != ()


# ===================================================================== fault model

# Main violating state of each property: the one put in every fault context.
PRIMARY: dict[str, Callable[[], ClusterState]] = {
    LC: v_leader_truncated,
    LM: v_follower_differs_below_hwm,
    LCC: v_isr_member_lacks_committed,
    RQS: v_leader_isr_misses_controller_isr,
    UE: v_unclean_in_isr,
    AHM: v_list_offsets_backwards,
    MIRQ: v_recovery_quorum_too_small,
    MLM: v_image_disagrees,
    CR: v_consumed_value_changed,
    NCRL: v_acked_write_on_no_replica,
    AWL: v_acked_against_real_time_order,
    VPM: v_fenced_broker_in_isr,
    EM: v_replica_ahead_in_leader_epoch,
    CLR: v_controller_partition_not_log_result,
    WI: v_follower_differs_below_hwm,
    SI: v_follower_differs_below_hwm,
    LII: v_leader_not_in_isr,
}


def _report(mechanism: str) -> Callable[[ClusterState], ClusterState]:
    def put(s: ClusterState) -> ClusterState:
        return with_history(s, unclean_elections=(UncleanElectionReport(mechanism, 2, 2),))
    return put


FAULT_CONTEXTS: dict[str, Callable[[ClusterState], ClusterState]] = {
    # MinISR - 1 lossy unclean shutdowns: inside the §6.2 budget
    "lossy_within_budget": lambda s: with_history(s, lossy_shutdowns=s.config.min_isr - 1),
    # MinISR lossy unclean shutdowns: beyond the budget
    "lossy_beyond_budget": lambda s: with_history(s, lossy_shutdowns=s.config.min_isr),
    "balanced_recovery": _report("balanced"),          # guarded: keeps the guarantees
    "proactive_recovery": _report("proactive"),        # unguarded (§5.3.1)
    "unclean_leader_election": _report("unclean_leader_election"),  # unguarded (ch7)
}

# The documented promise of each property: the contexts in which it is NOT promised.
UNGUARDED = {"proactive_recovery", "unclean_leader_election"}
GUARANTEES = UNGUARDED | {"lossy_beyond_budget"}                 # properties.guarantees_apply
NO_LOSSY = GUARANTEES | {"lossy_within_budget"}                  # WeakIsr / StrongIsr
EXEMPT_IN: dict[str, set[str]] = {
    LC: GUARANTEES, LM: GUARANTEES, LCC: GUARANTEES, AHM: GUARANTEES, CR: GUARANTEES,
    NCRL: GUARANTEES, AWL: GUARANTEES,
    UE: UNGUARDED, MIRQ: UNGUARDED,
    WI: NO_LOSSY, SI: NO_LOSSY,
    RQS: set(), MLM: set(), VPM: set(), EM: set(), CLR: set(), LII: set(),
}


def test_fault_model_table_covers_every_property():
    assert set(PRIMARY) == set(EXEMPT_IN) == set(BY_NAME)


@pytest.mark.parametrize("context", list(FAULT_CONTEXTS))
@pytest.mark.parametrize("name", [p.name for p in ALL])
def test_fault_model(name, context):
    """The check knows the fault model from the state: outside its promise it reports
    nothing (no false alarm), inside it reports exactly what it reports without faults."""
    base = PRIMARY[name]()
    plain = check(name, base)
    assert plain, f"{PRIMARY[name].__name__} must violate {name}"
    faulty = FAULT_CONTEXTS[context](base)
    if context in EXEMPT_IN[name]:
        assert check(name, faulty) == ()
    else:
        assert check(name, faulty) == plain


@pytest.mark.parametrize("name", sorted(n for n, ctx in EXEMPT_IN.items() if ctx == GUARANTEES))
def test_guarded_property_follows_guarantees_apply(name):
    s = FAULT_CONTEXTS["lossy_beyond_budget"](PRIMARY[name]())
    assert not properties.guarantees_apply(s) and not properties.within_fault_budget(s)
    s = FAULT_CONTEXTS["unclean_leader_election"](PRIMARY[name]())
    assert not properties.guarantees_apply(s) and not properties.no_unguarded_election(s)
    assert properties.guarantees_apply(FAULT_CONTEXTS["balanced_recovery"](PRIMARY[name]()))


def test_fault_budget_from_config_min_isr():
    """The budget is MinISR - 1 of the state's own config: 2 lossy shutdowns are inside
    it with MinISR 3 and beyond it with MinISR 2."""
    c3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3)
    s3 = with_history(with_log(replicated(2, c3), 1, (rec(1),)), lossy_shutdowns=2)
    assert check(LC, s3) != ()
    s2 = with_history(v_leader_truncated(), lossy_shutdowns=2)
    assert check(LC, s2) == ()


# ====================================================================== builders

def test_with_partition_commits_through_the_metadata_log():
    """``with_partition`` keeps the controller's partition the result of its metadata
    log (ControllerLogReplay) and the brokers consistent prefixes of it
    (MetadataLogMatching), whether or not the brokers apply the new record."""
    base = replicated(2)
    for sync_brokers in (False, True):
        s = with_partition(base, isr={1, 2}, sync=sync_brokers)
        assert s.partition.isr == {1, 2}
        assert (s.partition.leader_epoch, s.partition.partition_epoch) == (1, 2)
        assert len(s.controller.metadata_log) == len(base.controller.metadata_log) + 1
        assert check(CLR, s) == () and check(MLM, s) == ()
        assert (s.broker(2).image == s.partition) == sync_brokers
    moved = with_partition(base, leader=2)
    assert (moved.partition.leader, moved.partition.leader_epoch) == (2, 2)
    raw = with_partition(base, raw=True, isr={1, 2})
    assert raw.controller.metadata_log == base.controller.metadata_log and check(CLR, raw) != ()
    with pytest.raises(ValueError, match="raw=True"):
        with_partition(base, leader_epoch=3)


# ====================================================================== registry

DOCUMENTED_ORDER = (
    "LeaderCompleteness", "LogMatching", "LeaderCandidateCompleteness", "ReplicationQuorumSuperset",
    "UncleanExclusion", "AppliedHwmMonotonicity", "MinIsrRecoveryQuorum", "MetadataLogMatching",
    "ConsistentRead", "NoCommittedRecordLostGlobally", "AckedWritesLinearizable", "ValidPartitionMetadata",
    "EpochMonotonicity", "ControllerLogReplay", "WeakIsr", "StrongIsr", "LeaderInIsr",
)


def test_registry_order_is_stable():
    assert tuple(p.name for p in ALL) == DOCUMENTED_ORDER


def test_registry_names_are_unique():
    names = [p.name for p in ALL]
    assert len(names) == len(set(names)) == 17
    assert BY_NAME == {p.name: p for p in ALL}


@pytest.mark.parametrize("prop", ALL, ids=[p.name for p in ALL])
def test_registry_entry_is_documented(prop: Property):
    assert isinstance(prop, Property)
    assert prop.section.strip() and prop.description.strip()
    assert prop.section.startswith(("§", "ch", "Kafka")), prop.section
    assert callable(prop.check)
    assert prop(initial_state(Config())) == ()  # __call__ is check


def test_check_all_concatenates_in_registry_order(monkeypatch):
    fakes = tuple(Property(f"P{i}", "§0", "fake",
                           lambda s, i=i: tuple(Violation(f"P{i}", f"v{i}.{j}") for j in range(i % 3)))
                  for i in range(5))
    monkeypatch.setattr(properties, "ALL", fakes)
    got = check_all(initial_state(Config()))
    assert [v.message for v in got] == ["v1.0", "v2.0", "v2.1", "v4.0"]


def test_check_all_on_a_state_violating_several_properties():
    """Leader 1 truncated to one record, broker 2 fenced in the ISR, a ListOffsets
    answer above the True HWM: check_all is the concatenation of every property's
    violations, in registry order."""
    state = with_registration(v_leader_truncated(), 2, fenced=True)
    state = with_history(state, list_offsets=(ListOffsetsAnswer(1, 1, 3, 2),))
    expected = tuple(v for p in ALL for v in p.check(state))
    got = check_all(state)
    assert got == expected
    names = [v.property for v in got]
    assert {LC, LCC, AHM, VPM} <= set(names)
    order = [DOCUMENTED_ORDER.index(n) for n in names]
    assert order == sorted(order)


def test_initial_state_satisfies_every_property():
    for config in (Config(), FOUR_BROKERS,
                   Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 3), min_isr=3, unclean_recovery="proactive")):
        assert check_all(initial_state(config)) == ()


def test_a_state_checks_the_same_after_a_branch_from_it_was_checked():
    # Properties are pure: the metadata-log scans they cache are shared with the scans
    # of longer logs, and a state checked again after a branch (here, fencing broker 2
    # appends a record to its log) must not see that branch's records.
    start = initial_state(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    assert check_all(step(start, ListOffsets())) == ()
    assert check_all(step(start, FenceBroker(2))) == ()
    assert check_all(step(start, ListOffsets())) == ()
    assert check_all(start) == ()
