"""Deterministic replay of a trace: the model (and the SUT beside it) take the
recorded actions one by one from the initial state through the lockstep check
(``check.lockstep``), exactly as ``ReplicationMachine`` checks them, and the
first failure stops the replay.

``replay(trace, subject)`` (a ``check.subject.Subject`` with a config:
``Subject.at(config, bugs=…)``) returns a ``ReplayResult``;
``campaign.regression.replay_row`` replays a corpus row.

A trace whose step the model does not enable raises ``TraceNotEnabled`` naming
the step (0-based index and 1-based number), the action and the model's reason.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import attrs

from model import ActionNotEnabled, ClusterState, Config, Observation, observe
from properties import Violation

from .failures import CheckFailed, failure_for
from .lockstep import LockStep
from .subject import Subject
from .timeline import Moment, model_moment, moment
from .verdict import Verdict


class TraceNotEnabled(Exception):
    """A step of the trace is not enabled in the state the trace reached.

    ``index`` (0-based) and ``action`` name the step, ``reason`` is the model's.
    """

    def __init__(self, index: int, action: object, reason: str, total: int) -> None:
        self.index, self.action, self.reason, self.total = index, action, reason, total
        super().__init__(f"step {index} (#{index + 1} of {total}) {action!r} is not enabled: {reason}")


@attrs.frozen
class ReplayResult:
    """What a replay found.

    verdict: the lockstep's verdict at the failing step (None: no failure).
    state: the model state at the failure (or after the last step); observed: the
      implementation's observation then (None without one). trace: the steps
      applied (the failing one last). subject: what was replayed (its config the
      trace's); compared: whether an implementation was compared. timeline: one
      ``check.timeline.Moment`` per step applied, when asked for (else empty).
    The other fields read the verdict: violations (empty: none), divergence (the
    differences, None without one), error (an exception's "Type: message"),
    failed_at (steps applied when the failure showed, 0 for the initial state,
    None without failure), sut_refused, enablement.
    """

    verdict: Optional[Verdict]
    state: ClusterState
    observed: Optional[Observation]
    trace: tuple
    subject: Subject
    compared: bool = False
    timeline: tuple[Moment, ...] = ()

    @property
    def config(self) -> Config:
        return self.state.config

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
                    + (" and the SUT matches the model" if self.compared else ""))
        return self.verdict.text


def replay(trace: Sequence[Any], subject: Subject, timeline: bool = False) -> ReplayResult:
    """Re-execute ``trace`` from the initial state of ``subject.config`` through the
    lockstep check (``check.lockstep``: the model, every property unless the
    subject checks none, and the implementation the subject compares, with its
    outcomes, observation and enablement), as the machine does; stops at the
    first verdict. Deterministic.

    ``timeline``: record what each step visibly did (``check.timeline``): the
    implementation's outcome and observation where it gave them, the model's
    otherwise. Raises ``TraceNotEnabled`` when the model does not enable a step,
    ValueError when the subject has no config.
    """
    lockstep = LockStep(subject)
    trace = tuple(trace)
    moments: list[Moment] = []

    def result(verdict: Optional[Verdict]) -> ReplayResult:
        impl = lockstep.implementation
        observed = verdict.observed if verdict is not None else (impl.observe() if impl is not None else None)
        return ReplayResult(verdict, lockstep.state, observed, tuple(lockstep.trace), subject, lockstep.compares,
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


def reproduces(result: ReplayResult, prop: str, kind: str) -> bool:
    """Whether ``result`` shows the recorded failure: ``prop`` among the failing
    properties, or liveness goals (a divergence or harness error: the same kind
    of failure)."""
    if kind in ("property", "liveness"):
        return result.kind == kind and prop in result.property_names and bool(result.violations)
    return result.kind == kind
