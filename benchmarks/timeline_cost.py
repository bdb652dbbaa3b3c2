"""What recording a counterexample's timeline (check.timeline) costs.

Usage: python benchmarks/timeline_cost.py [--lengths 10 100 400] [--repeat 5]

A corpus row's ``timeline`` column is its trace replayed once more with the
implementation under test (``replay(..., timeline=True)``). For weighted random
walks of each length (RF 3 of 4 brokers, MinISR 2, the correct protocol, the
bundled SUT compared), the table gives the replay's time without and with the
timeline (median of ``--repeat``), and the Parquet size (pyarrow's default
codec, as the corpus writes) of the trace's ``steps`` alone and of its ``timeline``.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import pyarrow as pa
import pyarrow.parquet as pq

from check.random_walk import random_walk
from check.replay import replay
from store.schema import STEP, TIMELINE_STEP
from store.codec import encode_steps, encode_timeline
from check.subject import Subject
from model import Config

CONFIG = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2)


def parquet_bytes(name: str, kind: pa.DataType, value: list) -> int:
    buf = io.BytesIO()
    pq.write_table(pa.table({name: pa.array([value], pa.list_(kind))}), buf)  # pyarrow's default codec, as the corpus writes
    return buf.tell()


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 400])
    ap.add_argument("--repeat", type=int, default=5)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "timeline_cost")
    args = ap.parse_args()
    header = (f"{'steps':>6} {'replay ms':>10} {'+ timeline ms':>14} {'per step µs':>12} "
              f"{'steps bytes':>12} {'timeline bytes':>15}")
    print(header)
    print("-" * len(header))
    for n in args.lengths:
        trace = tuple(a for a, _ in random_walk(CONFIG, n, seed=n, policy="weighted"))
        plain = timed(lambda: replay(trace, Subject.at(CONFIG, compare=True)), args.repeat)
        with_tl = timed(lambda: replay(trace, Subject.at(CONFIG, compare=True), timeline=True), args.repeat)
        moments = replay(trace, Subject.at(CONFIG, compare=True), timeline=True).timeline
        assert len(moments) == len(trace), "the walk must replay to its end"
        print(f"{len(trace):>6} {plain * 1e3:>10.1f} {with_tl * 1e3:>14.1f} "
              f"{(with_tl - plain) / len(trace) * 1e6:>12.1f} "
              f"{parquet_bytes('steps', STEP, encode_steps(trace)):>12,} "
              f"{parquet_bytes('timeline', TIMELINE_STEP, encode_timeline(moments)):>15,}")


if __name__ == "__main__":
    import results
    results.run(main)
