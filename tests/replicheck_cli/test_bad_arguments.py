"""Bad arguments of ``replicheck report`` and ``replicheck fuzz`` end in one
line on stderr naming the argument and what is allowed, exit status 2, within
seconds, before Spark or any run starts — an unreachable ``--master`` included
(it used to be an 88-line traceback after a minute of Spark's retries)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import spark_reports._session
from replicheck_cli import main
from spark_reports._session import MASTER_FORMS, check_master


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def no_spark(monkeypatch):
    """Starting Spark fails the test: the errors below come before it."""
    def started(*args, **kwargs):
        raise AssertionError("Spark was started")
    monkeypatch.setattr(spark_reports._session, "session", started)


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "corpus").mkdir()
    return tmp_path / "corpus"


ALLOWED = f"allowed: {', '.join(MASTER_FORMS)}"


@pytest.mark.parametrize("args, line", [
    (["--top", "-5"], "replicheck report: --top must be an integer >= 0, got -5"),
    (["--max-diagrams", "-1"], "replicheck report: --max-diagrams must be an integer >= 0, got -1"),
    (["--out", "/proc/nope"], "replicheck report: --out /proc/nope: cannot create or write this folder (No such file "
                              "or directory); give a writable folder"),
    (["--master", "bogus"], f"replicheck report: --master bogus: not a Spark master URL; {ALLOWED}"),
    (["--master", "spark://localhost"], f"replicheck report: --master spark://localhost: 'localhost' is not "
                                        f"HOST:PORT; {ALLOWED}"),
    (["--master", "spark://127.0.0.1:{port}"], "replicheck report: --master spark://127.0.0.1:{port}: cannot "
                                               "connect within 3 s (127.0.0.1:{port}: Connection refused); is the "
                                               "cluster up?"),
])
def test_report_bad_arguments_are_one_line_before_spark_starts(no_spark, corpus, tmp_path, args, line):
    port = _closed_port()
    args = [a.format(port=port) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    t0 = time.monotonic()
    result = CliRunner().invoke(main, ["report", str(corpus), *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", line.format(port=port) + "\n")
    assert time.monotonic() - t0 < 10


def test_report_of_a_file_is_one_line(no_spark, tmp_path):
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(main, ["report", str(tmp_path / "file"), "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.stderr) == \
        (2, f"replicheck report: CORPUS_DIR {tmp_path / 'file'}: not a folder; give the folder holding "
            f"counterexamples/ and runs/\n")


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[4,2]", "local[*,3]",
                                    "local-cluster[2,1,1024]", "yarn", None])
def test_local_and_yarn_masters_need_no_connection(master):
    assert check_master(master) is None



@pytest.mark.parametrize("args, line", [
    (["--workers", "-1"], "error: --workers must be an integer >= 1, got -1"),
    (["--corpus", "/proc/nope"], "error: --corpus /proc/nope: cannot create or write this folder (No such file or "
                                 "directory); give a writable folder"),
    (["--report", "/proc/nope", "--corpus", "{tmp}/c"], "error: --report /proc/nope: cannot create or write this "
                                                        "folder (No such file or directory); give a writable folder"),
])
def test_fuzz_output_folders_are_checked_before_any_run(no_campaign, tmp_path, args, line):
    args = [a.format(tmp=tmp_path) for a in args]
    result = CliRunner().invoke(main, ["fuzz", "--minutes", "1", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", line + "\n")


def test_the_campaigns_report_job_says_why_it_cannot_write_instead_of_raising(tmp_path):
    from replicheck_cli.report_job import build_report_within
    outcome = build_report_within(tmp_path, tmp_path / "out", float("nan"))
    assert outcome.path is None and outcome.problem == "no time was left of the budget for it"
    outcome = build_report_within(tmp_path, Path("/proc/nope"), 60)
    assert outcome.path is None and outcome.problem == (
        "the report folder /proc/nope: cannot create or write this folder (No such file or directory); "
        "give a writable folder")
