"""Model throughput: steps per second of seeded random walks on one core.

Usage: python benchmarks/model_throughput.py [--steps N] [--seeds K]

Prints, per configuration and walk policy, the walk rate (enabled_actions +
choice + step) and the mean cost of ``step`` and of ``enabled_actions`` alone.
Each walk restarts from the initial state every --restart steps, as the fuzzing
harness does, so metadata logs stay as short as in real runs.
"""

from __future__ import annotations

import argparse
import random
import time

from check.random_walk import choose
from model import Config, enabled_actions, initial_state, step

CONFIGS = {
    "3 brokers, RF 3, MinISR 2": Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2,
                                        unclean_recovery="balanced"),
    "5 brokers, RF 4, MinISR 3": Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3, 4), min_isr=3,
                                        unclean_recovery="balanced"),
}


def measure(config: Config, steps: int, seeds: int, policy: str, restart: int) -> dict[str, float]:
    t_enabled = t_step = 0.0
    done = 0
    wall = time.perf_counter()
    for seed in range(seeds):
        rng = random.Random(seed)
        state = initial_state(config)
        for i in range(steps):
            if i and i % restart == 0:
                state = initial_state(config)
            t0 = time.perf_counter()
            actions = enabled_actions(state)
            t1 = time.perf_counter()
            action = choose(actions, rng, policy)
            t2 = time.perf_counter()
            state = step(state, action)
            t3 = time.perf_counter()
            t_enabled += t1 - t0
            t_step += t3 - t2
            done += 1
    wall = time.perf_counter() - wall
    return {"walk steps/s": done / wall, "step µs": 1e6 * t_step / done,
            "enabled_actions µs": 1e6 * t_enabled / done, "step-only steps/s": done / t_step}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000, help="steps per seed (default 10000)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per row (default 3)")
    ap.add_argument("--restart", type=int, default=200, help="restart the walk every N steps (default 200)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "model_throughput")
    args = ap.parse_args()
    header = f"{'configuration':28} {'policy':8} {'walk steps/s':>13} {'step-only steps/s':>18} " \
             f"{'step µs':>8} {'enabled_actions µs':>19}"
    print(header)
    print("-" * len(header))
    for name, config in CONFIGS.items():
        for policy in ("family", "uniform"):
            r = measure(config, args.steps, args.seeds, policy, args.restart)
            print(f"{name:28} {policy:8} {r['walk steps/s']:13,.0f} {r['step-only steps/s']:18,.0f} "
                  f"{r['step µs']:8.1f} {r['enabled_actions µs']:19.1f}")


if __name__ == "__main__":
    import results
    results.run(main)
