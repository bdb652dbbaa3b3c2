"""The campaign's Spark report, built in a process of its own: within the time
left of the campaign's budget (stopped when it overruns), and with Spark's
output — the JVM's start-up warnings, its logs — in a log file instead of the
terminal; on the campaign's standalone cluster when it ran on one
(``report_master``)."""

from __future__ import annotations

import os
from multiprocessing import get_context
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Optional, Sequence

import attrs


@attrs.frozen
class ReportOutcome:
    """``path``: the report's index.html (None: not built); ``problem``: why not,
    one line (None: built); ``log``: the file holding Spark's output."""

    path: Optional[Path]
    problem: Optional[str]
    log: Path


def report_master(master: Optional[str]) -> str:
    """The Spark master the report of a campaign run on ``master`` is built
    on: a standalone cluster's (``spark://``), whose executors read the corpus
    the campaign wrote (shared by then); else (None, ``local[N]``, ``yarn``,
    ``k8s://``) ``local[*]``, on this machine."""
    return master if master is not None and master.startswith("spark://") else "local[*]"


def _build(conn: Connection, corpus_dir: str, out_dir: str, log: str, targets: Optional[list[str]],
           run_id: Optional[str], master: str) -> None:
    # O_NOFOLLOW: a link planted at the log's name in the report folder is refused, not truncated through.
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        from spark_reports.report import build_report
        path = build_report(corpus_dir, out_dir, master, targets=targets, run_id=run_id)
        conn.send((str(path), None))
    except Exception as e:
        import traceback
        traceback.print_exc()
        conn.send((None, f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"))


def build_report_within(corpus_dir: Path, out_dir: Path, seconds: float, targets: Optional[Sequence[str]] = None,
                        run_id: Optional[str] = None, master: Optional[str] = None) -> ReportOutcome:
    """Build the report of ``corpus_dir`` into ``out_dir`` (``spark_reports.report
    .build_report`` with the campaign's ``targets`` labels and ``run_id``, so it
    lists the targets that did not run) in a child process, stopped after
    ``seconds``, on ``report_master(master)`` (``master``: the campaign's Spark
    master, None: local workers); Spark's output goes to
    ``out_dir/spark.log``. Never raises for
    its arguments: an ``out_dir`` that cannot be created or written, a
    symbolic link at ``out_dir/spark.log`` (never written through), or no time
    left (``seconds`` not > 0), is the outcome's ``problem``."""
    from spark_reports.cli import writable_folder
    log = out_dir / "spark.log"
    problem = writable_folder(out_dir, "the report folder")
    if problem is None and log.is_symlink():
        problem = f"{log} is a symbolic link: replicheck writes nothing through a link inside a report folder; " \
                  f"remove it"
    if problem is not None:
        return ReportOutcome(None, problem, log)
    if not seconds > 0:
        return ReportOutcome(None, "no time was left of the budget for it", log)
    context = get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_build, name="replicheck-report", daemon=True,
                              args=(send, str(corpus_dir), str(out_dir), str(log),
                                    None if targets is None else list(targets), run_id, report_master(master)))
    process.start()
    send.close()
    try:
        if not receive.poll(seconds):
            return ReportOutcome(None, f"it did not finish within the {seconds:.0f} s left of the budget", log)
        path, problem = receive.recv()
        return ReportOutcome(None if path is None else Path(path), problem, log)
    except EOFError:
        return ReportOutcome(None, "its process died (see the log)", log)
    finally:
        # Spark's JVM exits with the process that started it (its stdin closes).
        process.join(2)
        if process.is_alive():
            process.kill()
            process.join()
        receive.close()
