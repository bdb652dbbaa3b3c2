"""Deterministic replay of a trace: the model (and the SUT beside it) take the
recorded actions one by one from the initial state through the lockstep check
(``harness.lockstep``), exactly as ``ReplicationMachine`` checks them, and the
first failure stops the replay.

``replay(trace, config, variants=frozenset(), bugs=frozenset(), compare_sut=None)``
returns a ``ReplayResult``; ``replay_counterexample(row)`` replays a corpus row.
The module itself is callable (``harness.replay(trace, config)``).

A trace whose step the model does not enable raises ``TraceNotEnabled`` naming
the step (0-based index and 1-based number), the action and the model's reason.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable, Iterable, Optional, Sequence

import attrs

from model import ActionNotEnabled, ClusterState, Config, Observation, Variant, observe
from properties import Violation

from .failures import CheckFailed, failure_for
from .lockstep import HARNESS_ERROR, SUT_DIFFERS, LockStep, Verdict, sut_factory  # noqa: F401 (re-exported)
from .timeline import Moment, model_moment, moment


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

    verdict: the lockstep's verdict at the failing step (None: no failure).
    state: the model state at the failure (or after the last step); observed: the
      SUT's observation then (None without SUT). trace: the steps applied (the failing
      one last). compared_sut: whether the SUT was compared. timeline: one
      ``harness.timeline.Moment`` per step applied, when asked for (else empty).
    The other fields read the verdict: violations (empty: none), divergence (the
    differences, None without one), error (an exception's "Type: message"),
    failed_at (steps applied when the failure showed, 0 for the initial state,
    None without failure), sut_refused, enablement.
    """

    verdict: Optional[Verdict]
    state: ClusterState
    observed: Optional[Observation]
    trace: tuple
    config: Config
    bugs: frozenset = frozenset()
    compared_sut: bool = False
    timeline: tuple[Moment, ...] = ()

    @property
    def failed(self) -> bool:
        return self.verdict is not None

    @property
    def failed_at(self) -> Optional[int]:
        return None if self.verdict is None else len(self.trace)

    @property
    def violations(self) -> tuple[Violation, ...]:
        return () if self.verdict is None else self.verdict.violations

    @property
    def divergence(self) -> Optional[tuple[str, ...]]:
        v = self.verdict
        return v.differences if v is not None and v.kind in ("divergence", "outcome", "enablement") else None

    @property
    def error(self) -> Optional[str]:
        v = self.verdict
        return v.template if v is not None and v.kind == "harness_error" else None

    @property
    def enablement(self) -> bool:
        return self.verdict is not None and self.verdict.kind == "enablement"

    @property
    def sut_refused(self) -> Optional[str]:
        v = self.verdict
        if v is None or v.kind != "divergence" or v.observed is not None:
            return None
        return v.differences[0] if v.differences else None

    @property
    def kind(self) -> Optional[str]:
        return None if self.verdict is None else ("divergence" if self.verdict.kind in ("enablement", "outcome")
                                                  else self.verdict.kind)

    @property
    def property_names(self) -> tuple[str, ...]:
        """The failing properties (``SutDiffersFromModel`` / ``HarnessError`` for the other kinds)."""
        return () if self.verdict is None else self.verdict.properties

    def exception(self) -> Optional[CheckFailed]:
        """The exception the machine raised for this failure (None: no failure)."""
        return None if self.verdict is None else failure_for(self.verdict)

    def report(self) -> str:
        """The failure report pytest printed (the machine's exception text), or a
        one-line "no failure" summary."""
        if self.verdict is None:
            return (f"no failure: all {len(self.trace)} steps replayed, every property holds"
                    + (" and the SUT matches the model" if self.compared_sut else ""))
        return self.verdict.text


def _effective_config(config: Config, variants: Iterable[Variant]) -> Config:
    variants = frozenset(variants)
    if variants - config.variants:
        return attrs.evolve(config, variants=config.variants | variants)
    return config


def replay(trace: Sequence[Any], config: Config, variants: Iterable[Variant] = frozenset(),
           bugs: Iterable[Any] = frozenset(), compare_sut: Optional[bool] = None,
           implementation: Optional[Callable[[Config], Any]] = None, timeline: bool = False,
           check_properties: bool = True) -> ReplayResult:
    """Re-execute ``trace`` from ``initial_state(config)`` through the lockstep check
    (``harness.lockstep``: the model, every property, and ``sut.Cluster(config,
    bugs=bugs)`` with its outcomes, observation and enablement when comparing), as the machine
    does; stops at the first verdict. Deterministic.

    ``variants`` are added to ``config.variants``. ``compare_sut``: True/False, or
    None (default) to compare exactly when no variant is on — the rule
    ``machine_for`` uses, since variants change the model only and the SUT
    implements the correct protocol. Without the ``sut`` package no comparison
    is made. ``implementation``: a factory of another implementation under test
    to compare instead of the SUT (``harness.lockstep``'s interface). ``timeline``:
    record what each step visibly did (``harness.timeline``): the implementation's
    outcome and observation where it gave them, the model's otherwise.
    ``check_properties``: False compares the implementation with the model only,
    as the run that found the trace did (``machine_for(check_properties=False)``,
    the implementation "kafka": a property the Kafka profile's findings break on
    the way is not the failure replayed). Raises ``TraceNotEnabled`` when the
    model does not enable a step.
    """
    config = _effective_config(config, variants)
    bugs = frozenset(bugs)
    if compare_sut is None:
        compare_sut = not config.variants
    compared = implementation is not None or bool(compare_sut and sut_available())
    lockstep = LockStep(config, implementation or (sut_factory(bugs) if compared else None),
                        check_properties=check_properties)
    trace = tuple(trace)
    moments: list[Moment] = []

    def result(verdict: Optional[Verdict]) -> ReplayResult:
        impl = lockstep.implementation
        observed = verdict.observed if verdict is not None else (impl.observe() if impl is not None else None)
        return ReplayResult(verdict, lockstep.state, observed, tuple(lockstep.trace), config, bugs, compared,
                            tuple(moments))

    verdict = lockstep.check()
    for i, action in enumerate(trace):
        if verdict is not None:
            break
        before = lockstep.state
        try:
            verdict = lockstep.step(action)
        except ActionNotEnabled as e:
            raise TraceNotEnabled(i, action, e.reason, len(trace)) from None
        if timeline:
            moments.append(_moment(i, action, lockstep, before, verdict))
    return result(verdict)


def _moment(i: int, action: Any, lockstep: LockStep, before: ClusterState, verdict: Optional[Verdict]) -> Moment:
    """Step ``i`` as replay saw it: the implementation's outcome and observation
    when it took the step (its observation read again when the lockstep stopped
    before reading it: a differing outcome), the model's otherwise (no
    implementation, or a property verdict stopped the step before it)."""
    impl, got = lockstep.implementation, lockstep.last_outcome
    if impl is None or got is None:
        return model_moment(i, action, before, lockstep.state)
    seen = lockstep.last_observed or (verdict.observed if verdict is not None else None)
    if seen is None:
        try:
            seen = impl.observe()
        except Exception:  # the implementation cannot show itself: the model's view, as for a crash
            seen = observe(lockstep.state)
    return moment(i, action, got, seen)


def replay_counterexample(row: dict[str, Any], compare_sut: Optional[bool] = None) -> ReplayResult:
    """Replay a corpus ``counterexamples`` row (a dict as read by ``harness.corpus``)."""
    from .corpus import decode_counterexample
    decoded = decode_counterexample(row)
    return replay(decoded.actions, decoded.config, decoded.variants, decoded.bugs, compare_sut=compare_sut,
                  implementation=decoded.implementation, check_properties=decoded.check_properties)


def reproduces(result: ReplayResult, prop: str, kind: str) -> bool:
    """Whether ``result`` shows the recorded failure: ``prop`` among the failing
    properties (a divergence or harness error: the same kind of failure)."""
    if kind == "property":
        return prop in result.property_names and bool(result.violations)
    return result.kind == kind


class _CallableModule(types.ModuleType):
    """Lets ``harness.replay(trace, config, ...)`` call ``replay`` whether
    ``harness.replay`` resolves to this module or to the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReplayResult:
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
