"""Round trip: a counterexample the machine finds is written to the corpus, read
back with pyarrow, decoded, replayed — and fails with the same property, at the
same step, with the same report and final state. For several protocol variants
(found by generation alone, tens of steps; and one shrunk), for a SUT bug (a
divergence), for an implementation named by ``module:qualname`` that enables
what the model refuses (an enablement divergence); and the steps' encoding of
every action type, on seeded walks of the model."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from sut import Bug

from campaign.record import run_machine
from campaign.regression import replay_row
from check.failures import PropertyViolated, SutDiverged
from check.machine import machine_for
from check.random_walk import random_walk
from check.replay import replay
from check.subject import Subject
from store.codec import decode_steps, encode_steps, state_to_json
from store.decode import decode_counterexample
from store.reader import read_counterexamples, read_runs
from store.writer import CorpusWriter
from model import ACTION_TYPES, KAFKA, Config, Heal, Variant

from corpus_support import FIND, SHRINK, ExpandsOutOfSyncFollowers

#: Found by a derandomized search in about a second each (REASSIGNMENT_COMPLETES_BELOW_MIN_ISR took
#: 13-35 s); every action type's encoding is the walk test's, below.
VARIANTS = [Variant.HWM_ADVANCES_BELOW_MIN_ISR, Variant.UNCLEAN_REGISTRATION_KEEPS_ELR, Variant.NO_ELR]

#: A walk from each reaches every action type (the chapters' with unclean leader
#: election, and the Kafka profile's clock and multi-follower shrink).
WALK_CONFIGS = (Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=1, unclean_recovery="balanced",
                       unclean_leader_election=True),
                Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA))


def find_and_record(machine, settings, corpus, test_id):
    writer = CorpusWriter(corpus, run_id="roundtrip", worker="main")
    try:
        run_machine(machine, settings, writer=writer, test_id=test_id)
    except (PropertyViolated, SutDiverged) as e:
        exc = e
    else:
        pytest.fail(f"{machine.__name__} found no counterexample in {settings.max_examples} examples: "
                    "a search budget problem of the machine, not of the corpus")
    writer.flush()
    return exc, writer.written   # the counterexample was written when found, the runs row now


def check_round_trip(exc, paths, expected_variants, expected_bugs=()):
    ce_files = [p for p in paths if p.parent.parent.name == "counterexamples"]
    assert len(ce_files) == 1
    raw = pq.read_table(ce_files[0]).to_pylist()                    # plain pyarrow
    rows = read_counterexamples(ce_files[0].parent.parent.parent).rows  # the corpus reader
    assert [r["counterexample_id"] for r in raw] == [r["counterexample_id"] for r in rows]
    names = exc.property_names if isinstance(exc, PropertyViolated) else ("SutDiffersFromModel",)
    assert sorted(r["property"] for r in rows) == sorted(names)       # one row per failing property
    for row in rows:
        assert row["variants"] == expected_variants and row["sut_bugs"] == list(expected_bugs)
        assert row["step_count"] == len(exc.trace) == len(row["steps"])
        assert row["examples_to_failure"] is not None and row["examples_to_failure"] >= 1   # 1-based
        assert row["time_to_failure_s"] is not None and row["time_to_failure_s"] > 0
        assert row["seed"] is None                                    # derandomized
        assert row["run_id"] == "roundtrip" and row["worker"] == "main"
        json.loads(row["final_state_json"])

        decoded = decode_counterexample(row)
        assert decoded.actions == tuple(exc.trace)
        state = exc.state if isinstance(exc, PropertyViolated) else exc.model_state
        assert decoded.config == state.config
        result = replay(decoded.actions, decoded.subject)
        assert result.failed and result.failed_at == row["step_count"]
        assert row["property"] in result.property_names
        assert state_to_json(result.state) == row["final_state_json"]
        assert result.report() == str(exc)                           # the report pytest printed
        again = replay(decoded.actions, decoded.subject)
        assert again == result                                       # deterministic
    return rows


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_found_counterexample_replays_to_the_same_property(variant, tmp_path):
    machine = machine_for(Subject(variants=frozenset({variant})))
    exc, paths = find_and_record(machine, FIND, tmp_path, f"roundtrip::{variant.name}")
    assert isinstance(exc, PropertyViolated)
    check_round_trip(exc, paths, [variant.name])
    (run_row,) = read_runs(tmp_path).rows
    assert run_row["failed"] and run_row["variants"] == [variant.name]
    assert run_row["examples"] >= 1 and run_row["steps"] >= len(exc.trace)
    assert sum(run_row["rule_counts"].values()) == run_row["steps"] == sum(run_row["action_counts"].values())


def test_every_action_type_a_walk_takes_decodes_to_itself():
    """The steps' encoding (``encode_steps``, a row's ``steps``) decodes to the
    same actions for every action type, arguments and all: seeded walks of
    the model reach each type (walks of more seeds until they have, at most ten:
    the rarest classes need a few thousand steps)."""
    trace: list = [Heal()]   # a walk never heals
    for seed in range(1, 11):
        trace += [action for config in WALK_CONFIGS
                  for action, _ in random_walk(config, 3000, seed=seed, policy="weighted")]
        if not set(ACTION_TYPES) - {type(a) for a in trace}:
            break
    assert sorted(t.__name__ for t in set(ACTION_TYPES) - {type(a) for a in trace}) == []
    steps = encode_steps(trace)
    assert [s["idx"] for s in steps] == list(range(len(trace)))
    assert decode_steps(json.loads(json.dumps(steps))) == tuple(trace)   # as a row stores them: JSON text


def test_shrunk_counterexample_round_trips(tmp_path):
    machine = machine_for(Subject(variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})))
    exc, paths = find_and_record(machine, SHRINK, tmp_path, "roundtrip::shrunk")
    rows = check_round_trip(exc, paths, ["HWM_ADVANCES_BELOW_MIN_ISR"])
    # the final, shrunk example only: the one the exception Hypothesis raised carries
    assert len(rows) == 1 and rows[0]["step_count"] == len(exc.trace)


BUGS = {
    # the buggy SUT appends a write the model refuses: the Produce's outcome differs
    Bug.PRODUCE_IGNORES_MIN_ISR: (FIND, "outcome.appended"),
}


@pytest.mark.parametrize("bug", list(BUGS), ids=lambda b: b.name)
def test_sut_bug_divergence_round_trips(bug, tmp_path):
    budget, template = BUGS[bug]
    machine = machine_for(Subject(bugs=frozenset({bug})))
    exc, paths = find_and_record(machine, budget, tmp_path, f"roundtrip::{bug.name}")
    assert isinstance(exc, SutDiverged)
    (row,) = check_round_trip(exc, paths, [], [bug.name])
    assert row["kind"] == "divergence"
    assert row["signature"].startswith("SutDiffersFromModel|divergence|" + template), row["signature"]
    assert row["violation"] == "\n".join(exc.differences)
    decoded = decode_counterexample(row)
    # the correct SUT takes the same trace without diverging
    assert not replay(decoded.actions, Subject.at(decoded.config)).failed


def test_an_enablement_divergence_round_trips_with_its_implementation(tmp_path):
    """An implementation that enables an ISR expansion the model refuses (no state
    differs yet): the row names the implementation by ``module:qualname``, and its
    replay takes that implementation again and diverges at the same step with the
    same report, where the bundled SUT agrees with the model."""
    machine = machine_for(Subject(implementation=ExpandsOutOfSyncFollowers))
    exc, paths = find_and_record(machine, FIND, tmp_path, "roundtrip::enablement")
    assert isinstance(exc, SutDiverged)
    (row,) = read_counterexamples(tmp_path).rows
    assert (row["implementation"], row["kind"]) == ("corpus_support:ExpandsOutOfSyncFollowers", "divergence")
    assert row["signature"].startswith("SutDiffersFromModel|divergence|enablement of ProposeIsrExpand(leader=N, "
                                       "follower=N): model=refused"), row["signature"]
    assert row["violation"] == "\n".join(exc.differences) and row["step_count"] == len(exc.trace)
    decoded = decode_counterexample(row)
    assert decoded.actions == tuple(exc.trace)
    assert decoded.subject.implementation == "corpus_support:ExpandsOutOfSyncFollowers"
    again = replay_row(row)
    assert again.kind == "divergence" and again.failed_at == row["step_count"] and again.report() == str(exc)
    assert state_to_json(again.state) == row["final_state_json"]
    assert not replay(decoded.actions, Subject.at(decoded.config)).failed
