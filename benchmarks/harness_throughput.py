"""Checked steps per second of the ReplicationMachine, and where the time goes.

Usage: python benchmarks/harness_throughput.py [--examples 300] [--steps 100] [--workers 1 2]

A checked step = the model's step + the SUT's apply + every property + the
outcome and observation comparisons + the enablement probes. Runs the machine under Hypothesis (generate phase only, as
a fuzzing campaign spends most of its time) with the SUT compared and without,
on one worker and on several worker processes (like ``pytest -n 2``), and
prints the throughput and the share of time in each part. Shares come from
timing wrappers around the parts; "hypothesis + harness" is the rest.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from collections import defaultdict

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import check.lockstep as hl
import check.machine as hm
import properties
from check.subject import Subject

PARTS = ("enabled_actions", "model step", "properties", "SUT apply", "SUT observe")


def timed(timings: dict[str, float], name: str, fn):
    """``fn``, adding the wall seconds of each call to ``timings[name]`` (a
    ``defaultdict(float)``); benchmarks/explore_throughput.py times its parts so too."""
    def call(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timings[name] += time.perf_counter() - t0
    return call


def _instrument(timings: dict[str, float]) -> None:
    hm.enabled_actions = timed(timings, "enabled_actions", hm.enabled_actions)
    hl.step = timed(timings, "model step", hl.step)
    hl.properties = type("P", (), {"check_all": staticmethod(timed(timings, "properties", properties.check_all))})
    import sut
    sut.Cluster.apply = timed(timings, "SUT apply", sut.Cluster.apply)
    sut.Cluster.observe = timed(timings, "SUT observe", sut.Cluster.observe)


def run_one(args: tuple[bool, int, int, int]) -> tuple[int, float, dict[str, float]]:
    compare_sut, examples, steps, seed = args
    timings: dict[str, float] = defaultdict(float)
    _instrument(timings)
    machine = hm.machine_for(Subject(compare=compare_sut), name=f"Throughput_{int(compare_sut)}_{seed}")
    t0 = time.perf_counter()
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, derandomize=True, database=None, deadline=None,
        suppress_health_check=list(HealthCheck), phases=[Phase.generate]))
    return machine.run_stats.steps, time.perf_counter() - t0, dict(timings)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "harness_throughput")
    args = ap.parse_args()
    header = f"{'SUT compared':12} {'workers':>7} {'checked steps/s':>16} {'per worker':>11}  " + \
             "  ".join(f"{p:>12}" for p in (*PARTS, "hypothesis+harness"))
    print(header)
    print("-" * len(header), flush=True)
    for compare_sut in (True, False):
        for workers in args.workers:
            jobs = [(compare_sut, args.examples, args.steps, seed) for seed in range(workers)]
            t0 = time.perf_counter()
            with mp.get_context("spawn").Pool(workers) as pool:
                results = pool.map(run_one, jobs)
            wall = time.perf_counter() - t0
            steps = sum(r[0] for r in results)
            busy = sum(r[1] for r in results)
            parts = defaultdict(float)
            for _, _, t in results:
                for k, v in t.items():
                    parts[k] += v
            rest = busy - sum(parts.values())
            shares = [100 * parts.get(p, 0.0) / busy for p in PARTS] + [100 * rest / busy]
            print(f"{str(compare_sut):12} {workers:7} {steps / wall:16,.0f} {steps / wall / workers:11,.0f}  "
                  + "  ".join(f"{s:11.1f}%" for s in shares), flush=True)


if __name__ == "__main__":
    import results
    results.run(main)
