"""SUT throughput beside the model's: steps per second of ``Cluster.apply`` and the
cost of ``Cluster.observe()`` on one core.

Usage: python benchmarks/sut_throughput.py [--steps N] [--seeds K] [--restart R]

Seeded family-policy walks (``check.random_walk.choose``) are drawn from the
model first, restarting from the initial state every --restart steps; then the
same action sequence is replayed, timed separately, through ``model.step``,
through ``Cluster.apply`` (a fresh cluster at every restart), and through
``Cluster.apply`` followed by ``observe()``. Before timing, one replay through the
lockstep check (``check.lockstep``, outcomes and observations) checks that the
SUT agrees with the model after every step.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from check.lockstep import LockStep
from check.random_walk import choose
from check.subject import Subject
from model import Config, enabled_actions, initial_state, step
from sut import Cluster

CONFIGS = {
    "3 brokers, RF 3, MinISR 2": Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2,
                                        unclean_recovery="balanced"),
    "5 brokers, RF 4, MinISR 3": Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3, 4), min_isr=3,
                                        unclean_recovery="balanced"),
}


def draw_walks(config: Config, steps: int, seeds: int, restart: int) -> list[list[Any]]:
    """Action sequences, one per restart segment."""
    segments: list[list[Any]] = []
    for seed in range(seeds):
        rng = random.Random(seed)
        state = initial_state(config)
        seg: list[Any] = []
        for i in range(steps):
            if i and i % restart == 0:
                segments.append(seg)
                seg, state = [], initial_state(config)
            action = choose(enabled_actions(state), rng, "family")
            state = step(state, action)
            seg.append(action)
        segments.append(seg)
    return segments


def verify(config: Config, segments: list[list[Any]]) -> None:
    for seg in segments:
        lockstep = LockStep(Subject.at(config, compare=True, check_properties=False), probes=False)
        for action in seg:
            verdict = lockstep.step(action)
            assert verdict is None, verdict.text


def measure(config: Config, segments: list[list[Any]]) -> dict[str, float]:
    n = sum(len(seg) for seg in segments)
    t_model = t_apply = t_snap = t_init = 0.0
    for seg in segments:
        state = initial_state(config)
        t0 = time.perf_counter()
        for action in seg:
            state = step(state, action)
        t_model += time.perf_counter() - t0
        t0 = time.perf_counter()
        cluster = Cluster(config)
        t1 = time.perf_counter()
        for action in seg:
            cluster.apply(action)
        t_apply += time.perf_counter() - t1
        t_init += t1 - t0
        cluster = Cluster(config)
        for action in seg:
            cluster.apply(action)
            t0 = time.perf_counter()
            cluster.observe()
            t_snap += time.perf_counter() - t0
    return {"model steps/s": n / t_model, "sut apply steps/s": n / t_apply,
            "apply µs": 1e6 * t_apply / n, "observe µs": 1e6 * t_snap / n,
            "apply+observe steps/s": n / (t_apply + t_snap), "Cluster() µs": 1e6 * t_init / len(segments)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000, help="steps per seed (default 10000)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per row (default 3)")
    ap.add_argument("--restart", type=int, default=200, help="restart the walk every N steps (default 200)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "sut_throughput")
    args = ap.parse_args()
    header = (f"{'configuration':28} {'model steps/s':>14} {'SUT apply steps/s':>18} {'apply µs':>9} "
              f"{'observe µs':>12} {'apply+observe steps/s':>23} {'Cluster() µs':>13}")
    print(header)
    print("-" * len(header))
    for name, config in CONFIGS.items():
        segments = draw_walks(config, args.steps, args.seeds, args.restart)
        verify(config, segments)
        r = measure(config, segments)
        print(f"{name:28} {r['model steps/s']:14,.0f} {r['sut apply steps/s']:18,.0f} {r['apply µs']:9.1f} "
              f"{r['observe µs']:12.1f} {r['apply+observe steps/s']:23,.0f} {r['Cluster() µs']:13.1f}")


if __name__ == "__main__":
    import results
    results.run(main)
