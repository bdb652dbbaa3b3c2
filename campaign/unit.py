"""The fuzz campaign's unit of work.

The unit of work is a ``WorkUnit`` — (target, seed, share), plain and
picklable — and ``run_unit(unit)``, a plain function that runs the target's
machine again and again for the unit's share (or until its flaw is found),
writes every run and every counterexample (reduced, or as found when its
reduction is deferred to a unit of its own: ``WorkUnit.reduce``) to the corpus
as ``campaign.record`` does, and returns a ``UnitResult`` value. Where a unit runs
(a worker process of ``campaign.runner``, any other process) is not its concern;
``campaign.scheduler`` decides which units run, and in which order.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import secrets
import time
from typing import Any, Callable, Iterator, Optional

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.internal.conjecture import engine
from hypothesis.stateful import run_state_machine_as_test

import campaign
import check
import model
import properties
import store
import sut
from check.explore import Exploration
from check.failures import CheckFailed, failure_for
from check.machine import KNOWN_EVENT
from check.statistics import RunStats
from check.verdict import Verdict
from store.fs import one_line
from store.schema import COUNTEREXAMPLES
from store.writer import CorpusWriter, replayable_text

from .record import Unreduced, reduce_unreduced, run_explorer, run_machine
from .targets import Target, run_seed

#: How a unit searches (``WorkUnit.engine``): ``explore``, the machine's policy
#: driven by ``check.explore`` (no Hypothesis engine: about 4x the checked steps
#: per second, branching from the states it reached); ``hypothesis``, runs of the
#: machine under Hypothesis (shrunk by Hypothesis before reduction).
EXPLORE, HYPOTHESIS = "explore", "hypothesis"
ENGINES = (EXPLORE, HYPOTHESIS)
EXPLORE_RUN_S = 20.0     # one explorer run (its archive, a runs row) lasts at most this long
#: The share of an explorer run's checked steps spent on whole fresh examples of
#: the machine's policy, beside the bursts from its archive
#: (``check.explore.Explorer``'s ``unguided_share``). Neither search is ahead
#: on every deep flaw, and each has seeds where it stays stuck for a minute that
#: the other gets past in seconds (README, "The explorer").
UNGUIDED_SHARE = 0.5
#: After an explorer run's first failure, it searches this long for a shorter one
#: (``check.explore.Explorer.run``): reduction then starts from tens of steps,
#: not hundreds, and ends nearer the minimal scenario, sooner.
SHORTEN_S = 2.0
EXAMPLES_PER_RUN = 25    # one Hypothesis machine run: this many examples, then the clock is checked
MIN_SHRINK_S = 10.0      # shrinking gets at least this long, even past the unit's share
STEPS_PER_EXAMPLE = 400  # long examples reach the deep flaws (the §3.3, §6.5.1, §6.5.4 shapes)
#: Reduction of a run's counterexample (its rows, one per failing property, share
#: it): at most REDUCE_S seconds, cut to what is left of the unit's share when the
#: run starts (as the shrink limit is) but not below MIN_REDUCE_S. Most reductions
#: end (1-minimal) within two seconds; a deep flaw's find of 100-200 steps takes
#: 5-20 s (benchmarks/reduce_cost.py --corpus), so the floor costs the campaign
#: little and keeps its stored counterexamples near their minimal scenarios.
REDUCE_S = 30.0
MIN_REDUCE_S = 20.0


def reduce_seconds(stop: float) -> float:
    """Seconds the counterexample of a run starting now may be reduced for, given
    the unit's ``stop`` (time.time())."""
    return max(MIN_REDUCE_S, min(REDUCE_S, stop - time.time()))


def preload() -> None:
    """Import every module of ours a run may load. Hypothesis mixes constants from
    the source of the loaded local modules into some draws: a module first
    imported during a run (the corpus writer, reduction) would make the next run
    of the same seed draw differently. A worker calls this before its first unit."""
    for package in (check, store, campaign, model, properties, sut):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)


# ------------------------------------------------------------- the unit of work

@attrs.frozen
class WorkUnit:
    """One slice of one target's search: plain data, picklable, so a unit can run
    in any process (a worker of ``campaign.runner``; later a Spark task).

    target: the target, its ``shard`` naming the series of runs the unit
    continues. share_s: seconds of search (no machine run starts after them);
    a counterexample found in the unit is shrunk for at least ``MIN_SHRINK_S``
    and reduced for at least ``MIN_REDUCE_S``, as far as ``deadline`` allows.
    first_run: the shard's runs before this unit, so the unit's runs are
    ``first_run``, ``first_run + 1``, … (their seeds ``run_seed(seed,
    target.key, run)``). seed: the campaign's seed (None: fresh random runs).
    corpus_dir, run_id: where and under which campaign id rows are written
    (None: nothing is written). deadline: the campaign's end (``time.time()``
    seconds): no run starts, and shrinking and reduction stop, by then. engine:
    one of ``ENGINES`` (ValueError otherwise). known: the signatures of the
    disagreements its runs go on past (``check.subject.Subject.known``): the
    campaign's known ones and those its target has found already.
    defer_reduction: a counterexample is written as found and handed back
    (``UnitResult.unreduced``) for a later unit to reduce, instead of being
    reduced in this one (``campaign.record``). reduce: that later unit's work:
    it reduces this counterexample within ``share_s`` and searches nothing."""

    target: Target
    share_s: float
    first_run: int = 0
    seed: Optional[int] = None
    corpus_dir: Optional[str] = None
    run_id: Optional[str] = None
    deadline: Optional[float] = None
    engine: str = attrs.field(default=EXPLORE, validator=attrs.validators.in_(ENGINES))
    known: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    defer_reduction: bool = False
    reduce: Optional[Unreduced] = None


@attrs.frozen(kw_only=True)
class SearchTally:
    """What searching a target did, as data (a unit's, or a target's over its
    units): runs, examples, steps: machine runs, examples and checked steps.
    seconds: seconds spent, shrinking and reduction included. found: the failing
    properties of the first counterexample (comma-separated), or the failure's
    kind (``divergence``, ``harness_error``); None when nothing failed.
    first_failure_s / first_failure_examples: seconds and examples spent when the
    first failure was found. counterexample_ids: the rows written. shrunk_steps:
    the shortest shrunk trace's length; reduced_steps: the shortest row's after
    reduction. signatures: the distinct signatures (``check.signature``) of the
    failures found, in the order found. known_met: how often a run went on past a
    known disagreement (``WorkUnit.known``). replaced: the counterexample ids
    written as found and since replaced by their reduced rows (no longer on
    disk)."""

    runs: int = 0
    examples: int = 0
    steps: int = 0
    seconds: float = 0.0
    found: Optional[str] = None
    first_failure_s: Optional[float] = None
    first_failure_examples: Optional[int] = None
    counterexample_ids: tuple[str, ...] = ()
    shrunk_steps: Optional[int] = None
    reduced_steps: Optional[int] = None
    signatures: tuple[str, ...] = ()
    known_met: int = 0
    replaced: tuple[str, ...] = ()


@attrs.frozen
class UnitResult(SearchTally):
    """What one unit of ``target`` did (``SearchTally``: seconds are the unit's
    wall-clock seconds, first failures counted from the unit's start;
    counterexample_ids: those on disk). error: why the unit stopped without a
    verdict of its target's (a harness error of a flaw's target, an unexpected
    exception, rows it could not write), one line; None otherwise."""

    target: Target
    error: Optional[str] = None
    #: The unit's counterexamples that could not be written to the corpus (disk
    #: full, an unwritable corpus), each as ``store.writer.replayable_text``:
    #: the runner prints them, so that nothing found is lost.
    unwritten: tuple[str, ...] = ()
    #: The unit's counterexamples written as found, to be reduced by a later
    #: unit (``WorkUnit.defer_reduction``).
    unreduced: tuple[Unreduced, ...] = ()

    @property
    def ok(self) -> bool:
        """The unit's own verdict: a flaw found; the correct target or an
        implementation clean (and no error either way)."""
        if self.error is not None:
            return False
        return self.found is None if self.target.runs_whole_share else self.found is not None


def _run_settings() -> settings:
    """One machine run of the campaign. No explain phase: it replays a failing
    machine many times to annotate lines, while the report names the violation.
    Quiet: nothing of Hypothesis's reporting belongs in a worker's output."""
    return settings(max_examples=EXAMPLES_PER_RUN, stateful_step_count=STEPS_PER_EXAMPLE, deadline=None,
                    database=None, derandomize=False, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, report_multiple_bugs=False,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])


def _with_failure(result: UnitResult, verdict: Verdict, stats: RunStats, run_started_s: float,
                  examples_before: int, rows: list[dict]) -> UnitResult:
    """``result`` with a run's counterexample: the first failure's time and
    examples (into the unit), the found properties, the shortest lengths."""
    if result.found is None and stats.first_failure_s is not None:
        result = attrs.evolve(result, first_failure_s=run_started_s + stats.first_failure_s,
                              first_failure_examples=None if stats.first_failure_examples is None
                              else examples_before + stats.first_failure_examples)
    reduced = [r["step_count"] for r in rows if r["shrunk_step_count"] is not None]
    shrunk = [n for n in (result.shrunk_steps, len(verdict.trace)) if n is not None]
    kind = verdict.finding_kind
    found = result.found or (",".join(verdict.properties) if kind in ("property", "liveness") else kind)
    return attrs.evolve(result, found=found, shrunk_steps=min(shrunk),
                        reduced_steps=min(reduced) if reduced else result.reduced_steps,
                        signatures=tuple(dict.fromkeys(result.signatures + (verdict.signature,))))


@attrs.frozen
class _Clock:
    """A unit's time: ``t0`` (time.monotonic() at its start), ``stop`` (no run
    starts after it: the share's end, time.time()) and ``end`` (the campaign's
    deadline, time.time(); infinity without one)."""

    t0: float
    stop: float
    end: float

    @classmethod
    def of(cls, unit: WorkUnit) -> "_Clock":
        end = unit.deadline if unit.deadline is not None else float("inf")
        return cls(time.monotonic(), min(time.time() + unit.share_s, end), end)

    def shrink_s(self, now: float) -> float:
        """How long Hypothesis may shrink a run starting at ``now``."""
        return max(1.0, min(max(MIN_SHRINK_S, self.stop - now), self.end - now))

    def reduce_s(self, now: float) -> float:
        """How long a counterexample of a run starting at ``now`` may be reduced."""
        return max(1.0, min(reduce_seconds(self.stop), self.end - now))


@contextlib.contextmanager
def _shrinking_within(seconds: float) -> Iterator[None]:
    """Hypothesis shrinks for at most ``seconds`` inside the block. Shrinking a
    400-step example can take minutes: the share bounds it too, and the deadline
    above all. Hypothesis stops shrinking at this limit (a private setting of its
    engine, five minutes by default) and reports the smallest failure so far."""
    default = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if default is None:
        yield
        return
    engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = default


def _search(unit: WorkUnit, machine: type, run: int, writer: Optional[CorpusWriter],
            clock: _Clock, deferred: Optional[list[Unreduced]]) -> Optional[Verdict]:
    """One run of ``machine`` by the unit's engine, recorded with ``writer``
    (``deferred``: its counterexamples left unreduced, appended there): the
    failure it found (None: none); raises what else the run raised."""
    target, now = unit.target, time.time()
    if unit.engine == EXPLORE:
        # Kafka's JVM objects cannot be deep-copied: an implementation's explorer
        # restarts from fresh examples only.
        # Reduction deferred: a quick find's shortening is bounded by its search
        # (the worker time goes to the flaws still unfound; reduction comes later).
        how = Exploration(guided=target.kind != "implementation", unguided_share=UNGUIDED_SHARE,
                          shorten_s=max(0.0, min(SHORTEN_S, clock.end - time.time())),
                          shorten_bounded=deferred is not None)
        return run_explorer(machine, max(0.1, min(EXPLORE_RUN_S, clock.stop - now)),
                            secrets.randbits(64) if unit.seed is None else run_seed(unit.seed, target.key, run),
                            writer=writer, test_id=target.test_id,
                            reduce_s=None if writer is None else clock.reduce_s(now), how=how,
                            deferred=deferred).verdict
    with _shrinking_within(clock.shrink_s(now)):
        try:
            if writer is not None:
                run_machine(machine, _run_settings(), writer=writer, test_id=target.test_id,
                            reduce_s=clock.reduce_s(now), deferred=deferred)
            else:
                run_state_machine_as_test(machine, settings=_run_settings())
        except CheckFailed as e:   # Hypothesis raises the failure it shrank
            return e.verdict
    return None


def _one_run(unit: WorkUnit, result: UnitResult, writer: Optional[CorpusWriter], clock: _Clock) -> UnitResult:
    """``result`` after the unit's next run (its ``error`` set when the run broke)."""
    target, run = unit.target, unit.first_run + result.runs
    # Past what is known, and what this unit found already: each run looks for another disagreement.
    machine = target.machine(run, unit.seed, known=unit.known | frozenset(result.signatures))
    run_started_s, verdict, error = time.monotonic() - clock.t0, None, None
    deferred: Optional[list[Unreduced]] = [] if unit.defer_reduction and writer is not None else None
    try:
        verdict = _search(unit, machine, run, writer, clock, deferred)
    except Exception as e:
        error = f"run {run} of {target.key} raised {one_line(e, limit=None)}"
    stats = machine.run_stats
    # Every counterexample row of the unit; only those on disk are named
    # (the writer wrote them when the run ended, CorpusWriter.record).
    rows = writer.recorded if writer is not None else []
    known_met = sum(n for event, n in stats.event_counts.items() if event.startswith(KNOWN_EVENT))
    result = attrs.evolve(result, runs=result.runs + 1, examples=result.examples + stats.examples,
                          steps=result.steps + stats.steps, seconds=time.monotonic() - clock.t0,
                          counterexample_ids=_written_ids(writer), known_met=result.known_met + known_met,
                          unreduced=result.unreduced + tuple(deferred or ()))
    # An implementation raising (a Java exception from Kafka's code) is a
    # disagreement like any other; elsewhere a harness error is the
    # harness's failure, not a verdict on the target.
    if verdict is not None and verdict.kind == "harness_error" and target.kind != "implementation":
        error = f"harness error in run {run} of {target.key}: {one_line(failure_for(verdict), limit=None)}"
    elif verdict is not None:
        result = _with_failure(result, verdict, stats, run_started_s, result.examples - stats.examples, rows)
    return result if error is None else attrs.evolve(result, error=error)


def run_unit(unit: WorkUnit, progress: Optional[Callable[[UnitResult], None]] = None,
             worker: str = "main") -> UnitResult:
    """Run ``unit``: the target's machine again and again (runs ``first_run``, …)
    until the share is spent or the deadline is near — or, for a flaw, until it
    is found. Every run is recorded in the corpus when ``unit.corpus_dir`` is
    given, under ``target.test_id`` and ``worker`` (the rows' ``worker``); a
    counterexample's row names the implementation it was found with and was
    reduced by replaying that one (``campaign.record``). ``progress`` gets the
    result so far after every run.

    Never raises for what a run finds or breaks: a harness error (of a target
    other than an implementation's, whose every failure is a disagreement) or
    any other exception ends the unit with ``error`` set. KeyboardInterrupt
    propagates. A unit with ``reduce`` reduces that counterexample instead
    (``reduce_found``)."""
    if unit.reduce is not None:
        return reduce_found(unit)
    clock = _Clock.of(unit)
    writer = CorpusWriter(unit.corpus_dir, run_id=unit.run_id, worker=worker) if unit.corpus_dir else None
    result = UnitResult(unit.target)
    try:
        while time.time() < clock.stop:
            result = _one_run(unit, result, writer, clock)
            if result.error is not None or (result.found is not None and not unit.target.runs_whole_share):
                break
            if progress is not None:
                progress(result)
    finally:
        unwritten = _flush(writer)
    if unwritten is not None:
        result = attrs.evolve(result, error=unwritten)
    if writer is not None:
        result = attrs.evolve(result, counterexample_ids=_written_ids(writer),
                              unwritten=tuple(replayable_text(r) for r in writer.rows[COUNTEREXAMPLES]))
    return attrs.evolve(result, seconds=time.monotonic() - clock.t0)


def reduce_found(unit: WorkUnit) -> UnitResult:
    """Run a reduction unit: ``unit.reduce``'s counterexamples reduced within
    ``unit.share_s`` (and before ``unit.deadline``), written in place of the
    part holding them as found (``campaign.record.reduce_unreduced``). Its
    result names the rows written (``counterexample_ids``, ``reduced_steps``)
    and those replaced. A write that fails leaves the rows as found (the
    writer warns, and prints the reduced ones replayable in the worker's log):
    never an error of the target, whose flaw was found."""
    t0 = time.monotonic()
    end = unit.deadline if unit.deadline is not None else float("inf")
    seconds = max(0.5, min(unit.share_s, end - time.time()))
    found = unit.reduce
    assert found is not None
    try:
        rows, replaced = reduce_unreduced(found, unit.corpus_dir, unit.run_id, seconds)
    except OSError:
        return UnitResult(unit.target, seconds=time.monotonic() - t0)
    reduced = [r["step_count"] for r in rows if r["shrunk_step_count"] is not None]
    return UnitResult(unit.target, seconds=time.monotonic() - t0,
                      counterexample_ids=tuple(r["counterexample_id"] for r in rows), replaced=replaced,
                      reduced_steps=min(reduced) if reduced else None)


def _written_ids(writer: Any) -> tuple[str, ...]:
    """The counterexample ids the unit's writer has on disk, in order, once each."""
    return () if writer is None else tuple(dict.fromkeys(writer.written_ids))


def _flush(writer: Any) -> Optional[str]:
    """Write the unit's rows still buffered (the counterexamples were written as
    they were found); why they could not be, or None."""
    if writer is None:
        return None
    writer.close()
    try:
        writer.flush()
    except Exception as e:
        return (f"could not write the corpus to {writer.root}: {one_line(e, limit=None)} (its counterexamples are printed "
                f"replayable, store.writer.replayable_text)")
    return None


def run_target(target: Target, share_s: float, deadline: float, corpus_dir: Optional[str],
               seed: Optional[int] = None, run_id: Optional[str] = None, engine: str = EXPLORE) -> UnitResult:
    """One unit of ``target`` run here: its machine again and again for
    ``share_s`` seconds (no run starting after ``deadline``, ``time.time()``
    seconds) or until its flaw is found; see ``run_unit``."""
    return run_unit(WorkUnit(target, share_s, seed=seed, corpus_dir=corpus_dir, run_id=run_id, deadline=deadline,
                             engine=engine))
