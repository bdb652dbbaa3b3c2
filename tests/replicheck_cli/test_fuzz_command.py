"""``replicheck fuzz`` (``replicheck_cli.fuzz``): bad input in one line before any
run starts; the kill matrix, verdict counts, final line and exit status read
from the campaign's results as data (the runner stood in for here): a target
that did not run is printed as not run, with why, and fails the campaign."""

from __future__ import annotations

import attrs
import pytest
from click.testing import CliRunner

import replicheck_cli.fuzz
from campaign.targets import Target, all_targets
from campaign.runner import CampaignResult
from campaign.scheduler import CLEAN, FOUND, NOT_FOUND, NOT_RUN, NOT_SCHEDULED, TargetResult
from replicheck_cli import main
from replicheck_cli.fuzz import FuzzRequest, fuzz


def _fuzz(*args: str):
    return CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--no-report", *args])



@pytest.mark.parametrize("args, line", [
    (["--workers", "0"], "error: --workers must be an integer >= 1, got 0\n"),
    (["--minutes", "nan"], "error: --minutes must be a finite number > 0, got nan\n"),
    (["--minutes", "inf"], "error: --minutes must be a finite number > 0, got inf\n"),
    (["--minutes", "-2"], "error: --minutes must be a finite number > 0, got -2.0\n"),
    (["--implementation", "nope"], "error: unknown implementation 'nope'; allowed: kafka, kafka@4.0.0, kafka@4.0.1, "
     "kafka@4.0.2, kafka@4.1.0, kafka@4.1.1, kafka@4.1.2, kafka@4.2.0, kafka@4.2.1, kafka@4.2.2, kafka@4.3.0, "
     "kafka@4.3.1\n"),
    (["--kafka-version", "4.3.1"], "error: --kafka-version 4.3.1 runs Kafka's own classes: give it with "
     "--implementation kafka, got None\n"),
    (["--implementation", "kafka", "--kafka-version", "3.9.0"], "error: --kafka-version: kafka version '3.9.0': "
     "allowed are 4.0.0, 4.0.1, 4.0.2, 4.1.0, 4.1.1, 4.1.2, 4.2.0, 4.2.1, 4.2.2, 4.3.0, 4.3.1, 4.4.0\n"),
    (["--implementation", "kafka", "--bug", "PRODUCE_IGNORES_MIN_ISR"],
     "error: an implementation campaign runs only implementation:kafka: give no variants or bugs with it "
     "(got PRODUCE_IGNORES_MIN_ISR)\n"),
    (["--correct-only", "--variant", "NO_ELR"], "error: --correct-only runs only the correct protocol + SUT: give "
     "no --variant, --bug, --implementation or --no-correct with it\n"),
    (["--engine", "bfs"], None),
])
def test_bad_input_is_one_line_naming_the_option(no_campaign, args, line):
    result = CliRunner().invoke(main, ["fuzz", "--no-report", *args])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == line if line is not None else \
        result.stderr.splitlines()[-1] == "Error: Invalid value for '--engine': 'bfs' is not one of 'explore', 'hypothesis'."


def test_the_cli_fails_fast_when_kafkas_classes_are_unavailable(no_campaign, monkeypatch, tmp_path):
    from kafka_bridge import jvm
    monkeypatch.setenv(jvm.LIB_ENV, str(tmp_path))   # a folder without Kafka's jars
    why = jvm.unavailable()
    assert why is not None
    result = _fuzz("--implementation", "kafka", "--workers", "2", "--seed", "1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: implementation kafka is unavailable: {why}\n"


def test_another_release_s_classes_unavailable_say_what_fetches_them(no_campaign, monkeypatch):
    from kafka_bridge import jvm
    monkeypatch.setattr(jvm, "ROOT", jvm.ROOT / "nowhere")   # no .kafka/ folder
    monkeypatch.delenv(jvm.LIB_ENV, raising=False)
    result = _fuzz("--implementation", "kafka", "--kafka-version", "4.2.0", "--workers", "1", "--seed", "1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: implementation kafka@4.2.0 is unavailable: no kafka-metadata-4.2.0.jar in ")
    assert result.stderr.endswith(": run `make kafka-jars KAFKA_VERSION=4.2.0` (Maven) or set REPLICHECK_KAFKA_LIB "
                                  "to a folder holding Kafka 4.2.0's jars\n")


def _result(*targets: TargetResult) -> CampaignResult:
    return CampaignResult(targets, seed=5, run_id="r1", workers=2, budget_s=60.0, elapsed_s=55.0)


CORRECT_CLEAN = TargetResult(Target("correct"), CLEAN, "no counterexample in 4 runs (120 examples, 50 s)",
                             units=2, runs=4, examples=120)
NO_ELR_FOUND = TargetResult(Target("variant", "NO_ELR"), FOUND, "UncleanExclusion after 1.2 s (7 examples)",
                            units=1, runs=1, examples=30, found="UncleanExclusion", first_failure_s=1.2,
                            first_failure_examples=7, counterexample_ids=("c",), shrunk_steps=6, reduced_steps=3)
BUG_NOT_RUN = TargetResult(Target("bug", "PRODUCE_IGNORES_MIN_ISR"), NOT_RUN, NOT_SCHEDULED)
BUG_NOT_FOUND = TargetResult(Target("bug", "TRUNCATE_TO_LEADER_OFFSET"), NOT_FOUND,
                             "no counterexample in 2 runs (60 examples, 12 s)", units=1, runs=2, examples=60)


def _stand_in(monkeypatch, result: CampaignResult) -> dict:
    seen: dict = {}

    def run_campaign(plan, **kwargs):
        seen.update(attrs.asdict(plan, recurse=False), **kwargs)
        return result
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", run_campaign)
    return seen


def test_a_target_that_did_not_run_is_printed_so_and_fails_the_campaign(monkeypatch, tmp_path, capsys):
    seen = _stand_in(monkeypatch, _result(CORRECT_CLEAN, NO_ELR_FOUND, BUG_NOT_RUN, BUG_NOT_FOUND))
    code = fuzz(FuzzRequest(minutes=1, workers=2, variants=["NO_ELR"], bugs=["PRODUCE_IGNORES_MIN_ISR", "TRUNCATE_TO_LEADER_OFFSET"], corpus_dir=tmp_path, report_dir=None, seed=5))
    out = capsys.readouterr().out
    assert code == 1
    assert [t.label for t in seen["targets"]] == ["correct", "variant:NO_ELR", "bug:PRODUCE_IGNORES_MIN_ISR",
                                                  "bug:TRUNCATE_TO_LEADER_OFFSET"]
    assert (seen["workers"], seen["seed"], seen["corpus_dir"]) == (2, 5, str(tmp_path.resolve()))
    assert seen["budget_s"] <= 60
    lines = out.splitlines()
    assert lines[0] == f"replicheck fuzz: 4 targets on 2 workers, 1 min, seed 5, corpus {tmp_path.resolve()}"
    row = next(x for x in lines if x.startswith("bug:PRODUCE_IGNORES_MIN_ISR"))
    assert row.split()[1:3] == ["not", "run"] and row.endswith(NOT_SCHEDULED)
    row = next(x for x in lines if x.startswith("variant:NO_ELR"))
    assert row.split()[1:] == ["found", "UncleanExclusion", "1", "30", "1.2", "6", "3"]
    assert "verdicts: 1 found, 1 not found, 1 clean, 1 not run, 0 error (of 4 targets)" in lines
    assert lines[-1] == ("campaign FAILED: not found (1): bug:TRUNCATE_TO_LEADER_OFFSET; not run (1): "
                         f"bug:PRODUCE_IGNORES_MIN_ISR ({NOT_SCHEDULED})")


def test_a_clean_correct_target_and_every_flaw_found_succeed(monkeypatch, tmp_path, capsys):
    _stand_in(monkeypatch, _result(CORRECT_CLEAN, NO_ELR_FOUND))
    assert fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], corpus_dir=tmp_path, report_dir=None, seed=5)) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "campaign succeeded: correct clean; 1 of 1 flaws found"


def test_a_counterexample_of_the_correct_target_fails_the_campaign(monkeypatch, tmp_path, capsys):
    failed = TargetResult(Target("correct"), FOUND, "StrongIsr after 30.0 s (200 examples)", runs=9,
                          found="StrongIsr")
    _stand_in(monkeypatch, _result(failed, NO_ELR_FOUND))
    assert fuzz(FuzzRequest(minutes=1, workers=1, variants=["NO_ELR"], corpus_dir=tmp_path, report_dir=None, seed=5)) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "campaign FAILED: failed: correct (StrongIsr)"


def test_the_kafka_campaign_runs_its_one_target_on_every_worker(monkeypatch, tmp_path, capsys):
    import replicheck_cli.fuzz  # noqa: F811
    monkeypatch.setattr(replicheck_cli.fuzz, "unavailable", lambda name: None)
    kafka = all_targets(implementation="kafka")[0]
    for verdict, code in ((CLEAN, 0), (FOUND, 1), ("error", 1)):
        seen = _stand_in(monkeypatch, _result(TargetResult(kafka, verdict, "why", found="divergence"
                                                           if verdict == FOUND else None)))
        assert fuzz(FuzzRequest(minutes=1, workers=2, implementation="kafka", corpus_dir=tmp_path, report_dir=None, seed=5)) == code
        assert seen["targets"] == (kafka,) and seen["workers"] == 2
    out = capsys.readouterr().out
    assert "replicheck fuzz: implementation:kafka (a shard on every worker) on 2 workers, 1 min, seed 5," in out
    assert "campaign succeeded: implementation:kafka clean" in out
    assert "campaign FAILED: failed: implementation:kafka (divergence)" in out
    assert "campaign FAILED: error: implementation:kafka (why)" in out


def test_the_correct_only_campaign_runs_the_correct_target_alone_with_the_engine_asked(monkeypatch, tmp_path, capsys):
    for engine in ("explore", "hypothesis"):
        seen = _stand_in(monkeypatch, _result(CORRECT_CLEAN))
        assert fuzz(FuzzRequest(minutes=1, workers=2, correct_only=True, corpus_dir=tmp_path, report_dir=None, seed=5, engine=engine)) == 0
        assert seen["targets"] == (Target("correct"),) and seen["workers"] == 2 and seen["engine"] == engine
    assert capsys.readouterr().out.splitlines()[-1] == "campaign succeeded: correct clean"
    with pytest.raises(ValueError, match="engine must be one of explore, hypothesis"):
        fuzz(FuzzRequest(minutes=1, workers=2, corpus_dir=tmp_path, report_dir=None, seed=5, engine="bfs"))
