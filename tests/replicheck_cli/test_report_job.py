"""The campaign's report (``replicheck_cli.report_job``) is built in a process of
its own within the time left: Spark's output goes to ``spark.log`` beside the
report, never to the terminal; the report lists the campaign's targets; a report
that cannot finish in time is stopped and said so."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from replicheck_cli.report_job import build_report_within
from check.subject import Subject


def _corpus(tmp_path: Path) -> Path:
    """A corpus holding one machine run of the campaign ``camp``'s target variant:NO_ELR."""
    from check.machine import machine_for
    from check.statistics import RunObserver
    from store.rows import run_row
    from store.writer import CorpusWriter
    writer = CorpusWriter(tmp_path / "corpus", run_id="camp", worker="w0")
    run = RunObserver(machine_for(Subject(), name="Probe"), test_id="campaign[variant:NO_ELR]")
    writer.add_run(run_row(run.record(), "camp", "w0"))
    writer.flush()
    return tmp_path / "corpus"


@pytest.mark.system  # a report process: its own Spark JVM
def test_the_report_is_built_aside_with_sparks_output_in_its_log(tmp_path, capfd):
    outcome = build_report_within(_corpus(tmp_path), tmp_path / "report", 600,
                                  ["variant:NO_ELR", "bug:PRODUCE_IGNORES_MIN_ISR"], "camp")
    assert (outcome.path, outcome.problem) == (tmp_path / "report" / "index.html", None)
    doc = outcome.path.read_text()
    assert "1 target(s) did not run:</b> bug:PRODUCE_IGNORES_MIN_ISR" in doc
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert outcome.log == tmp_path / "report" / "spark.log" and outcome.log.exists()


def test_a_report_without_time_is_not_built_and_said_so(tmp_path):
    outcome = build_report_within(_corpus(tmp_path), tmp_path / "report", 0)
    assert (outcome.path, outcome.problem) == (None, "no time was left of the budget for it")
    outcome = build_report_within(_corpus(tmp_path), tmp_path / "report", 0.2)
    assert outcome.path is None and outcome.problem == "it did not finish within the 0 s left of the budget"


# ------------------------------------------------ the report process started ahead

def _wait_for(predicate, what: str, limit_s: float = 600) -> None:
    """Wait until ``predicate()`` holds (a limit only against a hang: never a
    claim about speed)."""
    import time
    deadline = time.monotonic() + limit_s
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen within {limit_s} s"
        time.sleep(0.1)


def _gone(pid) -> bool:
    """Process ``pid`` has exited (or is a zombie, its exit not yet collected)."""
    import os
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:   # no /proc
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        return False


@pytest.mark.system  # a report process: its own Spark JVM
def test_a_warmed_up_report_process_builds_the_report_and_leaves_nothing_running(tmp_path, capfd):
    from replicheck_cli.report_job import ReportProcess
    process = ReportProcess(tmp_path / "report")
    _wait_for(lambda: process.ready is not None, "the warm-up")
    pid, jvm = process.pid, process.jvm_pid
    assert jvm is not None and not _gone(jvm)
    outcome = process.build(_corpus(tmp_path), 600, ["variant:NO_ELR", "bug:PRODUCE_IGNORES_MIN_ISR"], "camp")
    assert (outcome.path, outcome.problem) == (tmp_path / "report" / "index.html", None), outcome.log.read_text()
    assert "1 target(s) did not run:</b> bug:PRODUCE_IGNORES_MIN_ISR" in outcome.path.read_text()
    assert capfd.readouterr() == ("", "")
    assert process.pid is None and _gone(pid) and _gone(jvm)


@pytest.mark.system  # a report process: its own Spark JVM
def test_a_report_process_stopped_before_the_go_ends_with_its_jvm(tmp_path):
    from replicheck_cli.report_job import ReportProcess
    with ReportProcess(tmp_path / "report") as process:
        pid = process.pid
        _wait_for(lambda: process.ready is not None or process.jvm_pid is not None, "the JVM's start")
        jvm = process.jvm_pid
    assert _gone(pid) and _gone(jvm)
    assert process.build(tmp_path, 60).problem == "its process was stopped before the report"


def test_a_report_process_for_a_folder_it_cannot_write_starts_nothing(tmp_path):
    from pathlib import Path as P
    from replicheck_cli.report_job import ReportProcess
    process = ReportProcess(P("/proc/nope"))
    assert process.pid is None and process.build(tmp_path, 60).problem.startswith("the report folder /proc/nope")


# ------------------------------------------------------------- the report's budget

def test_the_reports_reserve_grows_with_the_corpus_and_the_targets_within_half_the_budget(tmp_path):
    from replicheck_cli.report_job import (FILES_PER_TARGET, REPORT_FIXED_S, REPORT_LOAD_FACTOR, REPORT_PER_FILE_S,
                                           corpus_files, report_reserve_s)
    corpus = _corpus(tmp_path)
    (corpus / "runs" / "run_date=2026-01-01").mkdir()
    (corpus / "runs" / "run_date=2026-01-01" / ".part-x.parquet.tmp").write_bytes(b"")   # a writer's temp file
    assert corpus_files(corpus) == 1 and corpus_files(tmp_path / "none") == 0 and corpus_files("s3://b/c") == 0
    assert report_reserve_s(corpus, 10, 3600) == REPORT_LOAD_FACTOR * (
        REPORT_FIXED_S + REPORT_PER_FILE_S * (1 + 10 * FILES_PER_TARGET))
    assert report_reserve_s(corpus, 10, 3600) < report_reserve_s(corpus, 40, 3600)
    assert report_reserve_s(corpus, 10, 20) == 10


def test_the_campaigns_search_gets_its_budget_less_the_reports_reserve(tmp_path):
    from campaign.runner import GRACE_S
    from replicheck_cli.fuzz import FuzzRequest, _session
    from replicheck_cli.report_job import report_reserve_s
    request = FuzzRequest(minutes=5, workers=1, variants=["NO_ELR"], corpus_dir=tmp_path / "c",
                          report_dir=tmp_path / "r", seed=1)
    session = _session(request)
    assert session.search_s == 300 - report_reserve_s(session.corpus, 2, 300) - GRACE_S
    assert _session(attrs.evolve(request, report_dir=None)).search_s == 300 - GRACE_S


# --------------------------------------------------- the report process of ``fuzz``

def _fuzz_with(monkeypatch, tmp_path, outcome: str) -> tuple[int, dict]:
    """``fuzz`` with its search stood in for: the stand-in records the report
    process (started before it), waits for its JVM, and ends the campaign as
    ``outcome`` says (clean, interrupted, or raising)."""
    import replicheck_cli.fuzz
    from campaign.runner import CampaignResult
    from campaign.scheduler import CLEAN, TargetResult
    from campaign.targets import Target
    from replicheck_cli.fuzz import FuzzRequest, fuzz
    seen: dict = {}
    started = []

    class Recorded(replicheck_cli.fuzz.ReportProcess):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    def a_campaign(plan, **kwargs):
        process, = started
        _wait_for(lambda: process.ready is not None or process.jvm_pid is not None, "the JVM's start")
        seen.update(pid=process.pid, jvm=process.jvm_pid, alive=not _gone(process.pid))
        if outcome == "raises":
            raise RuntimeError("the search failed")
        _corpus(tmp_path)
        clean = TargetResult(Target("correct"), CLEAN, "no counterexample", units=1, runs=1, examples=3)
        return CampaignResult((clean,), seed=5, run_id="camp", workers=1, budget_s=plan.budget_s, elapsed_s=1.0,
                              interrupted=outcome == "interrupted")
    monkeypatch.setattr(replicheck_cli.fuzz, "ReportProcess", Recorded)
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", a_campaign)
    request = FuzzRequest(minutes=10, workers=1, correct_only=True, corpus_dir=tmp_path / "corpus",
                          report_dir=tmp_path / "report", seed=5, live=False)
    try:
        code = fuzz(request)
    except RuntimeError:
        code = None
    return code, seen


@pytest.mark.parametrize("outcome", ["clean", "interrupted", "raises"])
@pytest.mark.system  # a report process: its own Spark JVM
def test_fuzz_warms_the_report_up_during_the_search_and_leaves_no_jvm(monkeypatch, tmp_path, capsys, outcome):
    code, seen = _fuzz_with(monkeypatch, tmp_path, outcome)
    assert seen["alive"] and seen["jvm"] is not None
    assert _gone(seen["pid"]) and _gone(seen["jvm"])
    out = capsys.readouterr().out
    assert code == {"clean": 0, "interrupted": 130, "raises": None}[outcome]
    assert (f"report: {tmp_path / 'report' / 'index.html'}" in out) == (outcome == "clean"), out


def test_fuzz_without_a_report_starts_no_report_process(monkeypatch, tmp_path):
    import replicheck_cli.fuzz
    from replicheck_cli.fuzz import FuzzRequest, fuzz

    def no_process(*args, **kwargs):
        raise AssertionError("a report process was started")
    monkeypatch.setattr(replicheck_cli.fuzz, "ReportProcess", no_process)
    monkeypatch.setattr(replicheck_cli.fuzz, "build_report_within", no_process)
    from campaign.runner import CampaignResult
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", lambda plan, **kw: CampaignResult(
        (), seed=5, run_id="camp", workers=1, budget_s=plan.budget_s, elapsed_s=1.0))
    fuzz(FuzzRequest(minutes=1, workers=1, correct_only=True, corpus_dir=tmp_path / "c", report_dir=None, seed=5))
