"""What the check returns, as one value: ``Finding``.

A finding is one failure of one property (or one disagreement, or one harness
error) of a subject under test: the lockstep's ``Verdict`` narrowed to it, the
``Subject`` that was under test, how the search came to it (``Search``) and,
once refined (``check.refine``), the trace its search kept before reduction
(``Shrunk``) and the timeline of its replay. ``RunRecord`` is what a whole
machine run did, its findings included (``check.statistics.RunObserver``). The
store turns both into rows (``store.rows``); the campaign and the pytest plugin
record them. Plain values: they run nothing.
"""

from __future__ import annotations

import datetime as _dt
from typing import Optional

import attrs

from model import ClusterState, Config

from .subject import Subject
from .timeline import Moment
from .verdict import Verdict

#: What a finding is: a property failed on the model; a liveness goal failed at
#: the end of a healing phase; the implementation differs from the model (its
#: observed state, an outcome, a refusal, an enablement); an exception in the
#: model, the implementation or the check itself.
FINDING_KINDS = ("property", "liveness", "divergence", "harness_error")


@attrs.frozen
class Search:
    """How a search came to a finding. test_id: the test or campaign target that
    ran it; seed: the run's seed (None: random or derandomized); examples_to_failure:
    examples run when the run's first failure was found, the failing one included;
    time_to_failure_s: seconds from the run's first example to it."""

    test_id: Optional[str] = None
    seed: Optional[str] = None
    examples_to_failure: Optional[int] = None
    time_to_failure_s: Optional[float] = None


@attrs.frozen
class Shrunk:
    """What the search kept before reduction: its trace (as Hypothesis shrank it,
    or as the explorer found it), the configuration it failed in, and the
    configuration's simplifications reduction made, in order."""

    trace: tuple
    config: Config
    changes: tuple[str, ...] = ()


@attrs.frozen
class Finding:
    """One failure of one property (or one disagreement, or one harness error).

    verdict: the lockstep's verdict, narrowed to this property for a property
      failure (``Verdict.for_property``); its state and trace are the failure's.
    subject: what was under test (its config may be None: drawn per example; the
      failing one is ``config``).
    search: how the search came to it.
    shrunk: set by reduction (``check.refine.reduced``): the trace the search
      kept; None when not reduced.
    timeline: one ``check.timeline.Moment`` per step of ``trace``, recorded by a
      replay (``check.refine.with_timeline``); None when not recorded."""

    verdict: Verdict
    subject: Subject
    search: Search = Search()
    shrunk: Optional[Shrunk] = None
    timeline: Optional[tuple[Moment, ...]] = None

    @property
    def prop(self) -> str:
        """The failing property (``SutDiffersFromModel`` / ``HarnessError`` for the
        other kinds)."""
        return self.verdict.properties[0]

    @property
    def kind(self) -> str:
        """One of ``FINDING_KINDS``."""
        return self.verdict.finding_kind

    @property
    def signature(self) -> str:
        """The corpus's dedup key (``check.signature``)."""
        return self.verdict.signature

    @property
    def violation(self) -> str:
        """The failure as reported: the property's violations, or the
        differences, or the error."""
        v = self.verdict
        if v.kind in ("property", "liveness"):
            return "\n".join(str(x) for x in v.violations)
        return "\n".join(v.differences) if v.differences else v.template

    @property
    def template(self) -> str:
        """What the corpus signature normalizes (``check.signature``)."""
        return self.verdict.template

    @property
    def template_is_path(self) -> bool:
        """Whether ``template`` is a diff field path."""
        return self.verdict.template_is_path

    @property
    def trace(self) -> tuple:
        """Every action from the initial state of ``config``, the failing one last."""
        return tuple(self.verdict.trace)

    @property
    def config(self) -> Config:
        """The configuration the failure happened in."""
        return self.verdict.state.config

    @property
    def state(self) -> ClusterState:
        """The model state at the failure."""
        return self.verdict.state

    @property
    def replayed(self) -> Subject:
        """The subject that replays this finding: ``subject`` at ``config``."""
        return self.subject.with_config(self.config)


def findings(verdict: Verdict, subject: Subject, search: Search = Search()) -> tuple[Finding, ...]:
    """The findings a verdict is: one per failing property of a property verdict
    (``Verdict.for_property``), one for any other kind."""
    split = verdict.kind in ("property", "liveness")   # one finding per failing property or goal
    parts = [verdict.for_property(p) for p in verdict.properties] if split else [verdict]
    return tuple(Finding(v, subject, search) for v in parts)


@attrs.frozen
class RunRecord:
    """What one machine run did, and found.

    test_id: the test (or campaign target) that ran it; subject: what was under
    test; profile: the Hypothesis settings profile (``"explore"`` for an explorer
    run); seed: the run's seed (None: random or derandomized); started_at (UTC)
    and duration_s (seconds); examples, steps: examples run and actions checked;
    family_counts, action_counts, event_counts: per action family, action class
    and coverage event (``check.coverage``); failed: whether the run raised;
    findings: what it found (empty without a check failure)."""

    test_id: str
    subject: Subject
    profile: str
    seed: Optional[str]
    started_at: _dt.datetime
    duration_s: float
    examples: int
    steps: int
    family_counts: dict[str, int]
    action_counts: dict[str, int]
    event_counts: dict[str, int]
    failed: bool
    findings: tuple[Finding, ...] = ()
