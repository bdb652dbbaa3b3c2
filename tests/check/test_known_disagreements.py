"""Known disagreements (``Subject.known``): where the implementation disagrees
with the model in a way the subject already knows (by signature), the lockstep
detaches it and the model goes on alone, its properties still checked; the
machine counts the event; any other disagreement is still a verdict."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from check.lockstep import LockStep
from check.machine import KNOWN_EVENT, machine_for
from check.replay import replay
from check.subject import Subject
from model import (Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                   Variant)

from late_acks import COMMIT_ONE, RF2, LateAcks, LateAcksAndLost

LATE = "SutDiffersFromModel|divergence|outcome.acknowledged"
SHORT = settings(max_examples=15, stateful_step_count=30, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])


def test_a_known_disagreement_detaches_the_implementation_and_the_model_goes_on():
    assert replay(COMMIT_ONE, Subject.at(RF2, implementation=LateAcks)).verdict.signature == LATE
    lockstep = LockStep(Subject.at(RF2, implementation=LateAcks, known={LATE}))
    assert [lockstep.step(a) for a in COMMIT_ONE] == [None] * len(COMMIT_ONE)
    assert lockstep.known_met == (LATE,) and lockstep.implementation is None and lockstep.detached == ()
    assert replay(COMMIT_ONE + (Produce(1, 2),), Subject.at(RF2, implementation=LateAcks, known={LATE})).verdict is None


def test_another_disagreement_is_still_a_verdict():
    other = "SutDiffersFromModel|divergence|outcome.appended"
    result = replay(COMMIT_ONE, Subject.at(RF2, implementation=LateAcks, known={other}))
    assert result.verdict is not None and result.verdict.signature == LATE


def test_past_a_known_disagreement_the_properties_are_still_checked():
    """One write committed on RF 2 (LateAcks' known disagreement at step 6), then
    HWM_ADVANCES_BELOW_MIN_ISR's story: the ISR shrinks to the leader below
    MinISR and the next write commits. The model, alone since step 6, still
    fails its property at the last step."""
    config = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
                    variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR}))
    trace = COMMIT_ONE + (ProposeIsrShrink(1, 2), ReceiveAlterPartition(5), ReceiveAlterPartitionResponse(6),
                          Produce(1, 2))
    result = replay(trace, Subject.at(config, implementation=LateAcks, known={LATE}))
    assert result.verdict is not None and result.verdict.kind == "property" and result.failed_at == len(trace)
    assert "LeaderCandidateCompleteness" in result.verdict.properties
    assert replay(trace[:len(COMMIT_ONE)], Subject.at(config, implementation=LateAcks)).verdict.signature == LATE


def test_the_machine_counts_each_run_past_a_known_disagreement():
    machine = machine_for(Subject(implementation=LateAcks, known={LATE}), name="KnownLateAcks")
    run_state_machine_as_test(machine, settings=SHORT)
    assert machine.run_stats.event_counts[KNOWN_EVENT + LATE] >= 1


def test_past_the_first_disagreement_the_machine_finds_the_one_behind_it():
    with_first = machine_for(Subject(implementation=LateAcksAndLost), name="FirstOnly")
    try:
        run_state_machine_as_test(with_first, settings=SHORT)
    except AssertionError as e:
        first = e.verdict.signature
    else:
        raise AssertionError("LateAcksAndLost passed")
    behind = machine_for(Subject(implementation=LateAcksAndLost, known={first}), name="Behind")
    try:
        run_state_machine_as_test(behind, settings=SHORT)
    except AssertionError as e:
        assert e.verdict.signature != first
        assert {first, e.verdict.signature} == {LATE, "SutDiffersFromModel|divergence|outcome.appended"}
    else:
        raise AssertionError("the disagreement behind the known one was not found")
