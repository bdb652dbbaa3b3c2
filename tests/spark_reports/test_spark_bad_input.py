"""One Spark report over a corpus holding good rows (one counterexample found
three times) beside every kind of bad entry (``tests/corpus/bad_corpus.py``) in
both tables: every good counterexample is reported, counted once, each bad
entry is named once on stderr and in the report, and the exit status is
``PARTIAL`` (3). One run on purpose: Spark is slow to start and run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from corpus_factory import counterexample, make_corpus, run, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
from bad_corpus import add_every_bad, restore  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")


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
    bad = {**add_every_bad(root, "counterexamples", again),
           **{f"runs:{k}": v for k, v in add_every_bad(root, "runs", root / "runs" / "run_date=2026-01-05" /
                                                        "part-0.parquet").items()}}
    yield root, bad
    restore(root)


def test_a_report_over_bad_files_reports_every_good_row_and_names_each_bad_file_once(spark, bad_corpus, tmp_path,
                                                                                        capsys):
    from spark_reports import kill_matrix, load_corpus, signature_buckets
    from spark_reports.analyses import overview
    from spark_reports.cli import PARTIAL, main

    root, bad = bad_corpus
    assert main([str(root), "--out", str(tmp_path / "out")]) == PARTIAL == 3
    captured = capsys.readouterr()
    # every bad entry named once, with why, then the count; nothing else on stderr of ours
    ours = [line for line in captured.err.splitlines() if line.startswith(("skipped: ", "replicheck report: "))]
    for path, reason in bad.values():
        (line,) = [x for x in ours if x.startswith(f"skipped: {path}: ")]
        assert reason.replace("counterexamples file", "runs file") in line or reason in line, line
    assert ours[-1] == (f"replicheck report: {len(bad)} file(s) or folder(s) of {root} skipped (named above); "
                        f"everything else is reported")
    assert len(ours) == len(bad) + 1
    # every good counterexample reported, counted once (c1 was found three times)
    assert "3 counterexamples in 2 signatures over 2 properties" in captured.out
    assert "2 runs (2 failed)" in captured.out and "5 counterexample rows" in captured.out
    doc = (tmp_path / "out" / "index.html").read_text()
    assert "No corpus to report on" not in doc
    assert f"<b>{len(bad)} file(s) or folder(s) of the corpus could not be read</b>" in doc
    for path, _ in bad.values():
        assert doc.count(f"<span class='mono'>{path}</span>") == 1
    summary = dict(re.findall(r"<tr><td class=\"\">([^<]+)</td><td class=\"num\">([^<]*)</td></tr>", doc))
    assert (summary["counterexamples"], summary["files or folders skipped"], summary["files read"]) == \
        ("3", str(len(bad)), "3")
    # the analyses count counterexamples, not rows
    corpus = load_corpus(spark, root)
    assert sorted(r.counterexample_id for r in corpus.counterexamples.select("counterexample_id").collect()) == \
        ["c1", "c1", "c1", "c2", "c3"]                    # every good row, the three finds of c1 included
    o = overview(corpus)
    assert (o["counterexamples"], o["rows"]) == (3, 5)
    assert {(r.property, r.target, r.failures) for r in kill_matrix(corpus).collect()} == \
        {("LogMatching", "correct", 2), ("StrongIsr", "NO_ELR", 1)}
    assert {r.signature: r["count"] for r in signature_buckets(corpus).collect()} == {"S:a": 2, "S:b": 1}
