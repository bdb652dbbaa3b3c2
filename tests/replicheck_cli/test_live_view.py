"""The campaign's live view (``replicheck_cli.live``): the page drawn from
fabricated snapshots and results (each target's state, escaping, the final
page without refresh, diagrams drawn once from corpus rows, a page that cannot
be written warned about once), then a short real campaign whose page headless
Chromium loads while it runs and after it ends."""

from __future__ import annotations

import datetime as dt
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import replicheck_cli.fuzz
import spark_reports.diagram
from campaign.targets import Target
from store.part import write_part
from campaign.runner import CampaignResult
from campaign.scheduler import (CLEAN, ERROR, FOUND, NOT_FOUND, NOT_RUN, NOT_SCHEDULED, STOPPED, Progress,
                               TargetResult)
from store.schema import SCHEMA_VERSION
from replicheck_cli.live import LIVE_FILE, LiveView, svg_chart, target_states

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "corpus"
#: A counterexample of the golden corpus (run id ``golden``): its diagram is drawn.
GOLDEN_ID = "4e48c23f7de2379ba3d414cb795995c3463ae8758ee18602743e0e1d2af9c3cc"
LABELS = ["correct", "variant:NO_ELR", "bug:PRODUCE_IGNORES_MIN_ISR", "bug:TRUNCATE_TO_LEADER_OFFSET"]

NO_ELR = TargetResult(Target("variant", "NO_ELR"), FOUND, "UncleanExclusion after 1.2 s (7 examples)", units=1,
                      runs=1, examples=30, steps=300, found="UncleanExclusion", first_failure_s=1.2,
                      first_failure_examples=7, counterexample_ids=(GOLDEN_ID,))
BUG_ERROR = TargetResult(Target("bug", "PRODUCE_IGNORES_MIN_ISR"), ERROR, "HarnessError: <boom> & \"worse\"",
                         units=1, runs=1)


def _progress(finished=(), searching=1, waiting=0, elapsed=1.0, examples=10, steps=100) -> Progress:
    return Progress(targets=len(LABELS), finished=tuple(finished), searching=searching, waiting=waiting,
                    examples=examples, steps=steps, runs=1, finds=sum(t.verdict == FOUND for t in finished),
                    elapsed_s=elapsed)


def _view(tmp_path: Path, corpus=None, run_id="golden", **kw) -> LiveView:
    kw.setdefault("background", False)
    kw.setdefault("interval_s", 0.0)
    return LiveView(tmp_path / "report", corpus, targets=LABELS, run_id=run_id, budget_s=120, search_s=75, seed=3,
                    workers=2, **kw)


def _page(view: LiveView) -> str:
    return view.path.read_text(encoding="utf-8")


def _state(page: str, label: str) -> str:
    m = re.search(rf'<tr data-target="{re.escape(label)}"><td>[^<]*</td><td class="state [^"]*">([^<]*)</td>', page)
    assert m, f"no row for {label}"
    return m.group(1)


def test_the_first_page_says_running_and_refreshes(tmp_path):
    view = _view(tmp_path).start()
    page = _page(view)
    assert view.path == tmp_path / "report" / LIVE_FILE
    assert '<meta http-equiv="refresh" content="2">' in page and 'id="status">running<' in page
    assert [_state(page, label) for label in LABELS] == ["waiting"] * 4
    assert "starting the workers" in page and "2:00 (search 1:15)" in page
    assert "://" not in page, "the page is self-contained"


def test_target_states_while_running():
    p = _progress(finished=[NO_ELR, BUG_ERROR], searching=1, waiting=1)
    assert [(label, state) for label, state, _ in target_states(LABELS, p)] == [
        ("correct", "searching"), ("variant:NO_ELR", FOUND), ("bug:PRODUCE_IGNORES_MIN_ISR", ERROR),
        ("bug:TRUNCATE_TO_LEADER_OFFSET", "waiting")]
    assert [s for _, s, _ in target_states(LABELS, None)] == ["waiting"] * 4


def test_a_snapshot_shows_states_properties_times_and_rates(tmp_path):
    view = _view(tmp_path).start()
    view.update(_progress(elapsed=1.0, examples=0, steps=0, waiting=2))
    view.update(_progress(finished=[NO_ELR, BUG_ERROR], elapsed=11.0, examples=50, steps=2000, waiting=1))
    page = _page(view)
    assert [_state(page, label) for label in LABELS] == ["searching", "found", "error", "waiting"]
    row = re.search(r'<tr data-target="variant:NO_ELR">.*?</tr>', page).group(0)
    assert "UncleanExclusion" in row and "1.2 s, 7 examples" in row and "0:11" in row
    assert "<th>examples/s</th><td>5.0 (last 10 s), 4.5 since the start</td>" in page
    assert "<th>checked steps/s</th><td>200 (last 10 s), 182 since the start</td>" in page
    assert "0:11 of 1:15" in page and "2 of 4 done" in page


def test_every_text_is_escaped(tmp_path):
    evil = TargetResult(Target("bug", "PRODUCE_IGNORES_MIN_ISR"), FOUND, "<script>alert(1)</script> after 1 s",
                        found="<img src=x onerror=alert(1)>", first_failure_s=0.5, counterexample_ids=("<i>d</i>",))
    view = LiveView(tmp_path, tmp_path / "c<orpus>", targets=['bug:<b>"x"</b>', "bug:PRODUCE_IGNORES_MIN_ISR"],
                    run_id="r<1>", budget_s=60, background=False, interval_s=0).start()
    view.update(Progress(2, (evil,), 1, 0, 1, 1, 1, 1, 1.0))
    page = _page(view)
    for raw in ("<script>", "<img src=x", "<b>\"x\"", "<i>d</i>", "c<orpus>", "r<1>"):
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'data-target="bug:&lt;b&gt;&quot;x&quot;&lt;/b&gt;"' in page


def test_the_final_page_has_every_verdict_and_no_refresh(tmp_path):
    view = _view(tmp_path).start()
    view.update(_progress(finished=[NO_ELR], elapsed=5.0))
    correct_failed = TargetResult(Target("correct"), FOUND, "LogMatching after 3.0 s (12 examples)",
                                  found="LogMatching", first_failure_s=3.0)
    result = CampaignResult((correct_failed, NO_ELR, TargetResult(Target("bug", "PRODUCE_IGNORES_MIN_ISR"), NOT_RUN,
                                                                  NOT_SCHEDULED),
                             TargetResult(Target("bug", "TRUNCATE_TO_LEADER_OFFSET"), NOT_FOUND,
                                          "no counterexample in 2 runs (60 examples, 12 s)", runs=2, examples=60)),
                            seed=3, run_id="golden", workers=2, budget_s=120, elapsed_s=70.0)
    view.finish(result, time_limit_s=0.0)
    page = _page(view)
    assert "http-equiv" not in page and 'class="status failed" id="status">finished<' in page
    assert [_state(page, label) for label in LABELS] == [
        "found (FAILED: a real counterexample)", "found", "not run", "not found"]
    assert "campaign FAILED: failed: correct (LogMatching)" in page and NOT_SCHEDULED in page
    # No corpus: the find's diagram is named, not drawn.
    assert "its row was not found in the corpus" in page


def test_an_interrupted_campaign_says_so(tmp_path):
    view = _view(tmp_path).start()
    result = CampaignResult(tuple(TargetResult(Target.parse(label), STOPPED if label == "correct" else CLEAN, "why")
                                  for label in LABELS), seed=3, run_id="golden", workers=2, budget_s=120,
                            elapsed_s=9.0, interrupted=True)
    view.finish(result, time_limit_s=0.0)
    page = _page(view)
    assert 'id="status">interrupted<' in page and "http-equiv" not in page and _state(page, "correct") == "stopped"


def _corpus_with_golden_row_and_a_run(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(GOLDEN / "counterexamples", corpus / "counterexamples")
    # Another campaign's file, which the view must not read.
    shutil.copy(next((GOLDEN / "counterexamples").rglob("*.parquet")),
                next((corpus / "counterexamples").iterdir()) / "part-other-w0-0000.parquet")
    started = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=2)
    run = {"schema_version": SCHEMA_VERSION, "run_id": "golden", "test_id": "campaign[variant:NO_ELR]",
           "worker": "w0", "profile": "default", "variants": ["NO_ELR"], "sut_bugs": [], "started_at": started,
           "duration_s": 1.0, "examples": 10, "steps": 100, "failed": True, "rule_counts": [("fault", 3)],
           "action_counts": [("StartBroker", 3)],
           "event_counts": [("leader elected", 2), ("write acknowledged", 1), ("partition has no leader", 0)]}
    write_part(corpus, "runs", [run], run_id="golden", worker="w0")
    return corpus


def test_diagrams_and_coverage_come_from_this_campaigns_corpus_rows_each_drawn_once(tmp_path, monkeypatch):
    corpus = _corpus_with_golden_row_and_a_run(tmp_path)
    drawn = []
    real = spark_reports.diagram.space_time_png
    monkeypatch.setattr(spark_reports.diagram, "space_time_png", lambda row, **kw: drawn.append(
        row["counterexample_id"]) or real(row, **kw))
    view = _view(tmp_path, corpus).start()
    view.update(_progress(finished=[NO_ELR], elapsed=5.0))
    view.update(_progress(finished=[NO_ELR], elapsed=6.0))
    page = _page(view)
    assert drawn == [GOLDEN_ID]
    assert len(re.findall(r'<img class="diagram" alt="[^"]*" src="data:image/png;base64,[A-Za-z0-9+/=]+">', page)) == 1
    assert f"replicheck replay {corpus} --id {GOLDEN_ID}" in page and "LeaderCandidateCompleteness" in page
    coverage = re.search(r'<svg[^>]*aria-label="protocol events reached.*?</svg>', page, re.S).group(0)
    assert '<polyline points="' in coverage and "://" not in page
    assert view._runs and view._runs[0][1] == frozenset({"leader elected", "write acknowledged"})
    assert all("part-other" not in f[0] for f in view._seen_files["counterexamples"])
    view.finish(CampaignResult((NO_ELR,), seed=3, run_id="golden", workers=2, budget_s=120, elapsed_s=8.0))
    assert drawn == [GOLDEN_ID] and '<img class="diagram"' in _page(view)


def test_a_part_whose_name_a_new_part_took_is_read_again(tmp_path):
    """A campaign's deferred reduction removes the part holding a find as found; a
    later part of the same worker may take the freed name: the view reads it too."""
    import pyarrow.parquet as pq
    from store.part import table_of
    from store.reader import read_file_rows
    corpus = _corpus_with_golden_row_and_a_run(tmp_path)
    view = _view(tmp_path, corpus)
    first = view._read("counterexamples", ("counterexample_id", "run_id"))
    (part,) = {Path(f[0]) for f in view._seen_files["counterexamples"]}
    row = dict(read_file_rows(part)[0], counterexample_id="f" * 64)
    part.unlink()
    pq.write_table(table_of("counterexamples", [row]), part)
    again = view._read("counterexamples", ("counterexample_id", "run_id"))
    assert first and [r["counterexample_id"] for r in again] == ["f" * 64]


def test_pages_are_written_at_most_every_interval(tmp_path):
    view = _view(tmp_path, interval_s=3600.0).start()
    view.update(_progress(finished=[NO_ELR], elapsed=5.0))
    assert _state(_page(view), "variant:NO_ELR") == "waiting"     # not rewritten yet
    view.finish(CampaignResult((NO_ELR,), seed=3, run_id="golden", workers=2, budget_s=120, elapsed_s=8.0),
                time_limit_s=0.0)
    assert _state(_page(view), "variant:NO_ELR") == "found"       # the final page always is
    assert [p.name for p in view.path.parent.iterdir()] == [LIVE_FILE], "no temp file is left behind"


def test_the_background_writer_follows_the_snapshots_and_stops_at_the_end(tmp_path):
    view = _view(tmp_path, background=True, interval_s=0.05).start()
    view.update(_progress(finished=[BUG_ERROR], elapsed=2.0))
    deadline = time.monotonic() + 10
    while _state(_page(view), "bug:PRODUCE_IGNORES_MIN_ISR") != "error" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(_page(view), "bug:PRODUCE_IGNORES_MIN_ISR") == "error"
    view.finish(CampaignResult((BUG_ERROR,), seed=3, run_id="golden", workers=2, budget_s=120, elapsed_s=3.0),
                time_limit_s=0.0)
    assert view._thread is not None and not view._thread.is_alive()
    assert "http-equiv" not in _page(view)


def test_a_page_that_cannot_be_written_is_warned_about_once_and_never_raises(tmp_path):
    blocker = tmp_path / "report"
    blocker.write_text("a file where the report folder should be")
    out = io.StringIO()
    view = LiveView(blocker, None, targets=LABELS, budget_s=60, background=False, interval_s=0, stream=out).start()
    for i in range(3):
        view.update(_progress(elapsed=float(i)))
    view.finish(CampaignResult((NO_ELR,), seed=3, run_id="golden", workers=2, budget_s=60, elapsed_s=3.0))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and str(blocker / LIVE_FILE) in lines[0] and "the campaign goes on" in lines[0]


def _stand_in_runner(monkeypatch) -> None:
    """``run_campaign`` replaced by one that reports a snapshot and returns NO_ELR found."""
    def run_campaign(plan, on_progress=None, **kwargs):
        on_progress(Progress(1, (), 1, 0, 5, 50, 1, 0, 1.0))
        return CampaignResult((NO_ELR,), seed=5, run_id=plan.run_id, workers=plan.workers, budget_s=plan.budget_s,
                              elapsed_s=2.0)
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", run_campaign)


def test_fuzz_writes_the_live_view_and_says_where(monkeypatch, tmp_path, capsys):
    from replicheck_cli.fuzz import FuzzRequest, fuzz
    _stand_in_runner(monkeypatch)
    live = tmp_path / "live"
    assert fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], include_correct=False, corpus_dir=tmp_path / "c", report_dir=None, live_dir=live, seed=5)) == 0
    out = capsys.readouterr().out
    assert f"live view: {(live / LIVE_FILE).resolve()}" in out.splitlines()[1]
    page = (live / LIVE_FILE).read_text()
    assert "http-equiv" not in page and 'id="status">finished<' in page and _state(page, "variant:NO_ELR") == "found"


def test_a_campaign_that_ends_without_results_leaves_a_page_that_says_so(monkeypatch, tmp_path):
    from replicheck_cli.fuzz import FuzzRequest, fuzz

    def run_campaign(*args, **kwargs):
        raise ValueError("no <units> today")
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", run_campaign)
    with pytest.raises(ValueError):
        fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], include_correct=False, corpus_dir=tmp_path / "c", report_dir=None, live_dir=tmp_path, seed=5))
    page = (tmp_path / LIVE_FILE).read_text()
    assert "http-equiv" not in page and 'id="status">ended<' in page
    assert "the campaign ended without results: ValueError: no &lt;units&gt; today" in page


def test_no_live_view_without_a_folder_or_with_live_off(monkeypatch, tmp_path, capsys):
    from replicheck_cli.fuzz import FuzzRequest, fuzz
    _stand_in_runner(monkeypatch)
    monkeypatch.chdir(tmp_path)
    fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], include_correct=False, corpus_dir="c", report_dir=None, seed=5))
    fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], include_correct=False, corpus_dir="c", report_dir=None, live=False, live_dir="live", seed=5))
    assert "live view" not in capsys.readouterr().out and not list(tmp_path.rglob(LIVE_FILE))


@pytest.mark.parametrize("args, live", [([], True), (["--no-live"], False), (["--no-report"], True)])
def test_the_cli_passes_no_live_on(monkeypatch, tmp_path, args, live):
    import attrs
    from click.testing import CliRunner

    from replicheck_cli import main
    seen: dict = {}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(replicheck_cli.fuzz, "fuzz", lambda request: seen.update(attrs.asdict(request)) or 0)
    result = CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--report", "r", "--corpus", "c", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert (seen["live"], seen["live_dir"]) == (live, Path("r"))
    assert seen["report_dir"] == (None if "--no-report" in args else Path("r"))


def test_svg_chart():
    empty = svg_chart([], "coverage <x>", "search time", 60.0)
    assert empty.startswith("<svg") and "no data yet" in empty and "coverage &lt;x&gt;" in empty
    line = svg_chart([(0, 0), (10, 3), (30, 5)], "events", "search time", 60.0, y_max=20, step=True)
    assert "<polyline" in line and 'class="ref"' in line and "1:00" in line and ">20<" in line
    assert ">30<" in svg_chart([(0, 0), (10, 30)], "events", "t", 60.0, y_max=20)
    assert 'class="ref"' not in svg_chart([(0, 0), (10, 30)], "events", "t", 60.0)


# ------------------------------------------------------------------ in a browser

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _dom(page: Path) -> str:
    """The DOM of ``page`` once loaded, as headless Chromium serializes it."""
    profile = tempfile.mkdtemp(prefix="live-view-chromium-")
    try:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120)   # a net for a loaded machine
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (/usr/bin/chromium) is not installed here: "
                                             "apt-get install chromium (.ci/run installs it for CI)")
@pytest.mark.system
def test_a_running_campaigns_page_in_headless_chromium(tmp_path):
    report, corpus, out = tmp_path / "report", tmp_path / "corpus", tmp_path / "out.txt"
    page = report / LIVE_FILE
    # One worker and ten minutes: the correct target's search outlasts anything this test waits for,
    # so the page is still running when both flaws (each found in its first run on seed 1) are shown
    # with their diagrams, however slow the machine. Then the test ends the campaign as Ctrl-C would:
    # nothing here waits on the campaign's clock.
    cmd = [sys.executable, "-m", "replicheck_cli.commands", "fuzz", "--minutes", "10", "--workers", "1",
           "--variant", "NO_ELR", "--bug", "METADATA_BATCH_LAST_DELTA_ONLY", "--seed", "1", "--corpus", str(corpus),
           "--report", str(report), "--no-report"]
    flaws = ("variant:NO_ELR", "bug:METADATA_BATCH_LAST_DELTA_ONLY")
    with open(out, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120      # a hang guard, not a measurement
        while not page.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert page.exists(), out.read_text()
        assert f"live view: {page.resolve()}" in out.read_text()
        dom = _dom(page)
        assert 'id="status">running<' in dom and 'http-equiv="refresh"' in dom, dom
        for label in ("correct",) + flaws:
            assert f'data-target="{label}"' in dom, dom

        # While running: both finds, each with its diagram.
        seen = None
        deadline = time.monotonic() + 420
        while proc.poll() is None and time.monotonic() < deadline:
            dom = _dom(page)
            if 'id="status">running<' in dom and all(_state(dom, f) == "found" for f in flaws) \
                    and len(re.findall(r'<img class="diagram"[^>]* src="data:image/png;base64,', dom)) >= 2:
                seen = dom
                break
            time.sleep(1.0)
        assert seen is not None, f"no finds with their diagrams while running; last page:\n{dom}\n{out.read_text()}"
        assert _state(seen, "correct") == "searching", seen

        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=120) == 130, out.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    final = _dom(page)
    assert "http-equiv" not in final and 'id="status">interrupted<' in final, final
    assert [_state(final, f) for f in flaws] == ["found", "found"] and _state(final, "correct") == "stopped"
    assert len(re.findall(r'<img class="diagram"', final)) >= 2
