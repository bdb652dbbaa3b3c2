"""A report over a corpus at ``s3://`` (a real S3-compatible server on loopback,
``tests/corpus/remote_store.py``) holding a file whose data page is corrupt
behind a sound footer and a file with a row whose ``signature`` is null beside
a good one: each is named once, in one line, and every good counterexample is
reported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from corpus_factory import counterexample, make_corpus, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
from bad_corpus import BAD_ROW_ID, add_bad  # noqa: E402
from remote_store import put, s3_bucket, s3_endpoint  # noqa: E402,F401 (fixtures)

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_a_report_on_s3_names_a_corrupt_page_and_a_null_row_and_reports_the_rest(spark, s3_bucket, s3_endpoint,
                                                                                   tmp_path, capsys):
    from spark_reports.cli import PARTIAL, main

    local = tmp_path / "corpus"
    make_corpus(local, [counterexample("c1", "S:a"), counterexample("c2", "S:b", "StrongIsr")], [run("r1")])
    good = local / "counterexamples" / "run_date=2026-01-05" / "part-0.parquet"
    add_bad(local, "counterexamples", "corrupt_page", good)
    add_bad(local, "counterexamples", "null_signature", good)
    for path in sorted(local.rglob("*.parquet")):
        put(s3_endpoint, s3_bucket, f"corpus/{path.relative_to(local)}", path.read_bytes())
    uri = f"s3://{s3_bucket}/corpus"
    base = f"{uri}/counterexamples/run_date=2026-01-05"
    assert main([uri, "--out", str(tmp_path / "out")]) == PARTIAL
    captured = capsys.readouterr()
    ours = [line for line in captured.err.splitlines() if line.startswith(("skipped: ", "replicheck report: "))]
    assert ours[0].startswith(f"skipped: {base}/part-corrupt-page.parquet: cannot be read (OSError: ")
    assert ours[1] == (f"skipped: {base}/part-null-signature.parquet: row 0 (counterexample_id "
                       f"{BAD_ROW_ID[:16]}…): signature is null, which the schema does not allow; the row is "
                       "skipped, the file's other rows are read")
    assert ours[2:] == [f"replicheck report: 1 file(s) or folder(s) and 1 row(s) of {uri} skipped (named above); "
                        "everything else is reported"]
    # c1 in part-0 and again in the null row's file; c2
    assert "2 counterexamples in 2 signatures" in captured.out and "3 counterexample rows" in captured.out
