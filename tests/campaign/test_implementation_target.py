"""The campaign's target for an implementation under test (``implementation:kafka``):
parsed and rejected by name, split into shards, judged as the correct target is
(it succeeds only when it never failed), and reachable from ``replicheck fuzz
--implementation``, which rejects a bad name or an implementation that cannot be
built here in one line before any run starts. None of these start Kafka's JVM
(tests/kafka_bridge/test_kafka_campaign.py runs the target)."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from harness.campaign import (DEADLINE_ENV, DONE_ENV, SHARE_ENV, TARGETS_ENV, WORKERS_ENV, Target, TargetResult,
                              all_targets, run_seed, run_target, share_from_env)
from harness.cli import main

KAFKA_TARGET = Target("implementation", "kafka")


def test_the_implementation_target_parses_with_its_shards():
    assert Target.parse("implementation:kafka") == KAFKA_TARGET
    assert (KAFKA_TARGET.label, KAFKA_TARGET.key, KAFKA_TARGET.runs_whole_share) == \
        ("implementation:kafka", "implementation:kafka", True)
    second = Target.parse("implementation:kafka#1")
    assert (second.label, second.key, second.shard) == ("implementation:kafka", "implementation:kafka#1", 1)
    assert not Target.parse("variant:NO_ELR").runs_whole_share and Target.parse("correct").runs_whole_share
    # One shard per worker, each drawing its own examples in a seeded campaign.
    shards = all_targets(implementation="kafka", shards=3)
    assert [t.key for t in shards] == ["implementation:kafka", "implementation:kafka#1", "implementation:kafka#2"]
    assert [Target.parse(t.key) for t in shards] == shards
    assert len({run_seed(7, t.key, 0) for t in shards}) == 3
    assert all_targets(implementation="kafka", shards=0) == [KAFKA_TARGET]


def test_a_bad_implementation_target_is_named_with_the_allowed_values():
    with pytest.raises(ValueError, match=r"^unknown implementation 'nope'; allowed: kafka$"):
        Target.parse("implementation:nope")
    with pytest.raises(ValueError, match=r"^unknown implementation 'nope'; allowed: kafka$"):
        all_targets(implementation="nope")
    with pytest.raises(ValueError, match=r"'bug:NAME' or 'implementation:NAME', got 'impl:kafka'$"):
        Target.parse("impl:kafka")
    with pytest.raises(ValueError, match=r"^campaign target shard must be an integer >= 0 after '#', got 'x'$"):
        Target.parse("implementation:kafka#x")
    with pytest.raises(ValueError, match=r"^an implementation campaign runs only implementation:kafka: give no "
                                         r"variants or bugs with it \(got NO_ELR\)$"):
        all_targets(variants=["NO_ELR"], implementation="kafka")


def test_each_shard_draws_its_own_seeded_examples():
    first, second = (Target("implementation", "kafka", shard).machine(0, seed=7) for shard in (0, 1))
    assert first._hypothesis_internal_use_seed == run_seed(7, "implementation:kafka", 0)
    assert second._hypothesis_internal_use_seed == run_seed(7, "implementation:kafka#1", 0)


def _divergence():
    """A SUT bug's divergence verdict (as any disagreement)."""
    from harness.replay import replay
    from model import Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse
    from sut import Bug
    trace = (ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2), Produce(1, 1))
    return replay(trace, Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2),
                  bugs={Bug.PRODUCE_IGNORES_MIN_ISR}).verdict


def _raised_from_the_implementation():
    """A harness error verdict of an exception the implementation raised."""
    from harness.lockstep import error_verdict
    from model import Config, initial_state
    return error_verdict(initial_state(Config()), (), RuntimeError("java.lang.IllegalArgumentException"),
                         " from the SUT")


@pytest.mark.parametrize("label", ["implementation:kafka", "bug:PRODUCE_IGNORES_MIN_ISR"])
@pytest.mark.parametrize("verdict", [_divergence, _raised_from_the_implementation])
def test_the_implementation_target_runs_its_whole_share_after_a_failure(monkeypatch, label, verdict):
    """A flaw's target stops at its first counterexample; an implementation's keeps
    looking for other disagreements until its share is spent, an exception its
    code raised being one of them (a harness error ends any other target)."""
    import hypothesis.stateful

    from harness.failures import HarnessFailure, failure_for
    found = verdict()

    def one_run(machine, settings):  # stands in for a machine run that finds a disagreement
        time.sleep(0.02)
        raise failure_for(found)

    monkeypatch.setattr(hypothesis.stateful, "run_state_machine_as_test", one_run)
    target = Target.parse(label)
    if target.kind == "bug" and found.kind == "harness_error":
        with pytest.raises(HarnessFailure):
            run_target(target, share_s=0.3, deadline=time.time() + 60, corpus_dir=None)
        return
    result = run_target(target, share_s=0.3, deadline=time.time() + 60, corpus_dir=None)
    assert result.found == failure_for(found).kind and result.ok is (target.kind == "bug")
    assert result.runs > 1 if target.kind == "implementation" else result.runs == 1


def test_the_campaign_hands_each_shard_to_a_worker(tmp_path, monkeypatch, capsys):
    """``fuzz(implementation=...)`` lists one shard per worker for the campaign's
    tests, each with the whole run time as its share, and reads their verdict from
    the corpus and the tests' exit status: a counterexample of the target fails
    the campaign, and so does a shard failing without one (it checked nothing)."""
    import harness.fuzz
    import harness.implementations
    from harness.campaign import CORPUS_ENV, SEED_ENV
    from harness.fuzz import RUN_ID_ENV, fuzz
    monkeypatch.setattr(harness.implementations, "unavailable", lambda name: None)
    seen: dict = {}

    class Campaign:  # stands in for the pytest-xdist process of the campaign's tests
        def __init__(self, cmd, env, **kwargs):
            seen.update(cmd=cmd, env=env)
            _corpus(tmp_path, env[RUN_ID_ENV], "campaign[implementation:kafka]", seen["failed"])
            self.stdout = iter(["harness/campaign_tests.py::test_campaign[implementation:kafka] PASSED\n"])
            self.returncode = seen["returncode"]

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(harness.fuzz.subprocess, "Popen", Campaign)
    for failed, returncode, code in ((False, 0, 0), (True, 1, 1), (False, 1, 1)):
        seen.update(failed=failed, returncode=returncode)
        assert fuzz(minutes=1, workers=2, implementation="kafka", corpus_dir=tmp_path, report_dir=None,
                    seed=5) == code
        env = seen["env"]
        assert env[TARGETS_ENV] == "implementation:kafka,implementation:kafka#1"
        assert (float(env[SHARE_ENV]), env[SEED_ENV], env[CORPUS_ENV]) == (60.0, "5", str(tmp_path.resolve()))
        assert seen["cmd"][seen["cmd"].index("-n") + 1] == "2"
    out = capsys.readouterr().out
    assert "replicheck fuzz: 1 target (2 shards) on 2 workers, 1 min (~60 s each), seed 5," in out
    assert "campaign succeeded" in out
    assert out.count("campaign FAILED: implementation kafka disagreed with the model, or a shard could not run") == 2


def _corpus(tmp_path, run_id: str, test_id: str, failed: bool) -> None:
    """A corpus holding one machine run of ``test_id`` in campaign ``run_id`` and,
    when ``failed``, a counterexample of it (a SUT bug's divergence, as any row)."""
    from harness.corpus import CorpusWriter, RunObserver, counterexample_rows, failures_from_verdict
    from harness.machine import machine_for
    from harness.replay import replay
    from model import Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse
    from sut import Bug
    writer = CorpusWriter(tmp_path, run_id=run_id, worker="gw0")
    writer.add_run(RunObserver(machine_for(name="Probe"), test_id=test_id).run_row(run_id, "gw0"))
    if failed:
        bugs = frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})
        trace = (ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2), Produce(1, 1))
        verdict = replay(trace, Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2), bugs=bugs).verdict
        writer.add_counterexamples(counterexample_rows(failures_from_verdict(verdict, bugs), run_id=run_id,
                                                       worker="gw0", test_id=test_id))
    writer.flush()


@pytest.mark.parametrize("failed", [False, True])
def test_the_implementation_target_succeeds_only_when_it_never_failed(tmp_path, failed):
    from harness.fuzz import kill_matrix
    assert TargetResult(KAFKA_TARGET, found="divergence" if failed else None).ok is not failed
    _corpus(tmp_path, "r1", "campaign[implementation:kafka]", failed)
    text, ok = kill_matrix(tmp_path, "r1", all_targets(implementation="kafka", shards=2))
    assert ok is not failed
    # The shards are one line of the matrix.
    (line,) = [x for x in text.splitlines() if x.startswith("implementation:kafka")]
    assert line.split()[1] == ("SutDiffersFromModel" if failed else "-")


def test_the_implementation_target_keeps_its_fixed_share(tmp_path, monkeypatch):
    """A flaw found early leaves its time to the flaws still running, not to a
    target that runs its whole share anyway."""
    monkeypatch.setenv(DEADLINE_ENV, str(time.time() + 100))
    monkeypatch.setenv(SHARE_ENV, "1")
    monkeypatch.setenv(DONE_ENV, str(tmp_path))
    monkeypatch.setenv(TARGETS_ENV, "implementation:kafka,variant:NO_ELR")
    monkeypatch.setenv(WORKERS_ENV, "2")
    assert share_from_env(KAFKA_TARGET)[0] == 1.0
    assert share_from_env(Target.parse("variant:NO_ELR"))[0] > 50


def _fuzz(*args: str) -> "object":
    return CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--no-report", *args])


@pytest.fixture
def no_campaign(monkeypatch):
    """Any campaign started fails the test: the errors below come before the runs."""
    import harness.fuzz

    def started(*args, **kwargs):
        raise AssertionError("a campaign was started")
    monkeypatch.setattr(harness.fuzz.subprocess, "Popen", started)


def test_the_cli_rejects_a_bad_implementation_in_one_line(no_campaign):
    result = _fuzz("--implementation", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == \
        (2, "", "error: unknown implementation 'nope'; allowed: kafka\n")
    result = _fuzz("--implementation", "kafka", "--bug", "PRODUCE_IGNORES_MIN_ISR")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("error: an implementation campaign runs only implementation:kafka: give no variants "
                             "or bugs with it (got PRODUCE_IGNORES_MIN_ISR)\n")


def test_the_cli_fails_fast_when_kafkas_classes_are_unavailable(no_campaign, monkeypatch, tmp_path):
    from kafka_bridge import jvm
    monkeypatch.setenv(jvm.LIB_ENV, str(tmp_path))   # a folder without Kafka's jars
    why = jvm.unavailable()
    assert why is not None
    result = _fuzz("--implementation", "kafka", "--workers", "2", "--seed", "1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: implementation kafka is unavailable: {why}\n"
