"""A finding made ready to keep: reduced, and with the timeline of its replay.

``reduced(finding, max_seconds)`` reduces the trace (``check.reduce.
reduce_counterexample``: delta debugging, smaller configurations), keeping what
the search found as ``Finding.shrunk``; ``with_timeline(finding)`` replays it once
more recording each step (``check.timeline``); ``refine`` does both, and
``refine_all`` shares a time budget among a run's findings. A finding is never
lost to either: when reduction or the timeline cannot be had, the finding is kept
as it was (with a ``RefineWarning`` where something broke).
"""

from __future__ import annotations

import time
import warnings
from typing import Optional, Sequence

import attrs

from .finding import Finding, Shrunk, findings
from .reduce import reduce_counterexample
from .replay import TraceNotEnabled, replay

#: The finding kinds reduction applies to. A harness error is kept as it happened.
REDUCIBLE_KINDS = ("property", "liveness", "divergence")


class RefineWarning(UserWarning):
    """A finding could not be reduced, or its timeline recorded, because something
    broke: it is kept as it was."""


def reduced(finding: Finding, max_seconds: float) -> Finding:
    """``finding`` with its trace reduced by ``reduce_counterexample`` (within
    ``max_seconds``, smaller configurations included): the verdict (trace,
    configuration, violation, state) is then the reduced one's, and ``shrunk``
    keeps the search's trace, its configuration and what was simplified. A
    property violation keeps its property, a divergence its kind.

    Returns ``finding`` itself when it is a harness error or reduced already, when
    its trace does not replay to the same failure, or (with a ``RefineWarning``)
    when reduction raises. Raises ValueError when ``max_seconds`` is not
    positive."""
    if not max_seconds > 0:
        raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
    if finding.kind not in REDUCIBLE_KINDS or finding.shrunk is not None:
        return finding
    subject = finding.replayed
    try:
        result = reduce_counterexample(finding.trace, subject, max_seconds=max_seconds,
                                       prop=finding.prop if finding.kind in ("property", "liveness") else None)
        verdict = replay(result.trace, subject.with_config(result.config)).verdict
    except (ValueError, TraceNotEnabled):  # the trace does not replay to the same failure
        return finding
    except Exception as e:  # a fault of reduction itself must not cost the finding
        warnings.warn(f"reduction of a {finding.prop} counterexample failed ({type(e).__name__}: {e}); "
                      f"it is kept as the search found it", RefineWarning, stacklevel=2)
        return finding
    again = [f for f in findings(verdict, finding.subject, finding.search) if f.prop == finding.prop] \
        if verdict is not None else []
    if not again:
        return finding
    return attrs.evolve(again[0], shrunk=Shrunk(finding.trace, finding.config, result.changes),
                        timeline=None)


def with_timeline(finding: Finding) -> Finding:
    """``finding`` with the timeline of its trace's replay (``check.replay`` with
    ``timeline=True``, the same subject), one ``Moment`` per step. Without one,
    with a ``RefineWarning``, when the replay does not apply every step."""
    if finding.timeline is not None:
        return finding
    try:
        result = replay(finding.trace, finding.replayed, timeline=True)
    except Exception as e:
        warnings.warn(f"the timeline of a {finding.prop} counterexample could not be recorded "
                      f"({type(e).__name__}: {e}); it is kept without", RefineWarning, stacklevel=2)
        return finding
    if len(result.timeline) != len(finding.trace):
        warnings.warn(f"the timeline of a {finding.prop} counterexample stopped at step {len(result.timeline)} "
                      f"of {len(finding.trace)} on replay; it is kept without", RefineWarning, stacklevel=2)
        return finding
    return attrs.evolve(finding, timeline=result.timeline)


def refine(finding: Finding, reduce_s: Optional[float] = None) -> Finding:
    """``with_timeline`` of ``finding``, reduced first within ``reduce_s`` seconds
    when given."""
    return with_timeline(finding if reduce_s is None else reduced(finding, reduce_s))


def refine_all(found: Sequence[Finding], reduce_s: Optional[float] = None) -> tuple[Finding, ...]:
    """``refine`` each finding of a run; with ``reduce_s``, within that many
    seconds in all: each gets an even part of what is left, so a failure of
    several properties costs no more than one."""
    if reduce_s is None:
        return tuple(refine(f) for f in found)
    end = time.monotonic() + reduce_s
    return tuple(refine(f, max(end - time.monotonic(), 0.1) / (len(found) - i)) for i, f in enumerate(found))
