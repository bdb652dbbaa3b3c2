"""The campaign's work units as Spark tasks: ``SparkPool`` has the interface of
``campaign.workers.WorkerPool`` (``size``, ``idle``, ``busy``, ``submit``,
``wait``, ``stop``, ``close``), so ``campaign.runner.run_campaign(...,
master=URL)`` drives a Spark cluster (or ``local[N]``) as it drives local
worker processes.

A submitted unit is a one-task Spark job, started from a driver thread of its
own in a job group of its own (``setJobGroup(..., interruptOnCancel=True)``).
The task runs ``setup()`` (``campaign.unit.preload``) once per Python
worker, then ``work(unit, progress, worker)`` (``campaign.unit.run_unit``),
and returns the unit's ``UnitResult``: DONE. What the work passes to
``progress`` while it runs reaches ``wait`` as PROGRESS, as from a local
worker, over a TCP connection from the task to the driver
(``campaign.spark_progress``: executors always reach the driver; the corpus
need not be a folder for it). A failed task (an exception, its
Python worker or its executor lost) is LOST with one line saying why and
where; Spark does not retry it (``spark.task.maxFailures`` 1), the scheduler
decides (``campaign.scheduler.Scheduler.lost``). ``worker`` names the executor:
``executor-ID@HOST`` (``executor-driver@HOST`` under ``local[N]``), which the
corpus rows keep in their ``worker`` column.

What ships how. The packages a unit imports (``SHIPPED``) go to the executors
as one zip (``SparkContext.addPyFile``) built at start in a temporary folder;
the executors run the driver's Python (``spark.pyspark.python`` and
``PYSPARK_PYTHON`` = ``sys.executable``), which must exist at the same path on
every executor host with the project's dependencies installed (Hypothesis,
attrs, pyarrow; JPype for ``implementation:kafka``). Kafka's jars are not
the executor JVM's (``spark.jars`` would not reach them): ``kafka_bridge``
starts a JVM of its own in the Python worker (JPype), which reads them from
``$REPLICHECK_KAFKA_LIB``. For each of the ``implementations`` given, the
driver's folders it needs (``check.implementations.executor_folders``: for
"kafka", the folder of Kafka's jars) go to the executors as one archive each
(``SparkContext.addArchive``, stored uncompressed, unpacked by Spark into its
files folder), and a task sets the variable to the unpacked folder
(``pyspark.SparkFiles.get``) before ``setup()``: nothing of Kafka's needs to
be on the executor hosts but JPype.

The corpus. Units write their rows where the driver names (``corpus_dir``), so
it must be a place the driver and every executor reach: a folder path (a local
folder with ``local[N]`` or a cluster on this machine, a shared mount (NFS)
otherwise), or a URI pyarrow opens (``s3://``, ``gs://``, ``hdfs://``:
``store.fs``), which each executor opens again with its own
environment (credentials, endpoint). One that cannot be used (an unknown
scheme, an unreachable store, a missing bucket) is refused before Spark starts
(``campaign.spark_checks.check_shared_corpus``).

Output. Spark's driver log and the driver JVM's own output go to a file
beside the workers' log (``<log_path without .log>.spark.log``, level WARN),
or, without ``log_path``, nowhere; the console progress bar and the UI are off. What a
unit prints goes to ``log_path`` when its folder exists on the executor (else
to the executor's own stderr file).

Stopping. ``stop`` asks every running unit to stop over its task's connection
to the driver (``campaign.spark_progress``), or, for a task that could not
connect, through a file in a folder corpus (``.spark-stop/``, polled by the
task; created with ``O_EXCL | O_NOFOLLOW`` in a folder opened without following
a link, ``store.nofollow``: a ``.spark-stop`` link is refused): the unit unwinds as a
local worker does on SIGTERM, writing what it found; the job groups of units
still running ``grace_s`` later are cancelled (the executor kills the Python
worker ``spark.python.task.killTimeout`` after).
"""

from __future__ import annotations

import itertools
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import attrs

from check.implementations import executor_folders
from store.fs import is_uri, one_line
from store.nofollow import LinkRefused, create_new, folder

from .plan import Campaign
from .spark_checks import check_master, check_shared_corpus, is_local_master, on_loopback
from .spark_progress import Address, ProgressListener, ProgressSender
from .workers import DONE, LOST, PROGRESS, Event, Stopped, _stop_on_sigterm

#: The packages a unit imports (``campaign.unit.run_unit`` and everything it
#: loads, ``campaign.unit.preload``; ``kafka_bridge`` for an implementation),
#: shipped to the executors as one zip.
SHIPPED = ("model", "properties", "sut", "check", "store", "campaign", "kafka_bridge")
#: Seconds to wait for a first executor to register before giving up.
REGISTER_S = 60.0
#: The executors' cores (the pool's size) are taken once they have not changed
#: for this long: the executors a standalone master grants register within
#: about a second of each other.
SETTLE_S = 3.0
#: How often a running task looks for its stop file.
STOP_POLL_S = 0.25
#: The folder of the corpus holding the stop files (``stop``).
STOP_FOLDER = ".spark-stop"

_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.main.ref = main
appender.main.name = main
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""


class SparkUnavailable(RuntimeError):
    """Spark cannot run the campaign's units (no executor registered, a
    SparkContext already running here, the driver failed to start): one line
    saying why."""


@attrs.frozen
class _Task:
    """What a task needs, pickled to the executor: the work and setup
    functions (module-level, importable there), the unit, where its output
    goes, the file whose existence asks it to stop, whether Spark is local;
    where its progress goes (``progress_to``, the driver's listener's address
    for ``key``, None: nowhere) under which ``key`` (its job group: the only
    key its token is good for); the environment variables to
    point at folders Spark shipped (``shipped``: (variable, Spark file name))."""

    work: Callable
    setup: Optional[Callable]
    unit: Any
    log_path: Optional[str]
    stop_path: Optional[str]
    local: bool
    progress_to: Optional[Address] = None
    key: str = ""
    shipped: tuple[tuple[str, str], ...] = ()


@attrs.define
class _Job:
    unit: Any
    group: str


class SparkPool:
    """The units of ``plan`` (a ``campaign.plan.Campaign`` with a ``master``: a
    Spark master URL, ``campaign.spark_checks.MASTER_FORMS``) run as Spark tasks.
    Of the plan: ``workers``, how many units run at once (None: the executors'
    total cores, divided by ``spark.task.cpus``, once they have registered, and
    growing with the executors that register later, ``grow``);
    ``log_path``, the units' output (appended; None: discarded), Spark's log
    beside it; ``corpus_dir``, the campaign's corpus (a shared folder path; the
    stop files go there); its targets' implementations, whose folders are shipped
    (module doc). ``work``, ``setup``: as ``WorkerPool``'s, and importable on the
    executors (a function of ``SHIPPED``).

    Starts Spark (some seconds: the driver's JVM, the executors). ValueError
    names a bad ``master`` or ``corpus_dir`` (before Spark starts);
    SparkUnavailable when no executor registers within ``register_s`` seconds
    (None: ``REGISTER_S``, read when the pool starts)
    or Spark cannot start here."""

    def __init__(self, plan: Campaign, work: Callable, setup: Optional[Callable] = None,
                 app_name: str = "replicheck-fuzz", register_s: Optional[float] = None) -> None:
        master, size, log_path, corpus_dir = plan.master, plan.workers, plan.log_path, plan.corpus_dir
        if master is None:
            raise ValueError("a campaign on Spark needs a master")
        problem = check_master(master) or (None if corpus_dir is None else check_shared_corpus(corpus_dir,
                                                                                             "corpus_dir")
                                           or stop_folder_problem(corpus_dir))
        if problem is not None:
            raise ValueError(problem)
        from pyspark import SparkContext
        if SparkContext._active_spark_context is not None:
            raise SparkUnavailable("a SparkContext is already running in this process; a campaign on Spark starts "
                                   "its own: stop it first")
        self.master = master
        self._work, self._setup = work, setup
        # Absolute: an executor's working folder is not the driver's.
        self._log_path = None if log_path is None else os.path.abspath(log_path)
        self._local = is_local_master(master)
        # Stop files only in a folder corpus; a task is asked over its connection first (spark_progress).
        self._corpus = None if corpus_dir is None or is_uri(corpus_dir) else os.path.abspath(corpus_dir)
        self._stop_dir = None if self._corpus is None else os.path.join(self._corpus, STOP_FOLDER)
        self._stop_files: list[str] = []
        self._token = secrets.token_hex(4)
        self._groups = itertools.count()
        self._done: queue.Queue = queue.Queue()
        self._by_group: dict[str, tuple[int, _Job]] = {}   # the running jobs, for their progress
        self._listener: Optional[ProgressListener] = None
        self._shipped: tuple[tuple[str, str], ...] = ()
        self._threads: list[threading.Thread] = []
        self._tmp = tempfile.mkdtemp(prefix="replicheck-spark-")
        self._previous_python = os.environ.get("PYSPARK_PYTHON")
        self._own_gateway = SparkContext._gateway is None
        self._sc: Any = None
        try:
            self._sc = self._start(app_name)
            self._shipped = self._ship(plan.implementations)
            self._listener = self._listen()
            cores = self._wait_for_executors(REGISTER_S if register_s is None else register_s)
        except BaseException:
            self._shutdown()
            raise
        self._jobs: list[Optional[_Job]] = [None] * (size if size is not None else cores)
        self._fixed_size = size is not None or self._local

    # ------------------------------------------------------------- start-up

    def _start(self, app_name: str) -> Any:
        from pyspark import SparkConf, SparkContext
        zipped = python_zip(self._tmp)
        # Executors run the driver's Python: PySpark sends PYSPARK_PYTHON with
        # every task, spark.pyspark.python covers Spark's own launchers.
        os.environ["PYSPARK_PYTHON"] = sys.executable
        conf = SparkConf().setMaster(self.master).setAppName(app_name)
        for key, value in self._conf().items():
            conf.set(key, value)
        main = threading.current_thread() is threading.main_thread()
        sigint = signal.getsignal(signal.SIGINT) if main else None
        # The driver's JVM inherits this process's stdout and stderr when it
        # starts: its own lines (the JVM's warnings, under local[N] what Python
        # workers print outside a task) then go to Spark's log, or nowhere
        # without one, never to the terminal.
        jvm_output = None if not self._own_gateway else \
            spark_log_path(self._log_path) if self._log_path else os.devnull
        if jvm_output is not None:
            os.makedirs(os.path.dirname(jvm_output), exist_ok=True)
        try:
            with _output_to(jvm_output) if jvm_output is not None else nullcontext():
                sc = SparkContext(conf=conf)
        except Exception as e:
            raise SparkUnavailable(f"Spark did not start with master {self.master}: {one_line(e, limit=None)}") from e
        finally:
            # PySpark's own Ctrl-C handler cancels every job at once (the tasks'
            # Python workers killed); the runner's KeyboardInterrupt stops the
            # units instead (``stop``), so that they write what they found.
            if main and sigint is not None:
                signal.signal(signal.SIGINT, sigint)
        sc.setLogLevel("WARN" if self._log_path is not None else "ERROR")
        # addPyFile also puts the zip on the driver's own sys.path, from where a
        # package not yet imported here would then load — and fail once the zip
        # is deleted at close. The driver imports from the project itself.
        path = list(sys.path)
        sc.addPyFile(zipped)
        sys.path[:] = path
        return sc

    def _ship(self, implementations: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """Ship the folders the ``implementations`` need on the executors, one
        archive each (``SparkContext.addArchive``); returns (variable, Spark
        file name) of each."""
        shipped = []
        for name in dict.fromkeys(implementations):
            for variable, folder in executor_folders(name).items():
                alias = variable.lower().replace("_", "-")   # REPLICHECK_KAFKA_LIB: replicheck-kafka-lib
                self._sc.addArchive(f"{folder_archive(folder, os.path.join(self._tmp, alias + '.zip'))}#{alias}")
                shipped.append((variable, alias))
        return tuple(shipped)

    def _listen(self) -> ProgressListener:
        """The driver's end of the tasks' progress, where Spark's own driver
        listens (``spark.driver.bindAddress``, else ``spark.driver.host``), at
        the address executors reach the driver by (``spark.driver.host``)."""
        conf = self._sc.getConf()
        host = conf.get("spark.driver.host", None) or socket.gethostname()
        try:
            return ProgressListener(conf.get("spark.driver.bindAddress", None) or host, self._progress, host)
        except OSError as e:
            raise SparkUnavailable(f"cannot listen for the tasks' progress on {host}: {e}") from e

    def _progress(self, group: str, value: Any) -> None:
        """A running task's progress value (a listener's thread)."""
        running = self._by_group.get(group)
        if running is not None:
            self._done.put((*running, PROGRESS, value))

    def _conf(self) -> dict[str, str]:
        """The Spark settings of the campaign's application."""
        conf = {
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.python.worker.reuse": "true",            # setup() once per Python worker
            "spark.task.maxFailures": "1",                   # a lost unit: campaign.scheduler decides
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.extraJavaOptions": f"-Dlog4j.configurationFile=file:{self._log4j_file()}",
        }
        if (self._local or on_loopback(self.master)) and "SPARK_LOCAL_IP" not in os.environ:
            # A cluster on this machine: no host name look-up, no other interface.
            conf["spark.driver.host"] = conf["spark.driver.bindAddress"] = "127.0.0.1"
        return conf

    def _log4j_file(self) -> str:
        """Spark's driver log: WARN and above to ``spark_log_path`` beside the
        workers' log; without one, only errors, to the JVM's stderr (nowhere
        when this pool started the JVM)."""
        path = os.path.join(self._tmp, "log4j2.properties")
        text = _LOG4J2.format(level="warn" if self._log_path else "error")
        if self._log_path:
            text += (f"appender.main.type = File\nappender.main.append = true\n"
                     f"appender.main.fileName = {spark_log_path(self._log_path)}\n")
        else:
            text += "appender.main.type = Console\nappender.main.target = SYSTEM_ERR\n"
        with open(path, "w") as fh:
            fh.write(text)
        return path

    def executor_cores(self) -> int:
        """The task slots of the executors registered now: their total cores
        (under ``local[N]``, N) divided by ``spark.task.cpus``."""
        if self._local:
            threads = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", self.master)
            n = threads.group(1) if threads else None
            cores = int(n) if n and n.isdigit() else (os.cpu_count() or 1) if n == "*" else 1
        else:
            try:
                executors = self._sc._jsc.sc().statusStore().executorList(True)
                cores = sum(executors.apply(i).totalCores() for i in range(executors.size()))
            except Exception:  # Spark's status store out of reach: its own estimate (at least 2)
                cores = self._sc.defaultParallelism
        return cores // max(1, int(self._sc.getConf().get("spark.task.cpus", "1")))

    def _wait_for_executors(self, register_s: float) -> int:
        """The executors' task slots once a first executor has registered and
        (on a cluster) their count has not changed for ``SETTLE_S``."""
        end = time.monotonic() + register_s
        cores, since = 0, time.monotonic()
        while True:
            now_cores = self.executor_cores()
            if now_cores != cores:
                cores, since = now_cores, time.monotonic()
            if cores > 0 and (self._local or time.monotonic() - since >= SETTLE_S):
                return cores
            if time.monotonic() >= end:
                if cores > 0:
                    return cores
                memory = self._sc.getConf().get("spark.executor.memory", "1g")
                raise SparkUnavailable(f"no executor of {self.master} registered within {register_s:g} s: are its "
                                       f"workers up, each with a free core and {memory} of memory "
                                       f"(spark.executor.memory)?")
            time.sleep(0.25)

    # --------------------------------------------------- WorkerPool's interface

    @property
    def size(self) -> int:
        return len(self._jobs)

    def grow(self) -> int:
        """The pool's size, grown first (on a cluster whose size the plan left open)
        to the task slots of the executors registered now: an executor that
        registers after the others have settled (a loaded machine's, or a worker
        added to the cluster) runs units too. A slot is never taken away: the unit
        of an executor lost is Spark's to run again elsewhere."""
        if not self._fixed_size:
            slots = self.executor_cores()
            if slots > len(self._jobs):
                self._jobs.extend([None] * (slots - len(self._jobs)))
        return len(self._jobs)

    def idle(self) -> list[int]:
        """The slots without a unit."""
        return [i for i, job in enumerate(self._jobs) if job is None]

    @property
    def busy(self) -> int:
        return sum(1 for job in self._jobs if job is not None)

    def submit(self, slot: int, unit: Any) -> None:
        """Run ``unit`` as a one-task Spark job in the idle ``slot``'s place."""
        from pyspark import InheritableThread
        if self._jobs[slot] is not None:
            raise ValueError(f"slot {slot} is busy")
        job = _Job(unit, f"replicheck-{self._token}-{next(self._groups)}")
        self._jobs[slot] = job
        self._by_group[job.group] = (slot, job)
        task = _Task(self._work, self._setup, unit, self._log_path,
                     None if self._stop_dir is None else os.path.join(self._stop_dir, job.group), self._local,
                     None if self._listener is None else self._listener.address_for(job.group), job.group,
                     self._shipped)
        # InheritableThread: the job group is a property of the JVM thread pinned to this Python thread.
        thread = InheritableThread(self._run, args=(slot, job, task), name=f"replicheck-{job.group}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _run(self, slot: int, job: _Job, task: _Task) -> None:
        try:
            label = getattr(getattr(job.unit, "target", None), "key", "unit")
            self._sc.setJobGroup(job.group, f"{label}, runs from {getattr(job.unit, 'first_run', 0)}",
                                 interruptOnCancel=True)
            [result] = self._sc.parallelize([task], 1).map(_run_task).collect()
            kind, value = (LOST, "its unit was stopped") if result is None else (DONE, result)
        except BaseException as e:  # the job failed or was cancelled: the unit is lost, the pool goes on
            kind, value = LOST, task_failure(e)
        self._done.put((slot, job, kind, value))

    def wait(self, timeout: Optional[float]) -> list[Event]:
        """What the busy slots' jobs did within ``timeout`` seconds (None: until
        one of them does something): PROGRESS with what the unit's work passed
        to ``progress``, DONE with the unit's result, or LOST with why."""
        if not self.busy:
            return []
        try:
            first = self._done.get(timeout=timeout)
        except queue.Empty:
            return []
        events: list[Event] = []
        for slot, job, kind, value in [first, *self._drain()]:
            if self._jobs[slot] is job:  # else a job already ended (progress sent just before its end)
                if kind != PROGRESS:
                    self._end(slot, job)
                events.append(Event(kind, slot, job.unit, value))
        return events

    def _end(self, slot: int, job: _Job) -> None:
        self._jobs[slot] = None
        self._by_group.pop(job.group, None)

    def _drain(self) -> list[tuple]:
        out = []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                return out

    def stop(self, why: str, grace_s: float = 0.0) -> list[Event]:
        """Stop the busy slots' units: each is asked to stop (its stop file: it
        unwinds and writes what it found), and the job groups of those still
        running ``grace_s`` seconds later are cancelled. Returns what the units
        reported meanwhile (PROGRESS; DONE for a unit that finished first),
        then LOST with ``why`` for every other."""
        busy = {i: job for i, job in enumerate(self._jobs) if job is not None}
        asked = self._ask_to_stop(busy.values())
        events: list[Event] = []
        end = time.monotonic() + (max(0.0, grace_s) if asked else 0.0)
        while busy and time.monotonic() < end:
            try:
                slot, job, kind, value = self._done.get(timeout=max(0.01, min(0.25, end - time.monotonic())))
            except queue.Empty:
                continue
            if busy.get(slot) is not job:
                continue
            if kind == PROGRESS:
                events.append(Event(PROGRESS, slot, job.unit, value))
                continue
            del busy[slot]
            self._end(slot, job)
            events.append(Event(DONE, slot, job.unit, value) if kind == DONE else Event(LOST, slot, job.unit, why))
        for slot, job in busy.items():
            try:
                self._sc.cancelJobGroup(job.group)
            except Exception:  # the context is gone: its jobs with it
                pass
            self._end(slot, job)
            events.append(Event(LOST, slot, job.unit, why))
        return events

    def _ask_to_stop(self, jobs: Any) -> bool:
        """Ask each job's task to stop: over its connection to the driver, else
        through its stop file (a task polls for it); whether any was asked (the
        others are cancelled after the grace)."""
        jobs = list(jobs)
        unasked = [job for job in jobs if self._listener is None or not self._listener.stop(job.group)]
        if not unasked or self._corpus is None:
            return len(unasked) < len(jobs)
        try:
            # Never through a link planted in the corpus (a .spark-stop link, one at a file's name).
            with folder(self._corpus, STOP_FOLDER) as stop_fd:
                for job in unasked:
                    try:
                        os.close(create_new(job.group, stop_fd))
                        self._stop_files.append(job.group)
                    except FileExistsError:   # something there already: the task sees it; not ours to remove
                        pass
        except OSError:   # LinkRefused too: those tasks are cancelled after the grace
            return len(unasked) < len(jobs)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what still runs, stop Spark (and the driver's JVM when this
        pool started it), delete the zip and the stop files. ``timeout``:
        seconds the driver threads have to see their jobs end, and the JVM to
        exit, before it is killed."""
        for job in self._jobs:
            if job is not None and self._sc is not None:
                try:
                    self._sc.cancelJobGroup(job.group)
                except Exception:
                    pass
        self._jobs = [None] * len(self._jobs)
        self._by_group.clear()
        # A driver thread still calling into the JVM as it goes away would log py4j's errors.
        end = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, end - time.monotonic()))
        self._shutdown(timeout)

    def _shutdown(self, timeout: float = 5.0) -> None:
        from pyspark import SparkContext
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        try:
            if self._sc is not None:
                self._sc.stop()
        except Exception:
            pass
        finally:
            self._sc = None
            if self._own_gateway and SparkContext._gateway is not None:
                _stop_gateway(SparkContext, timeout)
            if self._previous_python is None:
                os.environ.pop("PYSPARK_PYTHON", None)
            else:
                os.environ["PYSPARK_PYTHON"] = self._previous_python
            self._remove_stop_files()
            shutil.rmtree(self._tmp, ignore_errors=True)

    def _remove_stop_files(self) -> None:
        """Remove the stop files this pool wrote, and their folder when empty
        (neither through a link)."""
        if self._corpus is None:
            return
        try:
            if self._stop_files:
                with folder(self._corpus, STOP_FOLDER, create=False) as stop_fd:
                    for name in self._stop_files:
                        try:
                            os.unlink(name, dir_fd=stop_fd)
                        except OSError:
                            pass
            os.rmdir(os.path.join(self._corpus, STOP_FOLDER))   # rmdir of a link fails: nothing followed
        except OSError:  # not there, or another campaign's stop files in it
            pass


def _stop_gateway(context: Any, timeout: float) -> None:
    """End the driver's JVM this pool launched: a later SparkContext in this
    process (the report, a test) then starts one with its own settings. The
    JVM exits when its stdin closes (PySpark's gateway server)."""
    gateway = context._gateway
    context._gateway = context._jvm = None
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    except Exception:
        pass
    if proc is None:
        return
    try:
        proc.stdin.close()
        proc.wait(timeout)
    except Exception:
        proc.kill()
        proc.wait()


def stop_folder_problem(corpus_dir: "str | os.PathLike[str]") -> Optional[str]:
    """Why the folder corpus ``corpus_dir`` cannot hold the stop files (its
    ``STOP_FOLDER`` is a symbolic link: never followed), on one line; None when
    it can, or for a URI (no stop files)."""
    if is_uri(corpus_dir):
        return None
    stop_dir = os.path.join(os.path.abspath(corpus_dir), STOP_FOLDER)
    return str(LinkRefused(stop_dir)) if os.path.islink(stop_dir) else None


def spark_log_path(log_path: str) -> str:
    """Where Spark's driver log goes beside the workers' ``log_path``:
    ``campaign-ID.log`` -> ``campaign-ID.spark.log``."""
    base = log_path[:-len(".log")] if log_path.endswith(".log") else log_path
    return f"{base}.spark.log"


def python_zip(folder: str) -> str:
    """Zip the ``SHIPPED`` packages' ``.py`` files (as this process imports
    them) into ``folder``; returns the zip's path. SparkUnavailable when a
    package cannot be found."""
    import importlib.util
    import zipfile
    path = os.path.join(folder, "replicheck-packages.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in SHIPPED:
            spec = importlib.util.find_spec(name)
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            if not locations:
                raise SparkUnavailable(f"cannot find the package {name} to ship to the executors")
            root = Path(locations[0])
            for file in sorted(root.rglob("*.py")):
                if "__pycache__" not in file.parts:
                    zf.write(file, f"{name}/{file.relative_to(root).as_posix()}")
    return path


def folder_archive(folder: "str | os.PathLike", path: str) -> str:
    """Store the files of ``folder`` (not its subfolders) uncompressed in a zip
    at ``path`` (jars are compressed already); returns ``path``."""
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for file in sorted(Path(folder).iterdir()):
            if file.is_file():
                zf.write(file, file.name)
    return path


_LOST_TASK = re.compile(r"most recent failure: Lost task \S+ in stage \S+ \(TID \d+\) \((?P<host>\S+) executor "
                        r"(?P<executor>[^)]+)\): (?P<cause>.*)")
_JAVA_CLASS = re.compile(r"^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*: ")


def task_failure(exc: BaseException) -> str:
    """One line saying why a unit's Spark job failed, and on which executor:
    the Python exception's last line for a task that raised, Spark's reason
    otherwise (its Python worker or executor lost, the job cancelled)."""
    text = str(exc)
    match = _LOST_TASK.search(text)
    where = f" on executor {match['executor']} ({match['host']})" if match else ""
    cause = match["cause"].strip() if match else one_line(exc, limit=None)
    if "PythonException" in cause:
        # The traceback follows on the next lines; its last unindented line is the exception.
        tail = text[match.end():] if match else text
        lines = []
        for line in tail.splitlines():
            if line.startswith("\tat ") or line.startswith("\t... "):
                break
            lines.append(line)
        raised = [line.strip() for line in lines if line.strip() and not line.startswith(" ")]
        if raised:
            cause = raised[-1]
    while _JAVA_CLASS.match(cause):
        cause = _JAVA_CLASS.sub("", cause, count=1)
    line = f"its Spark task failed{where}: {cause}"
    return line if len(line) <= 300 else line[:297] + "..."


# ------------------------------------------------------------- on the executor

#: The setup functions this Python worker has run (Spark reuses it for later tasks).
_SET_UP: set[str] = set()


def _run_task(task: _Task) -> Any:
    """A unit on an executor: the shipped folders' variables set, ``setup()``
    once per Python worker, then ``work(unit, progress, worker)``, ``progress``
    sending to the driver; its output to the task's log. Returns the work's
    result, or None when the unit was asked to stop (``_stop_file``)."""
    progress = None if task.progress_to is None else ProgressSender(task.progress_to, task.key)
    with _output_to(task.log_path), _stop_file(task.stop_path, progress):
        try:
            point_at_shipped(task.shipped)
            if task.setup is not None:
                key = f"{task.setup.__module__}.{task.setup.__qualname__}"
                if key not in _SET_UP:
                    task.setup()
                    _SET_UP.add(key)
            return task.work(task.unit, progress, executor_name(task.local))
        except Stopped:
            return None
        finally:
            if progress is not None:
                progress.close()


def point_at_shipped(shipped: tuple[tuple[str, str], ...]) -> None:
    """Set each (variable, Spark file name) of ``shipped`` to where Spark
    unpacked that archive here (``pyspark.SparkFiles.get``; absolute: on a
    standalone executor it is relative to the executor's folder), before
    anything reads it (``kafka_bridge`` starting its JVM)."""
    if not shipped:
        return
    from pyspark import SparkFiles
    for variable, alias in shipped:
        os.environ[variable] = os.path.abspath(SparkFiles.get(alias))


def executor_name(local: bool) -> str:
    """The worker name of a unit run here: ``executor-ID@HOST``, ID Spark's
    executor id (``driver`` under ``local[N]``)."""
    return f"executor-{executor_id(local)}@{socket.gethostname()}"


def executor_id(local: bool) -> str:
    """Spark's id of the executor this Python worker serves: ``driver`` under
    ``local[N]``; on Kubernetes ``$SPARK_EXECUTOR_ID``; on a standalone
    cluster the ``executorId`` of the log URL its Worker sets
    (``$SPARK_LOG_URL_STDERR``), else the name of its folder
    (``<worker dir>/<app id>/<executor id>``); else ``pid<PID>``."""
    if local:
        return "driver"
    if os.environ.get("SPARK_EXECUTOR_ID"):
        return os.environ["SPARK_EXECUTOR_ID"]
    match = re.search(r"[?&]executorId=([^&]+)", os.environ.get("SPARK_LOG_URL_STDERR", ""))
    if match:
        return match.group(1)
    cwd = Path.cwd()
    if re.fullmatch(r"app-\d+-\d+", cwd.parent.name) and cwd.name.isdigit():
        return cwd.name
    return f"pid{os.getpid()}"


@contextmanager
def _output_to(log_path: Optional[str]) -> Iterator[None]:
    """Within, this process's stdout and stderr (file descriptors 1 and 2) go
    to ``log_path`` (appended) — when its folder exists here; None: nowhere.
    OSError when it cannot be opened (a symbolic link at its name: refused)."""
    target = os.devnull if log_path is None else log_path
    if log_path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(log_path))):
        yield  # not shared with this executor: the executor's own stderr file keeps it
        return
    # O_NOFOLLOW: the log is in the corpus's logs folder; a link planted at its name is refused (OSError).
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


@contextmanager
def _stop_file(stop_path: Optional[str], sender: Optional[ProgressSender] = None) -> Iterator[None]:
    """Within, the driver asking this task to stop (``SparkPool.stop``: over the
    ``sender``'s connection, or ``stop_path`` appearing) raises ``Stopped`` in
    this thread, as SIGTERM does in a local worker: the unit unwinds and
    writes what it found. Only in the main thread (where PySpark runs a task);
    elsewhere, and with neither way, it does nothing."""
    asked = sender.stop_requested if sender is not None and sender.connect() else None
    if (stop_path is None and asked is None) or threading.current_thread() is not threading.main_thread():
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(STOP_POLL_S):
            if (asked is not None and asked.is_set()) or (stop_path is not None and os.path.exists(stop_path)):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    watcher = threading.Thread(target=watch, name="replicheck-stop-file", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)  # None: set outside Python
