"""Counterexample reduction: delta debugging (ddmin) over a failing trace.

Hypothesis shrinks the machine's choices, not the trace: a rule step that carries
a whole exchange, or a message id that names an earlier send, keeps steps that
the failure does not need. This pass works on the trace itself. It removes
chunks of steps, then single steps, and keeps every removal after which the
trace still replays and fails the same way.

When a step goes, the steps after it are re-based on the state they now reach:
- a delivery or drop names its message by the id its send gets in the new run
  (dropped with it when that send is gone);
- a Produce writes the next unique value.

Each candidate is checked by ``harness.replay``, so reduction keeps exactly the
machine's checks, SUT comparison included.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Optional, Sequence

import attrs

from model import ActionNotEnabled, Config, Produce, initial_state, step

from .replay import ReplayResult, TraceNotEnabled, replay


def sends(trace: Sequence[Any], config: Config) -> list[range]:
    """Per step of ``trace``, the ids of the messages it sends, run from
    ``initial_state(config)``."""
    state, out = initial_state(config), []
    for action in trace:
        first = state.network.next_id
        state = step(state, action)
        out.append(range(first, state.network.next_id))
    return out


def rebase(trace: Sequence[Any], keep: Sequence[bool], config: Config,
           sent: Optional[Sequence[range]] = None) -> Optional[tuple]:
    """The steps of ``trace`` flagged in ``keep``, re-based as the module says.
    None when a kept step names a message whose send was removed, or is not
    enabled where the shorter trace reaches. ``config`` must include the
    run's variants; ``sent`` is ``sends(trace, config)`` when already known."""
    if len(keep) != len(trace):
        raise ValueError(f"keep has {len(keep)} flags for a trace of {len(trace)} steps")
    sent = sends(trace, config) if sent is None else sent
    state = initial_state(config)
    ids: dict[int, int] = {}  # message id in the original run -> id in the shorter one
    out: list = []
    for action, kept, own in zip(trace, keep, sent):
        if not kept:
            continue
        if hasattr(action, "msg"):
            if action.msg not in ids:
                return None
            action = attrs.evolve(action, msg=ids[action.msg])
        if isinstance(action, Produce):
            action = Produce(action.broker, state.history.next_value)
        new_id = state.network.next_id
        try:
            state = step(state, action)
        except ActionNotEnabled:
            return None
        for offset, old in enumerate(own):
            if new_id + offset < state.network.next_id:
                ids[old] = new_id + offset
        out.append(action)
    return tuple(out)


def _same_failure(result: ReplayResult, failure: ReplayResult, props: frozenset[str]) -> bool:
    if failure.violations:
        return bool(set(result.property_names) & props) and bool(result.violations)
    return result.kind == failure.kind


def reduce_trace(trace: Sequence[Any], config: Config, variants: Iterable[Any] = frozenset(),
                 bugs: Iterable[Any] = frozenset(), compare_sut: Optional[bool] = None,
                 max_seconds: float = 60.0, prop: Optional[str] = None) -> tuple:
    """The shortest trace found that still fails as ``trace`` does, and ends at the failing step.

    Arguments are those of ``harness.replay``. "Fails as ``trace`` does" means:
    - for a property violation, at least one of the same properties fails (``prop``
      when given: a corpus row's property);
    - otherwise, the failure is of the same kind (the SUT differs, or a harness error).

    Stops after ``max_seconds`` and returns the best trace so far. A 1-minimal
    trace, where no single step can go, is reached when time allows.

    Raises ValueError when ``trace`` does not fail (or does not break ``prop``) or
    ``max_seconds`` is not positive, and TraceNotEnabled when a step of it is not
    enabled.
    """
    if not max_seconds > 0:
        raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
    variants, bugs = frozenset(variants), frozenset(bugs)
    failure = replay(trace, config, variants, bugs, compare_sut)
    if not failure.failed:
        raise ValueError(f"the trace of {len(trace)} steps does not fail; nothing to reduce")
    props = frozenset(failure.property_names) if prop is None else frozenset({prop})
    if failure.violations and not props & set(failure.property_names):
        raise ValueError(f"the trace breaks {', '.join(failure.property_names)}, not {prop}")
    config = failure.config  # with the variants
    best = failure.trace
    deadline = time.monotonic() + max_seconds

    def fails(keep: list[bool], current: tuple, sent: list[range]) -> Optional[tuple]:
        candidate = rebase(current, keep, config, sent)
        if candidate is None:
            return None
        try:
            result = replay(candidate, config, (), bugs, compare_sut)
        except TraceNotEnabled:
            return None
        return result.trace if result.failed and _same_failure(result, failure, props) else None

    chunks = 2
    while len(best) > 1 and time.monotonic() < deadline:
        size = max(1, len(best) // chunks)
        reduced = False
        start = 0
        sent = sends(best, config)  # the message ids of ``best``'s steps, for every candidate of it
        while start < len(best) and time.monotonic() < deadline:
            keep = [not start <= i < start + size for i in range(len(best))]
            shorter = fails(keep, best, sent)
            if shorter is not None:
                best, reduced = shorter, True
                sent = sends(best, config)
            else:
                start += size
        if reduced:
            chunks = max(chunks - 1, 2)
        elif size == 1:
            break  # 1-minimal: no single step can go
        else:
            chunks = min(chunks * 2, len(best))
    return best
