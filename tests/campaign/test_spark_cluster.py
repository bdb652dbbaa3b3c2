"""A campaign on Spark (``run_campaign(Campaign(..., master=URL))``, ``campaign.spark_pool``):
on a real standalone cluster — a master and two one-core workers on 127.0.0.1
(``campaign.spark_standalone``), started once for the module — its units run as
Spark tasks on both executors, every verdict as the local pool gives it, the
counterexamples and runs in the shared corpus, each row naming the executor
that ran it, and the report is built on the same cluster; Kafka's jars reach
the executors as Spark's files. A bad master or a corpus URI that cannot be
used fails in one line before anything runs (a usable one:
``test_remote_corpus_campaign``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

import replicheck_cli.fuzz
from campaign.plan import Campaign
from campaign.targets import Target
from store.reader import read_counterexamples, read_runs
from campaign.runner import run_campaign
from campaign.spark_checks import MASTER_FORMS
from campaign.spark_pool import SparkPool, executor_id, task_failure
from campaign.spark_standalone import LoopbackCluster, free_port
from replicheck_cli import main

ROOT = Path(__file__).resolve().parents[2]


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or bool(home and Path(home, "bin", "java").exists())


requires_java = pytest.mark.skipif(not _java(), reason="a Spark cluster needs Java (java on PATH or JAVA_HOME); "
                                                       "CI has Java 17")


# ---------------------------------------------------- before anything runs

@pytest.fixture
def no_campaign(monkeypatch):
    def started(*args, **kwargs):
        raise AssertionError("a campaign was started")
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", started)


def test_an_unreachable_master_is_one_line_before_anything_runs(no_campaign, tmp_path):
    port = free_port()
    t0 = time.monotonic()
    result = CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--master", f"spark://127.0.0.1:{port}",
                                       "--corpus", str(tmp_path / "corpus"), "--no-report"])
    assert (result.exit_code, result.stdout, result.stderr) == \
        (2, "", f"error: --master spark://127.0.0.1:{port}: cannot connect within 3 s (127.0.0.1:{port}: "
                f"Connection refused); is the cluster up?\n")
    assert time.monotonic() - t0 < 10 and not (tmp_path / "corpus").exists()

    result = CliRunner().invoke(main, ["fuzz", "--master", "mesos://h:5050", "--corpus", str(tmp_path / "corpus")])
    assert (result.exit_code, result.stderr) == \
        (2, f"error: --master mesos://h:5050: not a Spark master URL; allowed: {', '.join(MASTER_FORMS)}\n")


@pytest.mark.parametrize("corpus", ["s3a://bucket/corpus", "hdfs://namenode:8020/corpus", "foo://bucket/corpus"])
def test_a_corpus_uri_is_one_line_and_nothing_is_made(no_campaign, tmp_path, monkeypatch, corpus):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["fuzz", "--master", "local[2]", "--corpus", corpus])
    assert result.exit_code == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"error: --corpus {corpus}: ")  # Hadoop's s3a, no libhdfs here, unknown
    assert list(tmp_path.iterdir()) == []  # no folder made of the URI, no report folder


def test_run_campaign_checks_master_and_corpus_before_spark_starts(tmp_path, monkeypatch):
    import campaign.spark_pool

    def started(self, *args):
        raise AssertionError("Spark was started")
    monkeypatch.setattr(campaign.spark_pool.SparkPool, "_start", started)
    targets = [Target.parse("variant:NO_ELR")]
    with pytest.raises(ValueError) as e:
        run_campaign(Campaign(targets, budget_s=10, workers=None, corpus_dir="s3a://bucket/corpus", master="local[1]"))
    assert str(e.value).startswith("corpus_dir s3a://bucket/corpus: s3a:// is Hadoop's name; give s3://") and \
        "\n" not in str(e.value)
    port = free_port()
    with pytest.raises(ValueError, match=rf"^--master spark://127.0.0.1:{port}: cannot connect within 3 s"):
        run_campaign(Campaign(targets, budget_s=10, workers=None, corpus_dir=str(tmp_path), master=f"spark://127.0.0.1:{port}"))
    with pytest.raises(ValueError, match=r"^workers must be an integer >= 1, got None$"):
        run_campaign(Campaign(targets, budget_s=10, workers=None, corpus_dir=str(tmp_path)))  # only a master sizes the pool itself
    assert list(tmp_path.iterdir()) == []


def test_fuzz_hands_the_master_to_the_campaign(monkeypatch, tmp_path, capsys):
    from campaign.runner import CampaignResult
    from campaign.scheduler import FOUND, TargetResult
    from replicheck_cli.fuzz import FuzzRequest, fuzz
    seen: dict = {}

    def stand_in(plan, **kwargs):
        seen.update(attrs.asdict(plan, recurse=False))
        found = TargetResult(Target("variant", "NO_ELR"), FOUND, "UncleanExclusion after 0.2 s (3 examples)", units=1,
                             runs=1, examples=3, found="UncleanExclusion")
        return CampaignResult((found,), seed=5, run_id=plan.run_id, workers=2, budget_s=plan.budget_s, elapsed_s=9.0)
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", stand_in)
    assert fuzz(FuzzRequest(minutes=1, variants=["NO_ELR"], include_correct=False, corpus_dir=tmp_path, report_dir=None, seed=5, master="local[2]")) == 0
    assert (seen["master"], seen["workers"], seen["corpus_dir"]) == ("local[2]", None, str(tmp_path.resolve()))
    assert capsys.readouterr().out.splitlines()[0] == \
        f"replicheck fuzz: 1 target on the executors of local[2] (one unit per core), 1 min, seed 5, corpus " \
        f"{tmp_path.resolve()}"


def test_the_report_follows_a_campaign_onto_a_standalone_master(monkeypatch, tmp_path, capsys):
    from campaign.runner import CampaignResult
    from campaign.scheduler import CLEAN, TargetResult
    from replicheck_cli.fuzz import FuzzRequest, fuzz
    from replicheck_cli.report_job import ReportOutcome, report_master
    assert [report_master(m) for m in (None, "local[2]", "yarn", "k8s://h:443", "spark://h:7077,g:7077")] == \
        ["local[*]"] * 4 + ["spark://h:7077,g:7077"]
    seen: dict = {}

    def a_campaign(plan, **kwargs):
        clean = TargetResult(Target("correct"), CLEAN, "no counterexample", units=1, runs=1, examples=3)
        return CampaignResult((clean,), seed=5, run_id=plan.run_id, workers=2, budget_s=plan.budget_s, elapsed_s=9.0)

    def report(corpus, out, seconds, targets, run_id, master=None):
        seen["master"] = master
        return ReportOutcome(None, "stopped here", out / "spark.log")
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", a_campaign)
    monkeypatch.setattr(replicheck_cli.fuzz, "build_report_within", report)
    master = "spark://127.0.0.1:7077"
    fuzz(FuzzRequest(minutes=1, correct_only=True, corpus_dir=tmp_path / "corpus", report_dir=tmp_path / "report", seed=5, master=master, live=False))
    assert seen == {"master": master}
    assert f"build it with `replicheck report {tmp_path.resolve() / 'corpus'} --out {tmp_path / 'report'} " \
           f"--master {master}`" in capsys.readouterr().out


_PYTHON_FAILURE = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 2.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 2.0 (TID 2) (10.0.0.7 executor 1): org.apache.spark.api.python.PythonException: \
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pyspark/worker.py", line 1900, in main
    process()
  File "/tmp/spark-1/userFiles-2/replicheck-packages.zip/harness/spark_pool.py", line 400, in _run_task
    return task.work(task.unit, None, executor_name(task.local))
OSError: [Errno 28] No space left on device

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:612)
\tat org.apache.spark.api.python.PythonRunner$$anon$3.read(PythonRunner.scala:945)
"""

_WORKER_CRASH = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 5.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 5.0 (TID 5) (127.0.0.1 executor 0): org.apache.spark.SparkException: Python worker \
exited unexpectedly (crashed)
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator$$anonfun$1.applyOrElse(PythonRunner.scala:621)
"""


def test_a_failed_task_is_one_line_naming_its_executor():
    assert task_failure(RuntimeError(_PYTHON_FAILURE)) == \
        "its Spark task failed on executor 1 (10.0.0.7): OSError: [Errno 28] No space left on device"
    assert task_failure(RuntimeError(_WORKER_CRASH)) == \
        "its Spark task failed on executor 0 (127.0.0.1): Python worker exited unexpectedly (crashed)"
    assert task_failure(ConnectionError("Answer from Java side is empty\nmore")) == \
        "its Spark task failed: ConnectionError: Answer from Java side is empty"


def test_the_executor_id_a_unit_is_named_after(tmp_path, monkeypatch):
    for name in ("SPARK_EXECUTOR_ID", "SPARK_LOG_URL_STDERR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    assert executor_id(local=True) == "driver"
    assert executor_id(local=False) == f"pid{os.getpid()}"
    folder = tmp_path / "app-20261124223000-0003" / "5"   # a standalone Worker's <work dir>/<app id>/<executor id>
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    assert executor_id(local=False) == "5"
    monkeypatch.setenv("SPARK_LOG_URL_STDERR",
                       "http://127.0.0.1:8081/logPage/?appId=app-20261124223000-0003&executorId=2&logType=stderr")
    assert executor_id(local=False) == "2"
    monkeypatch.setenv("SPARK_EXECUTOR_ID", "7")   # Kubernetes
    assert executor_id(local=False) == "7"


def _print_then_search(unit, progress, worker):
    """A unit's work that prints (to the file descriptors: pytest replaces
    ``sys.stdout``, a Python worker does not), then searches until it is
    stopped (300 s at most: a net)."""
    os.write(1, f"unit {unit} on {worker}\n".encode())
    os.write(2, b"a warning\n")
    end = time.monotonic() + 300
    while time.monotonic() < end:
        time.sleep(0.01)
    return "searched to the end"


_SETUPS: list[int] = []


def _count_setup() -> None:
    _SETUPS.append(1)


def test_a_task_unwinds_when_asked_to_stop_its_output_in_the_log(tmp_path):
    """What runs on the executor, run here: ``setup`` once per process, the
    unit's output appended to the log, and the stop file (``SparkPool.stop``)
    unwinding the unit (it would search for minutes), the SIGTERM handler given back."""
    from campaign.spark_pool import _run_task, _Task
    stop, log = tmp_path / "stop", tmp_path / "campaign.log"
    handler = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(0.5, stop.touch)
    timer.start()
    assert _run_task(_Task(_print_then_search, _count_setup, "u1", str(log), str(stop), True)) is None
    assert signal.getsignal(signal.SIGTERM) == handler
    stop.unlink()
    timer = threading.Timer(0.3, stop.touch)
    timer.start()
    assert _run_task(_Task(_print_then_search, _count_setup, "u2", str(log), str(stop), True)) is None
    assert len(_SETUPS) == 1  # once per Python worker
    host = socket.gethostname()
    assert log.read_text() == f"unit u1 on executor-driver@{host}\na warning\nunit u2 on executor-driver@{host}\n" \
                              f"a warning\n"


@pytest.mark.parametrize("fixed, registered, sizes", [
    (False, [1, 2, 1, 3], [1, 2, 2, 3]),   # the executors' slots as they register; one lost keeps its slot
    (True, [1, 2, 3], [1, 1, 1]),          # the plan's workers (or local[N]) fix the size
])
def test_the_pool_grows_with_the_executors_that_register_late(fixed, registered, sizes):
    pool = SparkPool.__new__(SparkPool)  # no Spark: only the executors' count matters
    pool._jobs, pool._fixed_size = [None], fixed
    grown = []
    for slots in registered:
        pool.executor_cores = lambda slots=slots: slots
        grown.append(pool.grow())
    assert grown == sizes and pool.size == sizes[-1]


# ------------------------------------------------------- on a real cluster

@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory) -> LoopbackCluster:
    """A standalone master and two workers (1 core, 1 GiB each) on 127.0.0.1,
    for every test of the module (started once: some seconds); their processes
    killed at the end, pass or fail."""
    if not _java():
        pytest.skip("a Spark cluster needs Java")
    with LoopbackCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1, memory="1g") as cluster:
        yield cluster


#: The driver, in a process of its own: a SparkContext is one per process, and
#: another test of this pytest worker may hold one (the report's).
_DRIVER = """
import json, sys
import campaign.spark_pool
from campaign.plan import Campaign
from campaign.targets import Target
from campaign.runner import run_campaign
master, corpus, log = sys.argv[1:4]
campaign.spark_pool.REGISTER_S = 300.0   # a net: a loaded machine can take minutes to start an executor
# Two flaws, each found in its first run on seed 1: the campaign ends at their finds (and
# reductions), whatever the machine's speed; the budget is a net, never reached.
targets = [Target.parse(t) for t in ("variant:NO_ELR", "bug:METADATA_BATCH_LAST_DELTA_ONLY")]
result = run_campaign(Campaign(targets, budget_s=600.0, workers=None, seed=1, corpus_dir=corpus, run_id="sparktest", master=master, finish_s=5.0, log_path=log))
print(json.dumps({"workers": result.workers, "elapsed_s": result.elapsed_s,
                  "verdicts": {t.target.label: [t.verdict, t.why] for t in result.targets}}))
"""


@requires_java
@pytest.mark.system
def test_a_campaign_runs_its_units_on_both_executors(spark_cluster, tmp_path):
    corpus, log = tmp_path / "corpus", tmp_path / "corpus" / "logs" / "campaign-sparktest.log"
    log.parent.mkdir(parents=True)
    driver = subprocess.run([sys.executable, "-c", _DRIVER, spark_cluster.master, str(corpus), str(log)], cwd=ROOT,
                            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}, capture_output=True, text=True,
                            timeout=600)
    assert driver.returncode == 0, driver.stderr[-3000:]
    outcome = json.loads(driver.stdout.splitlines()[-1])
    assert outcome["workers"] == 2  # the executors' cores: one per worker
    assert {label: verdict for label, (verdict, _) in outcome["verdicts"].items()} == \
        {"variant:NO_ELR": "found", "bug:METADATA_BATCH_LAST_DELTA_ONLY": "found"}, outcome
    # Spark's own log (the driver JVM's output with it) went beside the workers' log, nothing to the terminal.
    assert (log.parent / "campaign-sparktest.spark.log").exists()
    assert driver.stderr == "", driver.stderr[-3000:]

    counterexamples = read_counterexamples(corpus).rows
    both = {"campaign[variant:NO_ELR]", "campaign[bug:METADATA_BATCH_LAST_DELTA_ONLY]"}
    assert {r["test_id"] for r in counterexamples} == both
    runs = read_runs(corpus).rows
    assert {r["test_id"] for r in runs} == both
    assert all(r["run_id"] == "sparktest" for r in runs + counterexamples)
    # Each row names the executor that ran its unit; the two targets' first units
    # start at once, so on both one-core executors. (Two targets for two cores: a
    # third would start only when a first unit ends, and on a loaded machine a
    # Spark task's start-up can outlast the whole search.)
    workers = {r["worker"] for r in runs + counterexamples}
    assert len({w.split("@")[0] for w in workers}) == 2 and all(w.startswith("executor-") for w in workers), workers
    assert not [p for p in corpus.rglob(".*")], "no temporary or stop file may be left behind"


def _apps(cluster: LoopbackCluster) -> list[str]:
    """The names of the applications that registered with the cluster's master, in order."""
    return [line.split("Registering app ")[1].strip() for line in cluster.master_log.read_text().splitlines()
            if "Registering app " in line]


@requires_java
@pytest.mark.system
def test_the_report_after_a_campaign_on_the_cluster_is_built_there(spark_cluster, tmp_path):
    """``replicheck fuzz``'s report step (``build_report_within`` with the
    campaign's master), on an empty corpus: where the report runs, cheaply
    (a campaign's corpus takes a minute or more on this cluster)."""
    from replicheck_cli.report_job import build_report_within
    (tmp_path / "corpus").mkdir()
    before = len(_apps(spark_cluster))
    # A net, not a wait: beside the fault matrix's scenarios on a loaded CI machine the application's
    # executor (its JVM, its Python worker) took more than 120 s to start.
    built = build_report_within(tmp_path / "corpus", tmp_path / "report", 400, ["correct"], "sparktest",
                                spark_cluster.master)
    assert (built.path, built.problem) == (tmp_path / "report" / "index.html", None), built.log.read_text()[-3000:]
    assert _apps(spark_cluster)[before:] == ["replicheck-reports"]


#: A Kafka campaign's driver: each unit's work, on the executor, says after
#: its runs where its JVM's classpath and Spark's files folder are.
_KAFKA_DRIVER = """
import json, os, sys
import campaign.spark_pool
from campaign.plan import Campaign
from campaign.targets import Target
from campaign.unit import run_unit
from campaign.runner import run_campaign
master, corpus, log = sys.argv[1:4]

def work(unit, progress, worker):
    import jpype
    from kafka_bridge.jvm import start
    from pyspark import SparkFiles
    # The JVM the unit's runs use (kafka_bridge.jvm.start, once per process), started
    # before them: its classpath is known even when a loaded machine leaves no time to
    # run, and even when the unit was asked to stop while its JVM started (the stop
    # comes once it has started).
    try:
        start()
    finally:
        if jpype.isJVMStarted():
            classpath = str(jpype.java.lang.System.getProperty("java.class.path"))
            os.write(1, (json.dumps({"classpath": classpath,
                                     "files": os.path.abspath(SparkFiles.getRootDirectory())}) + "\\n").encode())
    return run_unit(unit, progress, worker)

def stop_once_a_unit_said(progress):
    # The test ends the campaign (as Ctrl-C would) once a unit's line is in the log: a budget
    # that ran out first on a loaded machine would leave no line to read.
    if os.path.exists(log) and any(line.startswith("{") for line in open(log, encoding="utf-8", errors="replace")):
        raise KeyboardInterrupt

campaign.spark_pool.REGISTER_S = 300.0
result = run_campaign(Campaign([Target.parse("implementation:kafka")], budget_s=600.0, workers=1, seed=1, corpus_dir=corpus, run_id="sparkkafka", master=master, finish_s=2.0, log_path=log), on_progress=stop_once_a_unit_said, work=work)
print(json.dumps({t.target.label: [t.verdict, t.why] for t in result.targets}))
"""


@requires_java
@pytest.mark.system
def test_kafkas_jars_reach_the_executors_as_sparks_files(spark_cluster, tmp_path):
    from engines import require_kafka
    from kafka_bridge.jvm import lib_dir
    require_kafka()
    corpus, log = tmp_path / "corpus", tmp_path / "corpus" / "logs" / "campaign-sparkkafka.log"
    log.parent.mkdir(parents=True)
    driver = subprocess.run([sys.executable, "-c", _KAFKA_DRIVER, spark_cluster.master, str(corpus), str(log)],
                            cwd=ROOT, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}, capture_output=True,
                            text=True, timeout=600)
    assert driver.returncode == 0, driver.stderr[-3000:]
    # Stopped by the driver once the unit had said where its jars were (before or after its first run).
    assert json.loads(driver.stdout.splitlines()[-1])["implementation:kafka"][0] in ("stopped", "not run"), \
        driver.stdout
    units = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert units, log.read_text()[-3000:]
    ours = str(lib_dir().resolve())
    for unit in units:
        # Each executor's JVM read Kafka's jars from the folder Spark unpacked them in, in its own files
        # folder (under its worker's folder), not from the driver's.
        # (JPype adds its own org.jpype.jar.)
        classpath = [jar for jar in unit["classpath"].split(os.pathsep) if os.path.basename(jar) != "org.jpype.jar"]
        folder = os.path.join(unit["files"], "replicheck-kafka-lib")
        assert {os.path.basename(jar) for jar in classpath} == {jar.name for jar in lib_dir().glob("*.jar")}
        assert all(os.path.dirname(jar) == folder for jar in classpath), (classpath, folder)
        assert unit["files"].startswith(str(spark_cluster.folder))
        assert not any(jar.startswith(ours) for jar in classpath)
