"""Checked steps per second of a campaign on Spark against the local pool.

Usage: python benchmarks/spark_scaling.py [--seconds 40] [--seed 1] [--local 1 2]
                                          [--spark 'local[1]' 'local[2]' spark://HOST:PORT ...]

Runs the correct protocol + SUT only (every slot searches it for the whole
budget, as ``replicheck fuzz --correct-only`` does) with the explorer, no
corpus, once per pool: the local worker pool (``harness.workers``) with each
``--local`` size, and a Spark pool (``harness.spark_pool``) on each ``--spark``
master (its size: the executors' cores). Prints, per pool: its size, the wall
seconds of the campaign (Spark's start included), the worker seconds the units
ran, the checked steps, and checked steps per second — per worker second (what
one slot does) and over the campaign's wall clock (what the pool does, its
start-up included).
"""

from __future__ import annotations

import argparse
import time

from harness.campaign import all_targets
from harness.runner import run_campaign


def measure(seconds: float, seed: int, workers: int | None, master: str | None) -> tuple[int, float, float, int]:
    """(pool size, wall seconds, worker seconds, checked steps) of one campaign."""
    t0 = time.monotonic()
    result = run_campaign(all_targets(correct_only=True), seconds, workers, seed=seed, finish_s=2.0, master=master)
    wall = time.monotonic() - t0
    return result.workers, wall, sum(t.seconds for t in result.targets), sum(t.steps for t in result.targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="each campaign's budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--local", type=int, nargs="*", default=[1, 2], help="local pool sizes")
    parser.add_argument("--spark", nargs="*", default=["local[1]", "local[2]"], help="Spark master URLs")
    args = parser.parse_args()
    pools = [(f"local pool, {n} worker{'s' if n != 1 else ''}", n, None) for n in args.local] + \
        [(f"Spark {m}", None, m) for m in args.spark]
    print(f"correct protocol + SUT, explorer, {args.seconds:g} s per campaign, seed {args.seed}\n")
    print("| pool | size | wall s | worker s | checked steps | steps/s per worker s | steps/s over wall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, workers, master in pools:
        size, wall, worker_s, steps = measure(args.seconds, args.seed, workers, master)
        print(f"| {name} | {size} | {wall:.1f} | {worker_s:.1f} | {steps:,} | {steps / max(worker_s, 1e-9):,.0f} "
              f"| {steps / wall:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
