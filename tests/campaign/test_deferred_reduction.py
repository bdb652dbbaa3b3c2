"""Deferred reduction (``campaign.record``, ``campaign.scheduler``): a flaw's
counterexample is written as the search found it, and reduced later by a unit of
its own, which replaces the part holding it; the scheduler hands reductions out
only once no flaw is searching, or when the search time left falls to their
estimate, or in the campaign's finish — never before a flaw still unfound."""

from __future__ import annotations

from campaign.plan import Campaign
from campaign.record import Unreduced, reduce_unreduced, run_explorer
from campaign.scheduler import FOUND, MIN_REDUCE_START_S, REDUCE_ESTIMATE_S, Scheduler
from campaign.targets import Target
from campaign.unit import REDUCE_S, UnitResult, WorkUnit
from check.machine import machine_for
from check.subject import Subject
from model import Variant
from store.reader import corpus_files, read_counterexamples
from store.schema import COUNTEREXAMPLES
from store.writer import CorpusWriter

CORRECT = Target("correct")
A, B = Target("variant", "NO_ELR"), Target("variant", "NO_MAXIMAL_ISR")


def _found(unit: WorkUnit, *pending: Unreduced) -> UnitResult:
    return UnitResult(unit.target, runs=1, examples=3, steps=90, seconds=1.0, found="UncleanExclusion",
                      first_failure_s=0.5, first_failure_examples=2, counterexample_ids=tuple(
                          i for p in pending for i in p.ids), shrunk_steps=40, unreduced=pending)


def _pending(name: str) -> Unreduced:
    # The scheduler only carries it: no record or part is looked at.
    return Unreduced(record=None, worker="w0", part=f"{name}.parquet", ids=(name,))  # type: ignore[arg-type]


def _scheduler(*targets: Target, workers: int = 1) -> Scheduler:
    plan = Campaign(list(targets), budget_s=120.0, workers=workers, corpus_dir="corpus", run_id="r1")
    return Scheduler(plan, workers, search_end=100.0, deadline=120.0, started=0.0)


def test_flaw_units_defer_reduction_and_the_correct_target_does_not():
    s = _scheduler(CORRECT, A)
    correct, a = s.next_unit(0.0), s.next_unit(0.0)
    assert (correct.defer_reduction, a.defer_reduction) == (False, True)
    # Without a corpus there is nothing to write, so nothing to defer.
    bare = Scheduler(Campaign([A], budget_s=120.0, workers=1), 1, search_end=100.0)
    assert not bare.next_unit(0.0).defer_reduction


def test_a_reduction_waits_while_a_flaw_is_unfound_until_its_reserve():
    s = _scheduler(A, B)
    a, b = s.next_unit(0.0), s.next_unit(0.0)
    s.finished(a, _found(a, _pending("c1")))
    # B still searches: the worker time goes to it, not to A's reduction ...
    assert s.next_unit(10.0).reduce is None
    assert s.snapshot(10.0).reductions == 1
    # ... until the search time left falls to the reduction's estimate.
    unit = s.next_unit(100.0 - REDUCE_ESTIMATE_S)
    assert unit.reduce == _pending("c1") and unit.target == A
    assert unit.share_s == min(REDUCE_S, 120.0 - (100.0 - REDUCE_ESTIMATE_S))
    assert s.running == 3 and s.snapshot(100.0).reductions == 1


def test_reductions_go_first_once_no_flaw_searches_and_replace_the_found_rows():
    s = _scheduler(CORRECT, A)
    correct, a = s.next_unit(0.0), s.next_unit(0.0)
    s.finished(a, _found(a, _pending("c1")))
    unit = s.next_unit(5.0)   # only the correct target searches: the reduction goes before it
    assert unit.reduce == _pending("c1")
    s.finished(unit, UnitResult(A, seconds=2.0, counterexample_ids=("c2",), replaced=("c1",), reduced_steps=3))
    result = {r.target.label: r for r in s.results()}["variant:NO_ELR"]
    assert (result.verdict, result.counterexample_ids, result.shrunk_steps, result.reduced_steps) == \
        (FOUND, ("c2",), 40, 3)
    # The live view draws what the progress names: the reduced counterexample now.
    (shown,) = s.snapshot(6.0).finished
    assert shown.counterexample_ids == ("c2",)
    assert s.next_unit(6.0).reduce is None and s.snapshot(6.0).reductions == 0


def test_reductions_use_the_finish_and_a_lost_one_costs_only_itself():
    s = _scheduler(A)
    a = s.next_unit(0.0)
    s.finished(a, _found(a, _pending("c1"), _pending("c2")))
    first = s.next_unit(105.0)   # after the search's end, before the deadline
    assert first.reduce == _pending("c1")
    s.lost(first, "its worker crashed")
    result = s.results()[0]
    assert result.verdict == FOUND and result.counterexample_ids == ("c1", "c2") and s.running == 0
    assert s.next_unit(120.0 - MIN_REDUCE_START_S / 2) is None   # too late for the other one


def test_a_deferred_counterexample_is_written_as_found_then_replaced_by_its_reduction(tmp_path):
    writer = CorpusWriter(tmp_path, run_id="r1", worker="w3")
    cls = machine_for(Subject(variants=frozenset({Variant.NO_ELR})), name="Explore_NO_ELR")
    deferred: list[Unreduced] = []
    assert run_explorer(cls, 60, seed=3, writer=writer, test_id="t", reduce_s=5, deferred=deferred).verdict
    writer.flush()
    (found,) = deferred
    as_found = read_counterexamples(tmp_path).rows
    assert {r["counterexample_id"] for r in as_found} == set(found.ids)
    assert all(r["shrunk_step_count"] is None and r["timeline"] for r in as_found)
    assert corpus_files(tmp_path, COUNTEREXAMPLES) == [found.part]

    rows, replaced = reduce_unreduced(found, tmp_path, "r1", 10.0)
    assert replaced == found.ids and rows
    stored = read_counterexamples(tmp_path).rows
    assert {r["counterexample_id"] for r in stored} == {r["counterexample_id"] for r in rows}
    assert found.part not in corpus_files(tmp_path, COUNTEREXAMPLES)
    steps = {r["step_count"] for r in as_found}
    # Reduced from the trace as found, which is kept beside it; still the finder's row.
    assert all(r["shrunk_step_count"] in steps and r["step_count"] < r["shrunk_step_count"] for r in stored)
    assert {(r["worker"], r["run_id"], r["seed"]) for r in stored} == {("w3", "r1", "3")}
