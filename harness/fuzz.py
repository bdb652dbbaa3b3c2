"""``replicheck fuzz`` / ``make fuzz``: run the campaign with ``pytest -n`` and the
``fuzz`` profile, show progress, then build the Spark report and print the kill
matrix (what was found, by which property, how fast, how short).
``replicheck fuzz --implementation kafka`` / ``make fuzz-kafka``: the same for
Kafka's own code in lockstep with the model, one shard of its target per worker."""

from __future__ import annotations

import os
import secrets
import subprocess
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

from .campaign import (CORPUS_ENV, DEADLINE_ENV, DONE_ENV, SEED_ENV, SHARE_ENV, TARGETS_ENV, WORKERS_ENV, Target,
                       all_targets)

RUN_ID_ENV = "REPLICHECK_CAMPAIGN_RUN_ID"
REPORT_RESERVE_S = 45  # kept back from the budget for the Spark report


def _progress(stop: threading.Event, started: float, budget_s: float, corpus: Path, total: int,
              done: list[int]) -> None:
    from .corpus import read_counterexamples, read_runs
    while not stop.wait(15):
        runs = len(read_runs(corpus, warn=False).rows) if corpus.exists() else 0
        found = len(read_counterexamples(corpus, warn=False).rows) if corpus.exists() else 0
        elapsed = time.time() - started
        print(f"[{elapsed / 60:4.1f}/{budget_s / 60:.1f} min] targets done {done[0]}/{total}, "
              f"machine runs recorded {runs}, counterexamples {found}", flush=True)


def kill_matrix(corpus: Path, run_id: str, targets: list[Target]) -> tuple[str, bool]:
    """A plain-text kill matrix of this campaign's targets (one line per label: a
    target's shards together), and whether the campaign succeeded (the correct
    target and every implementation clean, every flaw found)."""
    from .corpus import read_counterexamples, read_runs
    ces = [r for r in read_counterexamples(corpus, warn=False).rows if r["run_id"] == run_id]
    runs = [r for r in read_runs(corpus, warn=False).rows if r["run_id"] == run_id]
    rows = [("target", "found by", "runs", "examples", "s to first failure", "shrunk steps", "reduced steps")]
    ok = True
    for t in {t.label: t for t in targets}.values():
        test_id = f"campaign[{t.label}]"
        mine = [c for c in ces if c["test_id"] == test_id]
        my_runs = [r for r in runs if r["test_id"] == test_id]
        examples = sum(r["examples"] for r in my_runs)
        if mine:
            best = min(mine, key=lambda c: c["step_count"])
            ttf = min((c["time_to_failure_s"] for c in mine if c["time_to_failure_s"] is not None), default=None)
            shrunk = min(c["step_count"] if c["shrunk_step_count"] is None else c["shrunk_step_count"]
                         for c in mine)
            reduced = [c["step_count"] for c in mine if c["shrunk_step_count"] is not None]
            rows.append((t.label, best["property"], str(len(my_runs)), str(examples),
                         "-" if ttf is None else f"{ttf:.1f}", str(shrunk), str(min(reduced)) if reduced else "-"))
        else:
            rows.append((t.label, "-", str(len(my_runs)), str(examples), "-", "-", "-"))
        ok &= (not mine) if t.runs_whole_share else bool(mine)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
    return text, ok


def fuzz(minutes: float = 5.0, workers: Optional[int] = None, variants: Optional[list[str]] = None,
         bugs: Optional[list[str]] = None, corpus_dir: str | os.PathLike = "corpus",
         report_dir: Optional[str | os.PathLike] = "report", include_correct: bool = True,
         seed: Optional[int] = None, implementation: Optional[str] = None) -> int:
    """Run the campaign; returns the process exit code (0: the correct protocol +
    SUT never failed and every selected flaw was found). ``seed`` (an integer
    >= 0) makes every target's runs draw the same examples each time
    (``campaign.run_seed``); None: a random one, printed so that the campaign
    can be run again. ``implementation`` (a name of
    ``harness.implementations.NAMES``): run only that implementation in lockstep
    with the model, one shard per worker for the whole budget; 0 when it never
    disagreed with the model. ValueError names a bad ``minutes``, ``seed``,
    variant, bug or implementation (or variants or bugs given with an
    implementation); ``ImplementationUnavailable`` says why the implementation
    cannot be built here, before any run starts."""
    if minutes <= 0:
        raise ValueError(f"minutes must be positive, got {minutes}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be an integer >= 0 or None, got {seed!r}")
    n_workers = workers or os.cpu_count() or 1
    targets = all_targets(variants, bugs, include_correct, implementation, shards=n_workers)
    if implementation is not None:
        from .implementations import ImplementationUnavailable, unavailable
        why = unavailable(implementation)
        if why is not None:
            raise ImplementationUnavailable(f"implementation {implementation} is unavailable: {why}")
    if seed is None:
        seed = secrets.randbits(32)
    corpus = Path(corpus_dir).resolve()
    budget_s = minutes * 60
    run_s = max(10.0, budget_s - (REPORT_RESERVE_S if report_dir else 0))
    share_s = run_s * n_workers / len(targets)
    started = time.time()
    from .corpus import new_run_id
    run_id = new_run_id()
    done_dir = tempfile.mkdtemp(prefix="replicheck-campaign-")
    env = dict(os.environ, **{TARGETS_ENV: ",".join(t.key for t in targets), SHARE_ENV: str(share_s),
                              DEADLINE_ENV: str(started + run_s), CORPUS_ENV: str(corpus), RUN_ID_ENV: run_id,
                              DONE_ENV: done_dir, WORKERS_ENV: str(n_workers),
                              SEED_ENV: str(seed)})
    labels = len({t.label for t in targets})
    what = f"{labels} target{'s' if labels != 1 else ''}" + \
        (f" ({len(targets)} shards)" if len(targets) > labels else "")
    print(f"replicheck fuzz: {what} on {n_workers} workers, {minutes:g} min "
          f"(~{share_s:.0f} s each), seed {seed}, corpus {corpus}", flush=True)
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "harness.campaign_tests", "-n", str(n_workers), "-v",
           "-p", "no:cacheprovider", "--no-corpus", "--hypothesis-profile=fuzz", "-o", "addopts=",
           "--tb=line"]
    done = [0]
    stop = threading.Event()
    ticker = threading.Thread(target=_progress, args=(stop, started, budget_s, corpus, len(targets), done),
                              daemon=True)
    ticker.start()
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "PASSED" in line or "FAILED" in line:
                done[0] += 1
                print(line.rstrip(), flush=True)
            elif line.startswith("E ") or "Error" in line:
                print(line.rstrip(), flush=True)
    stop.set()
    shutil.rmtree(done_dir, ignore_errors=True)
    text, ok = kill_matrix(corpus, run_id, targets)
    # An implementation's shards pass exactly when they never disagreed; one that
    # failed without a counterexample (Kafka's classes not loading in a worker, say)
    # checked nothing.
    ok &= implementation is None or proc.returncode == 0
    print("\nkill matrix (this campaign):\n" + text, flush=True)
    if report_dir:
        try:
            from spark_reports.report import build_report
            path = build_report(corpus, Path(report_dir))
            print(f"\nreport: {Path(path).resolve()}", flush=True)
        except Exception as exc:  # the campaign's verdict stands without the report
            print(f"\nthe Spark report could not be built: {exc}", flush=True)
    if ok:
        print("campaign succeeded")
    elif implementation is not None:
        print(f"campaign FAILED: implementation {implementation} disagreed with the model, or a shard could not "
              f"run (see the lines above, the kill matrix and the corpus)")
    else:
        print("campaign FAILED: the correct protocol failed or a flaw was not found")
    return 0 if ok else 1
