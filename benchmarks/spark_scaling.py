"""Checked steps per second of a campaign on Spark against the local pool, and
what it costs Spark to start a unit.

Usage: python benchmarks/spark_scaling.py [--seconds 40] [--seed 1] [--local 1 2]
                                          [--spark 'local[1]' 'local[2]' spark://HOST:PORT ...]
                                          [--standalone 1 2] [--starts 5]

Runs the correct protocol + SUT only (every slot searches it for the whole
budget, as ``replicheck fuzz --correct-only`` does) with the explorer, no
corpus, once per pool: the local worker pool (``campaign.workers``) with each
``--local`` size, a Spark pool (``campaign.spark_pool``) on each ``--spark``
master, and on a standalone master with each ``--standalone`` number of
one-core workers, started on 127.0.0.1 for it (``campaign.spark_standalone``;
needs Java; its start is not counted). A Spark pool's size is its executors'
cores. Prints, per pool: its size, the wall seconds of the campaign (Spark's
start included), the worker seconds the units ran, the checked steps, and
checked steps per second — per worker second (what one slot does) and over the
campaign's wall clock (what the pool does, its start-up included).

Then the unit start-up, per pool of one slot: ``--starts`` units in a row that
only say when they started, after the campaign's ``preload``; the seconds from
``submit`` to that moment for the first unit (Spark: a new Python worker, its
start, the shipped code, ``preload``; the local pool's process starts with the
pool, before the first ``submit``, so only part of it shows) and the median of
the others (a warm worker: Spark's job and task scheduling, the task's
pickling; the pipe locally).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from contextlib import ExitStack
from typing import Any, Optional

from campaign.plan import Campaign
from campaign.targets import all_targets

from campaign.unit import preload
from campaign.runner import run_campaign


def measure(seconds: float, seed: int, workers: int | None, master: str | None) -> tuple[int, float, float, int]:
    """(pool size, wall seconds, worker seconds, checked steps) of one campaign."""
    t0 = time.monotonic()
    result = run_campaign(Campaign(all_targets(correct_only=True), budget_s=seconds, workers=workers, seed=seed, master=master, finish_s=2.0))
    wall = time.monotonic() - t0
    return result.workers, wall, sum(t.seconds for t in result.targets), sum(t.steps for t in result.targets)


def _started(unit: Any, progress: Any, worker: str) -> float:
    """A unit that only says when it started (wall clock: the same machine's)."""
    return time.time()


def unit_starts(master: Optional[str], starts: int) -> tuple[float, float]:
    """(first, median of the others) seconds from ``submit`` to the unit
    starting, ``starts`` units in a row on one slot: a local worker process
    (``master`` None) or a Spark pool of one slot on ``master``."""
    from campaign.workers import DONE, WorkerPool
    if master is None:
        pool: Any = WorkerPool(1, _started, setup=preload)
    else:
        from campaign.spark_pool import SparkPool
        plan = Campaign(all_targets()[:1], budget_s=60.0, workers=1, master=master)
        pool = SparkPool(plan, _started, setup=preload, app_name="replicheck-bench")
    delays = []
    try:
        for i in range(starts):
            submitted = time.time()
            pool.submit(0, i)
            events: list = []
            while not events:
                events = [e for e in pool.wait(60) if e.kind != "progress"]
            if events[0].kind != DONE:
                raise RuntimeError(f"the probe unit was lost: {events[0].value}")
            delays.append(events[0].value - submitted)
    finally:
        pool.close()
    return delays[0], statistics.median(delays[1:]) if len(delays) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="each campaign's budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--local", type=int, nargs="*", default=[1, 2], help="local pool sizes")
    parser.add_argument("--spark", nargs="*", default=["local[1]", "local[2]"], help="Spark master URLs")
    parser.add_argument("--standalone", type=int, nargs="*", default=[1, 2],
                        help="one-core workers of a standalone master started on 127.0.0.1, per pool")
    parser.add_argument("--starts", type=int, default=5, help="probe units per pool for the start-up (>= 2)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(parser, "spark_scaling")
    args = parser.parse_args()
    from campaign.spark_standalone import LoopbackCluster
    with ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="replicheck-bench-"))

        def standalone(n: int) -> str:
            cluster = stack.enter_context(LoopbackCluster(f"{folder}/probe{n}", workers=n, cores=1))
            return cluster.master  # type: ignore[return-value]

        def pools() -> Any:
            for n in args.local:
                yield f"local pool, {n} worker{'s' if n != 1 else ''}", n, None
            for m in args.spark:
                yield f"Spark {m}", None, m
            for n in args.standalone:  # one cluster at a time: the machine's cores are the clusters'
                with ExitStack() as one:
                    cluster = one.enter_context(LoopbackCluster(f"{folder}/cluster{n}", workers=n, cores=1))
                    yield f"Spark standalone, {n} one-core worker{'s' if n != 1 else ''}", None, cluster.master

        print(f"correct protocol + SUT, explorer, {args.seconds:g} s per campaign, seed {args.seed}\n")
        print("| pool | size | wall s | worker s | checked steps | steps/s per worker s | steps/s over wall |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, workers, master in pools():
            size, wall, worker_s, steps = measure(args.seconds, args.seed, workers, master)
            print(f"| {name} | {size} | {wall:.1f} | {worker_s:.1f} | {steps:,} | "
                  f"{steps / max(worker_s, 1e-9):,.0f} | {steps / wall:,.0f} |", flush=True)

        print(f"\nunit start-up, one slot, {args.starts} units in a row (seconds from submit to the unit "
              f"starting)\n")
        print("| pool | first unit s | later units s (median) |")
        print("|---|---:|---:|")
        probes = [("local pool", None)] + [(f"Spark {m}", m) for m in args.spark]
        if args.standalone:
            probes.append(("Spark standalone, 1 one-core worker", standalone(1)))
        for name, master in probes:
            first, later = unit_starts(master, args.starts)
            print(f"| {name} | {first:.2f} | {later:.3f} |", flush=True)


if __name__ == "__main__":
    import results
    results.run(main)
