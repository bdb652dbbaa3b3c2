"""A Spark standalone cluster on this machine's loopback, for tests and
benchmarks (``tests/campaign/test_spark_cluster.py``,
``benchmarks/spark_scaling.py``): a master and workers started from the launch
classes PySpark ships (``bin/spark-class``), no Spark install needed, only Java.

    with LoopbackCluster(folder, workers=2) as cluster:
        run_campaign(..., master=cluster.master)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional

#: Seconds the master has to listen, and its workers to register: a net, not a
#: wait (a healthy start takes seconds, a process that exits is reported at once).
#: Beside the fault matrix's scenarios on a loaded 2-core CI machine the master's
#: JVM took more than 60 s to bind its port.
START_S = 300.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port: int) -> bool:
    """Whether 127.0.0.1:``port`` accepts a connection within half a second."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class LoopbackCluster:
    """A standalone master and ``workers`` workers (``cores`` cores and
    ``memory`` each, Spark's size syntax: ``1g``) on 127.0.0.1, on free ports
    chosen at ``start``; their logs (``master.log``, ``worker<i>.log``) and the
    workers' folders (``worker<i>/``, the executors' working folders) in
    ``folder``. ``master``: its URL once started. ``start`` raises RuntimeError
    (with the log's end) when the master does not listen or the workers do not
    register within ``start_s`` seconds; ``stop`` kills every process group it
    started (the executors within). A context manager: started on entry,
    stopped on exit."""

    def __init__(self, folder: "str | os.PathLike", workers: int = 2, cores: int = 1, memory: str = "1g",
                 start_s: float = START_S) -> None:
        self.folder = Path(folder)
        self.workers, self.cores, self.memory, self.start_s = workers, cores, memory, start_s
        self.master: Optional[str] = None
        self.master_log = self.folder / "master.log"
        self._processes: list[subprocess.Popen] = []

    def __enter__(self) -> "LoopbackCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Start the master, then the workers; returns the master URL."""
        import pyspark
        spark_home = Path(pyspark.__file__).resolve().parent
        env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1"}
        self.folder.mkdir(parents=True, exist_ok=True)

        def launch(name: str, *args: str, **extra: str) -> Path:
            log = self.folder / f"{name}.log"
            with open(log, "wb") as out:
                self._processes.append(subprocess.Popen(
                    [str(spark_home / "bin" / "spark-class"), *args], env={**env, **extra}, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
            return log

        port = free_port()
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
               "--webui-port", "0")
        self._wait(lambda: accepts(port), "the Spark master did not listen")
        self.master = f"spark://127.0.0.1:{port}"
        for i in range(self.workers):
            work_dir = self.folder / f"worker{i}"
            work_dir.mkdir(exist_ok=True)
            launch(f"worker{i}", "org.apache.spark.deploy.worker.Worker", self.master, "--host", "127.0.0.1",
                   "--cores", str(self.cores), "--memory", self.memory, "--webui-port", "0", "--work-dir",
                   str(work_dir), SPARK_WORKER_DIR=str(work_dir))
        self._wait(lambda: self.master_log.read_text(errors="replace").count("Registering worker") >= self.workers,
                   f"{self.workers} worker(s) did not register with the master")
        return self.master

    def _wait(self, ready: Callable[[], bool], what: str) -> None:
        end = time.monotonic() + self.start_s
        while not ready():
            exited = [str(p.args[1]) for p in self._processes if p.poll() is not None]
            if time.monotonic() > end or exited:
                tail = self.master_log.read_text(errors="replace")[-2000:] if self.master_log.exists() \
                    else "(no log)"
                why = f"{what} within {self.start_s:g} s" if not exited else f"{what}: {', '.join(exited)} exited"
                raise RuntimeError(f"{why}; the master's log ends:\n{tail}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM to every process group started, SIGKILL 5 s later to what is left."""
        for p in self._processes:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        end = time.monotonic() + 5
        for p in self._processes:
            try:
                p.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self._processes.clear()
