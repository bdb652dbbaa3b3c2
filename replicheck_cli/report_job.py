"""The campaign's Spark report, built in a process of its own: within the time
left of the campaign's budget (stopped when it overruns), and with Spark's
output — the JVM's start-up warnings, its logs — in a log file instead of the
terminal; on the campaign's standalone cluster when it ran on one
(``report_master``).

``replicheck fuzz`` starts the process with the campaign (``ReportProcess``):
while the search runs it starts Spark's JVM and warms it up
(``spark_reports.warm``), then waits for the go; the report then costs the
analyses only, not the JVM's start. The process is stopped when the report is
built, when its time is up, and when the campaign ends without one
(interrupted, or failing before the report), its JVM with it."""

from __future__ import annotations

import os
import signal
import threading
import time
from multiprocessing import get_context
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Optional, Sequence

import attrs

#: The report's wall-clock cost with Spark warmed up, on two cores beside two
#: busy processes: a fixed part and a part per corpus file, rounded up from the
#: line ``benchmarks/report_budget.py --busy 2`` fits over campaign-shaped
#: corpora of 30-600 counterexamples (19.4 s + 11.6 ms per file; 15.4 s + 6.7 ms
#: idle: results page, "The campaign's report").
REPORT_FIXED_S = 20.0
REPORT_PER_FILE_S = 0.012

#: The margin over that line: the busy measurements' worst point lies 1-3 s
#: above it, and a loaded laptop may be busier than two spinning processes.
REPORT_LOAD_FACTOR = 1.5

#: Files a campaign adds to its corpus per target: a run's and, when it finds
#: one, a counterexample's, per unit (campaigns of the default targets: about
#: 2.6).
FILES_PER_TARGET = 3

#: Spark settings of the campaign's report process, measured on a campaign's
#: corpus (400 rows, 380 files): the JVM's first-tier compiler only (its second
#: tier's compiling took a third of the report's CPU time) and no whole-stage
#: code generation (compiling each query's code costs more than it saves on a
#: few hundred rows).
REPORT_PROCESS_CONF = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
                       "spark.sql.codegen.wholeStage": "false"}

#: Seconds a stopped report process and its JVM are given to exit before they
#: are killed.
STOP_GRACE_S = 5.0

#: How much a warming report process's priority is lowered (``os.nice``) while
#: the search runs, where it can be raised back at the go.
WARM_NICE = 10


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


def corpus_files(corpus: Any) -> int:
    """How many data files the corpus at ``corpus`` holds now (the
    ``*.parquet`` files of its tables' partition folders; writers' hidden temp
    files not counted); 0 for a URI (not listed here) or a folder that cannot
    be read."""
    if not isinstance(corpus, Path):
        return 0
    n = 0
    for table in ("counterexamples", "runs"):
        try:
            with os.scandir(corpus / table) as parts:
                folders = [p.path for p in parts if p.is_dir(follow_symlinks=False) and not p.name[:1] in "._"]
            for folder in folders:
                with os.scandir(folder) as files:
                    n += sum(1 for f in files if f.name.endswith(".parquet") and not f.name[:1] in "._")
        except OSError:
            continue
    return n


def report_reserve_s(corpus: Any, targets: int, budget_s: float) -> float:
    """Seconds kept back from a campaign's budget of ``budget_s`` s for its
    report, over the corpus at ``corpus`` (a ``Path``, or a URI's location)
    that ``targets`` targets add to: the warmed-up report's measured cost
    (``REPORT_FIXED_S`` + ``REPORT_PER_FILE_S`` per file: the corpus's now,
    ``corpus_files``, and ``FILES_PER_TARGET`` per target, on a busy machine)
    times the margin ``REPORT_LOAD_FACTOR``, and at most half the budget."""
    files = corpus_files(corpus) + FILES_PER_TARGET * max(0, targets)
    return min(budget_s / 2, REPORT_LOAD_FACTOR * (REPORT_FIXED_S + REPORT_PER_FILE_S * files))


# ----------------------------------------------------------- the report process

def _can_raise_back(nice: int) -> bool:
    """Whether this process may set its nice value back to ``nice`` once
    raised: as root, or when ``RLIMIT_NICE`` allows it (an ordinary user's
    limit is 0 almost everywhere: a lowered priority is for good)."""
    try:
        import resource
        return os.geteuid() == 0 or 20 - resource.getrlimit(resource.RLIMIT_NICE)[0] <= nice
    except (AttributeError, ImportError, OSError, ValueError):
        return False


def _threads(pid: int) -> list[int]:
    """The thread ids of process ``pid`` (Linux: each has its own nice value),
    else ``[pid]``."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def _set_nice(pids: Sequence[int], nice: int) -> None:
    """Set every thread of ``pids`` to ``nice``; a thread gone meanwhile, or
    one that may not be changed, is left."""
    for pid in pids:
        for tid in _threads(pid):
            try:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
            except OSError:
                pass


class _Go:
    """The report process's side of the go: a thread waits for it (the
    report's arguments) while Spark warms up, raises the process's and its
    JVM's priority back when it comes, and ends the process when the campaign
    is gone (its end of the pipe closed) before sending one."""

    def __init__(self, conn: Connection, nice: Optional[int]) -> None:
        self.conn, self.nice, self.jvm = conn, nice, 0
        self.args: Optional[tuple] = None
        self.came = threading.Event()
        threading.Thread(target=self._wait, name="replicheck-report-go", daemon=True).start()

    def _wait(self) -> None:
        try:
            self.args = self.conn.recv()
        except (EOFError, OSError):
            os._exit(0)   # the campaign is gone: so is this process (its JVM follows: its stdin closes)
        if self.nice is not None:
            _set_nice([os.getpid()] + ([self.jvm] if self.jvm else []), self.nice)
        self.came.set()


def _session(conn: Connection, master: str) -> Any:
    """The report's Spark session on ``master``; its JVM's process id sent."""
    from spark_reports._session import session
    spark = session(master, **REPORT_PROCESS_CONF)
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    conn.send(("jvm", getattr(proc, "pid", 0)))
    return spark


def _serve(conn: Connection, log: str, master: str, warm: bool) -> None:
    """The report process: Spark's output to ``log``; with ``warm``, at a lower
    priority while it can be raised back (``WARM_NICE``), Spark started and
    warmed up (``spark_reports.warm``) before the go; then, given the go
    ``(corpus_dir, out_dir, targets, run_id)``, the report built and its
    outcome ``("done", path, problem)`` sent."""
    # O_NOFOLLOW: a link planted at the log's name in the report folder is refused, not truncated through.
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.setsid()   # the campaign's terminal signals are the campaign's: it stops this process itself
    base = os.getpriority(os.PRIO_PROCESS, 0)
    lowered = warm and _can_raise_back(base)
    if lowered:
        os.nice(WARM_NICE)
    go = _Go(conn, base if lowered else None)
    try:
        spark = _session(conn, master)
        go.jvm = spark.sparkContext._gateway.proc.pid
        if warm:
            conn.send(("ready", _warm_up(spark)))
        go.came.wait()
        if lowered:   # the JVM's threads made since the go came
            _set_nice([os.getpid(), go.jvm], base)
        from spark_reports.report import build_report
        corpus_dir, out_dir, targets, run_id = go.args
        conn.send(("done", str(build_report(corpus_dir, out_dir, spark=spark, targets=targets, run_id=run_id)),
                   None))
    except Exception as e:
        import traceback
        traceback.print_exc()
        conn.send(("done", None, f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"))


def _warm_up(spark: Any) -> float:
    """``spark_reports.warm.warm_up``: its seconds; a failure is in the log
    only (the report may still be built, if more slowly)."""
    t0 = time.perf_counter()
    try:
        from spark_reports.warm import warm_up
        return warm_up(spark)
    except Exception:
        import traceback
        traceback.print_exc()
        return time.perf_counter() - t0


def _folder_problem(out_dir: Path, log: Path) -> Optional[str]:
    """Why the report cannot be written in ``out_dir``, or None."""
    from spark_reports.cli import writable_folder
    problem = writable_folder(out_dir, "the report folder")
    if problem is None and log.is_symlink():
        problem = f"{log} is a symbolic link: replicheck writes nothing through a link inside a report folder; " \
                  f"remove it"
    return problem


class ReportProcess:
    """The process that builds the report of a campaign into ``out_dir``, on
    ``report_master(master)``, Spark's output in ``out_dir/spark.log``
    (``log``). Started at once when the folder can hold the report (else
    ``problem`` says why, and nothing runs); with ``warm``, it starts Spark and
    warms it up meanwhile, at a lower priority where that can be undone
    (``WARM_NICE``). ``build`` gives it the go and waits; ``stop`` (also at
    the end of a ``with``) ends it and its JVM: call it whatever happens.

    ``ready``: seconds the warm-up took, once it is done (None before, or
    without ``warm``); ``jvm_pid``: its JVM's process id, once started."""

    def __init__(self, out_dir: Path, master: Optional[str] = None, warm: bool = True) -> None:
        self.out_dir = Path(out_dir)
        self.log = self.out_dir / "spark.log"
        self.problem = _folder_problem(self.out_dir, self.log)
        self.jvm_pid: Optional[int] = None
        self._ready: Optional[float] = None
        self._done: Optional[tuple] = None
        self._process: Any = None
        self._conn: Optional[Connection] = None
        self._warm = warm
        if self.problem is None:
            context = get_context("spawn")
            self._conn, theirs = context.Pipe(duplex=True)
            self._process = context.Process(target=_serve, name="replicheck-report", daemon=True,
                                            args=(theirs, str(self.log), report_master(master), warm))
            self._process.start()
            theirs.close()

    def __enter__(self) -> "ReportProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> Optional[int]:
        """The process's id (None: none was started)."""
        return None if self._process is None else self._process.pid

    @property
    def ready(self) -> Optional[float]:
        try:
            self._receive(0)
        except (EOFError, OSError):   # it died: ``build`` says so
            pass
        return self._ready

    def _receive(self, timeout: float) -> None:
        """Take the messages the process sent, waiting up to ``timeout`` s for
        the first (EOFError: it died)."""
        while self._conn is not None and self._done is None and self._conn.poll(timeout):
            message = self._conn.recv()
            if message[0] == "jvm":
                self.jvm_pid = message[1] or None
            elif message[0] == "ready":
                self._ready = message[1]
            else:
                self._done = message[1:]
            timeout = 0

    def build(self, corpus_dir: Any, seconds: float, targets: Optional[Sequence[str]] = None,
              run_id: Optional[str] = None) -> ReportOutcome:
        """Give the go for the report of ``corpus_dir`` (a folder or a URI;
        ``targets``, ``run_id``: the campaign's, as ``build_report_within``
        says) and wait for it up to ``seconds``; then stop the process. Never
        raises: the folder's problem, no time (``seconds`` not > 0), a report
        not done in time, a process that died or a report that failed are the
        outcome's ``problem``."""
        try:
            if self.problem is not None:
                return ReportOutcome(None, self.problem, self.log)
            if not seconds > 0:
                return ReportOutcome(None, "no time was left of the budget for it", self.log)
            if self._conn is None:
                return ReportOutcome(None, "its process was stopped before the report", self.log)
            deadline = time.monotonic() + seconds
            self._receive(0)   # it failed already (no Spark here): that is why
            warm = self._ready is not None
            if self._done is None:
                self._conn.send((str(corpus_dir), str(self.out_dir), None if targets is None else list(targets),
                                 run_id))
            while self._done is None and time.monotonic() < deadline:
                self._receive(max(0.0, deadline - time.monotonic()))
            if self._done is None:
                late = " (Spark was still warming up when the search ended)" if self._warm and not warm else ""
                return ReportOutcome(None, f"it did not finish within the {seconds:.0f} s left of the budget{late}",
                                     self.log)
            path, problem = self._done
            return ReportOutcome(None if path is None else Path(path), problem, self.log)
        except (EOFError, OSError):
            return ReportOutcome(None, "its process died (see the log)", self.log)
        finally:
            self.stop()

    def stop(self) -> None:
        """End the process (if still running: SIGTERM, then SIGKILL after
        ``STOP_GRACE_S``) and then its JVM, which exits with it (its stdin
        closes) or is killed after ``STOP_GRACE_S``. Idempotent; never raises."""
        if self._process is None:
            return
        try:
            self._receive(0)   # the JVM's id, if sent since
        except (EOFError, OSError):
            pass
        process, self._process = self._process, None
        if process.is_alive():
            process.terminate()
            process.join(STOP_GRACE_S)
        if process.is_alive():
            process.kill()
        process.join()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self.jvm_pid is not None:
            _end_jvm(self.jvm_pid)


def _end_jvm(pid: int) -> None:
    """Wait up to ``STOP_GRACE_S`` for the report's JVM (process ``pid``) to
    exit, then kill it, if it is still Spark's (its command line names
    ``SparkSubmit``: not another process that took the id since)."""
    deadline = time.monotonic() + STOP_GRACE_S
    while _is_spark(pid):
        if time.monotonic() >= deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            return
        time.sleep(0.05)


def _is_spark(pid: int) -> bool:
    """Whether process ``pid`` runs and is a Spark JVM (``SparkSubmit`` in its
    command line; a zombie has none). Where there is no ``/proc``, whether it
    runs."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"SparkSubmit" in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False


def build_report_within(corpus_dir: Path, out_dir: Path, seconds: float, targets: Optional[Sequence[str]] = None,
                        run_id: Optional[str] = None, master: Optional[str] = None) -> ReportOutcome:
    """Build the report of ``corpus_dir`` into ``out_dir`` (``spark_reports.report
    .build_report`` with the campaign's ``targets`` labels and ``run_id``, so it
    lists the targets that did not run) in a child process started now
    (``ReportProcess``, not warmed up), stopped after ``seconds``, on
    ``report_master(master)`` (``master``: the campaign's Spark master, None:
    local workers); Spark's output goes to ``out_dir/spark.log``. Never raises
    for its arguments: an ``out_dir`` that cannot be created or written, a
    symbolic link at ``out_dir/spark.log`` (never written through), or no time
    left (``seconds`` not > 0), is the outcome's ``problem``."""
    if not seconds > 0:   # no process for no time
        problem = _folder_problem(Path(out_dir), Path(out_dir) / "spark.log")
        return ReportOutcome(None, problem or "no time was left of the budget for it", Path(out_dir) / "spark.log")
    with ReportProcess(Path(out_dir), master, warm=False) as process:
        return process.build(corpus_dir, seconds, targets, run_id)
