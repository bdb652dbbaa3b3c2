"""Plain seeded random walks over ``model.enabled_actions``, with no Hypothesis:
the baseline a model checker's simulation mode gives, and the driver of the
throughput benchmarks and long-walk tests."""

from __future__ import annotations

import random
from typing import Iterator

from model import Action, ClusterState, Config, enabled_actions, family_of, initial_state, step

POLICIES = ("uniform", "family")


def choose(actions: tuple[Action, ...], rng: random.Random, policy: str = "family") -> Action:
    """Pick one enabled action. ``uniform``: every action alike (broker churn then
    dominates, since lifecycle actions are almost always enabled). ``family``: a
    family uniformly, then an action of it, so the data path is reached too.
    Raises ValueError for an unknown policy."""
    if policy == "uniform":
        return rng.choice(actions)
    if policy == "family":
        families: dict[str, list[Action]] = {}
        for a in actions:
            families.setdefault(family_of(a), []).append(a)
        return rng.choice(families[rng.choice(sorted(families))])
    raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")


def random_walk(config: Config, steps: int, seed: int, policy: str = "family"
                ) -> Iterator[tuple[Action, ClusterState]]:
    """Yield ``(action, next_state)`` for ``steps`` steps from ``initial_state(config)``."""
    rng = random.Random(seed)
    state = initial_state(config)
    for _ in range(steps):
        action = choose(enabled_actions(state), rng, policy)
        state = step(state, action)
        yield action, state
