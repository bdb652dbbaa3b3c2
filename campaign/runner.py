"""The campaign runner: hands the scheduler's work units (``campaign.scheduler``)
to worker processes (``campaign.workers``) and returns every target's verdict as
data::

    from campaign.plan import Campaign
    from campaign.runner import run_campaign
    from campaign.targets import all_targets
    result = run_campaign(Campaign(all_targets(), budget_s=240, workers=2, seed=7, corpus_dir="corpus"))
    result.ok, [(t.target.label, t.verdict, t.why) for t in result.targets]

Time. Units are handed out until ``budget_s - finish_s``; the units running then
finish their current run, and a counterexample's shrinking and reduction, by
``budget_s`` (their deadline). A worker still busy ``GRACE_S`` after that is
stopped and its unit's target is told so.

Stopping. A worker is stopped with SIGTERM (its unit unwinds and writes what it
found, ``campaign.workers.Stopped``) and killed ``STOP_GRACE_S`` later if it has
not exited: at the campaign's end, and on Ctrl-C (KeyboardInterrupt in the
runner; ``replicheck fuzz`` turns its own SIGTERM into one too), when the
targets still searching are reported ``stopped``. A worker that dies on its own
(SIGKILL, a crash) loses only its unit's run in flight, since every
counterexample is written when found (``store.writer.CorpusWriter``): its
target is told its worker crashed (``Scheduler.lost``), never "not found".

On Spark. With ``master`` (a Spark master URL), units run as Spark tasks
(``campaign.spark_pool.SparkPool``) instead of local worker processes: the
same scheduler, verdicts and corpus; ``workers`` is then how many units run
at once (None: the executors' cores, growing as executors register later:
``SparkPool.grow``). The budget starts once the executors have registered:
Spark's start (its JVM, the executors': seconds) comes before it, and counts
in ``elapsed_s``.

Reproducibility. With a ``seed``, the k-th machine run of shard s of a target
draws the same examples each time (``campaign.unit.run_seed``; on the same
code), however the runs are cut into units. What the clock decides is not
reproducible: how many runs each target gets, whether and when a target gets a
second shard, and so which run finds a flaw first once shards run side by side;
and how far shrinking and reduction get within their time.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Optional

import attrs


from .unit import UnitResult, WorkUnit, preload, run_unit
from .plan import Campaign
from .scheduler import NOT_SCHEDULED, VERDICTS, Progress, Scheduler, TargetResult
from store.fs import is_uri
from .spark_checks import check_shared_corpus
from .spark_pool import SparkPool
from .workers import DONE, LOST, PROGRESS, WorkerPool

#: How long after the deadline a worker still running is stopped.
GRACE_S = 5.0
#: How long a worker told to stop (SIGTERM: its unit writes what it found) has
#: before it is killed.
STOP_GRACE_S = 5.0


@attrs.frozen
class CampaignResult:
    """A campaign's outcome: ``targets`` (one ``TargetResult`` each, in the
    campaign's order), its ``seed``, ``run_id`` (the corpus rows'), ``workers``,
    ``budget_s`` and ``elapsed_s`` (seconds), and whether it was ``interrupted``
    (Ctrl-C)."""

    targets: tuple[TargetResult, ...]
    seed: Optional[int]
    run_id: Optional[str]
    workers: int
    budget_s: float
    elapsed_s: float
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """The campaign passes: not interrupted, the correct target and every
        implementation clean, every flaw found."""
        return not self.interrupted and all(t.ok for t in self.targets)

    @property
    def failures(self) -> list[TargetResult]:
        """The targets that fail the campaign, in its order."""
        return [t for t in self.targets if not t.ok]

    def counts(self) -> dict[str, int]:
        """Targets per verdict (every verdict, zeros included)."""
        return {v: sum(1 for t in self.targets if t.verdict == v) for v in VERDICTS}


def run_campaign(plan: Campaign, on_progress: Optional[Callable[[Progress], None]] = None,
                 work: Callable[..., UnitResult] = run_unit) -> CampaignResult:
    """Run the campaign ``plan`` (``campaign.plan.Campaign``: see the module doc
    for how its budget is used). ``on_progress`` gets a ``Progress`` snapshot
    about once a second. ``work`` runs one unit in a worker
    (``campaign.unit.run_unit``; a module-level function of the same signature
    for tests, importable on Spark's executors with a ``master``).

    Returns when every target's search has ended or the budget is spent, or on
    Ctrl-C (``interrupted``: the units running are stopped, what they reported
    counts). ValueError names a ``corpus_dir`` that cannot be used (a URI:
    ``check_shared_corpus``); ``campaign.spark_pool.SparkUnavailable`` says why
    Spark could not run the units. Both come before any unit runs."""
    problem = None if plan.corpus_dir is None else check_shared_corpus(plan.corpus_dir, "corpus_dir")
    if problem is not None:
        raise ValueError(problem)
    if plan.master is not None and plan.corpus_dir is not None and not is_uri(plan.corpus_dir):
        # an executor's working folder is not the driver's
        plan = attrs.evolve(plan, corpus_dir=os.path.abspath(plan.corpus_dir))
    called = time.time()
    scheduler = _scheduler(plan, plan.workers or 1, called)
    pool: Any = None
    interrupted = False
    try:
        pool = _start_pool(plan, work)
        # The budget is the search's: it starts once the workers are up (Spark's
        # start takes seconds; local worker processes start as units arrive).
        scheduler = _scheduler(plan, pool.size, time.time())
        _drive(pool, scheduler, on_progress)
    except KeyboardInterrupt:
        interrupted = True
        if pool is not None:
            _stop(pool, scheduler, "the campaign was interrupted")
    finally:
        if pool is not None:
            pool.close()
    why = "the campaign was interrupted before it was scheduled" if interrupted else NOT_SCHEDULED
    return CampaignResult(tuple(scheduler.results(why, interrupted=interrupted)), plan.seed, plan.run_id,
                          scheduler.workers, plan.budget_s, time.time() - called, interrupted)


def _scheduler(plan: Campaign, size: int, started: float) -> Scheduler:
    """The scheduler of ``plan`` on ``size`` workers, its budget from ``started``."""
    deadline = started + plan.budget_s
    return Scheduler(plan, size, search_end=deadline - min(plan.finish_s, plan.budget_s / 2), deadline=deadline,
                     started=started)


def _drive(pool: Any, scheduler: Scheduler, on_progress: Optional[Callable[[Progress], None]]) -> None:
    """Hand the scheduler's units to ``pool`` until every search has ended, or
    stop the units still running ``GRACE_S`` after the deadline."""
    while True:
        scheduler.workers = pool.grow()
        for slot in pool.idle():
            unit = scheduler.next_unit(time.time())
            if unit is None:
                break
            pool.submit(slot, unit)
        if not pool.busy:
            return
        left = scheduler.deadline + GRACE_S - time.time()
        if left <= 0:
            _stop(pool, scheduler, "its unit was stopped at the campaign's end")
            return
        for event in pool.wait(min(1.0, left)):
            _apply(scheduler, event.kind, event.unit, event.value)
        if on_progress is not None:
            on_progress(scheduler.snapshot(time.time()))


def _stop(pool: Any, scheduler: Scheduler, why: str) -> None:
    """Stop the units running (their workers unwind, then are killed), telling
    the scheduler ``why``: not a crash, so no retry."""
    for event in pool.stop(why, STOP_GRACE_S):
        _apply(scheduler, event.kind, event.unit, event.value, retry=False)


def _start_pool(plan: Campaign, work: Callable[..., UnitResult]) -> Any:
    """The units' pool: ``plan.workers`` local worker processes, or, with a Spark
    ``master``, a ``campaign.spark_pool.SparkPool`` shipping what the targets'
    implementations need."""
    if plan.master is None:
        return WorkerPool(plan.workers, work, setup=preload, log_path=plan.log_path)  # type: ignore[arg-type]
    return SparkPool(plan, work, setup=preload)


def _apply(scheduler: Scheduler, kind: str, unit: WorkUnit, value: object, retry: bool = True) -> None:
    """Tell the scheduler what a worker reported; a unit lost with ``retry``
    False was stopped (the campaign's end, an interruption), not crashed."""
    if kind == PROGRESS:
        scheduler.progress(unit, value)  # type: ignore[arg-type]
    elif kind == DONE:
        _print_unwritten(value)  # type: ignore[arg-type]
        scheduler.finished(unit, value)  # type: ignore[arg-type]
    elif kind == LOST:
        scheduler.lost(unit, str(value), retry=retry)


def _print_unwritten(result: UnitResult) -> None:
    """Print to stderr the counterexamples a unit could not write to the corpus
    (disk full, an unwritable corpus): replayable lines, so nothing found is lost."""
    unwritten = getattr(result, "unwritten", ())
    if not unwritten:
        return
    print(f"replicheck: {len(unwritten)} counterexample(s) of {result.target.label} could not be written to the "
          f"corpus ({result.error}); here they are, replayable (store.writer.row_from_text):", file=sys.stderr)
    for line in unwritten:
        print(line, file=sys.stderr, flush=True)
