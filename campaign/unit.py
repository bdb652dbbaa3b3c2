"""The fuzz campaign's targets and its unit of work.

A target is ``"correct"``, ``"variant:NAME"``, ``"bug:NAME"`` or
``"implementation:NAME"`` (NAME one of ``harness.implementations.NAMES``). A
variant or bug target searches for its flaw and stops at its first (shrunk)
counterexample; the correct target and an implementation's run for the whole
budget and succeed by never failing (``Target.runs_whole_share``).

The unit of work is a ``WorkUnit`` — (target, seed, share), plain and
picklable — and ``run_unit(unit)``, a plain function that runs the target's
machine again and again for the unit's share (or until its flaw is found),
writes every run and every counterexample (reduced) to the corpus as
``harness.corpus`` does, and returns a ``UnitResult`` value. Where a unit runs
(a worker process of ``harness.runner``, any other process) is not its concern;
``harness.scheduler`` decides which units run, and in which order.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any, Callable, Optional

import attrs

from .corpus_fs import one_line

#: How a unit searches (``WorkUnit.engine``): ``explore``, the machine's policy
#: driven by ``harness.explore`` (no Hypothesis engine: about 4x the checked steps
#: per second, branching from the states it reached); ``hypothesis``, runs of the
#: machine under Hypothesis (shrunk by Hypothesis before reduction).
EXPLORE, HYPOTHESIS = "explore", "hypothesis"
ENGINES = (EXPLORE, HYPOTHESIS)
EXPLORE_RUN_S = 20.0     # one explorer run (its archive, a runs row) lasts at most this long
#: The share of an explorer run's checked steps spent on whole fresh examples of
#: the machine's policy, beside the bursts from its archive
#: (``harness.explore.Explorer``'s ``unguided_share``). Neither search is ahead
#: on every deep flaw, and each has seeds where it stays stuck for a minute that
#: the other gets past in seconds (README, "The explorer").
UNGUIDED_SHARE = 0.5
#: After an explorer run's first failure, it searches this long for a shorter one
#: (``harness.explore.Explorer.run``): reduction then starts from tens of steps,
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


@attrs.frozen
class Target:
    """One line of the campaign: the correct protocol, a variant, a SUT bug, or an
    implementation under test compared with the model (``implementation:kafka``:
    ``kafka_bridge.implementation`` under the Kafka profile, detached at the
    profile's findings, see ``harness.implementations.machine_options``)."""

    kind: str      # "correct" | "variant" | "bug" | "implementation"
    name: str = ""
    #: One of several series of runs of the same target running at once (the
    #: scheduler starts one when a worker has nothing else to do, say every worker
    #: of an implementation's campaign): shards share the label, and so the kill
    #: matrix's line and the corpus's test id, but each draws its own examples
    #: (``key`` seeds them).
    shard: int = 0

    @property
    def label(self) -> str:
        return "correct" if self.kind == "correct" else f"{self.kind}:{self.name}"

    @property
    def key(self) -> str:
        """The label, with ``#shard`` after it for a shard other than the first:
        what each run's seed derives from."""
        return self.label if self.shard == 0 else f"{self.label}#{self.shard}"

    @property
    def test_id(self) -> str:
        """The corpus's ``test_id`` of the target's runs and counterexamples:
        ``campaign[LABEL]`` (every shard's, ``harness.schema.campaign_test_id``)."""
        from .schema import campaign_test_id
        return campaign_test_id(self.label)

    @property
    def runs_whole_share(self) -> bool:
        """Whether the target runs for the whole budget and succeeds by never
        failing (the correct protocol + SUT; an implementation under test, whose
        every failure is a disagreement with the model), rather than stopping at
        the first counterexample of a flaw put there on purpose."""
        return self.kind in ("correct", "implementation")

    @classmethod
    def parse(cls, label: str) -> "Target":
        """``correct``, ``variant:NAME``, ``bug:NAME`` or ``implementation:NAME``
        (``harness.implementations.NAMES``), optionally followed by ``#SHARD`` (an
        integer >= 0, see ``key``); ValueError names the allowed values."""
        from model import Variant
        from sut.bugs import Bug

        from .implementations import NAMES
        label, hashed, raw_shard = label.partition("#")
        shard = int(raw_shard) if raw_shard.isdigit() else -1
        if hashed and shard < 0:
            raise ValueError(f"campaign target shard must be an integer >= 0 after '#', got {raw_shard!r}")
        if label == "correct":
            return cls("correct", shard=max(shard, 0))
        kind, _, name = label.partition(":")
        allowed = {"variant": [v.name for v in Variant], "bug": [b.name for b in Bug],
                   "implementation": list(NAMES)}
        if kind not in allowed:
            raise ValueError(f"campaign target must be 'correct', 'variant:NAME', 'bug:NAME' or "
                             f"'implementation:NAME', got {label!r}")
        if name not in allowed[kind]:
            raise ValueError(f"unknown {kind} {name!r}; allowed: {', '.join(allowed[kind])}")
        return cls(kind, name, max(shard, 0))

    def machine(self, run: int, seed: Optional[int] = None) -> type:
        """The machine class of the target's ``run``-th run (0-based), with its own
        Hypothesis seed (``@seed``): ``run_seed(seed, …)`` in a seeded campaign, a
        fresh random one otherwise. Always its own: under ``pytest -n`` every worker
        has a forced seed (conftest.py), with which each run would draw the same
        examples as the run before."""
        from hypothesis import seed as hypothesis_seed

        from model import Variant
        from sut.bugs import Bug

        from .machine import machine_for
        tag = (f"{self.kind}_{self.name}" if self.name else "correct") + \
            (f"_shard{self.shard}" if self.shard else "") + f"_run{run}"
        if self.kind == "implementation":
            from .implementations import machine_options
            cls = machine_for(**machine_options(self.name), name=f"Campaign_{tag}")
        elif self.kind == "variant":
            cls = machine_for(variants=frozenset({Variant[self.name]}), name=f"Campaign_{tag}")
        elif self.kind == "bug":
            cls = machine_for(bugs=frozenset({Bug[self.name]}), compare_sut=True, name=f"Campaign_{tag}")
        else:
            cls = machine_for(compare_sut=True, name=f"Campaign_{tag}")
        return hypothesis_seed(secrets.randbits(64) if seed is None else run_seed(seed, self.key, run))(cls)


def run_seed(seed: int, label: str, run: int) -> int:
    """The Hypothesis seed of one run of a seeded campaign (``label``: the
    target's ``key``): every (target, shard, run) draws its own examples, the
    same ones each time the campaign is run with ``seed`` (on the same code:
    Hypothesis also draws on constants of the loaded source, see ``preload``)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{label}:{run}".encode()).digest()[:8], "big")


def all_targets(variants: Optional[list[str]] = None, bugs: Optional[list[str]] = None,
                include_correct: bool = True, implementation: Optional[str] = None,
                correct_only: bool = False) -> list[Target]:
    """The campaign's targets. With no ``variants`` and no ``bugs`` given: all of
    them; otherwise only those named (each validated). With ``implementation``
    (a name of ``harness.implementations.NAMES``): only its target. With
    ``correct_only``: only the correct protocol + SUT (a long search for new
    bugs). ValueError names a bad name, or variants or bugs given with an
    implementation or ``correct_only``."""
    from model import Variant
    from sut.bugs import Bug
    if correct_only:
        if variants or bugs or implementation or not include_correct:
            raise ValueError("correct_only runs only the correct protocol + SUT: give no variants, bugs, "
                             "implementation or include_correct=False with it")
        return [Target("correct")]
    if implementation is not None:
        target = Target.parse(f"implementation:{implementation}")
        if variants or bugs:
            raise ValueError(f"an implementation campaign runs only {target.label}: give no variants or bugs "
                             f"with it (got {', '.join([*(variants or []), *(bugs or [])])})")
        return [target]
    if variants or bugs:
        out = [Target.parse(f"variant:{v}") for v in variants or []] + [Target.parse(f"bug:{b}") for b in bugs or []]
    else:
        out = [Target("variant", v.name) for v in Variant] + [Target("bug", b.name) for b in Bug]
    return ([Target("correct")] if include_correct else []) + out


def preload() -> None:
    """Import every module of ours a run may load. Hypothesis mixes constants from
    the source of the loaded local modules into some draws: a module first
    imported during a run (the corpus writer, reduction) would make the next run
    of the same seed draw differently. A worker calls this before its first unit."""
    import importlib
    import pkgutil

    import harness
    import model
    import properties
    import sut
    for package in (harness, model, properties, sut):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)


# ------------------------------------------------------------- the unit of work

@attrs.frozen
class WorkUnit:
    """One slice of one target's search: plain data, picklable, so a unit can run
    in any process (a worker of ``harness.runner``; later a Spark task).

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
    one of ``ENGINES`` (ValueError otherwise)."""

    target: Target
    share_s: float
    first_run: int = 0
    seed: Optional[int] = None
    corpus_dir: Optional[str] = None
    run_id: Optional[str] = None
    deadline: Optional[float] = None
    engine: str = attrs.field(default=EXPLORE, validator=attrs.validators.in_(ENGINES))


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
    reduction."""

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
    #: full, an unwritable corpus), each as ``harness.corpus.replayable_text``:
    #: the runner prints them, so that nothing found is lost.
    unwritten: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """The unit's own verdict: a flaw found; the correct target or an
        implementation clean (and no error either way)."""
        if self.error is not None:
            return False
        return self.found is None if self.target.runs_whole_share else self.found is not None


def _run_settings() -> Any:
    """One machine run of the campaign. No explain phase: it replays a failing
    machine many times to annotate lines, while the report names the violation.
    Quiet: nothing of Hypothesis's reporting belongs in a worker's output."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings
    return settings(max_examples=EXAMPLES_PER_RUN, stateful_step_count=STEPS_PER_EXAMPLE, deadline=None,
                    database=None, derandomize=False, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, report_multiple_bugs=False,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])


def _with_failure(result: UnitResult, failure: Any, stats: Any, run_started_s: float, examples_before: int,
                  rows: list[dict]) -> UnitResult:
    """``result`` with a run's counterexample: the first failure's time and
    examples (into the unit), the found properties, the shortest lengths."""
    from .failures import PropertyViolated
    if result.found is None and stats.first_failure_s is not None:
        result = attrs.evolve(result, first_failure_s=run_started_s + stats.first_failure_s,
                              first_failure_examples=None if stats.first_failure_examples is None
                              else examples_before + stats.first_failure_examples)
    reduced = [r["step_count"] for r in rows if r["shrunk_step_count"] is not None]
    shrunk = [n for n in (result.shrunk_steps, len(failure.trace)) if n is not None]
    return attrs.evolve(
        result, found=",".join(failure.property_names) if isinstance(failure, PropertyViolated) else failure.kind,
        shrunk_steps=min(shrunk), reduced_steps=min(reduced) if reduced else result.reduced_steps)


def run_unit(unit: WorkUnit, progress: Optional[Callable[[UnitResult], None]] = None,
             worker: str = "main") -> UnitResult:
    """Run ``unit``: the target's machine again and again (runs ``first_run``, …)
    until the share is spent or the deadline is near — or, for a flaw, until it
    is found. Every run is recorded in the corpus when ``unit.corpus_dir`` is
    given, under ``target.test_id`` and ``worker`` (the rows' ``worker``); a
    counterexample's row names the implementation it was found with and was
    reduced by replaying that one (``harness.corpus.run_machine``,
    ``reduce_failure``). ``progress`` gets the result so far after every run.

    Never raises for what a run finds or breaks: a harness error (of a target
    other than an implementation's, whose every failure is a disagreement) or
    any other exception ends the unit with ``error`` set. KeyboardInterrupt
    propagates."""
    from hypothesis.internal.conjecture import engine

    from .corpus import CorpusWriter, run_machine
    from .failures import CheckFailed, HarnessFailure
    from .schema import COUNTEREXAMPLES

    target = unit.target
    t0 = time.monotonic()
    end = unit.deadline if unit.deadline is not None else float("inf")
    stop = min(time.time() + unit.share_s, end)
    writer = CorpusWriter(unit.corpus_dir, run_id=unit.run_id, worker=worker) if unit.corpus_dir else None
    result = UnitResult(target)
    # Shrinking a 400-step example can take minutes: the share bounds it too, and
    # the deadline above all. Hypothesis stops shrinking at this limit (a private
    # setting of its engine, five minutes by default) and reports the smallest
    # failure so far.
    default_shrink_s = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    try:
        while time.time() < stop:
            now, run = time.time(), unit.first_run + result.runs
            if default_shrink_s is not None:
                engine.MAX_SHRINKING_SECONDS = max(1.0, min(max(MIN_SHRINK_S, stop - now), end - now))
            machine = target.machine(run, unit.seed)
            run_started_s, failure, error = time.monotonic() - t0, None, None
            try:
                if unit.engine == EXPLORE:
                    from .explore import run_explorer
                    run_explorer(machine, max(0.1, min(EXPLORE_RUN_S, stop - now)),
                                 secrets.randbits(64) if unit.seed is None else run_seed(unit.seed, target.key, run),
                                 writer=writer, test_id=target.test_id, unguided_share=UNGUIDED_SHARE,
                                 # Kafka's JVM objects cannot be deep-copied: an implementation's
                                 # explorer restarts from fresh examples only.
                                 guided=target.kind != "implementation",
                                 shorten_s=max(0.0, min(SHORTEN_S, end - time.time())),
                                 reduce_s=None if writer is None else max(1.0, min(reduce_seconds(stop), end - now)))
                elif writer is not None:
                    run_machine(machine, _run_settings(), writer=writer, test_id=target.test_id,
                                reduce_s=max(1.0, min(reduce_seconds(stop), end - now)))
                else:
                    from hypothesis.stateful import run_state_machine_as_test
                    run_state_machine_as_test(machine, settings=_run_settings())
            except CheckFailed as e:
                failure = e
            except Exception as e:
                error = f"run {run} of {target.key} raised {one_line(e, limit=None)}"
            stats = machine.run_stats
            # Every counterexample row of the unit; only those on disk are named
            # (the writer wrote them when the run ended, CorpusWriter.record).
            rows = writer.recorded if writer is not None else []
            result = attrs.evolve(result, runs=result.runs + 1, examples=result.examples + stats.examples,
                                  steps=result.steps + stats.steps, seconds=time.monotonic() - t0,
                                  counterexample_ids=_written_ids(writer))
            # An implementation raising (a Java exception from Kafka's code) is a
            # disagreement like any other; elsewhere a harness error is the
            # harness's failure, not a verdict on the target.
            if isinstance(failure, HarnessFailure) and target.kind != "implementation":
                error = f"harness error in run {run} of {target.key}: {one_line(failure, limit=None)}"
            elif failure is not None:
                result = _with_failure(result, failure, stats, run_started_s, result.examples - stats.examples, rows)
            if error is not None:
                result = attrs.evolve(result, error=error)
                break
            if result.found is not None and not target.runs_whole_share:
                break
            if progress is not None:
                progress(result)
    finally:
        if default_shrink_s is not None:
            engine.MAX_SHRINKING_SECONDS = default_shrink_s
        unwritten = _flush(writer)
    if unwritten is not None:
        result = attrs.evolve(result, error=unwritten)
    if writer is not None:
        from .corpus import replayable_text
        result = attrs.evolve(result, counterexample_ids=_written_ids(writer),
                              unwritten=tuple(replayable_text(r) for r in writer.rows[COUNTEREXAMPLES]))
    return attrs.evolve(result, seconds=time.monotonic() - t0)


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
                f"replayable, harness.corpus.replayable_text)")
    return None


def run_target(target: Target, share_s: float, deadline: float, corpus_dir: Optional[str],
               seed: Optional[int] = None, run_id: Optional[str] = None, engine: str = EXPLORE) -> UnitResult:
    """One unit of ``target`` run here: its machine again and again for
    ``share_s`` seconds (no run starting after ``deadline``, ``time.time()``
    seconds) or until its flaw is found; see ``run_unit``."""
    return run_unit(WorkUnit(target, share_s, seed=seed, corpus_dir=corpus_dir, run_id=run_id, deadline=deadline,
                             engine=engine))
