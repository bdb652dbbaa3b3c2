"""The campaign's report (``replicheck_cli.report_job``) is built in a process of
its own within the time left: Spark's output goes to ``spark.log`` beside the
report, never to the terminal; the report lists the campaign's targets; a report
that cannot finish in time is stopped and said so."""

from __future__ import annotations

from pathlib import Path

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
