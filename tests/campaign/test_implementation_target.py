"""The campaign's target for an implementation under test (``implementation:kafka``):
parsed and rejected by name, run as a shard on every worker, judged as the correct
target is (it succeeds only when it never failed), and searching on after a
disagreement. None of these start Kafka's JVM (tests/kafka_bridge/test_kafka_campaign.py
runs the target; tests/replicheck_cli the command)."""

from __future__ import annotations

import time

import pytest

import campaign.unit
from campaign.plan import Campaign
from campaign.targets import Target, all_targets, run_seed

from campaign.unit import HYPOTHESIS, UnitResult, run_target
from campaign.scheduler import CLEAN, FOUND, Scheduler
from check.subject import Subject

KAFKA_TARGET = Target("implementation", "kafka")


def test_the_implementation_target_parses_with_its_shards():
    assert Target.parse("implementation:kafka") == KAFKA_TARGET
    assert (KAFKA_TARGET.label, KAFKA_TARGET.key, KAFKA_TARGET.runs_whole_share) == \
        ("implementation:kafka", "implementation:kafka", True)
    second = Target.parse("implementation:kafka#1")
    assert (second.label, second.key, second.shard) == ("implementation:kafka", "implementation:kafka#1", 1)
    assert second.test_id == KAFKA_TARGET.test_id == "campaign[implementation:kafka]"
    assert not Target.parse("variant:NO_ELR").runs_whole_share and Target.parse("correct").runs_whole_share
    assert all_targets(implementation="kafka") == [KAFKA_TARGET]


def test_a_bad_implementation_target_is_named_with_the_allowed_values():
    allowed = r"allowed: kafka, kafka@4.0.0, kafka@4.0.1, .*, kafka@4.3.1$"   # Kafka's classes of each release
    with pytest.raises(ValueError, match=r"^unknown implementation 'nope'; " + allowed):
        Target.parse("implementation:nope")
    with pytest.raises(ValueError, match=r"^unknown implementation 'nope'; " + allowed):
        all_targets(implementation="nope")
    assert Target.parse("implementation:kafka@4.2.0").subject.implementation == "kafka@4.2.0"
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


def test_an_implementation_campaign_runs_a_shard_on_every_worker():
    s = Scheduler(Campaign([KAFKA_TARGET], budget_s=60.0, workers=3), 3, search_end=120.0)
    units = [s.next_unit(0.0) for _ in range(3)]
    assert [u.target.key for u in units] == ["implementation:kafka", "implementation:kafka#1",
                                             "implementation:kafka#2"]
    for u in units:
        s.finished(u, UnitResult(u.target, runs=2, examples=50, seconds=60.0))
    assert s.next_unit(60.0).target.key == "implementation:kafka"   # and on, to the end
    (result,) = s.results()
    assert (result.verdict, result.ok, result.runs, result.units) == (CLEAN, True, 6, 3)


def _divergence():
    """A SUT bug's divergence verdict (as any disagreement)."""
    from check.replay import replay
    from model import Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse
    from sut import Bug
    trace = (ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2), Produce(1, 1))
    return replay(trace, Subject.at(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2), bugs={Bug.PRODUCE_IGNORES_MIN_ISR})).verdict


def _raised_from_the_implementation():
    """A harness error verdict of an exception the implementation raised."""
    from check.lockstep import error_verdict
    from model import Config, initial_state
    return error_verdict(initial_state(Config()), (), RuntimeError("java.lang.IllegalArgumentException"),
                         " from the SUT")


@pytest.mark.parametrize("label", ["implementation:kafka", "bug:PRODUCE_IGNORES_MIN_ISR"])
@pytest.mark.parametrize("verdict", [_divergence, _raised_from_the_implementation])
def test_the_implementation_target_runs_its_whole_share_after_a_failure(monkeypatch, label, verdict):
    """A flaw's target stops at its first counterexample; an implementation's keeps
    looking for other disagreements until its share is spent, an exception its
    code raised being one of them (a harness error of any other target is the
    unit's error, not a verdict on the target)."""
    from check.failures import failure_for
    found = verdict()

    def one_run(machine, settings):  # stands in for a machine run that finds a disagreement
        time.sleep(0.02)
        raise failure_for(found)

    monkeypatch.setattr(campaign.unit, "run_state_machine_as_test", one_run)
    target = Target.parse(label)
    result = run_target(target, share_s=0.3, deadline=time.time() + 60, corpus_dir=None, engine=HYPOTHESIS)
    if target.kind == "bug" and found.kind == "harness_error":
        assert (result.found, result.ok, result.runs) == (None, False, 1)
        assert result.error.startswith("harness error in run 0 of bug:PRODUCE_IGNORES_MIN_ISR: HarnessFailure: ")
        return
    assert result.found == failure_for(found).kind and result.ok is (target.kind == "bug")
    assert result.error is None
    assert result.runs > 1 if target.kind == "implementation" else result.runs == 1


@pytest.mark.parametrize("failed", [False, True])
def test_the_implementation_target_succeeds_only_when_it_never_failed(failed):
    s = Scheduler(Campaign([KAFKA_TARGET], budget_s=60.0, workers=2), 2, search_end=100.0)
    first, second = s.next_unit(0.0), s.next_unit(0.0)
    s.finished(first, UnitResult(first.target, runs=3, examples=75, seconds=50.0))
    s.finished(second, UnitResult(second.target, runs=3, examples=75, seconds=50.0,
                                  found="divergence" if failed else None))
    (result,) = s.results()
    assert result.ok is not failed and result.verdict == (FOUND if failed else CLEAN)
    assert UnitResult(KAFKA_TARGET, found="divergence" if failed else None).ok is not failed
