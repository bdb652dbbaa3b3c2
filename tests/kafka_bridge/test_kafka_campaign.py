"""The campaign's target ``implementation:kafka`` runs Kafka's own code against the
model (Kafka profile, detached at its findings) and records its runs; a
disagreement is exported as a row naming the implementation "kafka", reduced and
replayed with that same implementation. A disagreement found with the properties
off (``Subject(check_properties=False)``) is reduced and replayed with
them off, so a finding of the Kafka profile on the way does not stop it. "Kafka's
code" that disagrees is made here by misreporting one field of the real
implementation's observation; the runs are cut to a few small examples so that
each test takes seconds."""

from __future__ import annotations

import time

import attrs
import pytest

import campaign.unit
import kafka_bridge
from campaign.targets import Target
from campaign.unit import run_target
from campaign.regression import replay_row
from check.implementations import factory
from check.refine import refine_all
from check.replay import replay
from check.subject import Subject
from store.decode import decode_counterexample
from store.reader import read_counterexamples, read_runs
from store.writer import CorpusWriter
from clocks import JumpingClock
from store.rows import counterexample_rows
from model import (KAFKA, NO_LEADER, CancelReassignment, Config, FenceBroker, Observation, Reassign)

#: Kafka's own code, as ``kafka_bridge`` builds it.
REAL = kafka_bridge.implementation
TARGET = Target.parse("implementation:kafka")


class MisreportedEpoch:
    """Kafka's code with the controller's leader epoch reported one too high once
    ``wrong(observation)`` holds (by default: once the epoch has moved, which the
    first election does)."""

    def __init__(self, config: Config, bugs: frozenset = frozenset()) -> None:
        self.engine = REAL(config, bugs)
        self.first = self.engine.observe().partition.leader_epoch

    def wrong(self, obs: Observation) -> bool:
        return obs.partition.leader_epoch != self.first

    def apply(self, action):
        return self.engine.apply(action)

    def is_enabled(self, action) -> bool:
        return self.engine.is_enabled(action)

    def observe(self) -> Observation:
        obs = self.engine.observe()
        if not self.wrong(obs):
            return obs
        return attrs.evolve(obs, partition=attrs.evolve(obs.partition, leader_epoch=obs.partition.leader_epoch + 1))


class MisreportedEpochWithoutLeader(MisreportedEpoch):
    """Misreports only while the partition has no leader."""

    def wrong(self, obs: Observation) -> bool:
        return obs.partition.leader == NO_LEADER


@pytest.fixture
def small_runs(monkeypatch):
    """Campaign runs of five examples of up to 40 steps (a run of the real campaign
    is 25 of 400): the behaviour under test, not the search, in seconds."""
    monkeypatch.setattr(campaign.unit, "EXAMPLES_PER_RUN", 5)
    monkeypatch.setattr(campaign.unit, "STEPS_PER_EXAMPLE", 40)


def test_the_kafka_target_runs_kafkas_code_against_the_model_and_records_its_runs(tmp_path, small_runs):
    machine = TARGET.machine(0, seed=1)
    subject = machine.subject
    assert factory(subject) is REAL and subject.profile == KAFKA and subject.detach_at_findings
    # A share of seconds, not one: no run starts after the share's end, and on a loaded
    # machine the unit's set-up alone (its corpus writer) took longer than a second.
    result = run_target(TARGET, share_s=5.0, deadline=time.time() + 60, corpus_dir=str(tmp_path), seed=1)
    assert result.ok and result.found is None and result.runs >= 1 and result.examples > 0
    runs = read_runs(tmp_path).rows
    assert len(runs) == result.runs and {r["test_id"] for r in runs} == {"campaign[implementation:kafka]"}
    assert sum(r["steps"] for r in runs) > 0 and not any(r["failed"] for r in runs)
    assert not read_counterexamples(tmp_path, warn=False).rows


def test_a_disagreement_is_exported_named_kafka_reduced_with_kafka_and_replayed(tmp_path, small_runs, monkeypatch):
    monkeypatch.setattr(kafka_bridge, "implementation", MisreportedEpoch)
    # An implementation searches its whole share, past a find: the share ends (the unit's
    # clock jumps past it, not past the deadline) once the first counterexample is written,
    # however long a loaded machine took to get there (this seed's first run finds nothing).
    clock = JumpingClock(by=700.0)
    monkeypatch.setattr(campaign.unit, "time", clock)
    record = CorpusWriter.record

    def record_then_jump(self, *args, **kwargs):
        rows = record(self, *args, **kwargs)
        if rows:
            clock.jump()
        return rows

    monkeypatch.setattr(CorpusWriter, "record", record_then_jump)
    result = run_target(TARGET, share_s=600.0, deadline=time.time() + 1200, corpus_dir=str(tmp_path), seed=2)
    assert result.found == "divergence" and not result.ok
    rows = read_counterexamples(tmp_path).rows
    assert rows and all(r["test_id"] == "campaign[implementation:kafka]" for r in rows)
    row = min(rows, key=lambda r: r["step_count"])
    assert (row["implementation"], row["kind"]) == ("kafka", "divergence")
    assert row["signature"] == "SutDiffersFromModel|divergence|observed.partition.leader_epoch"
    # Reduced by replaying the same implementation: with any other, nothing fails.
    assert row["shrunk_step_count"] is not None and 1 <= row["step_count"] <= row["shrunk_step_count"]
    assert row["timeline"] is not None and len(row["timeline"]) == row["step_count"]
    again = replay_row(row)
    assert again.kind == "divergence" and again.failed_at == row["step_count"]
    monkeypatch.setattr(kafka_bridge, "implementation", REAL)
    assert replay_row(row).verdict is None


#: A reverted move that leaves the partition without a leader and, in the Kafka
#: profile, its LastKnownELR [1] outside the replicas [2] (finding 4's state:
#: ValidPartitionMetadata fails on the model at step 4).
PAST_A_FINDING = (Reassign((2,)), Reassign((1, 2, 3)), FenceBroker(2), CancelReassignment())
FINDING_CONFIG = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=1, unclean_leader_election=True,
                        profile=KAFKA)


def test_a_disagreement_past_a_finding_is_reduced_and_replayed_with_the_properties_off(tmp_path, monkeypatch):
    """Where the run that found a disagreement checked no property (the README's
    ``Subject(check_properties=False)``, benchmarks/kafka_campaign.py),
    reduction, the timeline and the row's replay check none either: with them on,
    the replay would stop at the property the profile's finding breaks on the way
    (step 4 here, the step of the disagreement too), and the row would neither
    reduce nor replay."""
    from click.testing import CliRunner

    from replicheck_cli.commands import main
    from check.failures import failure_for
    from check.machine import machine_for
    from check.statistics import RunObserver
    from store.writer import CorpusWriter
    monkeypatch.setattr(kafka_bridge, "implementation", MisreportedEpochWithoutLeader)
    on = replay(PAST_A_FINDING, Subject.at(FINDING_CONFIG, implementation="kafka"))
    assert (on.kind, on.failed_at) == ("property", 4)
    off = replay(PAST_A_FINDING, Subject.at(FINDING_CONFIG, implementation="kafka", check_properties=False))
    assert (off.kind, off.failed_at) == ("divergence", 4)

    # Recorded as the corpus records a run of such a machine that failed so.
    run = RunObserver(machine_for(Subject(implementation="kafka", profile=KAFKA, check_properties=False),
                                  name="KafkaPropertiesOff"))
    run.fail(failure_for(off.verdict))

    def rows(reduce_s=None):
        return counterexample_rows(refine_all(run.record().findings, reduce_s), run_id="r", worker="main")
    [reduced] = rows(reduce_s=20)
    assert (reduced["implementation"], reduced["kind"], reduced["shrunk_step_count"]) == ("kafka", "divergence", 4)
    # Reduced towards the disagreement, not the finding: fencing the only replica
    # leaves the partition leaderless in one step.
    assert reduced["step_count"] == 1 and reduced["timeline"] is not None
    assert replay_row(reduced).kind == "divergence"
    [found] = rows()
    decoded = decode_counterexample(found)
    assert factory(decoded.subject) is MisreportedEpochWithoutLeader and decoded.subject.check_properties is False
    again = replay_row(found)
    assert (again.kind, again.failed_at) == ("divergence", 4)
    assert decode_counterexample(found | {"kind": "property"}).subject.check_properties is True
    assert decode_counterexample(found | {"implementation": None}).subject.check_properties is True
    writer = CorpusWriter(tmp_path, run_id="r", worker="main")
    writer.add_counterexamples([found])
    writer.flush()
    out = CliRunner().invoke(main, ["replay", str(tmp_path), "--id", found["counterexample_id"][:16]])
    assert out.exit_code == 1 and "\nreproduced: SutDiffersFromModel after step 4 of 4" in out.stdout, out.output
