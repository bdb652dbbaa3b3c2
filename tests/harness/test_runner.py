"""The campaign runner (``harness.runner``) runs units in worker processes and
returns every target's verdict as data: a flaw found, a target whose worker died
(twice) not run with why, a unit still running at the end stopped and said so, a
target never scheduled not run. The units here stand in for machine runs
(``work=``), so the test is about the runner."""

from __future__ import annotations

import os
import time

import pytest

import harness.runner
from harness.campaign import Target, UnitResult, WorkUnit
from harness.runner import run_campaign
from harness.scheduler import CLEAN, ERROR, FOUND, NOT_FOUND, NOT_RUN

CORRECT = Target("correct")
FOUND_AT_ONCE = Target("variant", "NO_ELR")
CRASHES = Target("variant", "NO_MAXIMAL_ISR")
HANGS = Target("variant", "TRUNCATE_TO_HWM")


def stand_in(unit: WorkUnit, progress, worker: str) -> UnitResult:
    """A unit, run in a worker process: the label decides what it does."""
    label = unit.target.label
    if label == CRASHES.label:
        os._exit(3)
    if label == HANGS.label:
        progress(UnitResult(unit.target, runs=1, examples=4, seconds=0.1))
        time.sleep(600)
    time.sleep(min(unit.share_s, 0.2))
    if label == FOUND_AT_ONCE.label:
        return UnitResult(unit.target, runs=1, examples=6, seconds=0.2, found="UncleanExclusion",
                          first_failure_s=0.1, first_failure_examples=3, counterexample_ids=("x",), shrunk_steps=5)
    return UnitResult(unit.target, runs=1, examples=25, seconds=0.2)


def test_the_runner_returns_every_targets_verdict_as_data():
    """A flaw found, a target whose worker died twice: nothing is left searching,
    so the campaign ends long before its budget."""
    seen = []
    t0 = time.monotonic()
    result = run_campaign([CRASHES, FOUND_AT_ONCE], budget_s=120.0, workers=2, seed=1, work=stand_in,
                          on_progress=seen.append)
    by = {t.target.label: t for t in result.targets}
    assert (by[FOUND_AT_ONCE.label].verdict, by[FOUND_AT_ONCE.label].found) == (FOUND, "UncleanExclusion")
    assert by[FOUND_AT_ONCE.label].ok and by[FOUND_AT_ONCE.label].counterexample_ids == ("x",)
    crashed = by[CRASHES.label]
    assert (crashed.verdict, crashed.why) == (NOT_RUN, "its worker process died (exit code 3)")
    assert not result.ok and [t.target.label for t in result.failures] == [CRASHES.label]
    assert result.counts() == {FOUND: 1, NOT_FOUND: 0, CLEAN: 0, NOT_RUN: 1, ERROR: 0}
    assert (result.workers, result.seed, result.interrupted) == (2, 1, False)
    assert seen and seen[-1].targets == 2 and seen[-1].finds == 1
    assert time.monotonic() - t0 < 120   # it did not wait for the budget's end


def test_a_unit_running_at_the_end_is_stopped_and_the_rest_not_run(monkeypatch):
    monkeypatch.setattr(harness.runner, "GRACE_S", 0.5)
    t0 = time.monotonic()
    result = run_campaign([HANGS, CORRECT], budget_s=2.0, workers=1, finish_s=0.5, work=stand_in)
    assert time.monotonic() - t0 < 120   # stopped at the deadline, not when the hanging unit would end
    hung, correct = result.targets
    # Its run reported before the end counts (on a slow machine it may not have come).
    assert hung.verdict == (NOT_FOUND if hung.runs else NOT_RUN)
    assert hung.why.endswith("its unit was stopped at the campaign's end")
    assert (correct.verdict, correct.why, correct.runs) == (NOT_RUN, "the budget ran out before it was scheduled", 0)
    assert not result.ok


@pytest.mark.parametrize("bad, message", [
    (dict(budget_s=float("nan")), r"^budget must be a finite number of seconds > 0, got nan$"),
    (dict(budget_s=0), r"^budget must be a finite number of seconds > 0, got 0$"),
    (dict(workers=0), r"^workers must be an integer >= 1, got 0$"),
    (dict(seed=-1), r"^seed must be an integer >= 0 or None, got -1$"),
])
def test_bad_input_is_named_before_any_worker_starts(bad, message):
    args = dict(budget_s=1.0, workers=1) | bad
    with pytest.raises(ValueError, match=message):
        run_campaign([CORRECT], work=stand_in, **args)
