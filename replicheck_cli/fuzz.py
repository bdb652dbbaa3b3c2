"""``replicheck fuzz`` / ``make fuzz``: the campaign (``harness.runner``) with a
progress display, then its kill matrix, the Spark report and the verdict, all
within the budget. ``replicheck fuzz --implementation kafka`` / ``make
fuzz-kafka``: Kafka's own code in lockstep with the model, on every worker."""

from __future__ import annotations

import math
import os
import secrets
import time
from pathlib import Path
from typing import Optional

#: Kept back from the budget for the Spark report: the JVM's start, a dozen small
#: jobs and the diagrams take 20-35 s on two cores for a campaign's corpus.
REPORT_RESERVE_S = 45.0


def fuzz(minutes: float = 5.0, workers: Optional[int] = None, variants: Optional[list[str]] = None,
         bugs: Optional[list[str]] = None, corpus_dir: str | os.PathLike = "corpus",
         report_dir: Optional[str | os.PathLike] = "report", include_correct: bool = True,
         seed: Optional[int] = None, implementation: Optional[str] = None) -> int:
    """Run the campaign for ``minutes`` (report included) on ``workers`` processes
    (None: the machine's cores) and print its progress, kill matrix, report path
    and verdict; returns the exit status: 0 when the correct protocol + SUT (or
    the implementation) never failed and every selected flaw was found, 1
    otherwise, 130 when interrupted.

    ``seed`` (an integer >= 0) makes every target's runs draw the same examples
    each time (``harness.runner`` says what else is and is not reproducible);
    None: a random one, printed so that the campaign can be run again.
    ``implementation`` (a name of ``harness.implementations.NAMES``): run only
    that implementation in lockstep with the model, on every worker. ``report_dir``
    None: no report, the whole budget to the search.

    ValueError names a bad ``minutes``, ``workers``, ``seed``, variant, bug or
    implementation (or variants or bugs given with an implementation);
    ``ImplementationUnavailable`` says why the implementation cannot be built
    here. Both come before any run starts."""
    from harness.campaign import all_targets
    from harness.corpus import new_run_id
    from harness.runner import GRACE_S, check_budget, run_campaign

    from .display import Display
    from .verdicts import counts_line, final_line, kill_matrix

    started = time.time()
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not math.isfinite(minutes) \
            or minutes <= 0:
        raise ValueError(f"minutes must be a finite number > 0, got {minutes!r}")
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    check_budget(minutes * 60, n_workers, seed)
    targets = all_targets(variants, bugs, include_correct, implementation)
    if implementation is not None:
        from harness.implementations import ImplementationUnavailable, unavailable
        why = unavailable(implementation)
        if why is not None:
            raise ImplementationUnavailable(f"implementation {implementation} is unavailable: {why}")
    if seed is None:
        seed = secrets.randbits(32)
    corpus = Path(corpus_dir).resolve()
    run_id = new_run_id()
    log = corpus / "logs" / f"campaign-{run_id}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    budget_s = minutes * 60
    reserve_s = min(REPORT_RESERVE_S, budget_s / 2) if report_dir is not None else 0.0
    search_s = max(1.0, budget_s - reserve_s - GRACE_S)
    what = f"{len(targets)} target{'s' if len(targets) != 1 else ''}" if implementation is None else \
        f"{targets[0].label} (a shard on every worker)"
    print(f"replicheck fuzz: {what} on {n_workers} worker{'s' if n_workers != 1 else ''}, {minutes:g} min"
          f"{' (report included)' if report_dir is not None else ''}, seed {seed}, corpus {corpus}", flush=True)
    with Display(search_s) as display:
        result = run_campaign(targets, search_s, n_workers, seed=seed, corpus_dir=str(corpus), run_id=run_id,
                              log_path=str(log), on_progress=display.update)
    print("\nkill matrix (this campaign):\n" + kill_matrix(result), flush=True)
    print(counts_line(result), flush=True)
    if report_dir is not None and not result.interrupted:
        from .report_job import build_report_within
        left = started + budget_s - time.time()
        outcome = build_report_within(corpus, Path(report_dir).resolve(), left, [t.label for t in targets], run_id)
        if outcome.path is not None:
            print(f"\nreport: {outcome.path}  (Spark's log: {outcome.log})", flush=True)
        else:  # the campaign's verdict stands without the report
            print(f"\nthe Spark report was not built: {outcome.problem}; Spark's log: {outcome.log}; build it with "
                  f"`replicheck report {corpus} --out {report_dir}`", flush=True)
    if log.exists() and log.stat().st_size:
        print(f"workers' output (warnings, errors): {log}", flush=True)
    elif log.exists():
        log.unlink()
    print(final_line(result), flush=True)
    if result.interrupted:
        return 130
    return 0 if result.ok else 1
