"""The healing phase in the check: the lockstep expands the directive ``Heal``
into ``model.healing``'s schedule, takes each action on the model and the
implementation and checks it as any step, then the liveness goals; a failed goal
is the verdict kind ``liveness``, which replay, reduction, the corpus and the
regression rule carry like a property failure. The goals are made to fail here
by a healing schedule broken on purpose (``no_unfencing``): the correct
protocol heals."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import model.healing
from campaign.regression import regression_failure, replay_row
from check.failures import LivenessFailed
from check.finding import Search, findings
from check.lockstep import LockStep
from check.machine import machine_for
from check.reduce import reduce_counterexample
from check.replay import replay, reproduces
from check.subject import Subject
from model import (Config, ControlledShutdown, FenceBroker, Heal, Produce, ReceiveFetchRequest, ReceiveFetchResponse,
                   SendFetch, StartBroker, UnfenceBroker)
from sut import Cluster
from store.decode import decode_counterexample
from store.rows import counterexample_rows

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)
STORY = (Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), ControlledShutdown(3))
SHORT = settings(max_examples=100, stateful_step_count=40, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])


@pytest.fixture
def no_unfencing(monkeypatch):
    """Healing without its unfencing phases: a broker that comes back stays fenced."""
    monkeypatch.setattr(model.healing, "ROUND", tuple(p for p in model.healing.ROUND if p is not model.healing._unfence))


def test_the_correct_protocol_and_the_sut_heal_together():
    lockstep = LockStep(Subject.at(RF3, compare=True))
    assert [lockstep.step(a) for a in STORY + (Heal(),)] == [None] * (len(STORY) + 1)
    assert lockstep.trace[-1] == Heal() and len(lockstep.trace) == len(STORY) + 1
    assert lockstep.state.partition.isr == {1, 2, 3} and lockstep.implementation.observe().partition.isr == {1, 2, 3}


def test_an_implementation_that_cannot_heal_disagrees_during_healing():
    class NeverUnfenced(Cluster):
        def why_not_enabled(self, action):
            return "never unfenced" if isinstance(action, UnfenceBroker) else super().why_not_enabled(action)

    verdict = replay(STORY + (Heal(),), Subject.at(RF3, implementation=NeverUnfenced, compare=True)).verdict
    assert verdict is not None and verdict.finding_kind == "divergence"
    assert "during healing, round" in verdict.text


def test_a_goal_that_fails_after_healing_is_a_liveness_verdict(no_unfencing):
    result = replay(STORY + (Heal(),), Subject.at(RF3))
    verdict = result.verdict
    assert verdict.kind == "liveness" and "BrokersUnfenced" in verdict.properties
    assert result.failed_at == len(STORY) + 1 and verdict.trace[-1] == Heal()
    assert "healing schedule:\n  round 0: StartBroker(broker=3)" in verdict.text
    assert reproduces(result, "BrokersUnfenced", "liveness") and not reproduces(result, "BrokersUnfenced", "property")


def test_a_run_past_a_finding_judges_no_goal(no_unfencing):
    lockstep = LockStep(Subject.at(RF3, compare=True))
    lockstep.detached = ("SomeProperty",)
    for a in STORY:
        lockstep.step(a)
    assert lockstep.step(Heal()) is None


def test_the_machine_heals_and_fails_on_a_goal(no_unfencing, monkeypatch):
    import check.machine
    monkeypatch.setattr(check.machine, "MAX_HEAL_AFTER", 10)   # heal within these short examples
    with pytest.raises(LivenessFailed) as caught:
        run_state_machine_as_test(machine_for(Subject(compare=False), name="HealsBroken"), settings=SHORT)
    assert caught.value.verdict.kind == "liveness" and caught.value.verdict.trace[-1] == Heal()


def test_reduction_reduces_the_prefix_and_heals_again(no_unfencing):
    """Only the shutdown matters: without a broker to bring back, nothing stays fenced."""
    reduced = reduce_counterexample(STORY + (Heal(),), Subject.at(RF3), max_seconds=30, prop="BrokersUnfenced")
    assert reduced.trace == (ControlledShutdown(3), Heal()) or reduced.trace[-1] == Heal() and len(reduced.trace) == 2


def test_an_earlier_healing_phase_is_expanded_and_the_liveness_failures_own_kept(no_unfencing):
    trace = (Produce(1, 1), Heal(), ControlledShutdown(3), Heal())
    assert replay(trace, Subject.at(RF3)).verdict.kind == "liveness"
    reduced = reduce_counterexample(trace, Subject.at(RF3), max_seconds=30, prop="BrokersUnfenced")
    assert reduced.trace[-1] == Heal() and Heal() not in reduced.trace[:-1]


def test_a_safety_failure_during_healing_is_reduced_to_the_actions_it_needs():
    """The heal delivers the ISR shrink's AlterPartition response: expanded, the
    healing phase's hundred actions go but the one the failure needs; the trace
    never grows."""
    from model import ProposeIsrShrink, ReceiveAlterPartition, ReplicateMetadata, Variant
    subject = Subject.at(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
                                variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})))
    trace = (Produce(1, 1), ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), Heal())
    assert replay(trace, subject).property_names == ("LeaderCandidateCompleteness",)
    reduced = reduce_counterexample(trace, subject, max_seconds=30)
    assert reduced.trace == trace[:-1] + (ReplicateMetadata(1, 1),)
    assert replay(reduced.trace, subject.with_config(reduced.config)).property_names == ("LeaderCandidateCompleteness",)


def test_a_liveness_row_replays_and_follows_the_regression_rule(no_unfencing):
    result = replay(STORY + (Heal(),), Subject.at(RF3))
    rows = counterexample_rows(findings(result.verdict, result.subject, Search("t")), run_id="r", worker="main")
    row = next(r for r in rows if r["property"] == "BrokersUnfenced")
    assert row["kind"] == "liveness" and row["signature"].startswith("BrokersUnfenced|liveness|")
    assert [s["action"] for s in row["steps"]][-1] == "Heal" and row["steps"][-1]["family"] == "healing"
    assert replay_row(row).verdict.kind == "liveness"
    decoded = decode_counterexample(row)
    # the correct protocol failing a goal is a real bug: the rule says so
    assert regression_failure(decoded, row, replay_row(row)) is not None


def test_each_healing_draws_the_next_so_an_example_heals_again():
    """Faults may start again after a healing phase, and the example heal again
    later (``heal after`` more rule steps), each time judging the goals."""
    import random
    from check.strategies import RandomDraws

    class Heals(RandomDraws):
        def boolean(self, label):
            return True if label == "heals" else super().boolean(label)

        def integer(self, lo, hi, label):
            return 3 if label == "heal after" else super().integer(lo, hi, label)

    machine = machine_for(Subject(compare=False), name="HealsAgain")()
    draws = Heals(random.Random(5))
    machine.begin(machine.draw_config(draws), draws)
    assert machine.heal_after == 3
    heals = []
    for _ in range(12):
        if machine.enabled("healing"):
            heals.append(machine.rule_steps)
            machine.act("healing", draws)
            assert machine.heal_after == machine.rule_steps + 3
        else:
            machine.act("client", draws) if machine.enabled("client") else machine.act("lifecycle", draws)
    assert heals == [3, 7, 11]
    assert machine.lockstep.trace.count(Heal()) == 3
