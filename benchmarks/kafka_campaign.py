"""A campaign with Apache Kafka's own components in lockstep with the model.

Usage: python benchmarks/kafka_campaign.py [--minutes 10] [--workers 2]

Each worker runs the machine with the implementation "kafka" (``kafka_bridge``)
as the campaign target ``implementation:kafka`` does (``check.implementations.
subject_for``: the Kafka profile, detached at findings: where the model
breaks a property, a known finding of the profile, Kafka's code is detached and
the example goes on with the model alone), in rounds of Hypothesis examples
(generation and shrinking, a fresh seed per round) until the time is up. A
failure is a disagreement between Kafka's code and the model: it is reduced with
the same implementation and printed (config, trace, report). The table gives,
per worker, the rounds, examples and checked steps, steps per second, the
examples detached at a finding, and the disagreements found; then how often
each finding was reached.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from collections import Counter


def work(args: tuple[int, float]) -> tuple[int, int, int, float, list[str], dict[str, int]]:
    worker, minutes = args
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    import kafka_bridge
    from check.failures import CheckFailed, findings_of
    from check.implementations import subject_for
    from check.machine import machine_for
    from check.refine import reduced as reduce_finding
    from check.subject import KAFKA

    kafka_bridge.start()
    subject = subject_for(KAFKA)
    machine = machine_for(subject, name=f"KafkaCampaign{worker}")
    deadline = time.monotonic() + minutes * 60
    rounds, found = 0, []
    t0 = time.perf_counter()
    while time.monotonic() < deadline:
        rounds += 1
        try:
            run_state_machine_as_test(machine, settings=settings(
                max_examples=100, stateful_step_count=100, deadline=None, database=None,
                suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                report_multiple_bugs=False, print_blob=False))
        except CheckFailed as e:
            # replayed and reduced with the run's own settings, as the campaign's rows are
            for f in findings_of(e, subject):
                reduced = reduce_finding(f, 60)
                found.append(f"worker {worker}, round {rounds}: {reduced.kind} after {len(reduced.trace)} steps\n"
                             f"config: {reduced.config!r}\ntrace: {list(reduced.trace)!r}\n{reduced.violation}")
    stats = machine.run_stats
    reached = {name: n for name, n in stats.event_counts.items() if name.startswith("finding reached")}
    return rounds, stats.examples, stats.steps, time.perf_counter() - t0, found, reached


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_campaign")
    args = ap.parse_args()
    jobs = [(w, args.minutes) for w in range(args.workers)]
    with mp.get_context("spawn").Pool(args.workers) as pool:
        results = pool.map(work, jobs)
    print(f"{'worker':>6} {'rounds':>7} {'examples':>9} {'checked steps':>14} {'steps/s':>8} "
          f"{'detached':>9} {'disagreements':>14}")
    print("-" * 74)
    reached: Counter = Counter()
    for w, (rounds, examples, steps, wall, found, findings) in enumerate(results):
        reached.update(findings)
        print(f"{w:>6} {rounds:>7,} {examples:>9,} {steps:>14,} {steps / wall:>8,.0f} {sum(findings.values()):>9,} "
              f"{len(found):>14}")
    for name, n in reached.most_common():
        print(f"  {n:>7,}  {name}")
    for result in results:
        for text in result[4]:
            print("\n" + text)


if __name__ == "__main__":
    import results
    results.run(main)
