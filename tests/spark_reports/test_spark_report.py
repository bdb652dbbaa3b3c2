"""The HTML report and the ``report`` command: a small real corpus (minimal
counterexamples run with the model), and the empty / missing / runs-only /
newer-schema corpora."""

from __future__ import annotations

import re

import pytest

from corpus_factory import counterexample, make_corpus, run, ts, write
from store.schema import SCHEMA_VERSION
from model_rows import scenario_row
from spark_reports import build_report
from spark_reports.cli import main


#: One JVM is enough: with ``pytest -n N --dist loadgroup`` these tests share one worker.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

VARIANTS = ("TRUNCATE_TO_HWM", "NO_LAST_FETCHED_EPOCH", "BALANCED_RECOVERY_ANY_MEMBER")


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    rows = []
    for k, v in enumerate(VARIANTS):
        for j in range(2):
            row, _, _ = scenario_row(v, ts(10 * k + j), cid=f"{v.lower()}-{j}")
            rows.append(row)
    runs = [run(f"r{k}", variants=[v], failed=True, actions={"Produce": 20, "SendFetch": 30, "FenceBroker": 2},
                events={"leader elected": 2, "write acknowledged": 9}) for k, v in enumerate(VARIANTS)]
    runs.append(run("rc", actions={"Produce": 50}, events={"write acknowledged": 40}))
    return make_corpus(tmp_path_factory.mktemp("small"), rows, runs)


def test_report_renders(spark, small_corpus, tmp_path):
    path = build_report(small_corpus, tmp_path / "out", spark=spark)
    assert path == tmp_path / "out" / "index.html"
    doc = path.read_text()
    for heading in ("Summary", "Kill matrix", "Time to failure", "Signature buckets", "Action lift",
                    "Shrunk length distribution", "Protocol coverage", "Step motifs", "Space-time diagrams"):
        assert f">{heading}" in doc
    for v in VARIANTS:
        assert v in doc
    assert len(re.findall(r'alt="space-time diagram of ', doc)) == 3
    assert doc.count("drawn from the recorded timeline") == 3
    assert doc.count("data:image/png;base64,") == 3 + 4  # diagrams + kill, ttf, lengths, coverage plots
    assert "No corpus to report on" not in doc and "src=\"http" not in doc  # self-contained
    assert "Campaign targets" not in doc   # no campaign's targets given
    assert not list((tmp_path / "out").glob(".*"))  # the temp file was renamed


def test_empty_and_missing_corpus_reports(spark, tmp_path):
    (tmp_path / "empty" / "runs").mkdir(parents=True)
    doc = build_report(tmp_path / "empty", tmp_path / "out1", spark=spark).read_text()
    assert "No corpus to report on" in doc and "empty corpus" in doc and "no counterexamples" in doc
    doc = build_report(tmp_path / "missing", tmp_path / "out2", spark=spark).read_text()
    assert "No corpus to report on" in doc and "does not exist" in doc


def test_runs_only_report_and_cli(spark, tmp_path, capsys):
    corpus = make_corpus(tmp_path / "c", runs=[run("r1", actions={"Produce": 3}, events={"leader elected": 1})])
    assert main(["report", str(corpus), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "note: no counterexamples: every recorded run passed" in out
    assert "0 counterexamples in 0 signatures" in out and "1 runs (0 failed)" in out
    doc = (tmp_path / "out" / "index.html").read_text()
    assert "every recorded run passed" in doc and "leader elected" in doc
    assert spark.range(1).count() == 1  # the command left the shared session running


def test_cli_missing_and_newer_schema(spark, tmp_path, capsys):
    assert main([str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert (tmp_path / "out" / "index.html").exists()
    make_corpus(tmp_path / "new", [counterexample("a")])
    newer = write(tmp_path / "new", "runs", [run("r", version=SCHEMA_VERSION + 1)])
    # a file of a newer schema is skipped, naming it; the rest is reported (exit 3)
    assert main([str(tmp_path / "new"), "--out", str(tmp_path / "out3")]) == 3
    captured = capsys.readouterr()
    assert f"skipped: {newer}: refused: written with corpus schema version {SCHEMA_VERSION + 1}" in captured.err
    assert "1 counterexamples in 1 signatures" in captured.out
    assert (tmp_path / "out3" / "index.html").exists()


def test_the_report_names_the_campaigns_targets_that_did_not_run(spark, tmp_path):
    """Given a campaign's target labels (and its run id), the report counts each
    target's runs and counterexamples and names those without a run."""
    from spark_reports import campaign_targets, load_corpus
    ran = dict(run("camp", variants=["NO_ELR"], examples=30), test_id="campaign[variant:NO_ELR]")
    other = dict(run("older", bugs=["PRODUCE_IGNORES_MIN_ISR"]), test_id="campaign[bug:PRODUCE_IGNORES_MIN_ISR]")
    ce = dict(counterexample("c1", variants=["NO_ELR"], run_id="camp"), test_id="campaign[variant:NO_ELR]")
    corpus_dir = make_corpus(tmp_path / "c", [ce], [ran, other])
    labels = ["correct", "variant:NO_ELR", "bug:PRODUCE_IGNORES_MIN_ISR"]
    rows = [r.asDict() for r in campaign_targets(load_corpus(spark, corpus_dir), labels, run_id="camp").collect()]
    assert [(r["target"], r["ran"], r["runs"], r["examples"], r["counterexamples"]) for r in rows] == \
        [("correct", False, 0, 0, 0), ("variant:NO_ELR", True, 1, 30, 1), ("bug:PRODUCE_IGNORES_MIN_ISR", False, 0, 0, 0)]
    doc = build_report(corpus_dir, tmp_path / "out", spark=spark, targets=labels, run_id="camp").read_text()
    assert "Campaign targets" in doc
    assert "2 target(s) did not run:</b> correct, bug:PRODUCE_IGNORES_MIN_ISR" in doc
    # Without a run id, every campaign's rows count.
    rows = campaign_targets(load_corpus(spark, corpus_dir), labels).collect()
    assert [r["ran"] for r in rows] == [False, True, True]


def _contents(data) -> dict:
    """A ``ReportData``'s contents: every field but the timings' seconds (and
    the corpus object, whose frames are not comparable); the timed steps'
    names kept."""
    import attrs
    fields = attrs.asdict(data, recurse=False)
    fields.pop("corpus")
    fields["timings"] = [name for name, _ in fields["timings"]]
    return fields


def test_the_reports_analyses_run_at_once_give_what_they_give_one_by_one(spark, small_corpus):
    from spark_reports.report_data import ReportSettings, gather
    targets = ["variant:TRUNCATE_TO_HWM", "correct", "bug:PRODUCE_IGNORES_MIN_ISR"]
    one_by_one = gather(spark, small_corpus, None, ReportSettings(), targets, None, threads=1)
    at_once = gather(spark, small_corpus, None, ReportSettings(), targets, None)
    one_by_one.corpus.release()
    at_once.corpus.release()
    assert _contents(at_once) == _contents(one_by_one)
    assert _contents(at_once)["timings"] == [
        "load", "overview", "kill matrix", "kill matrix (wide)", "signature buckets", "action lift", "shrunk lengths",
        "time to failure", "protocol coverage", "n-gram motifs", "representatives", "diagrams", "plots",
        "campaign targets", "total"]
    assert at_once.diagrams and at_once.figures["kill"]


def test_a_corpus_of_runs_only_or_nothing_times_only_the_steps_it_shows(spark, tmp_path):
    from spark_reports.report_data import ReportSettings, gather
    runs_only = make_corpus(tmp_path / "runs-only", [], [run("r1", actions={"Produce": 5})])
    data = gather(spark, runs_only, None, ReportSettings(), None, None)
    data.corpus.release()
    assert [name for name, _ in data.timings] == ["load", "overview", "time to failure", "protocol coverage",
                                                  "diagrams", "plots", "total"]
    assert (data.kill_matrix, data.buckets, data.lift, data.representatives) == ([], [], {}, {})
    nothing = gather(spark, tmp_path / "missing", None, ReportSettings(), ["correct"], None)
    assert nothing.problem and [name for name, _ in nothing.timings] == ["diagrams", "plots", "campaign targets",
                                                                         "total"]


def test_the_warm_up_runs_the_report_on_a_sample_corpus_that_breaks_no_rule(spark, tmp_path):
    from store.schema import COUNTEREXAMPLE_SCHEMA, COUNTEREXAMPLES, RUN_SCHEMA, RUNS, row_problem
    from spark_reports import load_corpus
    from spark_reports.warm import sample_row, warm_up, write_sample_corpus
    assert row_problem(sample_row(COUNTEREXAMPLE_SCHEMA), COUNTEREXAMPLES) is None
    assert row_problem(sample_row(RUN_SCHEMA), RUNS) is None
    corpus = load_corpus(spark, write_sample_corpus(tmp_path / "sample"))
    assert (corpus.counterexamples.count(), corpus.runs.count(), corpus.skipped) == (1, 1, ())
    corpus.release()
    assert warm_up(spark) >= 0
