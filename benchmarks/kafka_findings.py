"""The findings campaign: the ReplicationMachine under the Kafka profile, every
property checked after every step and the SUT compared with the model, over
several seeds; each failure reduced and attributed to the Kafka rules it needs.

Usage:
  python benchmarks/kafka_findings.py [--seeds 8] [--first-seed 0] [--examples 1500] [--steps 100]
                                      [--jobs 1] [--without RULE ...] [--no-sut] [--reduce-s 60]

Each seed is one derandomized machine run (the seed is folded into the machine's
name), generation only, up to --examples examples of up to --steps steps, with
the fault budget of the chapters (at most MinISR - 1 lossy shutdowns). When a
run fails, its trace is reduced (``check.reduce.reduce_counterexample``, at
most --reduce-s seconds: delta debugging, then smaller configurations), and
**attributed**: every rule of the profile is switched off in turn (the chapters'
rule in its place) and the reduced trace replayed; the rules without which it no
longer fails (or no longer runs) are the Kafka choices the failure needs. A
failure that needs no rule would be a failure of the chapters' protocol too.

``--without RULE`` runs the campaign with those rules off, to look past the
findings they cause. ``--jobs N`` runs N seeds at once in separate processes.

Prints one row per seed (examples and seconds to the failure, the properties, the
reduced length and configuration, the rules it needs) and then one row per
distinct (properties, rules): a finding and how often it was found.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from check.failures import PropertyViolated, SutDiverged

from check.machine import machine_for
from check.reduce import reduce_counterexample
from check.replay import TraceNotEnabled, replay
from check.subject import Subject
from model import KAFKA, PROFILES, rules_without, AdvanceTime, Config, Rule


def attribute(trace: tuple, config: Config, compare_sut: bool) -> list[str]:
    """The rules in force in ``config`` without which ``trace`` no longer fails (a
    rule switched off with the rules that require it, ``RuleDoc.requires``).
    Without the clock (Rule.REPLICA_LAG_TIME) the trace's ``AdvanceTime`` steps
    are left out: time does not pass there, and a step it enabled runs or not on
    the clock-less rules."""
    needed = []
    for rule in sorted(config.rules, key=lambda r: r.name):
        without = rules_without(config.rules, rule)
        timed = trace if Rule.REPLICA_LAG_TIME in without else tuple(a for a in trace if not isinstance(a, AdvanceTime))
        try:
            if not replay(timed, Subject.at(attrs.evolve(config, rules=without), compare=compare_sut)).failed:
                needed.append(rule.name)
        except TraceNotEnabled:
            needed.append(rule.name)
    return needed


def describe(config: Config) -> str:
    """RF / brokers, MinISR, and unclean leader election when on."""
    return (f"RF {len(config.assignment)}/{len(config.brokers)}, MinISR {config.min_isr}"
            + (", unclean election" if config.unclean_leader_election else ""))


def run_seed(seed: int, examples: int, steps: int, without: tuple[str, ...], compare_sut: bool,
             reduce_s: float) -> dict[str, Any]:
    rules = PROFILES[KAFKA] - {Rule[name] for name in without}
    machine = machine_for(Subject(profile=KAFKA, rules=rules, compare=compare_sut), name=f"KafkaFindings_{seed}")
    t0 = time.monotonic()
    out: dict[str, Any] = {"seed": seed, "found": False, "examples": None, "seconds": None}
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=steps, derandomize=True, database=None, deadline=None,
            suppress_health_check=list(HealthCheck), phases=[Phase.generate]))
    except (PropertyViolated, SutDiverged) as failure:
        stats = machine.run_stats
        if isinstance(failure, PropertyViolated):
            config, names = failure.state.config, sorted(set(failure.property_names))
        else:
            config, names = failure.model_state.config, ["SutDiffersFromModel"]
        reduced = reduce_counterexample(failure.trace, Subject.at(config, compare=compare_sut), max_seconds=reduce_s, prop=None if names == ["SutDiffersFromModel"] else names[0])
        final = replay(reduced.trace, Subject.at(reduced.config, compare=compare_sut))
        out.update(found=True, examples=stats.first_failure_examples, seconds=stats.first_failure_s,
                   properties=list(final.property_names) or names, steps=len(failure.trace),
                   reduced=len(reduced.trace), config=describe(reduced.config),
                   trace=[repr(a) for a in reduced.trace],
                   rules=attribute(tuple(reduced.trace), reduced.config, compare_sut))
    out["elapsed"] = time.monotonic() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--examples", type=int, default=1500)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--without", action="append", default=[], choices=[r.name for r in Rule], metavar="RULE")
    ap.add_argument("--no-sut", action="store_true", help="check the properties on the model only")
    ap.add_argument("--reduce-s", type=float, default=60.0)
    ap.add_argument("--traces", action="store_true", help="print each reduced trace")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_findings")
    args = ap.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(s, args.examples, args.steps, tuple(args.without), not args.no_sut, args.reduce_s) for s in seeds]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_seed, *zip(*jobs)))
    else:
        results = [run_seed(*j) for j in jobs]
    print(f"Kafka profile ({KAFKA}){' without ' + ', '.join(args.without) if args.without else ''}: "
          f"{args.examples} examples of up to {args.steps} steps per seed\n")
    print("| seed | examples | s | properties | shrunk from | reduced steps | configuration | rules it needs |")
    print("|---:|---:|---:|---|---:|---:|---|---|")
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        if not r["found"]:
            print(f"| {r['seed']} | - | - | none in {r['elapsed']:.0f} s | | | | |")
            continue
        print(f"| {r['seed']} | {r['examples']} | {r['seconds']:.1f} | {', '.join(r['properties'])} | {r['steps']} | "
              f"{r['reduced']} | {r['config']} | {', '.join(r['rules']) or '(none)'} |")
        groups[(tuple(r["properties"]), tuple(r["rules"]))].append(r)
        if args.traces:
            print("\n".join(f"|   | {i + 1}. {a} |" for i, a in enumerate(r["trace"])))
    print("\n| properties | rules it needs | seeds | shortest reduced |")
    print("|---|---|---:|---:|")
    for (props, rules), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"| {', '.join(props)} | {', '.join(rules) or '(none)'} | {len(rs)}/{len(results)} | "
              f"{min(r['reduced'] for r in rs)} |")


if __name__ == "__main__":
    import results
    results.run(main)
