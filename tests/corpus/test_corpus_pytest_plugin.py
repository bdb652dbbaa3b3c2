"""The pytest plugin, end to end, in a nested ``pytest`` on a generated test file:
under ``-n 2`` two failing machines each write their final (shrunk) counterexample
once, from the worker that ran them, one file per table per worker under the
session's run id, nothing clobbered and no temporary file left; a passing machine
writes its ``runs`` row; ``--replay-corpus`` turns the corpus into regression
tests; ``--no-corpus`` and ``REPLICHECK_CORPUS`` choose where (or whether) to write."""

from __future__ import annotations

import os
import re
import textwrap
from collections import Counter

import pytest
from click.testing import CliRunner

from replicheck_cli.commands import main
from store.reader import corpus_files, read_counterexamples, read_runs

from corpus_support import clean_env, run_pytest

MACHINES = textwrap.dedent('''
    from hypothesis import HealthCheck, Phase, settings
    from check.machine import machine_for
    from check.subject import Subject
    from model import Variant
    from sut import Bug

    FAST = settings(max_examples=1000, stateful_step_count=10, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink))

    Hwm = machine_for(Subject(variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})), name="HwmMachine")
    # derandomized: one stream, which must reach the variant; 8 steps stopped doing so when the
    # machine's weights changed
    Hwm.TestCase.settings = settings(FAST, stateful_step_count=10)
    TestHwm = Hwm.TestCase

    ProduceBug = machine_for(Subject(bugs=frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})), name="ProduceBugMachine")
    ProduceBug.TestCase.settings = settings(FAST, stateful_step_count=12)
    TestProduceBug = ProduceBug.TestCase

    Passing = machine_for(Subject(compare=False), name="PassingMachine")
    Passing.TestCase.settings = settings(FAST, max_examples=5)
    TestPassing = Passing.TestCase
''')


@pytest.fixture(scope="module")
def xdist_corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("plugin")
    (work / "test_generated_machines.py").write_text(MACHINES)
    corpus = work / "corpus"
    proc = run_pytest(work, "-n", "2", "-q", "--corpus-dir", str(corpus), "test_generated_machines.py")
    return work, corpus, proc


def test_two_failing_machines_under_xdist_write_both_counterexamples_once(xdist_corpus):
    work, corpus, proc = xdist_corpus
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed, 1 passed" in proc.stdout, proc.stdout
    read = read_counterexamples(corpus)
    assert read.problems == []
    rows = read.rows
    # one row per failing test: the final shrunk example, not every intermediate shrink
    assert Counter(r["test_id"] for r in rows) == {
        "test_generated_machines.py::TestHwm::runTest": 1,
        "test_generated_machines.py::TestProduceBug::runTest": 1,
    }
    by_test = {r["test_id"].split("::")[1]: r for r in rows}
    assert by_test["TestHwm"]["property"] == "LeaderCandidateCompleteness"
    assert by_test["TestHwm"]["step_count"] <= 6
    assert by_test["TestProduceBug"]["kind"] == "divergence"
    assert by_test["TestProduceBug"]["sut_bugs"] == ["PRODUCE_IGNORES_MIN_ISR"]
    assert len({r["counterexample_id"] for r in rows}) == 2
    run_ids = {r["run_id"] for r in rows}
    assert len(run_ids) == 1                                 # one run id, shared by the workers
    assert {r["worker"] for r in rows} <= {"gw0", "gw1"}
    # the summary tells how to replay each
    assert proc.stdout.count("replicheck replay ") == 2


def test_files_are_per_worker_atomic_and_nothing_left_behind(xdist_corpus):
    work, corpus, proc = xdist_corpus
    runs = read_runs(corpus).rows
    assert sorted((r["test_id"].split("::")[1], r["failed"]) for r in runs) == [
        ("TestHwm", True), ("TestPassing", False), ("TestProduceBug", True)]
    (run_id,) = {r["run_id"] for r in runs}
    files = corpus_files(corpus, "counterexamples") + corpus_files(corpus, "runs")
    seen = set()
    for f in files:
        m = re.fullmatch(rf"part-{run_id}-(gw[01])-(\d{{4}})\.parquet", f.name)
        assert m, f.name
        assert re.fullmatch(r"run_date=\d{4}-\d{2}-\d{2}", f.parent.name)
        key = (f.parent.parent.name, m.group(1), m.group(2))
        assert key not in seen                                 # each write its own file
        seen.add(key)
    # a counterexample's file is written when its test ends: one per failing test
    assert len(corpus_files(corpus, "counterexamples")) == 2
    for dirpath, _, names in os.walk(corpus):
        assert not [n for n in names if n.startswith(".") or not n.endswith(".parquet")], (dirpath, names)
    passing = next(r for r in runs if not r["failed"])
    assert passing["examples"] >= 5 and passing["steps"] > 0 and passing["rule_counts"]
    assert passing["profile"] and passing["duration_s"] > 0


def test_cli_replays_a_recorded_counterexample(xdist_corpus):
    work, corpus, proc = xdist_corpus
    row = next(r for r in read_counterexamples(corpus).rows if r["kind"] == "property")
    result = CliRunner().invoke(main, ["replay", str(corpus), "--id", row["counterexample_id"][:12]])
    assert result.exit_code == 1, result.output
    assert row["violation"] in result.output
    assert "property violated after step" in result.output
    assert "reproduced: LeaderCandidateCompleteness" in result.output
    # the pytest failure printed the same report
    assert row["violation"] in proc.stdout


def test_replay_corpus_collects_every_counterexample_as_a_regression_test(xdist_corpus):
    work, corpus, proc = xdist_corpus
    # No file arguments: only the corpus's regression tests run (both were recorded
    # against a variant / a SUT bug, so both must still fail the same way: pass);
    # the folder's own tests are not even collected.
    replayed = run_pytest(work, "-v", "--replay-corpus", str(corpus))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 passed" in replayed.stdout and "deselected" not in replayed.stdout, replayed.stdout
    assert "LeaderCandidateCompleteness[HWM_ADVANCES_BELOW_MIN_ISR-" in replayed.stdout
    assert "SutDiffersFromModel[PRODUCE_IGNORES_MIN_ISR-" in replayed.stdout
    # with a file argument they run alongside the file's tests
    both = run_pytest(work, "-q", "--no-corpus", "--replay-corpus", str(corpus), "test_generated_machines.py",
                      "-k", "Passing or corpus")
    assert both.returncode == 0, both.stdout + both.stderr
    assert "3 passed" in both.stdout, both.stdout


def test_no_corpus_and_env_var_choose_where_to_write(tmp_path):
    (tmp_path / "test_passing_only.py").write_text(MACHINES.split("Hwm = ")[0] + textwrap.dedent('''
        Passing = machine_for(Subject(compare=False), name="PassingMachine")
        Passing.TestCase.settings = settings(FAST, max_examples=3)
        TestPassing = Passing.TestCase
    '''))
    env_corpus = tmp_path / "from-env"
    proc = run_pytest(tmp_path, "-q", "test_passing_only.py", env=clean_env(REPLICHECK_CORPUS=str(env_corpus)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(read_runs(env_corpus).rows) == 1
    assert not (tmp_path / "corpus").exists()

    off = tmp_path / "off"
    proc = run_pytest(tmp_path, "-q", "--no-corpus", "--corpus-dir", str(off), "test_passing_only.py",
                      env=clean_env(REPLICHECK_CORPUS=str(env_corpus)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not off.exists() and len(read_runs(env_corpus).rows) == 1

    proc = run_pytest(tmp_path, "-q", "test_passing_only.py")     # default: corpus/ at the rootdir
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(read_runs(tmp_path / "corpus").rows) == 1
