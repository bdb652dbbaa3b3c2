"""Plain seeded random walks over ``model.enabled_actions``, with no Hypothesis:
the baseline a model checker's simulation mode gives, and the driver of the
throughput benchmarks and long-walk tests.

Policies for choosing among the enabled actions:

- ``uniform``: every enabled action alike. Lifecycle actions are almost always
  enabled and numerous, so broker churn dominates.
- ``family``: an action family uniformly, then an action of it.
- ``weighted``: an action class by ``DEFAULT_WEIGHTS`` (faults rare, replication
  and client traffic frequent), then an action of it, so replication, ISR changes
  and writes make progress between faults.

Walks stay inside a lossy-shutdown budget (default MinISR - 1, §6.2): a lossy
``UncleanShutdown`` is not chosen once the budget is spent.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Callable, Iterator, Mapping, Optional, Sequence

from model import ACTIONS, Action, ClusterState, Config, enabled_actions, family_of, initial_state, step
from properties import keeps_fault_budget

POLICIES = ("uniform", "family", "weighted")

#: Relative weight of each action class for the ``weighted`` policy
#: (``model.ActionKind.weight``).
DEFAULT_WEIGHTS: Mapping[type, float] = {k.cls: k.weight for k in ACTIONS}

TRAIL = 30  # actions shown in a failure report

Check = Callable[[ClusterState], Sequence[object]]


class WalkFailure(AssertionError):
    """A check (or the model) failed during a walk; the message reproduces it."""


def choose(actions: Sequence[Action], rng: random.Random, policy: str = "family",
           weights: Mapping[type, float] = DEFAULT_WEIGHTS) -> Action:
    """Pick one of ``actions`` (non-empty) by ``policy``; raises ValueError for an
    unknown policy."""
    if policy == "uniform":
        return rng.choice(actions)
    groups: dict[object, list[Action]] = {}
    if policy == "family":
        for a in actions:
            groups.setdefault(family_of(a), []).append(a)
        return rng.choice(groups[rng.choice(sorted(groups))])  # type: ignore[type-var]
    if policy == "weighted":
        for a in actions:
            groups.setdefault(type(a), []).append(a)
        classes = list(groups)
        cls = rng.choices(classes, weights=[weights.get(c, 1.0) for c in classes])[0]  # type: ignore[call-overload]
        return rng.choice(groups[cls])
    raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")


def within_budget(state: ClusterState, lossy_budget: Optional[int] = None) -> list[Action]:
    """``enabled_actions(state)`` less what leaves the fault budget
    (``properties.keeps_fault_budget``: lossy unclean shutdowns past it, default
    MinISR - 1, and MinISR changes below it)."""
    return [a for a in enabled_actions(state) if keeps_fault_budget(state, a, lossy_budget)]


def _describe(config: Config, seed: int, step_no: int, trail: Sequence[Action]) -> str:
    return "\n".join([f"seed={seed} step={step_no}", f"config={config!r}",
                      f"last {len(trail)} actions (oldest first):"] + [f"  {a!r}" for a in trail])


def random_walk(config: Config, steps: int, seed: int, policy: str = "family", check: Optional[Check] = None,
                lossy_budget: Optional[int] = None, weights: Mapping[type, float] = DEFAULT_WEIGHTS,
                start: Optional[ClusterState] = None) -> Iterator[tuple[Action, ClusterState]]:
    """Yield ``(action, next_state)`` for ``steps`` steps from ``start`` (default
    ``initial_state(config)``), deterministic in ``seed``.

    ``check(state)`` runs on the start state and after every step; a non-empty
    result raises WalkFailure with the seed, config and last actions. So does an
    exception from the model.
    """
    rng = random.Random(seed)
    state = initial_state(config) if start is None else start
    trail: deque[Action] = deque(maxlen=TRAIL)

    def verify(step_no: int) -> None:
        problems = check(state) if check is not None else ()
        if problems:
            raise WalkFailure(f"{len(problems)} violation(s) after step {step_no}:\n"
                              + "\n".join(f"  {p}" for p in problems) + "\n"
                              + _describe(config, seed, step_no, trail))

    verify(0)
    for i in range(1, steps + 1):
        actions = within_budget(state, lossy_budget)
        if not actions:
            return
        action = choose(actions, rng, policy, weights)
        trail.append(action)
        try:
            state = step(state, action)
        except Exception as exc:  # the model must accept every enabled action
            raise WalkFailure(f"model.step raised {exc!r}\n" + _describe(config, seed, i, trail)) from exc
        verify(i)
        yield action, state
