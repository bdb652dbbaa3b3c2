"""``replicheck fuzz`` / ``make fuzz``: the campaign (``campaign.runner``) with a
progress display, then its kill matrix, the Spark report and the verdict, all
within the budget. ``replicheck fuzz --implementation kafka`` / ``make
fuzz-kafka``: Kafka's own code in lockstep with the model, on every worker."""

from __future__ import annotations

import math
import os
import secrets
import signal
import threading
import time
from pathlib import Path
from typing import Any, Optional

import attrs

from campaign.known import load_known
from campaign.plan import Campaign, check_budget
from campaign.runner import GRACE_S, CampaignResult, run_campaign
from campaign.scheduler import Progress
from campaign.spark_checks import check_shared_corpus
from campaign.targets import Target, all_targets
from campaign.unit import ENGINES
from check.implementations import ImplementationUnavailable, unavailable
from store.fs import RemotePath, location
from store.nofollow import LinkRefused, folder
from store.writer import new_run_id

from .display import Display
from .live import LiveView
from .report_job import ReportOutcome, ReportProcess, build_report_within, report_master, report_reserve_s
from .verdicts import counts_line, final_line, kill_matrix



class SigtermInterrupts:
    """Within ``with``, SIGTERM (``timeout``, a CI runner, ``docker stop``,
    ``kill``) interrupts as Ctrl-C does — KeyboardInterrupt, so the runner stops
    the workers (they write what they found) and returns its partial results —
    while ``raising`` is true, and only the first time: a later SIGTERM, or one
    after ``raising`` was set false, is only noted in ``received`` (the signal
    numbers), so that it cannot cut short the stopping or the printing of the
    results (SIGKILL still ends everything). The previous handler comes back
    at the end of the ``with``. Outside the main thread it does nothing."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.raising = True
        self._previous: object = None
        self._installed = False

    def _handle(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        if self.raising and len(self.received) == 1:
            raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")

    def __enter__(self) -> "SigtermInterrupts":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)  # type: ignore[arg-type]
            self._installed = False


def _tuple(value: Any) -> tuple:
    return tuple(value or ())


@attrs.frozen
class FuzzRequest:
    """What ``replicheck fuzz`` was asked for.

    minutes: the whole budget, the report included (a finite number > 0).
    workers: worker processes (None: the machine's cores); with ``master``, how
      many units run at once as Spark tasks (None: the executors' cores).
    variants, bugs: only these flaws (names; none given: every one).
    corpus_dir: a folder or a URI (``store.fs``). report_dir: where the Spark
      report goes (None: no report, the whole budget to the search).
    include_correct: the correct protocol + SUT as targets too (``correct``, and
      ``profile:NAME`` for Kafka's profile when no variant or bug is named).
    seed: an integer >= 0 makes every target's runs draw the same examples each
      time (``campaign.runner`` says what else is and is not reproducible); None:
      a random one, printed so that the campaign can be run again.
    implementation: a name of ``check.implementations.NAMES``: only that
      implementation in lockstep with the model, on every worker.
    engine: how the targets are searched (``campaign.unit.ENGINES``).
    correct_only: only the correct protocol + SUT, on every worker for the whole
      budget (a long search for new bugs, failing only on a real counterexample).
    live, live_dir: the live view (``replicheck_cli.live``), ``live.html`` in
      ``live_dir`` (None: ``report_dir``; no folder: no live view).
    master: a Spark master URL: the units run as Spark tasks on its executors
      (``campaign.spark_pool``), ``corpus_dir`` a folder every executor writes
      (or a URI).
    known: a file of known disagreements, or a corpus (``campaign.known``): the
      runs go on past them, and they fail no target."""

    minutes: float = 5.0
    workers: Optional[int] = None
    variants: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    bugs: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    corpus_dir: str | os.PathLike = "corpus"
    report_dir: Optional[str | os.PathLike] = "report"
    include_correct: bool = True
    seed: Optional[int] = None
    implementation: Optional[str] = None
    engine: str = "explore"
    correct_only: bool = False
    live: bool = True
    live_dir: Optional[str | os.PathLike] = None
    master: Optional[str] = None
    known: Optional[str | os.PathLike] = None

    @property
    def budget_s(self) -> float:
        return self.minutes * 60


@attrs.frozen
class _Session:
    """A campaign being run: the request, its targets and workers, the seed it
    draws from, the corpus's location, its run id and log, when it started and
    how much of its budget is the search's."""

    request: FuzzRequest
    targets: tuple[Target, ...]
    workers: int
    seed: int
    corpus: Any
    run_id: str
    log: Path
    started: float
    search_s: float
    known: frozenset[str] = frozenset()

    def plan(self) -> Campaign:
        r = self.request
        return Campaign(self.targets, self.search_s, self.workers if r.master is None else r.workers, seed=self.seed,
                        corpus_dir=str(self.corpus), run_id=self.run_id, engine=r.engine, master=r.master,
                        log_path=str(self.log), known=self.known)


def _checked(r: FuzzRequest) -> tuple[list[Target], int]:
    """The request's targets and worker count; ValueError or
    ImplementationUnavailable naming what is wrong, before anything runs."""
    if isinstance(r.minutes, bool) or not isinstance(r.minutes, (int, float)) or not math.isfinite(r.minutes) \
            or r.minutes <= 0:
        raise ValueError(f"minutes must be a finite number > 0, got {r.minutes!r}")
    n_workers = (os.cpu_count() or 1) if r.workers is None else r.workers
    check_budget(r.budget_s, n_workers, r.seed)
    problem = check_shared_corpus(r.corpus_dir, "corpus_dir")
    if problem is not None:   # before a folder is made of it
        raise ValueError(problem)
    if r.engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {r.engine!r}")
    targets = all_targets(list(r.variants) or None, list(r.bugs) or None, r.include_correct, r.implementation,
                          r.correct_only)
    if r.implementation is not None:
        why = unavailable(r.implementation)
        if why is not None:
            raise ImplementationUnavailable(f"implementation {r.implementation} is unavailable: {why}")
    return targets, n_workers


def _session(r: FuzzRequest) -> _Session:
    """The campaign the request makes (its folders made), checked first."""
    started = time.time()
    targets, n_workers = _checked(r)
    known = frozenset() if r.known is None else load_known(r.known)
    corpus = location(r.corpus_dir)
    corpus = corpus if isinstance(corpus, RemotePath) else corpus.resolve()
    run_id = new_run_id()
    # The logs are local files: beside a local corpus, else in the report folder.
    logs = Path(r.live_dir or r.report_dir or ".").resolve() / "logs" if isinstance(corpus, RemotePath) \
        else corpus / "logs"
    log = logs / f"campaign-{run_id}.log"
    try:
        with folder(logs.parent, logs.name):   # made; a planted link is refused, not written through
            pass
    except LinkRefused as e:
        raise ValueError(str(e)) from None
    reserve_s = report_reserve_s(corpus, len(targets), r.budget_s) if r.report_dir is not None else 0.0
    return _Session(r, tuple(targets), n_workers, secrets.randbits(32) if r.seed is None else r.seed, corpus,
                    run_id, log, started, max(1.0, r.budget_s - reserve_s - GRACE_S), known)


def _announce(session: _Session) -> None:
    r, targets, n = session.request, session.targets, session.workers
    what = f"{len(targets)} target{'s' if len(targets) != 1 else ''}" if r.implementation is None else \
        f"{targets[0].label} (a shard on every worker)"
    where = f"{n} worker{'s' if n != 1 else ''}" if r.master is None else \
        f"the executors of {r.master} ({'one unit per core' if r.workers is None else f'{r.workers} units at once'})"
    print(f"replicheck fuzz: {what} on {where}, {r.minutes:g} min"
          f"{' (report included)' if r.report_dir is not None else ''}, seed {session.seed}, corpus {session.corpus}",
          flush=True)
    if r.known is not None:
        n = len(session.known)
        print(f"going on past {n} known disagreement{'s' if n != 1 else ''} ({r.known})", flush=True)


def _live_view(session: _Session) -> Optional[LiveView]:
    """The live view, started (None: asked for none, or no folder for it)."""
    r = session.request
    folder = r.live_dir if r.live_dir is not None else r.report_dir
    if not r.live or folder is None:
        return None
    view = LiveView(Path(folder).resolve(), session.corpus, targets=[t.label for t in session.targets],
                    run_id=session.run_id, budget_s=r.budget_s, search_s=session.search_s, seed=session.seed,
                    workers=session.workers if r.master is None else r.workers)
    print(f"live view: {view.path}", flush=True)
    view.start()
    return view


def fuzz(request: FuzzRequest) -> int:
    """Run the campaign ``request`` asks for (report included) and print its
    progress, kill matrix, report path and verdict; returns the exit status: 0
    when the correct protocol + SUT (or the implementation) never failed and
    every selected flaw was found, 1 otherwise, 130 when interrupted by Ctrl-C,
    143 by SIGTERM: the workers are stopped, what they found is in the corpus,
    and the kill matrix shows the targets still searching as ``stopped``.

    ValueError names a bad ``minutes``, ``workers``, ``seed``, ``engine``, variant,
    bug or implementation (or variants or bugs given with an implementation);
    ``ImplementationUnavailable`` says why the implementation cannot be built
    here; ``SparkUnavailable`` why Spark cannot run the units. All come before any
    run starts."""
    session = _session(request)
    _announce(session)
    live_view = _live_view(session)
    # Spark starts and warms up while the search runs; stopped however the campaign ends.
    with _report_process(session) as report, SigtermInterrupts() as term:
        with Display(session.search_s) as display:
            def on_progress(p: Progress) -> None:
                display.update(p)
                if live_view is not None:
                    live_view.update(p)   # never raises: a page it cannot write is warned about once
            try:
                result = run_campaign(session.plan(), on_progress=on_progress)
            except BaseException as exc:   # the page must not say "running" for ever
                if live_view is not None:
                    live_view.abandon(f"{type(exc).__name__}: {exc}")
                raise
        term.raising = False   # from here on a SIGTERM is only noted: the results are printed
        if live_view is not None:
            live_view.finish(result)
        return _finish(session, result, term.received, report)


class _ReportAtTheEnd:
    """The report of a campaign on a standalone cluster (or of none): built by
    a process started when the search is over (``build_report_within``), since
    a report application started meanwhile would take the cluster's cores
    from the campaign's, or wait for them."""

    def __init__(self, out_dir: Path, master: Optional[str]) -> None:
        self.out_dir, self.master = out_dir, master

    def __enter__(self) -> "_ReportAtTheEnd":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def build(self, corpus: Any, seconds: float, targets: list[str], run_id: str) -> ReportOutcome:
        return build_report_within(corpus, self.out_dir, seconds, targets, run_id, self.master)


def _report_process(session: _Session) -> "ReportProcess | _ReportAtTheEnd":
    """The campaign's report process (``report_job.ReportProcess``), started
    now, warming Spark up while the search runs; on a standalone cluster, or
    without a report, one started at the end."""
    r = session.request
    out = Path(r.report_dir or ".").resolve()
    if r.report_dir is None or report_master(r.master) != "local[*]":
        return _ReportAtTheEnd(out, r.master)
    return ReportProcess(out)


def _report(session: _Session, result: CampaignResult, process: "ReportProcess | _ReportAtTheEnd") -> None:
    """Build the Spark report within what is left of the budget, and say where it
    is, or why it was not built and how to build it."""
    r = session.request
    left = session.started + r.budget_s - time.time()
    outcome = process.build(session.corpus, left, [t.label for t in session.targets], session.run_id)
    if outcome.path is not None:
        print(f"\nreport: {outcome.path}  (Spark's log: {outcome.log})", flush=True)
        return
    on = report_master(r.master)   # the campaign's verdict stands without the report
    print(f"\nthe Spark report was not built: {outcome.problem}; Spark's log: {outcome.log}; build it with "
          f"`replicheck report {session.corpus} --out {r.report_dir}{'' if on == 'local[*]' else f' --master {on}'}`",
          flush=True)


def _finish(session: _Session, result: CampaignResult, received: list[int], report: Any) -> int:
    """Print the campaign's results (the kill matrix, the counts, the report
    ``report``, a ``ReportProcess``, builds, the final line); returns the exit
    status (``fuzz``)."""
    if result.interrupted:
        how = signal.Signals(received[0]).name if received else "Ctrl-C"
        print(f"\ninterrupted ({how}): the workers were stopped; what they found is in {session.corpus}", flush=True)
    print("\nkill matrix (this campaign):\n" + kill_matrix(result), flush=True)
    print(counts_line(result), flush=True)
    if session.request.report_dir is not None and not result.interrupted and not received:
        _report(session, result, report)
    log = session.log
    if log.exists() and log.stat().st_size:
        print(f"workers' output (warnings, errors): {log}", flush=True)
    elif log.exists():
        log.unlink()
    print(final_line(result), flush=True)
    if result.interrupted:
        return 128 + received[0] if received else 130
    return 0 if result.ok else 1
