"""``replicheck fuzz`` / ``make fuzz``: the campaign (``harness.runner``) with a
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
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from harness.runner import CampaignResult
    from harness.scheduler import Progress

#: Kept back from the budget for the Spark report: the JVM's start, a dozen small
#: jobs and the diagrams take 20-35 s on two cores for a campaign's corpus.
REPORT_RESERVE_S = 45.0


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


def fuzz(minutes: float = 5.0, workers: Optional[int] = None, variants: Optional[list[str]] = None,
         bugs: Optional[list[str]] = None, corpus_dir: str | os.PathLike = "corpus",
         report_dir: Optional[str | os.PathLike] = "report", include_correct: bool = True,
         seed: Optional[int] = None, implementation: Optional[str] = None, engine: str = "explore",
         correct_only: bool = False, live: bool = True, live_dir: Optional[str | os.PathLike] = None,
         master: Optional[str] = None) -> int:
    """Run the campaign for ``minutes`` (report included) on ``workers`` processes
    (None: the machine's cores) and print its progress, kill matrix, report path
    and verdict; returns the exit status: 0 when the correct protocol + SUT (or
    the implementation) never failed and every selected flaw was found, 1
    otherwise, 130 when interrupted by Ctrl-C, 143 by SIGTERM: the workers are
    stopped, what they found is in the corpus, and the kill matrix shows the
    targets still searching as ``stopped``.

    ``seed`` (an integer >= 0) makes every target's runs draw the same examples
    each time (``harness.runner`` says what else is and is not reproducible);
    None: a random one, printed so that the campaign can be run again.
    ``implementation`` (a name of ``harness.implementations.NAMES``): run only
    that implementation in lockstep with the model, on every worker. ``report_dir``
    None: no report, the whole budget to the search. ``correct_only``: only the
    correct protocol + SUT, on every worker for the whole budget (a long search
    for new bugs, failing only on a real counterexample). ``engine``: how the targets
    are searched (``harness.campaign.ENGINES``: ``explore``, the machine's policy
    under ``harness.explore``; ``hypothesis``, machine runs under Hypothesis).
    ``live``: the live view (``replicheck_cli.live``), ``live.html`` in
    ``live_dir`` (None: ``report_dir``; no folder: no live view), rewritten while
    the campaign runs; a page that cannot be written is warned about once.
    ``master``: a Spark master URL: the units run as Spark tasks on its
    executors (``harness.spark_pool``; ``workers`` None: one per executor
    core), ``corpus_dir`` a folder every executor writes (or a URI); ``SparkUnavailable``
    says why they cannot.

    ValueError names a bad ``minutes``, ``workers``, ``seed``, ``engine``, variant,
    bug or implementation (or variants or bugs given with an implementation);
    ``ImplementationUnavailable`` says why the implementation cannot be built
    here. Both come before any run starts."""
    from harness.campaign import all_targets
    from harness.corpus import new_run_id
    from harness.runner import GRACE_S, check_budget, run_campaign

    from .display import Display

    started = time.time()
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not math.isfinite(minutes) \
            or minutes <= 0:
        raise ValueError(f"minutes must be a finite number > 0, got {minutes!r}")
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    check_budget(minutes * 60, n_workers, seed)
    from harness.spark_checks import check_shared_corpus
    problem = check_shared_corpus(corpus_dir, "corpus_dir")
    if problem is not None:   # before a folder is made of it
        raise ValueError(problem)
    from harness.campaign import ENGINES
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    targets = all_targets(variants, bugs, include_correct, implementation, correct_only)
    if implementation is not None:
        from harness.implementations import ImplementationUnavailable, unavailable
        why = unavailable(implementation)
        if why is not None:
            raise ImplementationUnavailable(f"implementation {implementation} is unavailable: {why}")
    if seed is None:
        seed = secrets.randbits(32)
    from harness.corpus_fs import RemotePath, location
    corpus = location(corpus_dir)
    corpus = corpus if isinstance(corpus, RemotePath) else corpus.resolve()
    run_id = new_run_id()
    # The logs are local files: beside a local corpus, else in the report folder.
    logs = Path(live_dir or report_dir or ".").resolve() / "logs" if isinstance(corpus, RemotePath) else corpus / "logs"
    log = logs / f"campaign-{run_id}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    budget_s = minutes * 60
    reserve_s = min(REPORT_RESERVE_S, budget_s / 2) if report_dir is not None else 0.0
    search_s = max(1.0, budget_s - reserve_s - GRACE_S)
    what = f"{len(targets)} target{'s' if len(targets) != 1 else ''}" if implementation is None else \
        f"{targets[0].label} (a shard on every worker)"
    where = f"{n_workers} worker{'s' if n_workers != 1 else ''}" if master is None else \
        f"the executors of {master} ({'one unit per core' if workers is None else f'{workers} units at once'})"
    print(f"replicheck fuzz: {what} on {where}, {minutes:g} min"
          f"{' (report included)' if report_dir is not None else ''}, seed {seed}, corpus {corpus}", flush=True)
    live_view = None
    live_folder = live_dir if live_dir is not None else report_dir
    if live and live_folder is not None:
        from .live import LiveView
        live_view = LiveView(Path(live_folder).resolve(), corpus, targets=[t.label for t in targets], run_id=run_id,
                             budget_s=budget_s, search_s=search_s, seed=seed,
                             workers=n_workers if master is None else workers)
        print(f"live view: {live_view.path}", flush=True)
        live_view.start()
    with SigtermInterrupts() as term:
        with Display(search_s) as display:
            def on_progress(p: "Progress") -> None:
                display.update(p)
                if live_view is not None:
                    live_view.update(p)   # never raises: a page it cannot write is warned about once
            try:
                result = run_campaign(targets, search_s, n_workers if master is None else workers, seed=seed,
                                      corpus_dir=str(corpus), run_id=run_id, log_path=str(log),
                                      on_progress=on_progress, engine=engine, master=master)
            except BaseException as exc:   # the page must not say "running" for ever
                if live_view is not None:
                    live_view.abandon(f"{type(exc).__name__}: {exc}")
                raise
        term.raising = False   # from here on a SIGTERM is only noted: the results are printed
        if live_view is not None:
            live_view.finish(result)
        return _finish(result, term.received, started, budget_s, corpus, report_dir, targets, run_id, log, master)


def _finish(result: "CampaignResult", received: list[int], started: float, budget_s: float, corpus: Any,
            report_dir: Optional[str | os.PathLike], targets: list, run_id: str, log: Path,
            master: Optional[str] = None) -> int:
    """Print the campaign's results (the kill matrix, the counts, the report, the
    final line); returns the exit status (``fuzz``)."""
    from .verdicts import counts_line, final_line, kill_matrix
    if result.interrupted:
        how = signal.Signals(received[0]).name if received else "Ctrl-C"
        print(f"\ninterrupted ({how}): the workers were stopped; what they found is in {corpus}", flush=True)
    print("\nkill matrix (this campaign):\n" + kill_matrix(result), flush=True)
    print(counts_line(result), flush=True)
    if report_dir is not None and not result.interrupted and not received:
        from .report_job import build_report_within, report_master
        left = started + budget_s - time.time()
        outcome = build_report_within(corpus, Path(report_dir).resolve(), left, [t.label for t in targets], run_id,
                                      master)
        if outcome.path is not None:
            print(f"\nreport: {outcome.path}  (Spark's log: {outcome.log})", flush=True)
        else:  # the campaign's verdict stands without the report
            on = report_master(master)
            print(f"\nthe Spark report was not built: {outcome.problem}; Spark's log: {outcome.log}; build it with "
                  f"`replicheck report {corpus} --out {report_dir}{'' if on == 'local[*]' else f' --master {on}'}`",
                  flush=True)
    if log.exists() and log.stat().st_size:
        print(f"workers' output (warnings, errors): {log}", flush=True)
    elif log.exists():
        log.unlink()
    print(final_line(result), flush=True)
    if result.interrupted:
        return 128 + received[0] if received else 130
    return 0 if result.ok else 1
