"""Security: nothing is written through a symbolic link planted in a report
folder (one other local users can write in): the live page
(``replicheck_cli.live``) and the report's ``index.html``
(``spark_reports.report``) go to a new temp file of a random name, created
without following a link, then renamed onto their name (a link there is
replaced, not followed); the report's ``spark.log`` at a link is refused with
one line (``replicheck_cli.report_job``). Each test checks that nothing outside
the folder was written."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from replicheck_cli.live import LIVE_FILE, LiveView
from replicheck_cli.report_job import build_report_within
from planted_links import outside, unchanged  # noqa: F401 (outside: a fixture)


def test_the_live_page_is_never_written_through_a_planted_link(tmp_path, outside):
    """Links at the page's name and at the temp names the page was once written
    through (``.live.html.tmp-PID-THREAD``): the page is written, the links'
    targets are not."""
    report = tmp_path / "report"
    report.mkdir()
    (report / LIVE_FILE).symlink_to(outside / "victim.txt")
    for ident in {threading.get_ident(), threading.main_thread().ident}:
        (report / f".{LIVE_FILE}.tmp-{os.getpid()}-{ident}").symlink_to(outside / "victim.txt")
    stream = io.StringIO()
    view = LiveView(report, None, background=False, interval_s=0.0, stream=stream, targets=["correct"],
                    run_id="r", budget_s=60, seed=1, workers=1).start()
    assert stream.getvalue() == ""
    page = report / LIVE_FILE
    assert not page.is_symlink() and "<html" in page.read_text(encoding="utf-8").lower()
    assert view.path == page
    assert unchanged(outside)


def test_the_report_index_is_never_written_through_a_planted_link(tmp_path, outside):
    from spark_reports.report import _replace_file
    report = tmp_path / "report"
    report.mkdir()
    (report / "index.html").symlink_to(outside / "victim.txt")
    (report / ".index.html.tmp").symlink_to(outside / "victim.txt")    # the temp name it once had
    path = _replace_file(report, "index.html", "<html>the report</html>")
    assert path == report / "index.html" and not path.is_symlink() and path.read_text() == "<html>the report</html>"
    assert sorted(p.name for p in report.iterdir()) == [".index.html.tmp", "index.html"]
    assert unchanged(outside)


def test_a_spark_log_that_is_a_link_is_refused_with_one_line(tmp_path, outside):
    report = tmp_path / "report"
    report.mkdir()
    (report / "spark.log").symlink_to(outside / "victim.txt")
    outcome = build_report_within(tmp_path / "corpus", report, seconds=60.0)
    assert outcome.path is None
    assert outcome.problem == f"{report / 'spark.log'} is a symbolic link: replicheck writes nothing through a " \
        "link inside a report folder; remove it"
    assert unchanged(outside)
