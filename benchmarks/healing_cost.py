"""What healing costs and how far below its bound each liveness goal is met.

Usage: python benchmarks/healing_cost.py [--prefixes 2000] [--seconds 20] [--write]

1. Rounds. Random prefixes of the correct model (uniform walks of 5-200 steps over
   every enabled action, within the fault budget; 3-5 brokers, RF 1..brokers,
   MinISR 1..RF, both profiles, every unclean recovery strategy, unclean leader
   election on or off), each healed (``model.healing``); prefixes whose state
   already breaks a property are left out (a finding comes first). Per liveness
   goal (``properties.liveness.met_by``): how many prefixes it was judged on, the
   latest round by which it held for good, and how many prefixes never met it
   within the bound (a false liveness failure, if any). The bound is
   ``model.healing.rounds`` (2 x brokers + 4).
2. Cost. Checked steps per second of the explorer (the correct protocol and the
   SUT in lockstep, seed 7) with healing in about half the examples (the
   default) and without (``ReplicationMachine.heals`` off), one core.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def random_config(rng: random.Random):
    from model import CHAPTERS, KAFKA, UNCLEAN_RECOVERY_STRATEGIES, Config
    n = rng.randint(3, 5)
    rf = rng.randint(1, n)
    profile = rng.choice([CHAPTERS, KAFKA])
    strategy = "none" if profile == KAFKA else rng.choice(UNCLEAN_RECOVERY_STRATEGIES)
    return Config(brokers=tuple(range(1, n + 1)), assignment=tuple(range(1, rf + 1)), min_isr=rng.randint(1, rf),
                  unclean_recovery=strategy, unclean_leader_election=rng.random() < 0.3, profile=profile)


def random_prefix(config, steps: int, rng: random.Random):
    """A uniform walk of up to ``steps`` steps, lossy shutdowns within the fault budget."""
    from model import UncleanShutdown, enabled_actions, initial_state, step
    state = initial_state(config)
    for _ in range(steps):
        actions = [a for a in enabled_actions(state) if not (isinstance(a, UncleanShutdown) and a.lossy
                                                              and state.history.lossy_shutdowns >= config.min_isr - 1)]
        if not actions:
            break
        state = step(state, rng.choice(actions))
    return state


def rounds_table(prefixes: int, seed: int) -> None:
    import properties
    from model.healing import rounds
    from properties.liveness import LIVENESS, met_by, waiting_for
    rng = random.Random(seed)
    judged, latest, missed = collections.Counter(), collections.Counter(), collections.Counter()
    healed = waiting = 0
    bounds = set()
    for _ in range(prefixes):
        config = random_config(rng)
        state = random_prefix(config, rng.randint(5, 200), rng)
        if properties.check_all(state):
            continue
        healed += 1
        bounds.add(rounds(config))
        met = met_by(state)
        from model.healing import heal
        if waiting_for(heal(state)) is not None:
            waiting += 1
        for goal, r in met.items():
            judged[goal] += 1
            if r is None:
                missed[goal] += 1
            else:
                latest[goal] = max(latest[goal], r)
    print(f"{healed} healed prefixes (of {prefixes}; seed {seed}), {waiting} waiting for an operator; "
          f"bound {min(bounds)}-{max(bounds)} rounds\n")
    print("| goal | prefixes | latest round met | never met |")
    print("|---|---:|---:|---:|")
    for goal in LIVENESS:
        print(f"| `{goal.name}` | {judged[goal.name]:,} | {latest[goal.name]} | {missed[goal.name]} |")


def steps_per_second(heals: bool, seconds: float) -> float:
    from check.explore import Explorer
    from check.machine import machine_for
    from check.subject import Subject
    cls = machine_for(Subject(compare=True), name=f"HealingCost{int(heals)}")
    cls.heals = heals
    t0 = time.process_time()
    result = Explorer(cls, seed=7, unguided_share=0.5).run(seconds)
    return result.steps / max(1e-9, time.process_time() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefixes", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "healing_cost")
    args = ap.parse_args()
    rounds_table(args.prefixes, args.seed)
    with_, without = steps_per_second(True, args.seconds), steps_per_second(False, args.seconds)
    print("\n| explorer, correct protocol + SUT | checked steps per CPU second |")
    print("|---|---:|")
    print(f"| healing in about half the examples | {with_:,.0f} |")
    print(f"| no healing | {without:,.0f} |")


if __name__ == "__main__":
    import results
    results.run(main)
