"""The main job end to end: a tiny campaign over one protocol variant and one SUT
bug, in worker processes, writes both counterexamples (reduced) and every run to
the corpus and prints the kill matrix. (The report's part: test_report_job.py.)"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from replicheck_cli.fuzz import FuzzRequest, fuzz


def test_tiny_campaign_finds_one_variant_and_one_bug(tmp_path: Path, capsys):
    corpus = tmp_path / "corpus"
    # Seeded, so the test does not depend on luck: with seed 1 each target is found in
    # its first run, seconds in (on random seeds it usually is too, but not always).
    # Without the correct target the campaign ends once both finds are reduced: the ten
    # minutes are a net for a slow machine, never spent.
    code = fuzz(FuzzRequest(minutes=10, workers=2, variants=["HWM_ADVANCES_BELOW_MIN_ISR"], bugs=["PRODUCE_IGNORES_MIN_ISR"], corpus_dir=corpus, report_dir=None, include_correct=False, seed=1))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "kill matrix" in out and out.splitlines()[-1] == "campaign succeeded: 2 of 2 flaws found"
    assert "seed 1," in out and "verdicts: 2 found, 0 not found, 0 clean, 0 not run, 0 error (of 2 targets)" in out

    rows = pq.read_table(corpus / "counterexamples").to_pylist()
    by_test = {r["test_id"]: r for r in rows}
    assert {"campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]", "campaign[bug:PRODUCE_IGNORES_MIN_ISR]"} <= set(by_test)
    assert by_test["campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]"]["kind"] == "property"
    assert by_test["campaign[bug:PRODUCE_IGNORES_MIN_ISR]"]["kind"] == "divergence"
    # Each was reduced before export: the shrunk trace is kept beside the reduced one,
    # and the kill matrix shows both lengths.
    for r in by_test.values():
        assert r["shrunk_steps"] is not None and r["step_count"] <= r["shrunk_step_count"]
    assert "reduced steps" in out
    line = next(x for x in out.splitlines() if x.startswith("variant:HWM_ADVANCES_BELOW_MIN_ISR"))
    assert line.split()[1] == "found"
    assert line.split()[-1] == str(min(r["step_count"] for r in rows
                                       if r["test_id"] == "campaign[variant:HWM_ADVANCES_BELOW_MIN_ISR]"))
    runs = pq.read_table(corpus / "runs").to_pylist()
    assert runs and all(r["examples"] > 0 for r in runs) and {r["worker"] for r in runs} <= {"w0", "w1"}
    assert not list(corpus.rglob(".*")), "no temporary file may be left behind"
