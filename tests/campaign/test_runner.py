"""The campaign runner (``campaign.runner``) runs units in worker processes and
returns every target's verdict as data: a flaw found, a target whose worker died
(twice) not run with why, one whose worker was killed after it ran an error (a
crash), never "not found"; a unit still running at the end stopped and said
so, after unwinding (SIGTERM: it writes what it found); Ctrl-C stops the
workers the same way and reports the targets still searching as stopped; a
target never scheduled not run. The units here stand in for machine runs
(``work=``), so the test is about the runner."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

import campaign.runner
from campaign.plan import Campaign
from campaign.targets import Target
from campaign.unit import UnitResult, WorkUnit
from campaign.runner import run_campaign
from campaign.scheduler import CLEAN, ERROR, FOUND, NOT_FOUND, NOT_RUN, STOPPED
from clocks import JumpingClock

CORRECT = Target("correct")
FOUND_AT_ONCE = Target("variant", "NO_ELR")
CRASHES = Target("variant", "NO_MAXIMAL_ISR")
HANGS = Target("variant", "TRUNCATE_TO_HWM")
KILLED = Target("variant", "NO_FETCH_LEADER_EPOCH_FENCING")
TERMINATED = Target("variant", "ISR_JOIN_WITHOUT_LESO")


def stand_in(unit: WorkUnit, progress, worker: str) -> UnitResult:
    """A unit, run in a worker process: the label decides what it does."""
    label = unit.target.label
    if label == CRASHES.label:
        os._exit(3)
    if label == HANGS.label:
        try:
            progress(UnitResult(unit.target, runs=1, examples=4, seconds=0.1))
            time.sleep(600)
        finally:  # where a real unit writes what it found: reached when the unit is stopped, not killed
            if unit.corpus_dir is not None:
                (Path(unit.corpus_dir) / "unwound").write_text(worker)
    if label == KILLED.label and unit.first_run == 0:  # its first unit: killed after a run
        progress(UnitResult(unit.target, runs=1, examples=25, seconds=0.2))
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    if label == TERMINATED.label and unit.first_run == 0:  # its first unit: SIGTERM from elsewhere after a run
        try:
            progress(UnitResult(unit.target, runs=1, examples=25, seconds=0.2))
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(600)
        finally:
            (Path(unit.corpus_dir) / "unwound").write_text(worker)
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
    result = run_campaign(Campaign([CRASHES, FOUND_AT_ONCE], budget_s=120.0, workers=2, seed=1), on_progress=seen.append, work=stand_in)
    by = {t.target.label: t for t in result.targets}
    assert (by[FOUND_AT_ONCE.label].verdict, by[FOUND_AT_ONCE.label].found) == (FOUND, "UncleanExclusion")
    assert by[FOUND_AT_ONCE.label].ok and by[FOUND_AT_ONCE.label].counterexample_ids == ("x",)
    crashed = by[CRASHES.label]
    assert (crashed.verdict, crashed.why) == (NOT_RUN, "its worker process died (exit code 3)")
    assert not result.ok and [t.target.label for t in result.failures] == [CRASHES.label]
    assert result.counts() == {FOUND: 1, NOT_FOUND: 0, CLEAN: 0, NOT_RUN: 1, ERROR: 0, STOPPED: 0}
    assert (result.workers, result.seed, result.interrupted) == (2, 1, False)
    assert seen and seen[-1].targets == 2 and seen[-1].finds == 1
    assert time.monotonic() - t0 < 120   # it did not wait for the budget's end


def test_a_unit_running_at_the_end_is_stopped_and_the_rest_not_run(monkeypatch):
    monkeypatch.setattr(campaign.runner, "GRACE_S", 0.5)
    t0 = time.monotonic()
    result = run_campaign(Campaign([HANGS, CORRECT], budget_s=2.0, workers=1, finish_s=0.5), work=stand_in)
    assert time.monotonic() - t0 < 120   # stopped at the deadline, not when the hanging unit would end
    hung, correct = result.targets
    # Its run reported before the end counts (on a slow machine it may not have come).
    assert hung.verdict == (NOT_FOUND if hung.runs else NOT_RUN)
    assert hung.why.endswith("its unit was stopped at the campaign's end")
    assert (correct.verdict, correct.why, correct.runs) == (NOT_RUN, "the budget ran out before it was scheduled", 0)
    assert not result.ok


def _end_after_the_retry(monkeypatch):
    """An ``on_progress`` that ends the campaign (the runner's clock jumps past its
    budget) once the lost unit's retry has reported its run: the budget is a net,
    however slowly a loaded machine starts the workers."""
    clock = JumpingClock(by=600.0)
    monkeypatch.setattr(campaign.runner, "time", clock)

    def end(progress):
        if progress.runs >= 2:
            clock.jump()
    return end


def test_a_worker_killed_by_sigkill_is_a_crash_not_a_flaw_not_found(monkeypatch):
    """Killed after a run, and nothing found (in its retry either): the kill is
    the verdict (error, naming it), not "not found". That a lost unit is retried once is the
    scheduler's (test_scheduler); that the runner starts a new worker for it,
    the next test's."""
    result = run_campaign(Campaign([KILLED], budget_s=120.0, workers=1, seed=1, finish_s=0.5),
                          on_progress=_end_after_the_retry(monkeypatch), work=stand_in)
    (killed,) = result.targets
    assert killed.verdict == ERROR, killed
    assert killed.why.startswith("its worker process died (killed by SIGKILL); "), killed.why
    # The run reported before the kill counts.
    assert killed.why.endswith("without a counterexample") and killed.runs >= 1 and killed.examples >= 25


def test_a_lost_units_retry_runs_in_a_new_worker_process():
    """One worker: its process dies with the unit, so the retry needs a new one,
    which dies too; the second loss ends the search, long before the budget."""
    t0 = time.monotonic()
    result = run_campaign(Campaign([CRASHES], budget_s=120.0, workers=1, seed=1), work=stand_in)
    (crashed,) = result.targets
    assert (crashed.verdict, crashed.why, crashed.units) == (NOT_RUN, "its worker process died (exit code 3)", 2)
    assert time.monotonic() - t0 < 120


def test_a_worker_stopped_by_someone_elses_sigterm_unwinds_and_is_reported_so(tmp_path, monkeypatch):
    result = run_campaign(Campaign([TERMINATED], budget_s=120.0, workers=1, seed=1, corpus_dir=str(tmp_path),
                                   finish_s=0.5), on_progress=_end_after_the_retry(monkeypatch), work=stand_in)
    (terminated,) = result.targets
    assert terminated.verdict == ERROR, terminated
    assert terminated.why.startswith("its worker process died (killed by SIGTERM); "), terminated.why
    assert (tmp_path / "unwound").exists()


def test_a_counterexample_a_lost_unit_reported_counts():
    """The correct target's unit reports a counterexample (written when found)
    and then its worker dies: the target failed, with that counterexample."""
    from campaign.scheduler import Scheduler
    scheduler = Scheduler(Campaign([CORRECT], budget_s=60.0, workers=1), 1, search_end=time.time() + 60)
    unit = scheduler.next_unit(time.time())
    scheduler.progress(unit, UnitResult(CORRECT, runs=2, examples=50, seconds=9.0, found="StrongIsr",
                                        first_failure_s=4.0, first_failure_examples=30, counterexample_ids=("a",)))
    scheduler.lost(unit, "its worker process died (killed by SIGKILL)")
    (correct,) = scheduler.results()
    assert (correct.verdict, correct.found, correct.counterexample_ids) == (FOUND, "StrongIsr", ("a",))
    assert not correct.ok and correct.first_failure_s == 4.0


def test_a_unit_stopped_at_the_end_unwinds_before_it_is_killed(monkeypatch, tmp_path):
    """The campaign ends (its clock jumps past the budget) once the hanging unit
    has reported its run, so its worker is inside the unit when it is stopped."""
    clock = JumpingClock(by=600.0)
    monkeypatch.setattr(campaign.runner, "time", clock)

    def end_after_the_run(progress):
        if progress.runs:
            clock.jump()
    result = run_campaign(Campaign([HANGS], budget_s=120.0, workers=1, corpus_dir=str(tmp_path), finish_s=0.5), on_progress=end_after_the_run, work=stand_in)
    assert result.targets[0].why.endswith("its unit was stopped at the campaign's end")
    assert (tmp_path / "unwound").read_text() == "w0"      # SIGTERM, then its finally ran


def test_ctrl_c_stops_the_workers_and_reports_the_targets_still_searching_as_stopped(tmp_path):
    def interrupt_after_a_run(progress):
        if progress.runs:
            raise KeyboardInterrupt
    t0 = time.monotonic()
    result = run_campaign(Campaign([HANGS, CORRECT], budget_s=120.0, workers=1, corpus_dir=str(tmp_path)), on_progress=interrupt_after_a_run, work=stand_in)
    assert time.monotonic() - t0 < 60 and result.interrupted and not result.ok
    hung, correct = result.targets
    assert (hung.verdict, hung.runs) == (STOPPED, 1)
    assert hung.why == "the campaign was interrupted after 1 run (4 examples, 0 s) without a counterexample"
    assert (correct.verdict, correct.why) == (NOT_RUN, "the campaign was interrupted before it was scheduled")
    assert result.counts()[STOPPED] == 1
    assert (tmp_path / "unwound").exists()                 # the worker unwound: its unit wrote what it had


@pytest.mark.parametrize("bad, message", [
    (dict(budget_s=float("nan")), r"^budget must be a finite number of seconds > 0, got nan$"),
    (dict(budget_s=0), r"^budget must be a finite number of seconds > 0, got 0$"),
    (dict(workers=0), r"^workers must be an integer >= 1, got 0$"),
    (dict(seed=-1), r"^seed must be an integer >= 0 or None, got -1$"),
])
def test_bad_input_is_named_before_any_worker_starts(bad, message):
    args = dict(budget_s=1.0, workers=1) | bad
    with pytest.raises(ValueError, match=message):
        run_campaign(Campaign([CORRECT], **args), work=stand_in)


class GrowingPool:
    """A pool whose size grows from 1 to 2 after the first unit started (a
    Spark executor registering after the others had settled,
    ``SparkPool.grow``); it records each unit's slot and says it is idle once
    two units started, ending ``_drive`` (its fifth wait fails the test)."""

    def __init__(self) -> None:
        self.slots: list = [None]
        self.started: list[tuple[int, str]] = []
        self.waits = 0

    def grow(self) -> int:
        if self.started and len(self.slots) == 1:
            self.slots.append(None)
        return len(self.slots)

    def idle(self) -> list[int]:
        return [i for i, unit in enumerate(self.slots) if unit is None]

    @property
    def busy(self) -> int:
        return 0 if len(self.started) == 2 else sum(unit is not None for unit in self.slots)

    def submit(self, slot: int, unit: WorkUnit) -> None:
        self.slots[slot] = unit
        self.started.append((slot, unit.target.label))

    def wait(self, timeout: float) -> list:
        self.waits += 1
        assert self.waits < 5, f"the grown slot ran no unit: {self.started}"
        return []


def test_a_slot_the_pool_grows_runs_a_unit_at_once():
    plan = Campaign([FOUND_AT_ONCE, CORRECT], budget_s=120.0, workers=1, finish_s=0.5)
    scheduler, pool = campaign.runner._scheduler(plan, 1, time.time()), GrowingPool()
    campaign.runner._drive(pool, scheduler, None)
    assert pool.started == [(0, FOUND_AT_ONCE.label), (1, CORRECT.label)]
    assert scheduler.workers == 2  # the shares after it, and the result's workers, count the new slot
