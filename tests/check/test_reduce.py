"""Trace reduction (check.reduce): re-based traces stay valid, reduced traces
fail as the original did, and steps the failure does not need are removed."""

import attrs
import pytest

from check.replay import replay
from check.scenarios import MINIMAL
from check.reduce import (Smaller, carry_over, merges, moves, rebase, reduce_counterexample, reduce_trace,
                          rename_brokers, reorder, sends, smaller_configs)
from check.subject import Subject
from model import (KAFKA, AdvanceTime, Config, ControlledShutdown, FenceBroker, ListOffsets, Produce, ProposeIsrExpand,
                   ProposeIsrShrink, Reassign, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                   ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch, UncleanShutdown, Variant)

from reduction_cases import (BIG, BIG_TRACE, LESO_JOIN, LESO_JOIN_TRACE, LESO_RF3, LESO_TRACE, MAXIMAL_RF3, MAXIMAL_TRACE,
                             RESPONSE_RF3, RESPONSE_TRACE)

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)

# Two fetch round trips by follower 2 (messages 1-4), then a write and follower
# 3's fetch of it (messages 5, 6).
TRACE = (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
         SendFetch(2), ReceiveFetchRequest(3), ReceiveFetchResponse(4),
         Produce(1, 1), SendFetch(3), ReceiveFetchRequest(5), ReceiveFetchResponse(6))


def test_rebase_renumbers_the_messages_of_the_steps_after_a_removed_send():
    keep = [False, False, False] + [True] * 7
    assert rebase(TRACE, keep, RF3) == (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
                                        Produce(1, 1), SendFetch(3), ReceiveFetchRequest(3),
                                        ReceiveFetchResponse(4))


def test_rebase_rejects_a_delivery_whose_send_was_removed():
    keep = [True] * 7 + [False] + [True] * 2
    assert rebase(TRACE, keep, RF3) is None


def test_rebase_gives_a_produce_the_next_unique_value():
    trace = (Produce(1, 1), Produce(1, 2))
    assert rebase(trace, [False, True], RF3) == (Produce(1, 1),)


def test_rebase_checks_the_flags_match_the_trace():
    with pytest.raises(ValueError, match="keep has 2 flags for a trace of 10 steps"):
        rebase(TRACE, [True, True], RF3)


def test_moves_gives_every_order_with_one_step_moved_once():
    assert list(moves(3)) == [[1, 0, 2], [1, 2, 0], [0, 2, 1], [2, 0, 1]]
    orders = [tuple(o) for o in moves(6)]
    assert len(orders) == len(set(orders)) == 25  # (n - 1)^2 orders differ from the original
    assert all(sorted(o) == list(range(6)) for o in orders) and tuple(range(6)) not in orders


def test_reorder_renumbers_the_messages_and_rejects_a_delivery_before_its_send():
    # Follower 3's round trip (steps 7-9) moved before follower 2's first one.
    order = [6, 7, 8, 9, 0, 1, 2, 3, 4, 5]
    assert reorder(TRACE, order, RF3) == (Produce(1, 1), SendFetch(3), ReceiveFetchRequest(1),
                                          ReceiveFetchResponse(2), SendFetch(2), ReceiveFetchRequest(3),
                                          ReceiveFetchResponse(4), SendFetch(2), ReceiveFetchRequest(5),
                                          ReceiveFetchResponse(6))
    assert reorder(TRACE, [1, 0, *range(2, 10)], RF3) is None


def _padded(variant: Variant) -> tuple:
    """The variant's minimal scenario with ListOffsets calls (which send no
    message) before and between its steps."""
    actions = MINIMAL[variant].actions
    return (ListOffsets(),) * 3 + actions[:3] + (ListOffsets(),) + actions[3:]


@pytest.mark.parametrize("variant", [Variant.TRUNCATE_TO_HWM, Variant.ISR_JOIN_WITHOUT_LESO], ids=lambda v: v.name)
def test_reduction_removes_the_steps_the_failure_does_not_need(variant):
    scenario = MINIMAL[variant]
    trace = _padded(variant)
    assert replay(trace, Subject.at(scenario.config, variants={variant})).failed
    reduced = reduce_trace(trace, Subject.at(scenario.config, variants={variant}))
    assert len(reduced) <= len(scenario.actions) < len(trace)
    assert ListOffsets() not in reduced
    assert scenario.expected in replay(reduced, Subject.at(scenario.config, variants={variant})).property_names


def test_reduction_keeps_a_sut_divergence_a_divergence():
    from sut.bugs import Bug
    bug = {Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH}
    trace = (ListOffsets(), Produce(1, 1), ListOffsets(), Produce(1, 2), ControlledShutdown(1))
    assert replay(trace, Subject.at(RF3, bugs=bug)).kind == "divergence"
    reduced = reduce_trace(trace, Subject.at(RF3, bugs=bug))
    # One unflushed write is enough for the SUT's flushed offset to differ.
    assert reduced == (Produce(1, 1), ControlledShutdown(1))
    assert replay(reduced, Subject.at(RF3, bugs=bug)).kind == "divergence"


def test_a_trace_that_does_not_fail_is_refused():
    with pytest.raises(ValueError, match="does not fail"):
        reduce_trace(TRACE, Subject.at(RF3))


def test_reduction_keeps_the_property_asked_for():
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    trace = _padded(Variant.TRUNCATE_TO_HWM)
    reduced = reduce_trace(trace, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM}), prop=scenario.expected)
    assert scenario.expected in replay(reduced, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM})).property_names
    with pytest.raises(ValueError, match="not UncleanExclusion"):
        reduce_trace(trace, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM}), prop="UncleanExclusion")


def test_a_time_limit_that_is_not_positive_is_refused():
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    with pytest.raises(ValueError, match="max_seconds must be a positive number of seconds, got 0"):
        reduce_trace(scenario.actions, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM}), max_seconds=0)


def test_a_chapters_expansion_carried_over_to_kafkas_rules_is_the_one_the_fetch_proposed():
    """Under Rule.EXPAND_ISR_ON_FETCH the leader sends the AlterPartition serving 3's
    fetch (message 6, the answer 7): the chapters' ProposeIsrExpand is left out,
    and the deliveries of its request and of the fetch answer follow the messages
    Kafka's run sent. Under Rule.REPLICA_LAG_TIME the shrink of 3 waits until
    the clock lets the ISR check find 3 alone out of sync: 30,001 ms, when 3's
    caught-up time at the start has expired (2 is at the leader's LEO)."""
    trace = (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
             ProposeIsrShrink(1, 3), ReceiveAlterPartition(3), ReceiveAlterPartitionResponse(4),
             SendFetch(3), ReceiveFetchRequest(5), ProposeIsrExpand(1, 3), ReceiveFetchResponse(6),
             ReceiveAlterPartition(7), ReceiveAlterPartitionResponse(8))
    kafka = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    carried = rebase(trace, [True] * len(trace), kafka, sends(trace, RF3))
    assert carried == (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), AdvanceTime(30_001),
                       ProposeIsrShrink(1, 3), ReceiveAlterPartition(3), ReceiveAlterPartitionResponse(4),
                       SendFetch(3), ReceiveFetchRequest(5), ReceiveFetchResponse(7), ReceiveAlterPartition(6),
                       ReceiveAlterPartitionResponse(8))
    assert replay(carried, Subject.at(kafka)).failed_at is None
    assert replay(carried, Subject.at(kafka)).state.replica(1).isr == replay(trace, Subject.at(RF3)).state.replica(1).isr == {1, 2, 3}


def test_a_shrink_carried_over_waits_only_for_a_moment_the_isr_check_finds_it():
    """Without 2's fetch, the ISR check never finds 3 alone out of sync under
    Kafka's clock (2 and 3 caught up at the start expire together): the shrink
    cannot be carried over, and a lenient carry-over leaves it out."""
    trace = (ProposeIsrShrink(1, 3), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2))
    kafka = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    assert rebase(trace, [True] * 3, kafka, sends(trace, RF3)) is None
    assert rebase(trace, [True] * 3, kafka, sends(trace, RF3), lenient=True) == ()


def test_sends_gives_each_steps_messages():
    assert [tuple(m.id for m in sent) for sent in sends(TRACE, RF3)] == [(1,), (2,), (), (3,), (4,), (), (), (5,),
                                                                         (6,), ()]
    assert [type(m).__name__ for sent in sends(TRACE, RF3)[:2] for m in sent] == ["FetchRequest", "FetchResponse"]


def _shifted(actions: tuple, by: int) -> tuple:
    return tuple(attrs.evolve(a, msg=a.msg + by) if hasattr(a, "msg") else a for a in actions)


def test_reduction_renumbers_again_after_each_removal():
    # Two fetch round trips before the scenario shift its message ids by 4: the
    # scenario's deliveries must be renumbered once the round trips are gone.
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    trace = TRACE[:6] + _shifted(scenario.actions, 4)
    assert replay(trace, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM})).failed
    reduced = reduce_trace(trace, Subject.at(scenario.config, variants={Variant.TRUNCATE_TO_HWM}))
    assert reduced == scenario.actions


# ------------------------------------------------------- smaller configurations

def test_renaming_maps_every_broker_an_action_names():
    names = {1: 1, 3: 2, 4: 3}
    assert rename_brokers(ProposeIsrExpand(4, 3), names) == ProposeIsrExpand(3, 2)
    assert rename_brokers(SendFetch(3), names) == SendFetch(2)
    assert rename_brokers(Reassign((4, 2, 1)), names) == Reassign((3, 1))
    assert rename_brokers(ReceiveFetchRequest(7), names) == ReceiveFetchRequest(7)
    assert rename_brokers(FenceBroker(2), names) is None
    assert rename_brokers(Reassign((2,)), names) is None


def test_smaller_configurations_come_simplest_first():
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=3, unclean_recovery="balanced",
                    unclean_leader_election=True)
    smaller = list(smaller_configs(config))
    assert [s.change for s in smaller] == [
        "without broker 4", "without broker 3", "without broker 2", "without broker 1",
        "without replica 3", "without replica 3, broker 3 kept for reassignments",
        "without replica 2", "without replica 2, broker 2 kept for reassignments",
        "without replica 1", "without replica 1, broker 1 kept for reassignments",
        "MinISR 2", 'unclean recovery "none"', "no unclean leader election"]
    without_2 = smaller[2]
    assert without_2.names == {1: 1, 3: 2, 4: 3}
    assert (without_2.config.brokers, without_2.config.assignment, without_2.config.min_isr) == ((1, 2, 3), (1, 2), 2)
    # Without replica 3, broker 3 first leaves every step and target, then stays a broker.
    assert smaller[4].config.brokers == (1, 2, 3, 4) and smaller[4].config.assignment == (1, 2)
    assert smaller[4].names == {1: 1, 2: 2, 4: 4} and smaller[5].names == {1: 1, 2: 2, 3: 3, 4: 4}
    assert smaller[5].config == smaller[4].config
    assert list(smaller_configs(Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1))) == []


def test_carrying_over_renames_brokers_and_leaves_out_what_cannot_run():
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 4), min_isr=2)
    # Follower 2's fetch (messages 1, 2) goes with broker 2; follower 4's fetch is
    # renumbered and renamed.
    trace = (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), Produce(1, 1),
             SendFetch(4), ReceiveFetchRequest(3), ReceiveFetchResponse(4), FenceBroker(2))
    assert replay(trace, Subject.at(config)).failed_at is None
    smaller = Smaller(attrs.evolve(config, brokers=(1, 2, 3), assignment=(1, 3)), {1: 1, 3: 2, 4: 3}, "without broker 2")
    assert carry_over(trace, config, smaller) == (Produce(1, 1), SendFetch(3), ReceiveFetchRequest(1),
                                                  ReceiveFetchResponse(2))


def test_carrying_over_caps_a_metadata_batch_at_what_is_pending():
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2)
    trace = (UncleanShutdown(4, False), FenceBroker(4), FenceBroker(3), ReplicateMetadata(1, 3))
    smaller = Smaller(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2), {1: 1, 2: 2, 3: 3},
                      "without broker 4")
    assert carry_over(trace, config, smaller) == (FenceBroker(3), ReplicateMetadata(1, 2))


def test_reduction_comes_down_to_the_minimal_scenarios_configuration():
    variant = {Variant.HWM_ADVANCES_BELOW_MIN_ISR}
    scenario = MINIMAL[Variant.HWM_ADVANCES_BELOW_MIN_ISR]
    assert replay(BIG_TRACE, Subject.at(BIG, variants=variant)).property_names == (scenario.expected,)
    # Within its configuration the trace cannot lose a step: follower 3 must commit.
    assert reduce_trace(BIG_TRACE, Subject.at(BIG, variants=variant)) == BIG_TRACE
    reduced = reduce_counterexample(BIG_TRACE, Subject.at(BIG, variants=variant))
    assert reduced.trace == scenario.actions
    assert reduced.config == attrs.evolve(scenario.config, variants=frozenset(variant))
    assert reduced.changes == ("without broker 5", "without broker 4", "without replica 3",
                               'unclean recovery "none"', "no unclean leader election")
    assert replay(reduced.trace, Subject.at(reduced.config)).property_names == (scenario.expected,)
    # The correct protocol holds on the reduced trace: the failure is still the variant's.
    assert not replay(reduced.trace, Subject.at(scenario.config)).failed


def test_reduction_keeps_the_configuration_when_no_smaller_one_fails():
    variant = Variant.NO_MAXIMAL_ISR
    scenario = MINIMAL[variant]
    reduced = reduce_counterexample(_padded(variant), Subject.at(scenario.config, variants={variant}))
    assert reduced.changes == () and reduced.config == attrs.evolve(scenario.config, variants=frozenset({variant}))
    assert reduced.trace == scenario.actions


def test_a_step_moved_lets_the_trace_fail_in_a_smaller_configuration():
    variant = Variant.NO_MAXIMAL_ISR
    scenario = MINIMAL[variant]
    assert replay(MAXIMAL_TRACE, Subject.at(MAXIMAL_RF3, variants={variant})).failed
    assert reduce_trace(MAXIMAL_TRACE, Subject.at(MAXIMAL_RF3, variants={variant})) == MAXIMAL_TRACE  # 1-minimal on RF 3
    reduced = reduce_counterexample(MAXIMAL_TRACE, Subject.at(MAXIMAL_RF3, variants={variant}))
    assert reduced.changes == ("without replica 3",)
    assert reduced.config == attrs.evolve(scenario.config, variants=frozenset({variant}))
    assert len(reduced.trace) == len(scenario.actions) == 8
    assert reduced.trace.index(Produce(1, 1)) > reduced.trace.index(ProposeIsrExpand(1, 2))  # the write moved
    assert not replay(reduced.trace, Subject.at(scenario.config)).failed


def test_a_replica_left_out_leaves_every_reassignment_target():
    variant = Variant.NO_FETCH_RESPONSE_VALIDATION
    assert replay(RESPONSE_TRACE, Subject.at(RESPONSE_RF3, variants={variant})).property_names == ("LogMatching",)
    reduced = reduce_counterexample(RESPONSE_TRACE, Subject.at(RESPONSE_RF3, variants={variant}))
    assert reduced.changes == ("without replica 3",) and reduced.config.assignment == (1, 2)
    assert Reassign((1,)) in reduced.trace and Reassign((1, 2)) in reduced.trace
    assert replay(reduced.trace, Subject.at(reduced.config)).property_names == ("LogMatching",)


def test_a_step_moved_lets_more_steps_go_in_the_same_configuration():
    variant = Variant.NO_FETCH_RESPONSE_VALIDATION
    scenario = MINIMAL[variant]
    # RESPONSE_TRACE carried over to RF 2: a second fetch round tells follower 2 the
    # HWM before the remove-then-readd. With the re-add's fetch (messages 5, 6) moved
    # before the reassignments, that round can go: the minimal scenario's 12 steps.
    trace = (Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
             SendFetch(2), ReceiveFetchRequest(3), ReceiveFetchResponse(4), Reassign((1,)), Reassign((1, 2)),
             Produce(1, 2), SendFetch(2), ReplicateMetadata(2, 1), ReceiveFetchRequest(5), ReplicateMetadata(2, 1),
             ReceiveFetchResponse(6))
    assert replay(trace, Subject.at(scenario.config, variants={variant})).property_names == ("LogMatching",)
    reduced = reduce_trace(trace, Subject.at(scenario.config, variants={variant}))
    assert len(reduced) == len(scenario.actions) == 12
    assert replay(reduced, Subject.at(scenario.config, variants={variant})).property_names == ("LogMatching",)


def test_merges_make_two_catch_ups_of_one_broker_one_either_way():
    trace = (ReplicateMetadata(2, 1), SendFetch(3), ReplicateMetadata(3, 2), ReplicateMetadata(2, 2))
    assert list(merges(trace)) == [
        ((ReplicateMetadata(2, 3), SendFetch(3), ReplicateMetadata(3, 2), ReplicateMetadata(2, 2)),
         [True, True, True, False]),
        ((ReplicateMetadata(2, 1), SendFetch(3), ReplicateMetadata(3, 2), ReplicateMetadata(2, 3)),
         [False, True, True, True]),
    ]


def test_merges_make_two_waits_one():
    trace = (AdvanceTime(30_000), SendFetch(3), AdvanceTime(1))
    assert list(merges(trace)) == [
        ((AdvanceTime(30_001), SendFetch(3), AdvanceTime(1)), [True, True, False]),
        ((AdvanceTime(30_000), SendFetch(3), AdvanceTime(30_001)), [False, True, True]),
    ]


#: A campaign's counterexample under Kafka's rules (finding 3: a completed move
#: keeps the removed replica in the ELR, ValidPartitionMetadata), as the reduction
#: left it when a wait it removed came back before the shrink (``_wait_for``) and
#: delta debugging took the same-length trace for progress until its time was up.
CLOCKED = Config(brokers=(1, 2, 3, 4), assignment=(1, 2), min_isr=2, profile=KAFKA)
CLOCKED_TRACE = (
    Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), SendFetch(2), ReceiveFetchRequest(3),
    Reassign((2, 3)), ReplicateMetadata(3, 1), ReplicateMetadata(1, 1), SendFetch(3), ReceiveFetchRequest(5),
    ReceiveFetchResponse(6), Produce(1, 2), AdvanceTime(30_000), AdvanceTime(1), ProposeIsrShrink(1, 2),
    ReceiveAlterPartition(7), ReplicateMetadata(1, 1), ReceiveAlterPartitionResponse(8), SendFetch(3),
    ReceiveFetchRequest(9), ReceiveAlterPartition(10))


def test_a_clocked_trace_reduces_past_its_waits():
    assert replay(CLOCKED_TRACE, Subject.at(CLOCKED)).property_names == ("ValidPartitionMetadata",)
    # The budget is a cap, not the measure: the reduction ends when nothing is left to try
    # (about 7 s on one idle core of a slow machine, 20 s before replays were remembered), and the
    # test pins where it ends.
    reduced = reduce_counterexample(CLOCKED_TRACE, Subject.at(CLOCKED), max_seconds=300, prop="ValidPartitionMetadata")
    assert len(reduced.trace) == 10 and reduced.config.brokers == (1, 2, 3)
    assert replay(reduced.trace, Subject.at(reduced.config)).property_names == ("ValidPartitionMetadata",)


def test_a_removal_that_changes_what_a_later_catch_up_finds_pending_is_kept():
    """Re-based catch-ups: the 39-step counterexample that was 1-minimal when such
    removals were refused comes down to its minimal scenario's length."""
    assert replay(LESO_TRACE, Subject.at(LESO_RF3)).property_names == ("AppliedHwmMonotonicity",)
    reduced = reduce_counterexample(LESO_TRACE, Subject.at(LESO_RF3), max_seconds=60)
    assert len(reduced.trace) == len(MINIMAL[Variant.LIST_OFFSETS_BEFORE_LESO].actions) == 10
    assert replay(reduced.trace, Subject.at(reduced.config)).property_names == ("AppliedHwmMonotonicity",)


def test_two_catch_ups_merged_let_more_steps_go():
    assert "LeaderCandidateCompleteness" in replay(LESO_JOIN_TRACE, Subject.at(LESO_JOIN)).property_names
    reduced = reduce_counterexample(LESO_JOIN_TRACE, Subject.at(LESO_JOIN), max_seconds=60, prop="LeaderCandidateCompleteness")
    assert len(reduced.trace) == 33 and reduced.config == LESO_JOIN
    assert "LeaderCandidateCompleteness" in replay(reduced.trace, Subject.at(reduced.config)).property_names


def test_a_candidate_met_again_is_not_replayed_again(monkeypatch):
    """The reduction's passes meet the same candidate again (ddmin after a move,
    every move for every smaller configuration); its answer is remembered, so
    each (trace, configuration) is replayed once, and the result is the same."""
    import check.reduce
    replayed = []

    def counting(trace, subject, *args, **kwargs):
        replayed.append((tuple(trace), subject.config, subject.only_properties))
        return replay(trace, subject, *args, **kwargs)
    monkeypatch.setattr(check.reduce, "replay", counting)
    reduced = reduce_counterexample(LESO_TRACE, Subject.at(LESO_RF3), max_seconds=60)
    assert len(reduced.trace) == 10
    assert len(replayed) == len(set(replayed)) > 100


def test_a_candidate_is_screened_on_the_failures_own_properties_first(monkeypatch):
    """A candidate is first replayed checking only the failure's properties; only
    one that fails so there is replayed with every property (the same states,
    more checks): most are rejected at half the cost, and the result is the same."""
    import check.reduce
    screened, full = [], []

    def counting(trace, subject, *args, **kwargs):
        result = replay(trace, subject, *args, **kwargs)
        if subject.only_properties is None:
            full.append(tuple(trace))
        else:
            assert subject.only_properties == frozenset({"AppliedHwmMonotonicity"})
            screened.append((tuple(trace), result.failed and "AppliedHwmMonotonicity" in result.property_names))
        return result
    monkeypatch.setattr(check.reduce, "replay", counting)
    reduced = reduce_counterexample(LESO_TRACE, Subject.at(LESO_RF3), max_seconds=60)
    assert len(reduced.trace) == 10
    passed = [trace for trace, failed in screened if failed]
    assert full[1:] == passed and len(passed) < len(screened) / 2   # full[0]: the original, in _Failure.of
