"""The campaign's scheduler (``campaign.scheduler``), on a clock of its own: every
target runs once before any runs twice, a found flaw's time goes to the targets
still searching, the correct target runs to the end (on every worker once the
flaws are found), and each target's verdict says found / not found / not run /
error with why — a target that never ran is never "not found"."""

from __future__ import annotations

import pytest

from campaign.plan import Campaign
from campaign.targets import Target

from campaign.unit import UnitResult, WorkUnit
from campaign.scheduler import (CLEAN, ERROR, FOUND, MAX_UNIT_S, MIN_START_S, MIN_UNIT_S, NOT_FOUND, NOT_RUN,
                               NOT_SCHEDULED, WHOLE_SHARE_WAIT, Scheduler)

CORRECT = Target("correct")
A, B, C = (Target("variant", n) for n in ("NO_ELR", "NO_MAXIMAL_ISR", "TRUNCATE_TO_HWM"))


def clean(unit: WorkUnit, seconds: float = 5.0, runs: int = 2) -> UnitResult:
    return UnitResult(unit.target, runs=runs, examples=25 * runs, steps=1000 * runs, seconds=seconds)


def found(unit: WorkUnit, seconds: float = 3.0) -> UnitResult:
    return UnitResult(unit.target, runs=1, examples=30, steps=900, seconds=seconds, found="StrongIsr",
                      first_failure_s=1.5, first_failure_examples=7, counterexample_ids=("c1",), shrunk_steps=9,
                      reduced_steps=4)


def test_every_target_runs_once_before_any_runs_twice():
    s = Scheduler(Campaign([CORRECT, A, B, C], budget_s=60.0, workers=2), 2, search_end=1000.0)
    first = [s.next_unit(0.0) for _ in range(4)]
    assert [u.target.label for u in first] == ["correct", "variant:NO_ELR", "variant:NO_MAXIMAL_ISR",
                                               "variant:TRUNCATE_TO_HWM"]
    assert all(u.first_run == 0 and u.target.shard == 0 for u in first)
    # A fair share of what is left: 1000 s on 2 workers over 4 targets, cut to MAX_UNIT_S.
    assert first[0].share_s == MAX_UNIT_S


def test_a_found_flaw_leaves_its_time_to_the_targets_still_searching():
    s = Scheduler(Campaign([A, B, C], budget_s=60.0, workers=1), 1, search_end=100.0)
    units = {u.target.label: u for u in (s.next_unit(0.0) for _ in range(3))}
    s.finished(units["variant:NO_ELR"], found(units["variant:NO_ELR"]))
    s.finished(units["variant:TRUNCATE_TO_HWM"], clean(units["variant:TRUNCATE_TO_HWM"], seconds=30))
    s.finished(units["variant:NO_MAXIMAL_ISR"], clean(units["variant:NO_MAXIMAL_ISR"], seconds=20))
    later = [s.next_unit(60.0) for _ in range(2)]
    # NO_ELR is done; the least-served of the others goes first, the next unit of the
    # same shard continues its runs.
    assert [u.target.label for u in later] == ["variant:NO_MAXIMAL_ISR", "variant:TRUNCATE_TO_HWM"]
    assert later[0].first_run == 2
    # The share: 40 s left on 1 worker over the 2 targets still searching.
    assert later[0].share_s == 20.0


def test_the_correct_targets_wait_behind_the_flaws_still_searching():
    """While a flaw searches, a correct target's worker time counts WHOLE_SHARE_WAIT
    (4) times over: with 10 s against a flaw's 30 s, the flaw goes first; at 5 s
    the correct target does. Once no flaw searches, plain worker time decides."""
    profile = Target("profile", "kafka-4.4.0")
    s = Scheduler(Campaign([CORRECT, profile, A], budget_s=60.0, workers=1), 1, search_end=1000.0)
    c, p, a = (s.next_unit(0.0) for _ in range(3))
    s.finished(c, clean(c, seconds=10))
    s.finished(p, clean(p, seconds=5))
    s.finished(a, clean(a, seconds=30))
    assert WHOLE_SHARE_WAIT == 4.0
    nxt = s.next_unit(45.0)
    assert nxt.target.label == profile.label        # 5 * 4 = 20 < 30
    s.finished(nxt, clean(nxt, seconds=10))          # the profile's 15 s count 60
    # the flaw (30 s) before the correct target (40), whose 40 then fall below the flaw's
    # 30 s and the 60-s unit it has running
    assert [s.next_unit(55.0).target.label for _ in range(2)] == ["variant:NO_ELR", "correct"]
    s = Scheduler(Campaign([CORRECT, profile, A], budget_s=60.0, workers=1), 1, search_end=1000.0)
    c, p, a = (s.next_unit(0.0) for _ in range(3))
    s.finished(a, found(a))
    s.finished(p, clean(p, seconds=20))
    s.finished(c, clean(c, seconds=10))
    assert s.next_unit(40.0).target.label == "correct"   # no flaw searching: 10 < 20


def test_the_correct_target_runs_to_the_end_on_every_worker():
    s = Scheduler(Campaign([CORRECT, A], budget_s=60.0, workers=2), 2, search_end=100.0)
    c, a = s.next_unit(0.0), s.next_unit(0.0)
    s.finished(a, found(a))
    # The flaw is found: the second worker runs another shard of the correct target.
    second = s.next_unit(5.0)
    assert (second.target.label, second.target.shard, second.target.key) == ("correct", 1, "correct#1")
    # A counterexample of the correct target fails it at once, and it searches on.
    s.finished(c, found(c))
    assert [t.target.label for t in s.snapshot(6.0).finished] == ["variant:NO_ELR", "correct"]
    again = s.next_unit(6.0)
    assert (again.target.label, again.target.shard) == ("correct", 0)
    results = {r.target.label: r for r in s.results()}
    assert (results["correct"].verdict, results["correct"].ok, results["correct"].failure) == (FOUND, False, "failed")
    assert results["variant:NO_ELR"].ok


def test_shares_stay_within_their_bounds_and_the_search_end():
    s = Scheduler(Campaign([A, B, C], budget_s=60.0, workers=2), 2, search_end=100.0)
    assert s.next_unit(99.0 - MIN_START_S + 0.5).share_s == pytest.approx(MIN_START_S + 0.5)  # what is left
    s = Scheduler(Campaign([A, B, C], budget_s=60.0, workers=2), 2, search_end=100.0)
    assert s.next_unit(95.0).share_s == MIN_UNIT_S   # 5 s left * 2 / 3 is below the floor
    assert s.next_unit(100.0 - MIN_START_S / 2) is None
    assert Scheduler(Campaign([A], budget_s=60.0, workers=2), 2, search_end=10_000.0).next_unit(0.0).share_s == MAX_UNIT_S


def test_verdicts_and_why():
    s = Scheduler(Campaign([CORRECT, A, B, C], budget_s=60.0, workers=1), 1, search_end=100.0)
    c, a, b = s.next_unit(0.0), s.next_unit(0.0), s.next_unit(0.0)   # C never gets a unit
    s.finished(c, clean(c))
    s.finished(a, found(a))
    s.finished(b, clean(b, runs=3))
    results = {r.target.label: r for r in s.results()}
    assert (results["correct"].verdict, results["correct"].ok) == (CLEAN, True)
    assert results["correct"].why == "no counterexample in 2 runs (50 examples, 5 s)"
    r = results["variant:NO_ELR"]
    assert (r.verdict, r.ok, r.found, r.first_failure_s, r.first_failure_examples, r.counterexample_ids,
            r.shrunk_steps, r.reduced_steps) == (FOUND, True, "StrongIsr", 1.5, 7, ("c1",), 9, 4)
    assert r.why == "StrongIsr after 1.5 s (7 examples)"
    assert (results["variant:NO_MAXIMAL_ISR"].verdict, results["variant:NO_MAXIMAL_ISR"].failure) == \
        (NOT_FOUND, "not found")
    never = results["variant:TRUNCATE_TO_HWM"]
    assert (never.verdict, never.why, never.runs, never.failure) == (NOT_RUN, NOT_SCHEDULED, 0, "not run")


def test_the_first_failure_counts_the_targets_earlier_units():
    s = Scheduler(Campaign([A], budget_s=60.0, workers=1), 1, search_end=100.0)
    first = s.next_unit(0.0)
    s.finished(first, clean(first, seconds=12.0, runs=2))
    second = s.next_unit(12.0)
    assert second.first_run == 2
    s.finished(second, found(second))
    (r,) = s.results()
    assert (r.first_failure_s, r.first_failure_examples, r.runs, r.units) == (13.5, 57, 3, 2)


def test_a_unit_lost_with_its_worker_is_tried_once_more_then_given_up():
    s = Scheduler(Campaign([A, B], budget_s=60.0, workers=1), 1, search_end=100.0)
    a = s.next_unit(0.0)
    s.progress(a, UnitResult(a.target, runs=3, examples=75, seconds=9.0))
    s.lost(a, "its worker process died (killed by SIGKILL)")
    b = s.next_unit(10.0)
    s.finished(b, clean(b, seconds=20.0))
    retry = s.next_unit(30.0)
    # The runs reported before the loss count, and the run it died in is skipped.
    assert (retry.target.label, retry.first_run) == ("variant:NO_ELR", 4)
    s.lost(retry, "its worker process died (killed by SIGSEGV)")
    assert s.next_unit(40.0).target.label == "variant:NO_MAXIMAL_ISR"   # NO_ELR's search is over
    r = s.results()[0]
    assert (r.verdict, r.runs, r.examples) == (ERROR, 3, 75)
    assert r.why == "gave up after 2 lost units: its worker process died (killed by SIGSEGV)"
    assert [t.target.label for t in s.snapshot(40.0).finished] == ["variant:NO_ELR"]


def test_a_target_whose_only_units_were_lost_did_not_run():
    s = Scheduler(Campaign([A], budget_s=60.0, workers=1), 1, search_end=100.0)
    for _ in range(2):
        s.lost(s.next_unit(0.0), "its worker process died (exit code 1)")
    assert s.next_unit(1.0) is None
    (r,) = s.results()
    assert (r.verdict, r.why) == (NOT_RUN, "its worker process died (exit code 1)")


def test_a_target_whose_units_ended_before_a_run_completed_says_so():
    """Scheduled, yet no run completed in its unit's share (a loaded machine: a
    worker's start-up outlasting a short search): not run, and not "the budget ran
    out before it was scheduled"."""
    s = Scheduler(Campaign([A], budget_s=10.0, workers=1), 1, search_end=8.0)
    a = s.next_unit(0.0)
    s.finished(a, UnitResult(a.target, runs=0, examples=0, seconds=7.5))
    assert s.next_unit(7.6) is None
    (r,) = s.results()
    assert (r.verdict, r.why, r.failure) == (NOT_RUN, "its unit ended before a run completed (8 s)", "not run")


def test_a_unit_stopped_at_the_end_keeps_what_it_reported():
    s = Scheduler(Campaign([CORRECT, A], budget_s=60.0, workers=2), 2, search_end=100.0)
    c, a = s.next_unit(0.0), s.next_unit(0.0)
    s.progress(c, UnitResult(c.target, runs=4, examples=100, seconds=50.0))
    s.lost(c, "its unit was stopped at the campaign's end", retry=False)
    s.lost(a, "its unit was stopped at the campaign's end", retry=False)
    results = {r.target.label: r for r in s.results()}
    assert results["correct"].verdict == CLEAN and results["correct"].runs == 4
    assert results["correct"].why.endswith("; its unit was stopped at the campaign's end")
    assert (results["variant:NO_ELR"].verdict, results["variant:NO_ELR"].why) == \
        (NOT_RUN, "its unit was stopped at the campaign's end")


def test_a_harness_error_ends_the_targets_search_with_an_error():
    s = Scheduler(Campaign([A, B], budget_s=60.0, workers=1), 1, search_end=100.0)
    a = s.next_unit(0.0)
    s.finished(a, UnitResult(a.target, runs=1, examples=3, seconds=1.0, error="harness error in run 0 of x: boom"))
    b = s.next_unit(1.0)
    assert b.target.label == "variant:NO_MAXIMAL_ISR"
    s.finished(b, clean(b))
    assert s.next_unit(2.0).target.label == "variant:NO_MAXIMAL_ISR"
    r = s.results()[0]
    assert (r.verdict, r.why, r.ok) == (ERROR, "harness error in run 0 of x: boom", False)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"^workers must be an integer >= 1, got 0$"):
        Scheduler(Campaign([A], budget_s=60.0, workers=0), 0, search_end=1.0)
    with pytest.raises(ValueError, match=r"^a campaign needs at least one target$"):
        Scheduler(Campaign([], budget_s=60.0, workers=1), 1, search_end=1.0)
    with pytest.raises(ValueError, match=r"^campaign targets must be unique"):
        Scheduler(Campaign([A, A], budget_s=60.0, workers=1), 1, search_end=1.0)


def test_a_target_not_yet_run_goes_before_one_that_ran_however_little():
    s = Scheduler(Campaign([A, B], budget_s=60.0, workers=1), 1, search_end=100.0)
    a = s.next_unit(0.0)
    s.lost(a, "its worker process died (exit code 1)")   # no time spent, no run reported
    assert s.next_unit(1.0).target.label == "variant:NO_MAXIMAL_ISR"
