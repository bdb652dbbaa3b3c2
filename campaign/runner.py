"""The campaign runner: hands the scheduler's work units (``harness.scheduler``)
to worker processes (``harness.workers``) and returns every target's verdict as
data::

    from harness.campaign import all_targets
    from harness.runner import run_campaign
    result = run_campaign(all_targets(), budget_s=240, workers=2, seed=7, corpus_dir="corpus")
    result.ok, [(t.target.label, t.verdict, t.why) for t in result.targets]

Time. Units are handed out until ``budget_s - finish_s``; the units running then
finish their current run, and a counterexample's shrinking and reduction, by
``budget_s`` (their deadline). A worker still busy ``GRACE_S`` after that is
stopped and its unit's target is told so.

Stopping. A worker is stopped with SIGTERM (its unit unwinds and writes what it
found, ``harness.workers.Stopped``) and killed ``STOP_GRACE_S`` later if it has
not exited: at the campaign's end, and on Ctrl-C (KeyboardInterrupt in the
runner; ``replicheck fuzz`` turns its own SIGTERM into one too), when the
targets still searching are reported ``stopped``. A worker that dies on its own
(SIGKILL, a crash) loses only its unit's run in flight, since every
counterexample is written when found (``harness.corpus.CorpusWriter``): its
target is told its worker crashed (``Scheduler.lost``), never "not found".

On Spark. With ``master`` (a Spark master URL), units run as Spark tasks
(``harness.spark_pool.SparkPool``) instead of local worker processes: the
same scheduler, verdicts and corpus; ``workers`` is then how many units run
at once (None: the executors' cores). The budget starts once the executors
have registered: Spark's start (its JVM, the executors': seconds) comes before
it, and counts in ``elapsed_s``.

Reproducibility. With a ``seed``, the k-th machine run of shard s of a target
draws the same examples each time (``harness.campaign.run_seed``; on the same
code), however the runs are cut into units. What the clock decides is not
reproducible: how many runs each target gets, whether and when a target gets a
second shard, and so which run finds a flaw first once shards run side by side;
and how far shrinking and reduction get within their time.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, Callable, Optional, Sequence

import attrs

from .campaign import EXPLORE, Target, UnitResult, WorkUnit, preload, run_unit
from .scheduler import NOT_SCHEDULED, VERDICTS, Progress, Scheduler, TargetResult
from .corpus_fs import is_uri
from .spark_checks import check_shared_corpus
from .workers import DONE, LOST, PROGRESS, WorkerPool, check_workers

#: Kept back at the end of the search for the last units' run, shrinking and reduction.
FINISH_S = 20.0
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


def check_budget(budget_s: float, workers: int, seed: Optional[int]) -> None:
    """ValueError naming the first bad argument: ``budget_s`` a finite number of
    seconds > 0, ``workers`` an integer >= 1, ``seed`` an integer >= 0 or None."""
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not math.isfinite(budget_s) \
            or budget_s <= 0:
        raise ValueError(f"budget must be a finite number of seconds > 0, got {budget_s!r}")
    check_workers(workers)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be an integer >= 0 or None, got {seed!r}")


def run_campaign(targets: Sequence[Target], budget_s: float, workers: Optional[int], seed: Optional[int] = None,
                 corpus_dir: Optional[str] = None, run_id: Optional[str] = None, log_path: Optional[str] = None,
                 on_progress: Optional[Callable[[Progress], None]] = None, finish_s: float = FINISH_S,
                 work: Callable[..., UnitResult] = run_unit, engine: str = EXPLORE,
                 master: Optional[str] = None) -> CampaignResult:
    """Run ``targets`` (labels unique) on ``workers`` worker processes for
    ``budget_s`` seconds (see the module doc for how the time is used), the
    corpus rows written to ``corpus_dir`` under ``run_id`` (None: nothing
    written), the workers' output to ``log_path`` (None: discarded).
    ``on_progress`` gets a ``Progress`` snapshot about once a second. ``work``
    runs one unit in a worker (``harness.campaign.run_unit``; a module-level
    function of the same signature for tests). ``engine``: how units search
    (``harness.campaign.ENGINES``). ``master``: a Spark master URL
    (``harness.spark_checks.MASTER_FORMS``) to run the units as Spark tasks
    (``harness.spark_pool``; ``workers`` None: as many at once as the
    executors have cores; ``work`` importable on the executors), ``corpus_dir``
    a folder every executor writes or a URI (``harness.corpus_fs``); None: local
    worker processes.

    Returns when every target's search has ended or the budget is spent, or on
    Ctrl-C (``interrupted``: the units running are stopped, what they reported
    counts). ValueError names a bad ``budget_s``, ``workers`` (None only with
    a ``master``), ``seed``, ``master`` or ``corpus_dir`` (a URI that cannot be
    used: ``check_shared_corpus``), an empty or
    repeated target list; ``harness.spark_pool.SparkUnavailable`` says why
    Spark could not run the units. Both come before any unit runs."""
    check_budget(budget_s, workers if workers is not None or master is None else 1, seed)
    problem = None if corpus_dir is None else check_shared_corpus(corpus_dir, "corpus_dir")
    if problem is not None:
        raise ValueError(problem)
    if master is not None and corpus_dir is not None and not is_uri(corpus_dir):
        corpus_dir = os.path.abspath(corpus_dir)  # an executor's working folder is not the driver's
    called = started = time.time()

    def scheduler_of(size: int, started: float) -> Scheduler:
        deadline = started + budget_s
        return Scheduler(targets, size, search_end=deadline - min(finish_s, budget_s / 2), deadline=deadline,
                         seed=seed, corpus_dir=None if corpus_dir is None else str(corpus_dir), run_id=run_id,
                         started=started, engine=engine)

    scheduler = scheduler_of(workers or 1, started)  # its arguments checked before any pool starts
    pool: Any = None
    interrupted = False
    try:
        pool = _start_pool(master, workers, work, log_path, corpus_dir,
                           tuple(dict.fromkeys(t.name for t in targets if t.kind == "implementation")))
        # The budget is the search's: it starts once the workers are up (Spark's
        # start takes seconds; local worker processes start as units arrive).
        started = time.time()
        scheduler = scheduler_of(pool.size, started)
        deadline = started + budget_s
        while True:
            for slot in pool.idle():
                unit = scheduler.next_unit(time.time())
                if unit is None:
                    break
                pool.submit(slot, unit)
            if not pool.busy:
                break
            left = deadline + GRACE_S - time.time()
            if left <= 0:
                for event in pool.stop("its unit was stopped at the campaign's end", STOP_GRACE_S):
                    _apply(scheduler, event.kind, event.unit, event.value, retry=False)
                break
            for event in pool.wait(min(1.0, left)):
                _apply(scheduler, event.kind, event.unit, event.value)
            if on_progress is not None:
                on_progress(scheduler.snapshot(time.time()))
    except KeyboardInterrupt:
        interrupted = True
        if pool is not None:
            for event in pool.stop("the campaign was interrupted", STOP_GRACE_S):
                _apply(scheduler, event.kind, event.unit, event.value, retry=False)
    finally:
        if pool is not None:
            pool.close()
    why = "the campaign was interrupted before it was scheduled" if interrupted else NOT_SCHEDULED
    return CampaignResult(tuple(scheduler.results(why, interrupted=interrupted)), seed, run_id, scheduler.workers,
                          budget_s, time.time() - called, interrupted)


def _start_pool(master: Optional[str], workers: Optional[int], work: Callable[..., UnitResult],
                log_path: Optional[str], corpus_dir: Optional[str], implementations: tuple[str, ...] = ()) -> Any:
    """The units' pool: ``workers`` local worker processes, or, with a Spark
    ``master``, a ``harness.spark_pool.SparkPool`` (PySpark imported only then)
    shipping what the targets' ``implementations`` need."""
    if master is None:
        return WorkerPool(workers, work, setup=preload, log_path=log_path)  # type: ignore[arg-type]
    from .spark_pool import SparkPool
    return SparkPool(master, work, size=workers, setup=preload, log_path=log_path,
                     corpus_dir=None if corpus_dir is None else str(corpus_dir), implementations=implementations)


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
          f"corpus ({result.error}); here they are, replayable (harness.corpus.row_from_text):", file=sys.stderr)
    for line in unwritten:
        print(line, file=sys.stderr, flush=True)
