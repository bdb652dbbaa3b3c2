"""Trace reduction (harness.reduce): re-based traces stay valid, reduced traces
fail as the original did, and steps the failure does not need are removed."""

import attrs
import pytest

from harness import replay
from harness.minimal_scenarios import MINIMAL
from harness.reduce import rebase, reduce_trace, sends
from model import (Config, ControlledShutdown, ListOffsets, Produce, ReceiveFetchRequest, ReceiveFetchResponse, SendFetch,
                   Variant)

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


def _padded(variant: Variant) -> tuple:
    """The variant's minimal scenario with ListOffsets calls (which send no
    message) before and between its steps."""
    actions = MINIMAL[variant].actions
    return (ListOffsets(),) * 3 + actions[:3] + (ListOffsets(),) + actions[3:]


@pytest.mark.parametrize("variant", [Variant.TRUNCATE_TO_HWM, Variant.ISR_JOIN_WITHOUT_LESO], ids=lambda v: v.name)
def test_reduction_removes_the_steps_the_failure_does_not_need(variant):
    scenario = MINIMAL[variant]
    trace = _padded(variant)
    assert replay(trace, scenario.config, {variant}).failed
    reduced = reduce_trace(trace, scenario.config, {variant})
    assert len(reduced) <= len(scenario.actions) < len(trace)
    assert ListOffsets() not in reduced
    assert scenario.expected in replay(reduced, scenario.config, {variant}).property_names


def test_reduction_keeps_a_sut_divergence_a_divergence():
    from sut.bugs import Bug
    bug = {Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH}
    trace = (ListOffsets(), Produce(1, 1), ListOffsets(), Produce(1, 2), ControlledShutdown(1))
    assert replay(trace, RF3, bugs=bug).kind == "divergence"
    reduced = reduce_trace(trace, RF3, bugs=bug)
    # One unflushed write is enough for the SUT's flushed offset to differ.
    assert reduced == (Produce(1, 1), ControlledShutdown(1))
    assert replay(reduced, RF3, bugs=bug).kind == "divergence"


def test_a_trace_that_does_not_fail_is_refused():
    with pytest.raises(ValueError, match="does not fail"):
        reduce_trace(TRACE, RF3)


def test_reduction_keeps_the_property_asked_for():
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    trace = _padded(Variant.TRUNCATE_TO_HWM)
    reduced = reduce_trace(trace, scenario.config, {Variant.TRUNCATE_TO_HWM}, prop=scenario.expected)
    assert scenario.expected in replay(reduced, scenario.config, {Variant.TRUNCATE_TO_HWM}).property_names
    with pytest.raises(ValueError, match="not UncleanExclusion"):
        reduce_trace(trace, scenario.config, {Variant.TRUNCATE_TO_HWM}, prop="UncleanExclusion")


def test_a_time_limit_that_is_not_positive_is_refused():
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    with pytest.raises(ValueError, match="max_seconds must be a positive number of seconds, got 0"):
        reduce_trace(scenario.actions, scenario.config, {Variant.TRUNCATE_TO_HWM}, max_seconds=0)


def test_sends_gives_each_steps_message_ids():
    assert sends(TRACE, RF3) == [range(1, 2), range(2, 3), range(3, 3), range(3, 4), range(4, 5), range(5, 5),
                                 range(5, 5), range(5, 6), range(6, 7), range(7, 7)]


def _shifted(actions: tuple, by: int) -> tuple:
    return tuple(attrs.evolve(a, msg=a.msg + by) if hasattr(a, "msg") else a for a in actions)


def test_reduction_renumbers_again_after_each_removal():
    # Two fetch round trips before the scenario shift its message ids by 4: the
    # scenario's deliveries must be renumbered once the round trips are gone.
    scenario = MINIMAL[Variant.TRUNCATE_TO_HWM]
    trace = TRACE[:6] + _shifted(scenario.actions, 4)
    assert replay(trace, scenario.config, {Variant.TRUNCATE_TO_HWM}).failed
    reduced = reduce_trace(trace, scenario.config, {Variant.TRUNCATE_TO_HWM})
    assert reduced == scenario.actions
