"""Time to find every protocol variant and every SUT bug, against a plain random walk.

Usage:
  python benchmarks/time_to_find.py [--seeds 5] [--examples 1500] [--steps 400] [--jobs 1]
                                    [--variant NAME ...] [--bug NAME ...] [--no-bugs]
                                    [--first-seed 0] [--no-shrink] [--raw FILE] [--profile NAME]
  python benchmarks/time_to_find.py --from-raw FILE [FILE ...]

For each target (a ``model.Variant`` checked on the model, or a ``sut.bugs.Bug``
checked by comparing the buggy SUT with the model) and each seed, the
ReplicationMachine runs derandomized (the seed is folded into the machine's
name, so each seed explores differently and reruns are identical) with up to
--examples examples of up to --steps steps, and we record the time and the
number of examples to the first failure, the length of the shrunk trace, and
its length after ``check.reduce.reduce_counterexample`` (delta debugging over
the trace, in the smallest configuration where it still fails; ``reduced on``
gives that configuration's replicas/brokers, the most common over the seeds).
Beside it: a plain uniform random walk over ``enabled_actions`` (no
Hypothesis, no weights, walks of --steps steps from random configs of the same
space, the lossy-shutdown budget respected) given the same wall-clock budget
as Hypothesis needed (or the whole budget when Hypothesis did not find it).

Prints one row per target: median time to first failure (s), median examples
to failure, median shrunk and reduced lengths, the minimal hand-written scenario's length
(variants), found/seeds, and the random walk's found/seeds and median time.
``--jobs N`` runs N (target, seed) pairs at once in separate processes; times
are per process, so on a machine with N free cores they stay one-core figures.

Hypothesis's shrinking (up to five minutes per found target) takes most of a
run; ``--no-shrink`` leaves it out and reduces the unshrunk trace instead, so
the generation figures (found, time, examples, walk) of many seeds come at a
fraction of the cost. ``--raw`` keeps every (target, seed) measurement as a JSON
line, and ``--from-raw`` prints the table of several such files, so seeds run at
different times (``--first-seed``) make one table. ``--profile kafka-4.4.0`` runs
the machine and the walk under the Kafka profile (``model.profile``); ``--without
RULE`` switches rules of the profile off (the findings' rules, so that a failure is
the flaw's and not a finding's).

``hypothesis_run`` also measures a bug with another implementation than the
bundled SUT (``implementation``, a name of ``check.implementations``, built with
the bug: ``factory(config, bugs)``), detached at findings, within a time budget,
and without reduction: ``benchmarks/kafka_time_to_find.py`` compares the bugs'
times with Kafka's own components in place of the SUT's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Optional

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from check.machine import machine_for
from check.failures import CheckFailed
from check.implementations import named
from check.scenarios import MINIMAL
from check.reduce import reduce_counterexample
from check.lockstep import LockStep
from check.random_walk import choose, within_budget
from check.subject import Subject
from model import CHAPTERS, PROFILES, UNCLEAN_RECOVERY_STRATEGIES, Config, Rule, Variant


class BudgetSpent(BaseException):
    """Raised between two examples once a run's time budget is spent (a
    BaseException, so Hypothesis lets it through instead of shrinking it)."""


def implementation_factory(name: Optional[str], bugs: frozenset) -> Optional[Callable[[Config], Any]]:
    """The factory of the implementation ``name`` (``check.implementations``)
    with ``bugs`` switched on, as a machine or a reduction takes it (None: the
    bundled SUT, built by the machine itself)."""
    if name is None:
        return None
    factory = named(name)
    assert factory is not None
    return lambda config: factory(config, bugs)


def hypothesis_run(target: object, seed: int, examples: int, steps: int, shrink: bool = True,
                   profile: str = CHAPTERS, without: tuple[str, ...] = (), implementation: Optional[str] = None,
                   detach_at_findings: bool = False, reduce: bool = True,
                   budget_s: Optional[float] = None) -> dict[str, Any]:
    """One seed of one target. ``implementation``: a name of
    ``check.implementations`` compared with the model instead of the bundled SUT,
    with the bug ``target`` switched on (None: the bundled SUT). The machine's name
    depends on the target and the seed only, so runs of one bug with different
    implementations draw the same examples (generation follows the model) until
    one of them fails. ``budget_s``: no example starts after that many seconds of
    the run. ``time`` is the wall-clock seconds to the first failure, ``cpu_time``
    the process's CPU seconds; ``kind`` is its verdict's kind; ``detached`` counts
    the examples detached at a finding (``detach_at_findings``). Any failure of
    the lockstep check counts as found, a harness error (an exception in the model
    or the implementation) included."""
    is_variant = isinstance(target, Variant)
    bugs = frozenset() if is_variant else frozenset({target})
    factory = implementation_factory(implementation, bugs)
    subject = Subject(variants=frozenset({target}) if is_variant else frozenset(), bugs=bugs,
                      compare=not is_variant, profile=profile, rules=rules_of(profile, without),
                      implementation=factory, detach_at_findings=detach_at_findings)
    machine = machine_for(subject, name=f"TimeToFind_{target.name}_{seed}")  # type: ignore[attr-defined]
    cpu_at_failure: list[float] = []
    machine = timed(machine, budget_s, cpu_at_failure)
    t0, cpu0 = time.monotonic(), time.process_time()
    result: dict[str, Any] = {"found": 0.0, "time": None, "examples": None, "shrunk": None, "reduced": None,
                              "reduced_on": None, "elapsed": None, "kind": None, "detached": 0,
                              "budget_spent": False, "steps": None, "cpu_time": None}
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=steps, derandomize=True, database=None, deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate]))
    except BudgetSpent:
        result["budget_spent"] = True
    except CheckFailed as failure:
        stats = machine.run_stats
        result.update(found=1.0, time=stats.first_failure_s, examples=stats.first_failure_examples,
                      shrunk=float(len(failure.trace)) if shrink else None, kind=failure.verdict.kind,
                      cpu_time=cpu_at_failure[0] - cpu0 if cpu_at_failure else None)
        if reduce:
            reduced = reduce_counterexample(failure.trace, subject.with_config(failure.state.config))
            result["reduced"] = float(len(reduced.trace))
            result["reduced_on"] = f"{len(reduced.config.assignment)}/{len(reduced.config.brokers)}"
    result["elapsed"] = time.monotonic() - t0
    result["steps"] = machine.run_stats.steps
    result["detached"] = sum(n for name, n in machine.run_stats.event_counts.items()
                             if name.startswith("finding reached"))
    return result


def timed(machine: type, budget_s: Optional[float], cpu_at_failure: list[float]) -> type:
    """``machine`` noting the process's CPU time (``time.process_time``: every
    thread, a JVM's included) at its first failure in ``cpu_at_failure``, so a run
    on a loaded machine still has a figure of its own; and, with ``budget_s``,
    ending its run (``BudgetSpent``) at the end of the first example that finishes
    ``budget_s`` seconds or more after the run started, unless the run has failed
    (the failure, replayed by Hypothesis, is what it raises). Same class name, so
    Hypothesis draws the same examples as for ``machine``."""
    def note_failure(self: Any) -> None:
        if type(self).run_stats.first_failure_s is None:
            cpu_at_failure.append(time.process_time())
        machine._note_failure(self)

    def teardown(self: Any) -> None:
        machine.teardown(self)
        stats = type(self).run_stats
        if budget_s is not None and stats.first_failure_s is None and stats.started is not None \
                and time.monotonic() - stats.started >= budget_s:
            raise BudgetSpent()
    return type(machine.__name__, (machine,), {"teardown": teardown, "_note_failure": note_failure})


def rules_of(profile: str, without: tuple[str, ...]) -> frozenset[Rule]:
    return PROFILES[profile] - {Rule[name] for name in without}


def random_config(rng: random.Random, target: object, profile: str = CHAPTERS,
                  without: tuple[str, ...] = ()) -> Config:
    n = rng.randint(3, 5)
    rf = rng.randint(2, n)
    brokers = tuple(range(1, n + 1))
    rules = rules_of(profile, without)
    strategies = ("none",) if Rule.LAST_KNOWN_LEADER in rules else UNCLEAN_RECOVERY_STRATEGIES
    return Config(brokers=brokers, assignment=brokers[:rf], min_isr=rng.randint(1, rf),
                  unclean_recovery=rng.choice(strategies),
                  unclean_leader_election=rng.random() < 0.5,
                  variants=frozenset({target}) if isinstance(target, Variant) else frozenset(),
                  profile=profile, rules=rules)


def random_walk_run(target: object, seed: int, budget_s: float, steps: int,
                    profile: str = CHAPTERS, without: tuple[str, ...] = ()) -> Optional[float]:
    """Seconds until a plain uniform walk, through the same lockstep check as the
    machine, fails, or None within the budget."""
    rng = random.Random(seed)
    t0 = time.monotonic()
    while time.monotonic() - t0 < budget_s:
        config = random_config(rng, target, profile, without)
        lockstep = LockStep(Subject.at(config, bugs=() if isinstance(target, Variant) else {target}))
        walk_rng = random.Random(rng.randrange(2**32))
        verdict = lockstep.check()
        for _ in range(steps):
            actions = within_budget(lockstep.state)
            if verdict is not None or not actions:
                break
            verdict = lockstep.step(choose(actions, walk_rng, "uniform"))
        if verdict is not None:
            return time.monotonic() - t0
    return None


def measure(target: object, seed: int, examples: int, steps: int, shrink: bool = True, profile: str = CHAPTERS,
            without: tuple[str, ...] = ()) -> tuple[dict[str, Any], Optional[float]]:
    """One seed of one target: the Hypothesis run, then the random walk given the
    time Hypothesis needed (or all of it when Hypothesis did not find it)."""
    run = hypothesis_run(target, seed, examples, steps, shrink, profile, without)
    walk = random_walk_run(target, seed, (run["time"] if run["found"] else run["elapsed"]) or 1.0, steps,
                           profile, without)
    return run, walk


def median(xs: list[Optional[float]]) -> Optional[float]:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def most_common(xs: list) -> str:
    vals = [x for x in xs if x is not None]
    return Counter(vals).most_common(1)[0][0] if vals else "-"


def fmt(x: Optional[float], spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def print_row(target: object, runs: list[dict[str, Any]], walks: list[Optional[float]]) -> None:
    """One table row: the target's Hypothesis runs and random walks over the seeds."""
    minimal = MINIMAL.get(target) if isinstance(target, Variant) else None  # type: ignore[call-overload]
    print(f"{kind_of(target) + ' ' + target.name:45} {sum(int(r['found'] or 0) for r in runs):>3}/{len(runs):<2} "  # type: ignore[attr-defined]
          f"{fmt(median([r['time'] for r in runs])):>9} {fmt(median([r['examples'] for r in runs]), '.0f'):>9} "
          f"{fmt(median([r['shrunk'] for r in runs]), '.0f'):>7} {fmt(median([r['reduced'] for r in runs]), '.0f'):>8} "
          f"{most_common([r.get('reduced_on') for r in runs]):>10} "
          f"{(str(len(minimal.actions)) if minimal else '-'):>8} "
          f"{sum(w is not None for w in walks):>8}/{len(walks):<2} {fmt(median(walks)):>7}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--examples", type=int, default=1500, help="Hypothesis example budget per run")
    ap.add_argument("--steps", type=int, default=400, help="steps per example / per random walk")
    ap.add_argument("--jobs", type=int, default=1, help="(target, seed) pairs measured at once")
    ap.add_argument("--variant", action="append", default=[], help="only these variants (repeatable)")
    ap.add_argument("--bug", action="append", default=[], help="only these SUT bugs (repeatable)")
    ap.add_argument("--no-bugs", action="store_true", help="variants only")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds run are FIRST_SEED .. FIRST_SEED+SEEDS-1 (to add seeds to an earlier run)")
    ap.add_argument("--no-shrink", action="store_true",
                    help="skip Hypothesis's shrinking (most of the run's time) and reduce the unshrunk trace; "
                         "the shrunk column is then empty")
    ap.add_argument("--raw", metavar="FILE", help="also append one JSON line per (target, seed) to FILE")
    ap.add_argument("--profile", default=CHAPTERS, choices=list(PROFILES),
                    help="whose rules the model and the SUT follow")
    ap.add_argument("--without", action="append", default=[], choices=[r.name for r in Rule], metavar="RULE",
                    help="a rule of the profile switched off (repeatable)")
    ap.add_argument("--from-raw", metavar="FILE", nargs="+",
                    help="run nothing: print the table of the JSON lines of these --raw files")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "time_to_find")
    args = ap.parse_args()
    if args.from_raw:
        print_table(read_raw(args.from_raw))
        return

    targets: list[object] = [Variant[v] for v in args.variant] or ([] if args.bug else list(Variant))
    if not args.no_bugs:
        from sut.bugs import Bug
        targets += [Bug[b] for b in args.bug] or ([] if args.variant else list(Bug))

    print_header()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {t: [pool.submit(measure, t, seed, args.examples, args.steps, not args.no_shrink, args.profile,
                                   tuple(args.without))
                       for seed in seeds]
                   for t in targets}
        for target in targets:
            results = [f.result() for f in futures[target]]
            if args.raw:
                with open(args.raw, "a") as out:
                    for seed, (run, walk) in zip(seeds, results):
                        out.write(json.dumps({"target": target.name, "kind": kind_of(target), "seed": seed,  # type: ignore[attr-defined]
                                              "shrink": not args.no_shrink, "walk_s": walk, **run}) + "\n")
            print_row(target, [r for r, _ in results], [w for _, w in results])


def kind_of(target: object) -> str:
    return "variant" if isinstance(target, Variant) else "bug"


def print_header() -> None:
    header = (f"{'target':45} {'found':>6} {'median s':>9} {'examples':>9} {'shrunk':>7} {'reduced':>8} "
              f"{'reduced on':>10} {'minimal':>8} {'walk found':>11} {'walk s':>7}")
    print(header)
    print("-" * len(header), flush=True)


def read_raw(paths: list[str]) -> dict[object, list[dict[str, Any]]]:
    """The JSON lines of ``--raw`` files by target (in catalogue order), the last
    line of each (target, seed) winning. Raises SystemExit naming the file and
    line of a line that is not a measurement."""
    from sut.bugs import Bug
    by_key: dict[tuple[object, int], dict[str, Any]] = {}
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                    target = Variant[rec["target"]] if rec["kind"] == "variant" else Bug[rec["target"]]
                    by_key[(target, int(rec["seed"]))] = rec
                except (ValueError, KeyError, TypeError) as e:
                    raise SystemExit(f"{path}:{n}: not a time_to_find measurement ({type(e).__name__}: {e})")
    order = list(Variant) + list(Bug)
    out: dict[object, list[dict[str, Any]]] = {}
    for (target, _seed), rec in sorted(by_key.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        out.setdefault(target, []).append(rec)
    return out


def print_table(by_target: dict[object, list[dict[str, Any]]]) -> None:
    print_header()
    for target, recs in by_target.items():
        print_row(target, recs, [r["walk_s"] for r in recs])


if __name__ == "__main__":
    import results
    results.run(main)
