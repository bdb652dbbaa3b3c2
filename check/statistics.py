"""What one machine run did, as a value: ``RunRecord``.

A run is all the examples of one machine class under one driver (Hypothesis's
``run_state_machine_as_test``, or the explorer). ``RunObserver`` watches it: the
wall clock, the machine class's ``RunStats`` (as a delta, so a class run twice is
counted per run), Hypothesis's statistics (the fallback for the first failure)
and the exception the run raised; ``record()`` gives the ``RunRecord``, its
findings included (``check.finding``). The store writes it
(``store.rows.run_row``, ``store.rows.counterexample_rows``); the campaign and
the pytest plugin record it.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections import Counter
from typing import Any, Optional

import attrs
from hypothesis.statistics import collector

from .failures import findings_of
from .finding import Finding, RunRecord, Search, findings
from .provenance import hypothesis_profile, hypothesis_seed
from .subject import Subject
from .verdict import Verdict


@attrs.define
class RunStats:
    """What one machine run (all its examples) did: the ``runs`` table's baseline
    for lift analysis. Accumulated by every example's teardown."""

    examples: int = 0
    steps: int = 0
    started: Optional[float] = None            # time.monotonic() of the first example
    first_failure_s: Optional[float] = None    # seconds from the start to the first failure
    first_failure_examples: Optional[int] = None  # examples run when it was found (1-based)
    family_counts: Counter = attrs.Factory(Counter)
    action_counts: Counter = attrs.Factory(Counter)
    event_counts: Counter = attrs.Factory(Counter)


def first_failure(statistics: Optional[dict]) -> tuple[Optional[int], Optional[float]]:
    """(examples run when the first failure was found, the failing one included;
    seconds spent running them) from Hypothesis's run statistics (reuse, then
    generate phase); (None, None) when no example failed there. The fallback of
    ``RunStats.first_failure_examples`` / ``first_failure_s``."""
    if not statistics:
        return None, None
    n, t = 0, 0.0
    for phase in ("reuse-phase", "generate-phase"):
        for case in statistics.get(phase, {}).get("test-cases", []):
            t += float(case.get("runtime", 0.0) or 0.0)
            n += 1
            if case.get("status") == "interesting":
                return n, t
    return None, None


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class RunObserver:
    """Observes one run of ``machine_cls`` (a ``check.machine.machine_for`` class;
    ``test_id`` defaults to its name). A context manager; ``fail(exc)`` takes the
    exception the run raised (leaving the context with one does it too: a run
    under Hypothesis or pytest), ``found(verdict)`` the failure a run returned
    (the explorer's); ``record()`` gives the ``RunRecord``. ``seed`` and
    ``profile`` may be set before ``record()`` (an explorer run's own)."""

    def __init__(self, machine_cls: type, test_id: Optional[str] = None, settings: Any = None) -> None:
        self.machine_cls = machine_cls
        self.test_id = test_id or machine_cls.__name__
        self.started_at: Optional[_dt.datetime] = None
        self.duration_s = 0.0
        self.statistics: Optional[dict] = None
        self.exception: Optional[BaseException] = None
        self.verdicts: list[Verdict] = []
        self._t0 = 0.0
        self._before: Optional[tuple] = None
        self._after: Optional[tuple] = None
        self._cm: Any = None
        self._prev: Any = None
        self._failure_noted_before = False
        self.profile = hypothesis_profile()
        if settings is None:
            settings = getattr(getattr(machine_cls, "TestCase", None), "settings", None)
        self.seed = hypothesis_seed(settings, machine_cls)

    @property
    def subject(self) -> Subject:
        return getattr(self.machine_cls, "subject", Subject())

    def first_failure(self) -> tuple[Optional[int], Optional[float]]:
        """(examples_to_failure, time_to_failure_s): the machine's own measure
        (``RunStats.first_failure_examples``: examples run when the first failure
        was found, 1-based; ``first_failure_s``: seconds from the first example),
        else Hypothesis's statistics (``first_failure``)."""
        s = getattr(self.machine_cls, "run_stats", None)
        if s is not None and not self._failure_noted_before and getattr(s, "first_failure_s", None) is not None:
            return getattr(s, "first_failure_examples", None), s.first_failure_s
        return first_failure(self.statistics)

    def _stats(self) -> tuple:
        s = getattr(self.machine_cls, "run_stats", None)
        if s is None:
            return 0, 0, Counter(), Counter(), Counter()
        return (s.examples, s.steps, Counter(s.family_counts), Counter(s.action_counts), Counter(s.event_counts))

    def _note(self, statistics: dict) -> None:
        self.statistics = statistics
        if self._prev is not None:
            self._prev(statistics)

    def start(self) -> "RunObserver":
        self.started_at = utcnow()
        self._t0 = time.perf_counter()
        self._before = self._stats()
        self._failure_noted_before = getattr(getattr(self.machine_cls, "run_stats", None), "first_failure_s", None) \
            is not None
        self._prev = collector.value
        self._cm = collector.with_value(self._note)
        self._cm.__enter__()
        return self

    def stop(self) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            cm.__exit__(None, None, None)
            self.duration_s = time.perf_counter() - self._t0
            self._after = self._stats()

    def __enter__(self) -> "RunObserver":
        return self.start()

    def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
        self.stop()
        if ev is not None and self.exception is None and isinstance(ev, Exception):
            self.fail(ev)

    def fail(self, exc: BaseException) -> None:
        self.exception = exc

    def found(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)

    @property
    def failed(self) -> bool:
        return self.exception is not None or bool(self.verdicts)

    def delta(self) -> tuple[int, int, Counter, Counter, Counter]:
        before = self._before or self._stats()
        after = self._after or self._stats()
        return (after[0] - before[0], after[1] - before[1], after[2] - before[2], after[3] - before[3],
                after[4] - before[4])

    def findings(self) -> tuple[Finding, ...]:
        """The run's findings, with its search (seed, first failure): those of the
        verdicts it returned, and of every ``CheckFailed`` in the exception it
        raised."""
        if not self.failed:
            return ()
        examples, elapsed = self.first_failure()
        search = Search(self.test_id, self.seed, examples, elapsed)
        returned = tuple(f for v in self.verdicts for f in findings(v, self.subject, search))
        return returned + (() if self.exception is None else findings_of(self.exception, self.subject, search))

    def record(self) -> RunRecord:
        """What the run did, and found, so far."""
        examples, steps, families, actions, events = self.delta()
        return RunRecord(self.test_id, self.subject, self.profile, self.seed, self.started_at or utcnow(),
                         float(self.duration_s), int(examples), int(steps), dict(families), dict(actions),
                         dict(events), self.failed, self.findings())
