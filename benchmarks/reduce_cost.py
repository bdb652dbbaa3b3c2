"""What trace reduction (harness.reduce) costs and gains on long traces.

Usage:
  python benchmarks/reduce_cost.py [--walks 3] [--steps 400] [--seeds 200]

For each of a few protocol variants, weighted random walks (harness.random_walk,
no Hypothesis, so no shrinking) run on RF 3 of 4 brokers, MinISR 2, until a walk
breaks a property. Each such walk's trace, which is long and unshrunk, is then
reduced twice: within its configuration (``reduce_trace``), and with smaller
configurations tried too (``reduce_counterexample``). The table gives the walk's
length, both reduced lengths, the hand-written minimal scenario's length, each
reduction's wall-clock seconds, and the configurations the second one ended in.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import properties
from harness.minimal_scenarios import MINIMAL
from harness.random_walk import random_walk
from harness.reduce import reduce_counterexample, reduce_trace
from model import Config, Variant

VARIANTS = (Variant.HWM_ADVANCES_BELOW_MIN_ISR, Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR, Variant.NO_ELR,
            Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR)


def failing_walks(config: Config, walks: int, steps: int, seeds: int) -> list[list]:
    """Up to ``walks`` traces of weighted walks that end at a property violation."""
    out: list[list] = []
    for seed in range(seeds):
        trace = []
        for action, state in random_walk(config, steps, seed, policy="weighted"):
            trace.append(action)
            if properties.check_all(state):
                out.append(trace)
                break
        if len(out) == walks:
            break
    return out


def shape(config: Config) -> str:
    """``RF r/n MinISR m``: replicas, brokers and MinISR of ``config``."""
    return f"RF {len(config.assignment)}/{len(config.brokers)} MinISR {config.min_isr}"


def timed(fn, *args):  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    return fn(*args), time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=3, help="failing walks reduced per variant")
    ap.add_argument("--steps", type=int, default=400, help="steps per walk")
    ap.add_argument("--seeds", type=int, default=200, help="walk seeds tried per variant")
    args = ap.parse_args()
    header = (f"{'variant':40} {'walks':>5} {'walk steps':>10} {'reduced':>8} {'+config':>8} {'minimal':>8} "
              f"{'median s':>9} {'max s':>6} {'+config median s':>17} {'max s':>6}  configs reached")
    print(header)
    print("-" * len(header), flush=True)
    for variant in VARIANTS:
        config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, variants=frozenset({variant}))
        lengths, reduced, seconds, smaller, smaller_s, shapes = [], [], [], [], [], Counter()
        for trace in failing_walks(config, args.walks, args.steps, args.seeds):
            lengths.append(len(trace))
            within, s = timed(reduce_trace, trace, config)
            reduced.append(len(within))
            seconds.append(s)
            result, s = timed(reduce_counterexample, trace, config)
            smaller.append(len(result.trace))
            smaller_s.append(s)
            shapes[shape(result.config)] += 1
        if not lengths:
            print(f"{variant.name:40} {0:>5}   no walk failed", flush=True)
            continue
        print(f"{variant.name:40} {len(lengths):>5} {statistics.median(lengths):>10.0f} "
              f"{statistics.median(reduced):>8.0f} {statistics.median(smaller):>8.0f} "
              f"{len(MINIMAL[variant].actions):>8} {statistics.median(seconds):>9.1f} {max(seconds):>6.1f} "
              f"{statistics.median(smaller_s):>17.1f} {max(smaller_s):>6.1f}  "
              + ", ".join(f"{k} ×{v}" for k, v in shapes.most_common()), flush=True)


if __name__ == "__main__":
    main()
