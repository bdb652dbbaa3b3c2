"""The exception a failed run raises: ``CheckFailed``, carrying the lockstep's
``Verdict``; its subclass names the verdict's kind, so a test can expect one."""

from __future__ import annotations

from typing import Iterator

from model import Action, ClusterState, Observation

from .finding import Finding, Search, findings
from .subject import Subject
from .verdict import Verdict


class CheckFailed(AssertionError):
    """A lockstep check failed: ``verdict`` says what, and ``str()`` is its report.
    ``failure_for(verdict)`` builds the subclass of its kind."""

    kind = "check"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        super().__init__(verdict.text)

    @property
    def state(self) -> ClusterState:
        """The model state at the failure."""
        return self.verdict.state

    @property
    def trace(self) -> tuple[Action, ...]:
        return self.verdict.trace

    @property
    def property_names(self) -> tuple[str, ...]:
        return self.verdict.properties


class PropertyViolated(CheckFailed):
    """A protocol property failed on the model state."""

    kind = "property"

    @property
    def violations(self) -> tuple:
        return self.verdict.violations


class LivenessFailed(CheckFailed):
    """A liveness goal failed at the end of a healing phase."""

    kind = "liveness"

    @property
    def violations(self) -> tuple:
        return self.verdict.violations


class SutDiverged(CheckFailed):
    """The implementation differs from the model after the same actions: its
    observed state, an action's outcome, its refusal of an action the model took,
    or its enablement of a probe."""

    kind = "divergence"

    @property
    def model_state(self) -> ClusterState:
        return self.verdict.state

    @property
    def observed(self) -> Observation | None:
        """The implementation's observation (None: the failure was not a state difference)."""
        return self.verdict.observed

    @property
    def differences(self) -> list[str]:
        return list(self.verdict.differences)


class HarnessFailure(CheckFailed):
    """An exception in the model, the implementation or the harness itself."""

    kind = "harness_error"


def failure_for(verdict: Verdict) -> CheckFailed:
    """The exception carrying ``verdict``, of its kind's class."""
    cls = {"property": PropertyViolated, "liveness": LivenessFailed, "divergence": SutDiverged, "outcome": SutDiverged, "enablement": SutDiverged,
           "harness_error": HarnessFailure}[verdict.kind]
    return cls(verdict)


def verdicts_of(exc: BaseException) -> Iterator[Verdict]:
    """The verdict of every ``CheckFailed`` in ``exc`` (exception groups
    flattened); any other exception (a health check, an interrupt) has none."""
    if isinstance(exc, BaseExceptionGroup):
        for e in exc.exceptions:
            yield from verdicts_of(e)
    elif isinstance(exc, CheckFailed):
        yield exc.verdict


def findings_of(exc: BaseException, subject: Subject = Subject(), search: Search = Search()) -> tuple[Finding, ...]:
    """The findings an exception out of a run of ``subject`` carries: those of the
    verdict of every ``CheckFailed`` in it (``verdicts_of``), with ``search``."""
    return tuple(f for v in verdicts_of(exc) for f in findings(v, subject, search))
