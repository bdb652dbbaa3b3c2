"""Which work unit runs next, and each target's verdict: a scheduler that never
starves a target.

The policy (``Scheduler.next_unit``, asked whenever a worker is free):

- every target gets a first unit before any target gets a second, in the
  campaign's order;
- then the target still searching that has had the least worker time (its
  finished units, plus the shares of its units running) goes next: the time a
  finished target does not need goes to those still searching. While a flaw is
  still searching, the time of a target that runs its whole share (the correct
  protocol's, a profile's, an implementation's) counts ``WHOLE_SHARE_WAIT``
  times over: the flaws, which the campaign promises to find, get the larger
  share, and the last one unfound most of the workers, rather than a third of
  them beside two correct targets; those get every worker once the flaws are
  found;
- a flaw's target (variant, bug) leaves the schedule at its first
  counterexample; the correct target and an implementation's stay until the
  end, failing only on a real counterexample;
- a unit's share is the search time left, times the workers, divided among the
  targets still searching, within ``MIN_UNIT_S``..``MAX_UNIT_S`` and never past
  the search's end: short enough that time moves to where it is needed, long
  enough that a unit is more than Hypothesis's start-up;
- a target already running gets another shard (its own series of runs, see
  ``campaign.unit.Target.shard``) when it is still the fairest choice: every
  worker of an implementation's campaign, the correct target once the flaws are
  found;
- a target whose unit was lost with its worker (a crash) gets one more try; a
  second loss, or an error of the harness, ends its search;
- a flaw's counterexample is written as found and reduced later, by a unit of
  its own (``WorkUnit.reduce``): the worker time a reduction costs (seconds, up
  to ``campaign.unit.REDUCE_S``) goes first to the flaws still unfound.
  Reductions are handed out, oldest first, once no flaw is searching, or when the
  search time left falls to their estimate (``REDUCE_ESTIMATE_S`` each, over the
  workers; at most ``REDUCE_RESERVE_SHARE`` of the search), and after the
  search's end while the deadline leaves ``MIN_REDUCE_START_S``. One not reached
  stays in the corpus as the search found it.

Verdicts (``TargetResult.verdict``): ``found``, ``not found``, ``clean``,
``not run``, ``error`` or ``stopped``, each with a one-line ``why``. A target
that never ran is ``not run`` ("the budget ran out before it was scheduled",
"its worker crashed", …), never ``not found``; one whose worker crashed after
it ran (a lost unit: SIGKILL, the out-of-memory killer) and that found nothing
is ``error`` ("its worker crashed …"), never ``not found`` or ``clean``; one
still searching when the campaign was interrupted is ``stopped``. A target
passes when a flaw is ``found``, or when the correct target or an
implementation is ``clean``.
"""

from __future__ import annotations

from typing import Optional

import attrs

from .plan import Campaign
from .targets import Target

from .unit import REDUCE_S, SearchTally, UnitResult, WorkUnit
from .workers import check_workers

MIN_UNIT_S = 5.0     # a run of EXAMPLES_PER_RUN examples takes about this long
MAX_UNIT_S = 60.0
MIN_START_S = 1.0    # no unit starts with less search time left than this
MAX_LOSSES = 2       # units a target may lose with its worker before its search ends
#: A deferred reduction's expected worker seconds: a campaign's finds reduce in
#: about 1 s each on an idle core (benchmarks/reduce_cost.py --corpus: 52 rows in
#: 58 s), their timelines included, and twice that on a loaded one.
REDUCE_ESTIMATE_S = 2.0
#: At most this share of the search is kept for reductions: they also have the
#: campaign's finish (``campaign.plan.FINISH_S``), which no search unit starts in.
REDUCE_RESERVE_SHARE = 0.1
MIN_REDUCE_START_S = 2.0      # no reduction starts with less time before the deadline
#: How many times over a whole-share target's worker time counts while a flaw's
#: target still searches (module doc): each then gets a quarter of a flaw's share.
WHOLE_SHARE_WAIT = 4.0

FOUND, NOT_FOUND, CLEAN, NOT_RUN, ERROR = "found", "not found", "clean", "not run", "error"
#: A target still searching when the campaign was interrupted (Ctrl-C, SIGTERM).
STOPPED = "stopped"
#: found / not found: a flaw's target; clean (or found: it failed): the correct
#: target's and an implementation's; stopped: either, interrupted.
VERDICTS = (FOUND, NOT_FOUND, CLEAN, NOT_RUN, ERROR, STOPPED)

#: Why a target never ran, when nothing else says why.
NOT_SCHEDULED = "the budget ran out before it was scheduled"


@attrs.frozen
class TargetResult(SearchTally):
    """One target's verdict and what its units did together (``SearchTally``:
    runs, examples, steps over every unit, a lost unit's runs as far as they were
    reported; seconds: worker seconds spent on the target; first_failure_s /
    first_failure_examples: worker seconds and examples spent on the target up to
    its first failure, units of several shards running at once added up).

    verdict: one of ``VERDICTS``; why: one line saying why. units: how many
    units it had."""

    target: Target
    verdict: str
    why: str
    units: int = 0

    @property
    def ok(self) -> bool:
        """Whether the target passes: its flaw found, or (the correct target, an
        implementation) searched and clean."""
        return self.verdict == (CLEAN if self.target.runs_whole_share else FOUND)

    @property
    def failure(self) -> Optional[str]:
        """How the target fails the campaign, for the final line ("failed",
        "not found", "not run", "error"); None when it passes."""
        if self.ok:
            return None
        if self.verdict == FOUND:
            return "failed"
        return self.verdict


@attrs.frozen
class Progress:
    """A snapshot of the campaign for a display. targets: how many in all;
    finished: the targets whose verdict is final (their flaw found, an error), in
    the order they finished, each as it stands now (a find's reduction replaces
    its counterexample ids); searching: targets running or still to run again;
    waiting: targets not started yet; examples, steps, runs: so far (running
    units as far as reported); finds: targets with a counterexample;
    elapsed_s: seconds since the campaign started; reductions: counterexamples
    written as found and not yet reduced (running reductions included)."""

    targets: int
    finished: tuple[TargetResult, ...]
    searching: int
    waiting: int
    examples: int
    steps: int
    runs: int
    finds: int
    elapsed_s: float
    reductions: int = 0


@attrs.define
class _Track:
    """The scheduler's bookkeeping of one target."""

    target: Target
    done: list[UnitResult] = attrs.Factory(list)
    started: int = 0
    next_run: dict[int, int] = attrs.Factory(dict)    # shard -> its next run
    running: dict[int, float] = attrs.Factory(dict)   # shard -> share of its unit in flight
    partial: dict[int, UnitResult] = attrs.Factory(dict)  # shard -> its unit's progress
    lost: list[str] = attrs.Factory(list)             # why units were lost with their worker
    stopped: list[str] = attrs.Factory(list)          # why units were stopped (the campaign's end)
    lost_results: list[UnitResult] = attrs.Factory(list)
    unreduced: list = attrs.Factory(list)             # its finds written as found, not yet handed out
    reducing: int = 0                                 # its reduction units in flight

    @property
    def spent_s(self) -> float:
        return sum(r.seconds for r in self.done) + sum(r.seconds for r in self.lost_results)

    @property
    def found(self) -> Optional[UnitResult]:
        """The first unit with a counterexample: a finished one, or a lost one
        that reported it (its rows were written when found)."""
        return next((r for r in self.done + self.lost_results if r.found is not None), None)

    @property
    def error(self) -> Optional[str]:
        return next((r.error for r in self.done if r.error is not None), None)

    @property
    def signatures(self) -> frozenset[str]:
        """What its units found, by signature (a running one's as far as reported):
        its next units go on past them."""
        units = self.done + self.lost_results + list(self.partial.values())
        return frozenset(s for r in units for s in r.signatures)

    @property
    def searching(self) -> bool:
        """Whether the target may get another unit."""
        if self.error is not None or len(self.lost) >= MAX_LOSSES:
            return False
        return self.target.runs_whole_share or self.found is None


class Scheduler:
    """Hands out ``WorkUnit``s for the targets of ``plan`` (``campaign.plan.
    Campaign``: its seed, corpus, run id and engine go with every unit; shards
    are the scheduler's) to ``workers`` workers until ``search_end``
    (``time.time()`` seconds), each unit with ``deadline`` (no run starts, and
    shrinking and reduction stop, by then; default ``search_end``); ``started``:
    the campaign's start, for ``snapshot``'s elapsed time. Not thread-safe: one
    runner drives it. ValueError when ``workers`` is below 1."""

    def __init__(self, plan: Campaign, workers: int, search_end: float, deadline: Optional[float] = None,
                 started: Optional[float] = None) -> None:
        check_workers(workers)
        self.plan = plan
        self.tracks = [_Track(attrs.evolve(t, shard=0)) for t in plan.targets]
        self._by_label = {t.target.label: t for t in self.tracks}
        self.workers = workers
        self.search_end = search_end
        self.deadline = search_end if deadline is None else deadline
        self.started = started
        self._finished: list[_Track] = []   # in the order their verdicts became final

    # ------------------------------------------------------------ handing out

    def next_unit(self, now: float) -> Optional[WorkUnit]:
        """The next unit to run (its shard marked running), or None: no search
        time left, or no target still searching, and no reduction due."""
        left = self.search_end - now
        searching = [t for t in self.tracks if t.searching]
        reduction = self._next_reduction(now, searching)
        if reduction is not None:
            return reduction
        if left < MIN_START_S or not searching:
            return None
        fresh = [t for t in searching if t.started == 0]
        flaws_searching = any(not t.target.runs_whole_share for t in searching)

        def served(t: _Track) -> float:
            spent = t.spent_s + sum(t.running.values())
            return spent * WHOLE_SHARE_WAIT if flaws_searching and t.target.runs_whole_share else spent

        track = fresh[0] if fresh else min(searching, key=served)
        share = min(left, max(MIN_UNIT_S, min(MAX_UNIT_S, left * self.workers / len(searching))))
        shard = next(s for s in range(len(track.running) + 1) if s not in track.running)
        track.running[shard] = share
        track.started += 1
        plan = self.plan
        return WorkUnit(attrs.evolve(track.target, shard=shard), share, first_run=track.next_run.get(shard, 0),
                        seed=plan.seed, corpus_dir=None if plan.corpus_dir is None else str(plan.corpus_dir),
                        run_id=plan.run_id, deadline=self.deadline, engine=plan.engine,
                        known=plan.known | track.signatures,
                        defer_reduction=plan.corpus_dir is not None and not track.target.runs_whole_share)

    def _next_reduction(self, now: float, searching: list[_Track]) -> Optional[WorkUnit]:
        """The oldest find's reduction unit when reductions are due (module
        doc), else None."""
        waiting = [t for t in self.tracks if t.unreduced]
        if not waiting or self.deadline - now < MIN_REDUCE_START_S:
            return None
        pending = sum(len(t.unreduced) for t in self.tracks)
        span = self.search_end - (self.started if self.started is not None else now)
        reserve = min(pending * REDUCE_ESTIMATE_S / self.workers, REDUCE_RESERVE_SHARE * max(span, 0.0))
        flaws_searching = any(not t.target.runs_whole_share for t in searching)
        if flaws_searching and self.search_end - now > reserve:
            return None
        track = waiting[0]
        found = track.unreduced.pop(0)
        track.reducing += 1
        plan = self.plan
        return WorkUnit(track.target, min(REDUCE_S, self.deadline - now), seed=plan.seed,
                        corpus_dir=None if plan.corpus_dir is None else str(plan.corpus_dir), run_id=plan.run_id,
                        deadline=self.deadline, engine=plan.engine, reduce=found)

    # ------------------------------------------------------------ coming back

    def _track(self, unit: WorkUnit) -> _Track:
        return self._by_label[unit.target.label]

    def progress(self, unit: WorkUnit, partial: UnitResult) -> None:
        """A running unit's result so far (for the display)."""
        self._track(unit).partial[unit.target.shard] = partial

    def finished(self, unit: WorkUnit, result: UnitResult) -> None:
        """``unit`` came back with ``result``."""
        track = self._track(unit)
        if unit.reduce is not None:
            track.reducing -= 1
            track.done.append(result)
            return
        track.unreduced.extend(result.unreduced)
        shard = unit.target.shard
        track.running.pop(shard, None)
        track.partial.pop(shard, None)
        track.next_run[shard] = unit.first_run + result.runs
        was_final = self._final(track)
        track.done.append(result)
        self._note_if_final(track, was_final)

    def lost(self, unit: WorkUnit, why: str, retry: bool = True) -> None:
        """``unit`` never came back (``why``: its worker crashed, it was stopped).
        Its runs as far as reported count; its rows were not written. With
        ``retry`` the loss counts towards ``MAX_LOSSES`` and the shard's next unit
        skips the run it was in (which may be the one that crashed). A lost
        reduction costs nothing but itself: its find stays as it was found."""
        track = self._track(unit)
        if unit.reduce is not None:
            track.reducing -= 1
            return
        shard = unit.target.shard
        track.running.pop(shard, None)
        partial = track.partial.pop(shard, None) or UnitResult(unit.target)
        track.lost_results.append(partial)
        track.next_run[shard] = unit.first_run + partial.runs + 1
        if not retry:
            track.stopped.append(why)
            return
        was_final = self._final(track)
        track.lost.append(why)
        self._note_if_final(track, was_final)

    @staticmethod
    def _final(track: _Track) -> bool:
        """Whether the target's verdict can no longer change: its search ended, or
        the correct target or an implementation failed (it searches on for other
        counterexamples, but has failed)."""
        return not track.searching or (track.target.runs_whole_share and track.found is not None)

    def _note_if_final(self, track: _Track, was_final: bool) -> None:
        if not was_final and self._final(track):
            self._finished.append(track)

    @property
    def running(self) -> int:
        """Units handed out and not yet back."""
        return sum(len(t.running) + t.reducing for t in self.tracks)

    # ------------------------------------------------------------ verdicts

    def _result(self, track: _Track, why_not_run: str, interrupted: bool = False) -> TargetResult:
        units = track.done + track.lost_results
        runs = sum(r.runs for r in units)
        examples = sum(r.examples for r in units)
        found = track.found
        first_s = first_examples = None
        if found is not None:
            before = units[:units.index(found)]
            if found.first_failure_s is not None:
                first_s = sum(r.seconds for r in before) + found.first_failure_s
            if found.first_failure_examples is not None:
                first_examples = sum(r.examples for r in before) + found.first_failure_examples
        replaced = {i for r in units for i in r.replaced}
        ids = tuple(dict.fromkeys(i for r in units for i in r.counterexample_ids if i not in replaced))
        shrunk = [r.shrunk_steps for r in units if r.shrunk_steps is not None]
        reduced = [r.reduced_steps for r in units if r.reduced_steps is not None]
        seconds = sum(r.seconds for r in units)
        signatures = tuple(dict.fromkeys(s for r in units for s in r.signatures))
        known_met = sum(r.known_met for r in units)
        notes = "".join(f"; {why}" for why in dict.fromkeys(track.lost + track.stopped)) + \
            (f"; went on past a known disagreement {known_met} time{'s' if known_met != 1 else ''}" if known_met
             else "")
        if found is not None:
            verdict = FOUND
            why = f"{found.found} after {first_s or 0:.1f} s ({first_examples or 0} examples)" + \
                (f"; {len(signatures)} distinct signatures" if len(signatures) > 1 else "")
        elif track.error is not None:
            verdict, why = ERROR, track.error
        elif interrupted and track.started and track.searching:
            verdict = STOPPED
            why = f"the campaign was interrupted after {runs} run{'s' if runs != 1 else ''} ({examples} examples, " \
                  f"{seconds:.0f} s) without a counterexample" + "".join(f"; {w}" for w in dict.fromkeys(track.lost))
        elif runs == 0:
            verdict = NOT_RUN
            ended = f"its unit{'s' if len(units) != 1 else ''} ended before a run completed ({seconds:.0f} s)"
            why = next(iter(track.lost + track.stopped), ended) if track.started else why_not_run
        elif len(track.lost) >= MAX_LOSSES:
            verdict, why = ERROR, f"gave up after {len(track.lost)} lost units: {track.lost[-1]}"
        elif track.lost:
            verdict = ERROR
            why = f"{track.lost[-1]}; {runs} run{'s' if runs != 1 else ''} ({examples} examples, {seconds:.0f} s) " \
                  f"without a counterexample"
        else:
            verdict = CLEAN if track.target.runs_whole_share else NOT_FOUND
            why = f"no counterexample in {runs} run{'s' if runs != 1 else ''} ({examples} examples, " \
                  f"{seconds:.0f} s){notes}"
        return TargetResult(track.target, verdict, why, units=len(units), runs=runs, examples=examples,
                            steps=sum(r.steps for r in units), seconds=seconds,
                            found=None if found is None else found.found, first_failure_s=first_s,
                            first_failure_examples=first_examples, counterexample_ids=ids,
                            shrunk_steps=min(shrunk) if shrunk else None,
                            reduced_steps=min(reduced) if reduced else None, signatures=signatures,
                            known_met=known_met)

    def results(self, why_not_run: str = NOT_SCHEDULED, interrupted: bool = False) -> list[TargetResult]:
        """Every target's verdict, in the campaign's order (``why_not_run``: why a
        target that never started did not; ``interrupted``: the campaign was,
        so a target that started and has no counterexample nor error is
        ``stopped``)."""
        return [self._result(t, why_not_run, interrupted) for t in self.tracks]

    def snapshot(self, now: float) -> Progress:
        """What the display shows now."""
        partials = [p for t in self.tracks for p in t.partial.values()]
        units = [r for t in self.tracks for r in t.done + t.lost_results] + partials
        return Progress(
            # as they stand now: a find's reduction replaces its counterexample ids
            targets=len(self.tracks), finished=tuple(self._result(t, NOT_SCHEDULED) for t in self._finished),
            searching=sum(1 for t in self.tracks if t.searching and t.started),
            waiting=sum(1 for t in self.tracks if t.searching and not t.started),
            examples=sum(r.examples for r in units), steps=sum(r.steps for r in units),
            runs=sum(r.runs for r in units), finds=sum(1 for t in self.tracks if t.found is not None),
            elapsed_s=0.0 if self.started is None else now - self.started,
            reductions=sum(len(t.unreduced) + t.reducing for t in self.tracks))
