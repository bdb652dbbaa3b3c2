"""Time to find each SUT bug with Apache Kafka's own components in the loop, against
the Python SUT, both under the Kafka profile.

Usage:
  python benchmarks/kafka_time_to_find.py [--seeds 3] [--first-seed 0] [--examples 500] [--steps 200]
                                          [--budget-seconds 300] [--jobs 2] [--bug NAME ...]
                                          [--reduce] [--raw FILE] [--cpu-time]
  python benchmarks/kafka_time_to_find.py --from-raw FILE [FILE ...] [--cpu-time]

The implementation "kafka" (``kafka_bridge.implementation``) is the SUT's brokers
with Kafka's controller managers and Kafka's ``Partition`` (over its
``UnifiedLog`` and epoch cache) in place of the SUT's (``kafka_bridge.COMPONENTS``).
A ``sut.bugs.Bug`` whose code path (``sut.bugs.DOCS[bug].where``, the file
holding its ``Bug.X in self.bugs`` guard) is in the brokers' plumbing (the
fetcher, the metadata replay, the broker, the replica manager) still runs with
Kafka's components in place, so it can be switched on there:
``kafka_bridge.implementation(config, frozenset({bug}))``. A bug in a replaced
component (the SUT's controller, its change builder, its replica, log and epoch
cache) has no equivalent: Kafka's own class runs there, and its row says which.

For each bug and each seed, ``time_to_find.hypothesis_run`` runs the
ReplicationMachine under the whole Kafka profile (``Config(profile="kafka-4.4.0")``,
no variant, every rule: what ``kafka_bridge.not_applicable`` requires), detached
at findings as a Kafka campaign is (``check.implementations.subject_for``:
where the model breaks a property, a known finding of the profile, the
implementation is detached and the example goes on with the model alone, so a
finding never counts as finding the bug), generation only (no shrinking): once
with the Python SUT with the bug, once with the implementation "kafka" with the
bug. Both runs of a (bug, seed) use one machine name, so they draw the same
examples (generation follows the model, not the implementation) until one
fails. Each run has at most --examples examples of up to --steps steps: the
budget that binds, so whether a seed finds a bug does not depend on the
machine's speed or load; --budget-seconds is a cap (no example starts after
that many seconds of a run) that binds only on a slow or heavily loaded machine
(the summary lines count the runs it stopped; 500 examples take 50-70 s on one
idle core). The default run (3 seeds, 102 runs) takes about 20 minutes of CPU
time in all: about 11 minutes with --jobs 2 on an idle 2-core machine.

Prints one row per bug: where its code path is, then for the Python SUT ("SUT")
and for Kafka's components ("Kafka") found/seeds, the median seconds and
examples to the first failure (over the seeds that found it), and the ratio of
the median seconds (Kafka's over the Python SUT's). The note says when the code
path is Kafka's, when even the Python SUT never found the bug under the Kafka
profile, and when a first failure was not a divergence (an exception from the
implementation is a harness error), and each seed where the two runs part (one
found the bug and the other not, or at another example). Then, per
implementation, the runs, their seconds and checked steps, the examples
detached at a finding, and the runs the seconds cap stopped.

Each worker process starts the JVM and runs a few short examples with each
implementation before it measures anything, so no run pays for loading classes.
``--jobs N`` measures N runs at once in separate processes; times are per
process, one-core figures on a machine with N free cores. The two runs of a
(bug, seed) are submitted one after the other, so with --jobs 2 they run side by
side, under the same load. ``--cpu-time`` gives each process's CPU seconds (the
JVM's threads included) instead of wall-clock ones: the figure to read on a
machine that is not idle. ``--reduce`` also reduces each first failure with the
implementation that failed (``check.reduce``; not counted in the time; the
note gives the median reduced lengths). ``--raw`` keeps every (bug,
implementation, seed) measurement as a JSON line, and ``--from-raw`` prints the
table of such files. Exits with status 2 when Kafka's
classes cannot be loaded (``make kafka-jars``; ``pip install -e '.[kafka]'``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from time_to_find import fmt, hypothesis_run, median  # noqa: E402

from check.implementations import KAFKA, subject_for, unavailable  # noqa: E402
from sut.bugs import DOCS, Bug  # noqa: E402

PYTHON_SUT = "python"

#: SUT files a field of ``sut.components.Components`` replaces, with the Kafka
#: class that runs in their place when ``kafka_bridge.COMPONENTS`` sets that field.
#: Kafka's controller takes the SUT's controller with everything behind it: its
#: managers and its change builder (Kafka's controller builds every change with
#: Kafka's own ``PartitionChangeBuilder``).
REPLACED: dict[str, tuple[str, str]] = {
    "sut/controller.py": ("controller", "org.apache.kafka.controller.QuorumController's managers"),
    "sut/cluster_control.py": ("controller", "org.apache.kafka.controller.ClusterControlManager"),
    "sut/replication_control.py": ("controller", "org.apache.kafka.controller.ReplicationControlManager"),
    "sut/change_builder.py": ("controller", "org.apache.kafka.controller.PartitionChangeBuilder"),
    "sut/epoch_cache.py": ("epoch_cache", "org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache"),
    "sut/partition.py": ("partition", "kafka.cluster.Partition"),
    "sut/log.py": ("partition", "org.apache.kafka.storage.internals.log.UnifiedLog"),
    "sut/fetcher.py": ("fetcher", "kafka.server.AbstractFetcherThread"),
}


def code_path(bug: Bug) -> str:
    """The file and class of the bug's guard, from its ``DOCS`` entry
    (``sut/partition.py Partition``)."""
    where = DOCS[bug].where.split()
    return f"{where[0]} {where[1].split('.')[0]}" if len(where) > 1 else where[0]


def kafkas_class(bug: Bug) -> Optional[str]:
    """The Kafka class that runs in place of the bug's code path in the
    implementation "kafka" (None: the SUT's code path still runs there). A
    component ``kafka_bridge.COMPONENTS`` replaces that ``REPLACED`` does not know
    replaces the module of the SUT's own, under the bridge's class's name."""
    import attrs

    from kafka_bridge import COMPONENTS
    from sut.components import PYTHON
    path = DOCS[bug].where.split()[0]
    replaced = {f.name for f in attrs.fields(type(PYTHON))
                if getattr(COMPONENTS, f.name) is not getattr(PYTHON, f.name)}
    if path in REPLACED:
        field, kafka_class = REPLACED[path]
        return kafka_class if field in replaced else None
    for field in replaced:
        if f"{getattr(PYTHON, field).__module__.replace('.', '/')}.py" == path:
            theirs = getattr(COMPONENTS, field)
            return f"{theirs.__module__}.{theirs.__qualname__}"
    return None


def warm_up() -> None:
    """A worker's start: the JVM, Kafka's classes and a few short examples with
    each implementation, so that no measured run pays for loading them."""
    import kafka_bridge
    kafka_bridge.start()
    for implementation in (KAFKA, PYTHON_SUT):
        measure(Bug.PRODUCE_IGNORES_MIN_ISR, implementation, -1, examples=3, steps=30, budget_s=5.0, reduce=False)


def measure(bug: Bug, implementation: str, seed: int, examples: int, steps: int, budget_s: float,
            reduce: bool) -> dict[str, Any]:
    """One seed of one bug with the Python SUT or Kafka's components, run as the
    implementation "kafka" is run (``subject_for``: profile, detached at
    findings)."""
    kafka = subject_for(KAFKA)
    return hypothesis_run(bug, seed, examples, steps, shrink=False, profile=kafka.profile,
                          implementation=None if implementation == PYTHON_SUT else KAFKA,
                          detach_at_findings=kafka.detach_at_findings, reduce=reduce, budget_s=budget_s)


def ratio(kafka_s: Optional[float], python_s: Optional[float]) -> str:
    if kafka_s is None or python_s is None or python_s <= 0:
        return "-"
    return f"{kafka_s / python_s:.1f}x"


def header(clock: str = "time") -> str:
    unit = "s" if clock == "time" else "cpu s"
    return (f"{'bug':44} {'code path':52} {'SUT found':>9} {'SUT ' + unit:>9} {'SUT ex':>6}  "
            f"{'Kafka found':>11} {'Kafka ' + unit:>11} {'Kafka ex':>8} {'ratio':>6}  note")


def outcome(rec: dict[str, Any]) -> str:
    """How one run ended: the examples to its first failure, or why it found none."""
    if rec["found"]:
        return f"{rec['examples']} examples"
    return "stopped by the seconds cap" if rec["budget_spent"] else "not found"


def row(bug: Bug, runs: dict[str, list[dict[str, Any]]], clock: str = "time") -> str:
    """One table row from the bug's runs by implementation ("python", "kafka");
    ``clock``: the measurement whose seconds it gives ("time", wall-clock, or
    "cpu_time")."""
    def cols(recs: list[dict[str, Any]]) -> tuple[str, str, str, Optional[float]]:
        t = median([r.get(clock) for r in recs])
        return (f"{sum(int(r['found']) for r in recs)}/{len(recs)}", fmt(t),
                fmt(median([r["examples"] for r in recs]), ".0f"), t)

    py, kf = runs.get(PYTHON_SUT, []), runs.get(KAFKA, [])
    notes = []
    p_found, p_s, p_ex, p_t = cols(py) if py else ("-", "-", "-", None)
    replaced = kafkas_class(bug)
    if replaced is not None:
        notes.append(f"code path is Kafka's: {replaced}")
        k_found, k_s, k_ex, k_t = "-", "-", "-", None
    else:
        k_found, k_s, k_ex, k_t = cols(kf) if kf else ("-", "-", "-", None)
        # the two runs of a seed draw the same examples: say where they part
        by_seed = {r["seed"]: r for r in py}
        for k in kf:
            p = by_seed.get(k["seed"])
            if p is not None and (p["found"], p["examples"]) != (k["found"], k["examples"]):
                notes.append(f"seed {k['seed']}: SUT {outcome(p)}, Kafka {outcome(k)}")
    reduced = [(name, median([r.get("reduced") for r in recs])) for name, recs in (("SUT", py), ("Kafka", kf))]
    if any(n is not None for _, n in reduced):
        notes.append("reduced to " + ", ".join(f"{name} {fmt(n, '.0f')}" for name, n in reduced) + " steps (median)")
    if py and not any(r["found"] for r in py):
        notes.append("never found with the Python SUT under the Kafka profile")
    for name, recs in ((PYTHON_SUT, py), (KAFKA, kf)):
        kinds = sorted({r["kind"] for r in recs if r["kind"] not in (None, "divergence", "outcome", "enablement")})
        if kinds:
            notes.append(f"{name}: first failure {', '.join(kinds)}")
    return (f"{bug.name:44} {code_path(bug):52} {p_found:>9} {p_s:>9} {p_ex:>6}  "
            f"{k_found:>11} {k_s:>11} {k_ex:>8} {ratio(k_t, p_t):>6}  {'; '.join(notes)}".rstrip())


def print_table(records: list[dict[str, Any]], clock: str = "time") -> None:
    """The table of measurements (the last one of each (bug, implementation, seed)
    wins), bugs in catalogue order, in seconds of ``clock`` (see ``row``)."""
    by_key = {(r["bug"], r["implementation"], r["seed"]): r for r in records}
    print(header(clock))
    print("-" * len(header(clock)), flush=True)
    for bug in Bug:
        runs: dict[str, list[dict[str, Any]]] = {}
        for (name, implementation, _seed), rec in sorted(by_key.items(), key=lambda kv: kv[0][2]):
            if name == bug.name:
                runs.setdefault(implementation, []).append(rec)
        if runs:
            print(row(bug, runs, clock), flush=True)
    for implementation in (PYTHON_SUT, KAFKA):
        recs = [r for r in by_key.values() if r["implementation"] == implementation]
        if recs:
            print(f"{implementation}: {len(recs)} runs, {sum(r['elapsed'] for r in recs):,.0f} s, "
                  f"{sum(r.get('steps') or 0 for r in recs):,} checked steps, "
                  f"{sum(r['detached'] for r in recs):,} examples detached at a finding, "
                  f"{sum(bool(r['budget_spent']) for r in recs)} runs stopped by the seconds cap")


def read_raw(paths: list[str]) -> list[dict[str, Any]]:
    """The JSON lines of ``--raw`` files. Raises SystemExit naming the file and
    line of a line that is not a measurement."""
    records = []
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                    Bug[rec["bug"]]
                    if rec["implementation"] not in (PYTHON_SUT, KAFKA):
                        raise ValueError(f"implementation {rec['implementation']!r}")
                    int(rec["seed"])
                except (ValueError, KeyError, TypeError) as e:
                    raise SystemExit(f"{path}:{n}: not a kafka_time_to_find measurement ({type(e).__name__}: {e})")
                records.append(rec)
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds run are FIRST_SEED .. FIRST_SEED+SEEDS-1 (to add seeds to an earlier run)")
    ap.add_argument("--examples", type=int, default=500, help="Hypothesis example budget per run")
    ap.add_argument("--steps", type=int, default=200, help="steps per example")
    ap.add_argument("--budget-seconds", type=float, default=300.0,
                    help="a cap: no example starts after this many seconds of a run")
    ap.add_argument("--jobs", type=int, default=2, help="runs measured at once (processes)")
    ap.add_argument("--bug", action="append", default=[], choices=[b.name for b in Bug], metavar="NAME",
                    help="only these bugs (repeatable)")
    ap.add_argument("--reduce", action="store_true", help="reduce each first failure (not counted in the time)")
    ap.add_argument("--raw", metavar="FILE", help="also append one JSON line per (bug, implementation, seed) to FILE")
    ap.add_argument("--from-raw", metavar="FILE", nargs="+",
                    help="run nothing: print the table of the JSON lines of these --raw files")
    ap.add_argument("--cpu-time", action="store_true",
                    help="the table's seconds are each process's CPU seconds, not wall-clock ones")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_time_to_find")
    args = ap.parse_args()
    clock = "cpu_time" if args.cpu_time else "time"
    if args.from_raw:
        print_table(read_raw(args.from_raw), clock)
        return
    why = unavailable(KAFKA)
    if why is not None:
        print(f"kafka_time_to_find: Kafka's classes are unavailable: {why}", file=sys.stderr)
        sys.exit(2)

    bugs = [Bug[b] for b in args.bug] or list(Bug)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(bug, implementation, seed) for bug in bugs for seed in seeds
            for implementation in (KAFKA, PYTHON_SUT) if implementation == PYTHON_SUT or kafkas_class(bug) is None]
    # the JVM is started in each worker, never in this process (spawned, not forked)
    with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn"), initializer=warm_up) as pool:
        futures = [pool.submit(measure, bug, implementation, seed, args.examples, args.steps, args.budget_seconds,
                               args.reduce) for bug, implementation, seed in jobs]
        records = []
        for (bug, implementation, seed), future in zip(jobs, futures):
            rec = {"bug": bug.name, "implementation": implementation, "seed": seed, "examples_budget": args.examples,
                   "steps_budget": args.steps, "budget_seconds": args.budget_seconds, **future.result()}
            records.append(rec)
            if args.raw:
                with open(args.raw, "a") as out:
                    out.write(json.dumps(rec) + "\n")
    print_table(records, clock)


if __name__ == "__main__":
    import results
    results.run(main)
