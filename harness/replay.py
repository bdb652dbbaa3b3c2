"""Deterministic replay of a trace: the model (and the SUT beside it) take the
recorded actions one by one from the initial state, every property and the SUT's
snapshot are checked after every step exactly as ``ReplicationMachine`` checks
them, and the first failure stops the replay.

``replay(trace, config, variants=frozenset(), bugs=frozenset(), compare_sut=None)``
returns a ``ReplayResult``; ``replay_counterexample(row)`` replays a corpus row.
The module itself is callable (``harness.replay(trace, config)``).

A trace whose step the model does not enable raises ``TraceNotEnabled`` naming
the step (0-based index and 1-based number), the action and the model's reason.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Iterable, Optional, Sequence

import attrs

import properties
from model import ActionNotEnabled, ClusterState, Config, Variant, initial_state, step
from properties import Violation

from .failures import PropertyViolated, SutDiverged, _trace_tail
from .report import describe, diff

#: Pseudo-property names of the failures that are not property violations.
SUT_DIFFERS = "SutDiffersFromModel"
HARNESS_ERROR = "HarnessError"


class TraceNotEnabled(Exception):
    """A step of the trace is not enabled in the state the trace reached.

    ``index`` (0-based) and ``action`` name the step, ``reason`` is the model's.
    """

    def __init__(self, index: int, action: object, reason: str, total: int) -> None:
        self.index, self.action, self.reason, self.total = index, action, reason, total
        super().__init__(f"step {index} (#{index + 1} of {total}) {action!r} is not enabled: {reason}")


def sut_available() -> bool:
    """Whether the SUT package can be imported (replays compare with it only then)."""
    import importlib.util
    return importlib.util.find_spec("sut") is not None


@attrs.frozen
class ReplayResult:
    """What a replay found.

    violations: the property violations at the failing step (empty: none).
    divergence: the SUT-vs-model diff lines at the failing step (None: none).
    error: an unexpected exception (``"Type: message"``) at the failing step.
    failed_at: number of steps applied when the failure showed (0: the initial
      state; None: the whole trace ran without failure).
    state: the model state at the failure (or after the last step); sut_state the
      SUT's snapshot then (None without SUT). trace: the steps applied.
    """

    violations: tuple[Violation, ...]
    divergence: Optional[tuple[str, ...]]
    error: Optional[str]
    failed_at: Optional[int]
    state: ClusterState
    sut_state: Optional[ClusterState]
    trace: tuple
    config: Config
    bugs: frozenset = frozenset()
    compared_sut: bool = False
    sut_refused: Optional[str] = None
    enablement: bool = False  # the divergence is a disagreement on which actions are enabled

    @property
    def failed(self) -> bool:
        return self.failed_at is not None

    @property
    def kind(self) -> Optional[str]:
        if self.violations:
            return "property"
        if self.divergence is not None:
            return "divergence"
        if self.error is not None:
            return "harness_error"
        return None

    @property
    def property_names(self) -> tuple[str, ...]:
        """The failing properties (``SutDiffersFromModel`` / ``HarnessError`` for the other kinds)."""
        if self.violations:
            return tuple(dict.fromkeys(v.property for v in self.violations))
        if self.divergence is not None:
            return (SUT_DIFFERS,)
        if self.error is not None:
            return (HARNESS_ERROR,)
        return ()

    def exception(self) -> Optional[AssertionError]:
        """The exception the machine raised for this failure (None: no failure)."""
        if self.violations:
            return PropertyViolated(self.violations, self.state, self.trace)
        if self.divergence is not None and self.sut_state is not None and self.sut_refused is None:
            return SutDiverged(self.state, self.sut_state, self.trace, self.divergence if self.enablement else ())
        return None

    def report(self) -> str:
        """The failure report pytest printed (the machine's exception text), or a
        one-line "no failure" summary."""
        if not self.failed:
            return (f"no failure: all {len(self.trace)} steps replayed, every property holds"
                    + (" and the SUT matches the model" if self.compared_sut else ""))
        exc = self.exception()
        if exc is not None:
            return str(exc)
        n = len(self.trace)
        if self.sut_refused is not None:
            return (f"SUT differs from model after step {n}: {self.sut_refused}\n\nmodel:\n"
                    + describe(self.state) + "\n\nlast steps:\n" + _trace_tail(self.trace))
        return (f"harness error after step {n}: {self.error}\n\nmodel:\n" + describe(self.state)
                + "\n\nlast steps:\n" + _trace_tail(self.trace))


def _effective_config(config: Config, variants: Iterable[Variant]) -> Config:
    variants = frozenset(variants)
    if variants - config.variants:
        return attrs.evolve(config, variants=config.variants | variants)
    return config


def replay(trace: Sequence[Any], config: Config, variants: Iterable[Variant] = frozenset(),
           bugs: Iterable[Any] = frozenset(), compare_sut: Optional[bool] = None) -> ReplayResult:
    """Re-execute ``trace`` from ``initial_state(config)`` on the model — and on
    ``sut.Cluster(config, bugs=bugs)`` when comparing — checking every property
    and the SUT snapshot after every step, as the machine does; stops at the
    first failure. Deterministic.

    ``variants`` are added to ``config.variants``. ``compare_sut``: True/False, or
    None (default) to compare exactly when no variant is on — the rule
    ``machine_for`` uses, since variants change the model only and the SUT
    implements the correct protocol. Without the ``sut`` package no comparison
    is made. Raises ``TraceNotEnabled`` when the model does not enable a step.
    """
    config = _effective_config(config, variants)
    bugs = frozenset(bugs)
    if compare_sut is None:
        compare_sut = not config.variants
    cluster = None
    if compare_sut and sut_available():
        from sut import Cluster
        cluster = Cluster(config, bugs=bugs)
    trace = tuple(trace)
    state = initial_state(config)
    applied: list = []

    def result(violations: tuple = (), divergence: Optional[tuple] = None, error: Optional[str] = None,
               failed: bool = False, sut_state: Optional[ClusterState] = None,
               refused: Optional[str] = None, enablement: bool = False) -> ReplayResult:
        return ReplayResult(tuple(violations), divergence, error, len(applied) if failed else None, state,
                            sut_state, tuple(applied), config, bugs, cluster is not None, refused, enablement)

    def check() -> Optional[ReplayResult]:
        # The machine's checks, in its order (ReplicationMachine._check).
        violations = properties.check_all(state)
        if violations:
            return result(violations, failed=True)
        if cluster is not None:
            snapshot = cluster.snapshot()
            if snapshot != state:
                return result(divergence=tuple(diff(state, snapshot)), failed=True, sut_state=snapshot)
            from .machine import enablement_disagreements
            disagreements = enablement_disagreements(state, cluster)
            if disagreements:
                return result(divergence=disagreements, failed=True, sut_state=snapshot, enablement=True)
        return None

    found = check()
    if found is not None:
        return found
    for i, action in enumerate(trace):
        try:
            new_state = step(state, action)
        except ActionNotEnabled as e:
            raise TraceNotEnabled(i, action, e.reason, len(trace)) from None
        except Exception as e:  # a model crash is reported, as the machine's run would have
            applied.append(action)
            return result(error=f"{type(e).__name__}: {e}", failed=True)
        state = new_state
        applied.append(action)
        if cluster is not None:
            try:
                cluster.apply(action)
            except ActionNotEnabled as e:
                refused = f"the SUT refuses {action!r}, which the model takes: {e.reason}"
                return result(divergence=(refused,), failed=True, refused=refused)
            except Exception as e:
                return result(error=f"{type(e).__name__} from the SUT: {e}", failed=True)
        found = check()
        if found is not None:
            return found
    return result(sut_state=cluster.snapshot() if cluster is not None else None)


def replay_counterexample(row: dict[str, Any], compare_sut: Optional[bool] = None) -> ReplayResult:
    """Replay a corpus ``counterexamples`` row (a dict as read by ``harness.corpus``)."""
    from .corpus import decode_counterexample
    decoded = decode_counterexample(row)
    return replay(decoded.actions, decoded.config, decoded.variants, decoded.bugs, compare_sut=compare_sut)


def reproduces(result: ReplayResult, prop: str, kind: str) -> bool:
    """Whether ``result`` shows the recorded failure: ``prop`` among the failing
    properties (a divergence or harness error: the same kind of failure)."""
    if kind == "property":
        return prop in result.property_names and bool(result.violations)
    if kind == "divergence":
        return result.divergence is not None
    return result.error is not None


class _CallableModule(types.ModuleType):
    """Lets ``harness.replay(trace, config, ...)`` call ``replay`` whether
    ``harness.replay`` resolves to this module or to the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReplayResult:
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
