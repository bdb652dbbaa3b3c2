"""The campaign's progress display: a line per target whose verdict is final
(its flaw found, the correct target failed, an error), and a status of the
budget, targets done / searching / waiting, examples, checked steps per second and finds —
a live bar (rich) on a terminal, a line every ``interval_s`` seconds otherwise
(a CI log)."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional, TextIO

from campaign.scheduler import ERROR, FOUND, Progress, TargetResult


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def finished_line(t: TargetResult) -> str:
    """One target whose verdict became final."""
    if t.verdict == FOUND and t.target.runs_whole_share:
        return f"FAILED     {t.target.label}  {t.found}: a real counterexample ({t.why})"
    if t.verdict == FOUND:
        return f"found      {t.target.label}  {t.why}"
    if t.verdict == ERROR:
        return f"error      {t.target.label}  {t.why}"
    return f"{t.verdict:<10} {t.target.label}  {t.why}"


def status_line(p: Progress, budget_s: float) -> str:
    """Where the campaign is: its search's time (of ``budget_s`` seconds), targets
    whose verdict is final / still searching / not started, examples, checked
    steps and their rate (steps: the measure both engines share; an explorer's
    example is long and branches), targets with a counterexample, and the
    counterexamples still to reduce (when there are any)."""
    rate = p.steps / p.elapsed_s if p.elapsed_s > 0 else 0.0
    return (f"search {_clock(p.elapsed_s)}/{_clock(budget_s)}  {len(p.finished)}/{p.targets} done, "
            f"{p.searching} searching, {p.waiting} waiting  {p.examples:,} examples, {p.steps:,} steps "
            f"{rate:,.0f}/s  {p.finds} found" + (f", {p.reductions} to reduce" if p.reductions else ""))


class Display:
    """Shows a campaign's ``Progress`` snapshots (``update``), within ``with``.
    ``budget_s``: the search's seconds (the bar's length); ``out``: where to
    write (stdout); the live bar only when ``out`` is a terminal."""

    def __init__(self, budget_s: float, out: Optional[TextIO] = None, interval_s: float = 15.0) -> None:
        self.budget_s = budget_s
        self.out = out or sys.stdout
        self.interval_s = interval_s
        self._shown = 0
        self._last_status = time.monotonic()
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> "Display":
        if self.out.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, Progress as Bar, SpinnerColumn, TextColumn
            self._progress = Bar(SpinnerColumn(), BarColumn(bar_width=12), TextColumn("{task.description}"),
                                 console=Console(file=self.out, highlight=False), transient=True)
            self._task = self._progress.add_task("starting the workers", total=self.budget_s)
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _print(self, line: str) -> None:
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=self.out, flush=True)

    def update(self, p: Progress) -> None:
        for t in p.finished[self._shown:]:
            self._print(finished_line(t))
        self._shown = len(p.finished)
        if self._progress is not None:
            self._progress.update(self._task, completed=min(p.elapsed_s, self.budget_s),
                                  description=status_line(p, self.budget_s))
        elif time.monotonic() - self._last_status >= self.interval_s:
            self._last_status = time.monotonic()
            self._print(status_line(p, self.budget_s))
