"""One Spark report over a corpus holding good rows (one counterexample found
three times) beside every kind of bad entry (``tests/corpus/bad_corpus.py``) in
both tables — a data page corrupt behind a sound footer, and rows with a null
where the schema requires a value (``signature``, ``counterexample_id``,
``step_count``, ``variants``, ``steps``) beside good rows among them: every
good counterexample is reported, counted once, each bad entry is named once on
stderr and in the report (a row by its file, index, id and column), and the exit
status is ``PARTIAL`` (3). One run on purpose: Spark is slow to start and run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from corpus_factory import counterexample, make_corpus, run, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
from bad_corpus import DECODE_KINDS, KINDS, ROW_KINDS, add_every_bad, restore  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture
def bad_corpus(tmp_path):
    """Good rows: ``c1`` found three times (two files), ``c2``, ``c3`` of another
    signature; two runs. Then every bad kind in each table."""
    root = tmp_path / "corpus"
    make_corpus(root, [counterexample("c1", "S:a", run_id="r1"), counterexample("c2", "S:a", run_id="r1"),
                       counterexample("c3", "S:b", "StrongIsr", variants=["NO_ELR"], run_id="r2")],
                [run("r1", failed=True, actions={"Produce": 3}), run("r2", variants=["NO_ELR"], failed=True)])
    again = write(root, "counterexamples", [counterexample("c1", "S:a", run_id="r3"),
                                            counterexample("c1", "S:a", run_id="r4")], name="part-1.parquet")
    bad = {**add_every_bad(root, "counterexamples", again, KINDS + DECODE_KINDS),
           **{f"runs:{k}": v for k, v in add_every_bad(root, "runs", root / "runs" / "run_date=2026-01-05" /
                                                        "part-0.parquet").items()}}
    yield root, bad
    restore(root)


def bad_rows(bad: dict) -> tuple[int, int]:
    """How many of ``bad`` are a bad row beside a good one: (of counterexamples, of runs)."""
    rows = ROW_KINDS + DECODE_KINDS
    return sum(k in rows for k in bad), sum(k.startswith("runs:") and k[5:] in rows for k in bad)


@pytest.fixture(params=["by the driver", "by Spark"])
def read_by(request, monkeypatch):
    """Who reads the local corpus's files: the driver, with pyarrow (a small
    corpus), or Spark (one over ``DRIVER_READ_MAX_BYTES``)."""
    import spark_reports.corpus
    if request.param == "by Spark":
        monkeypatch.setattr(spark_reports.corpus, "DRIVER_READ_MAX_BYTES", 0)
    return request.param


def test_a_report_over_bad_files_reports_every_good_row_and_names_each_bad_file_once(spark, bad_corpus, tmp_path,
                                                                                        capsys, read_by):
    from spark_reports import kill_matrix, load_corpus, signature_buckets
    from spark_reports.analyses import overview
    from spark_reports.cli import PARTIAL, main

    root, bad = bad_corpus
    ce_rows, run_rows = bad_rows(bad)   # files holding a bad row beside a good one (c1, r1 found again)
    assert main([str(root), "--out", str(tmp_path / "out")]) == PARTIAL == 3
    captured = capsys.readouterr()
    # every bad entry named once, with why, then the count; nothing else on stderr of ours
    ours = [line for line in captured.err.splitlines() if line.startswith(("skipped: ", "replicheck report: "))]
    for path, reason in bad.values():
        (line,) = [x for x in ours if x.startswith(f"skipped: {path}: ")]
        assert reason.replace("counterexamples file", "runs file") in line or reason in line, line
    files = len(bad) - ce_rows - run_rows
    assert ours[-1] == (f"replicheck report: {files} file(s) or folder(s) and {ce_rows + run_rows} row(s) of {root} "
                        f"skipped (named above); everything else is reported")
    assert len(ours) == len(bad) + 1
    assert "Traceback" not in captured.err and "\tat org.apache" not in captured.err   # no Java stack either
    # every good counterexample reported, counted once (c1 was found three times, and once more in each bad
    # row's file)
    assert "3 counterexamples in 2 signatures over 2 properties" in captured.out
    assert f"{2 + run_rows} runs ({2 + run_rows} failed)" in captured.out
    assert f"{5 + ce_rows} counterexample rows" in captured.out
    doc = (tmp_path / "out" / "index.html").read_text()
    assert "No corpus to report on" not in doc
    assert f"<b>{files} file(s) or folder(s) and {ce_rows + run_rows} row(s) of the corpus could not be read</b>" \
        in doc
    for path, _ in bad.values():
        assert doc.count(f"<span class='mono'>{path}</span>") == 1
    summary = dict(re.findall(r"<tr><td class=\"\">([^<]+)</td><td class=\"num\">([^<]*)</td></tr>", doc))
    assert (summary["counterexamples"], summary["files or folders skipped"], summary["files read"],
            summary["rows skipped (a null where the schema requires a value)"]) == \
        ("3", str(files), str(3 + ce_rows + run_rows), str(ce_rows + run_rows))
    # the analyses count counterexamples, not rows
    corpus = load_corpus(spark, root)
    assert sorted(r.counterexample_id for r in corpus.counterexamples.select("counterexample_id").collect()) == \
        ["c1"] * (3 + ce_rows) + ["c2", "c3"]              # every good row, the finds of c1 included
    o = overview(corpus)
    assert (o["counterexamples"], o["rows"]) == (3, 5 + ce_rows)
    assert {(r.property, r.target, r.failures) for r in kill_matrix(corpus).collect()} == \
        {("LogMatching", "correct", 2), ("StrongIsr", "NO_ELR", 1)}
    assert {r.signature: r["count"] for r in signature_buckets(corpus).collect()} == {"S:a": 2, "S:b": 1}
