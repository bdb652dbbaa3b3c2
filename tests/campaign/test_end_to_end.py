"""The main job end to end: a tiny campaign over one protocol variant and one SUT
bug writes both counterexamples to the corpus and builds the HTML report."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from harness.fuzz import fuzz


def test_tiny_campaign_finds_one_variant_and_one_bug_and_writes_the_report(tmp_path: Path, capsys):
    corpus, report = tmp_path / "corpus", tmp_path / "report"
    # Seeded, so the test does not depend on luck: with seed 1 each target is found in
    # its first run, about a second in (on random seeds it usually is too, but not always).
    code = fuzz(minutes=1.5, workers=1, variants=["HWM_ADVANCES_BELOW_MIN_ISR"], bugs=["PRODUCE_IGNORES_MIN_ISR"],
                corpus_dir=corpus, report_dir=report, include_correct=False, seed=1)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "kill matrix" in out and "campaign succeeded" in out and "seed 1," in out

    rows = pq.read_table(corpus / "counterexamples").to_pylist()
    tests = {r["test_id"] for r in rows}
    assert {"campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]", "campaign[bug:PRODUCE_IGNORES_MIN_ISR]"} <= tests
    by_test = {r["test_id"]: r for r in rows}
    assert by_test["campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]"]["kind"] == "property"
    assert by_test["campaign[bug:PRODUCE_IGNORES_MIN_ISR]"]["kind"] == "divergence"
    # Each was reduced before export: the shrunk trace is kept beside the reduced one,
    # and the kill matrix shows both lengths.
    for r in by_test.values():
        assert r["shrunk_steps"] is not None and r["step_count"] <= r["shrunk_step_count"]
    assert "reduced steps" in out
    line = next(x for x in out.splitlines() if x.startswith("variant:HWM_ADVANCES_BELOW_MIN_ISR"))
    assert line.split()[-1] == str(by_test["campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]"]["step_count"])
    runs = pq.read_table(corpus / "runs").to_pylist()
    assert runs and all(r["examples"] > 0 for r in runs)
    assert not list(corpus.rglob(".*")), "no temporary file may be left behind"

    index = report / "index.html"
    assert index.exists() and index.stat().st_size > 0
    assert "HWM_ADVANCES_BELOW_MIN_ISR" in index.read_text()


def test_campaign_rejects_bad_input():
    import pytest
    with pytest.raises(ValueError, match="minutes must be positive"):
        fuzz(minutes=0)
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match=r"seed must be an integer >= 0 or None, got"):
            fuzz(minutes=1, seed=bad)
    with pytest.raises(ValueError, match="unknown variant 'NOPE'; allowed: TRUNCATE_TO_HWM"):
        fuzz(minutes=1, variants=["NOPE"])
