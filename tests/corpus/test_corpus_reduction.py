"""Counterexamples are reduced before export (corpus schema version 2): the row is
the reduced counterexample, and the trace and configuration Hypothesis's
shrinking reported are kept beside it. Nothing is lost when reduction cannot run."""

from __future__ import annotations

import json

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sut import Bug

import check.refine
from campaign.record import run_machine
from campaign.regression import replay_row
from check.finding import Finding
from check.machine import machine_for
from check.refine import RefineWarning, reduced as reduce_finding, refine_all
from check.replay import replay
from check.scenarios import MINIMAL
from check.subject import Subject
from check.verdict import SUT_DIFFERS
from store.codec import config_from_json, counterexample_id, encode_steps
from store.reader import read_counterexamples
from store.rows import counterexample_rows
from store.schema import COUNTEREXAMPLE_SCHEMA
from store.writer import CorpusWriter
from model import (Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                   ReceiveFetchRequest, ReceiveFetchResponse, SendFetch, Variant)

from corpus_support import FIND, PRODUCE_CONFIG, PRODUCE_TRACE, findings_for, rows_for, write_corpus
from reduction_cases import BIG as BIG_CONFIG, BIG_TRACE

VARIANT = Variant.HWM_ADVANCES_BELOW_MIN_ISR
BIG = attrs.evolve(BIG_CONFIG, variants=frozenset({VARIANT}))


def failure_of(trace: tuple, config: Config, bugs: frozenset = frozenset()) -> Finding:
    (failure,) = findings_for(trace, config, bugs)
    return failure


def test_a_reduced_row_is_the_reduced_counterexample_with_the_shrunk_one_beside_it(tmp_path):
    scenario = MINIMAL[VARIANT]
    reduced = reduce_finding(failure_of(BIG_TRACE, BIG), 60.0)
    assert reduced.trace == scenario.actions and reduced.shrunk.trace == BIG_TRACE
    assert reduced.config == attrs.evolve(scenario.config, variants=frozenset({VARIANT}))
    assert reduced.shrunk.changes == ("without broker 5", "without broker 4", "without replica 3",
                                      'unclean recovery "none"', "no unclean leader election")
    write_corpus(tmp_path, counterexample_rows([reduced], run_id="r", worker="main"))
    (row,) = read_counterexamples(tmp_path).rows
    assert (row["step_count"], row["shrunk_step_count"]) == (3, 8)
    assert (row["brokers"], row["replication_factor"], row["min_isr"]) == (3, 2, 2)
    assert row["shrunk_steps"] == encode_steps(BIG_TRACE)
    assert config_from_json(row["shrunk_config_json"]) == BIG
    assert row["reduction"] == list(reduced.shrunk.changes)
    assert row["property"] == scenario.expected and row["schema_version"] == 4
    # The id, violation and final state are the reduced counterexample's: it replays.
    assert row["counterexample_id"] == counterexample_id(row["config_json"], row["steps"], row["property"])
    again = replay_row(row)
    assert again.property_names == (scenario.expected,) and len(again.trace) == 3
    assert "(ISR [1], ELR [2]) but lacks committed offset 0 (LEO 0, True HWM 1)" in row["violation"]
    assert len(json.loads(row["final_state_json"])["brokers"]) == 3


def test_a_divergence_is_reduced_and_stays_a_divergence():
    bugs = frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})
    # Steps the failure does not need, before the four that make it.
    padded = (Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
              ProposeIsrShrink(1, 2), ReceiveAlterPartition(3), ReceiveAlterPartitionResponse(4), Produce(1, 2))
    failure = failure_of(padded, PRODUCE_CONFIG, bugs)
    assert failure.kind == "divergence"
    reduced = reduce_finding(failure, 60.0)
    assert reduced.prop == SUT_DIFFERS and reduced.kind == "divergence" and reduced.subject.bugs == bugs
    assert len(reduced.trace) <= len(PRODUCE_TRACE) < len(padded) == len(reduced.shrunk.trace)
    assert replay(reduced.trace, Subject.at(reduced.config, bugs=bugs)).kind == "divergence"


def test_what_cannot_be_reduced_is_kept_as_it_was():
    failure = failure_of(BIG_TRACE, BIG)
    error = attrs.evolve(failure, verdict=attrs.evolve(failure.verdict, kind="harness_error",
                                                       properties=("HarnessError",)))
    assert reduce_finding(error, 5.0) is error
    # A trace that no longer fails the same way (here: not at all) is kept, not dropped.
    stale = attrs.evolve(failure, verdict=attrs.evolve(failure.verdict, trace=BIG_TRACE[:3]))
    assert reduce_finding(stale, 5.0) is stale
    # Reduced once is reduced: the shrunk trace is not overwritten.
    once = reduce_finding(failure, 60.0)
    assert reduce_finding(once, 60.0) is once
    with pytest.raises(ValueError, match="max_seconds"):
        reduce_finding(failure, 0)


def test_a_fault_of_reduction_costs_nothing_but_a_warning(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(check.refine, "reduce_counterexample", broken)
    failure = failure_of(BIG_TRACE, BIG)
    with pytest.warns(RefineWarning, match="reduction of a LeaderCandidateCompleteness counterexample failed "
                                           r"\(RuntimeError: boom\); it is kept as the search found it"):
        assert reduce_finding(failure, 5.0) is failure


def test_rows_without_reduction_and_version_1_files_read_with_null_reduction_columns(tmp_path):
    (row,) = rows_for(BIG_TRACE, BIG)
    assert row["shrunk_steps"] is None and row["shrunk_step_count"] is None
    assert row["shrunk_config_json"] is None and row["reduction"] is None
    # A version 1 file: the columns before version 2 only.
    path = write_corpus(tmp_path, [row])
    v1_columns = [f.name for f in COUNTEREXAMPLE_SCHEMA][:COUNTEREXAMPLE_SCHEMA.get_field_index("shrunk_steps")]
    table = pq.read_table(path).select(v1_columns)
    table = table.set_column(0, COUNTEREXAMPLE_SCHEMA.field("schema_version"), pa.array([1], pa.int32()))
    pq.write_table(table.replace_schema_metadata({b"replicheck.schema_version": b"1"}), path)
    read = read_counterexamples(tmp_path)
    assert not read.problems
    (back,) = read.rows
    assert back["counterexample_id"] == row["counterexample_id"] and back["shrunk_steps"] is None
    assert back["reduction"] is None and back["step_count"] == len(BIG_TRACE) and back["schema_version"] == 1


def test_a_machine_run_exports_its_failure_reduced(tmp_path):
    machine = machine_for(Subject(variants=frozenset({VARIANT})), name="ReducedExport")
    writer = CorpusWriter(tmp_path, run_id="r1")
    with pytest.raises(Exception):
        run_machine(machine, FIND, writer=writer, test_id="t", reduce_s=30.0)
    writer.flush()
    rows = read_counterexamples(tmp_path).rows
    assert rows and all(r["shrunk_steps"] is not None for r in rows)
    for r in rows:
        assert r["step_count"] <= r["shrunk_step_count"] == len(r["shrunk_steps"])
        assert r["property"] in replay_row(r).property_names
    # FIND does not shrink: the steps as generated come down to a handful (the exact
    # numbers depend on Hypothesis's stream; reduction's own results are pinned on
    # fixed traces above).
    assert all(r["step_count"] <= min(12, r["shrunk_step_count"]) for r in rows)


def test_the_findings_of_one_failure_share_its_reduction_time(monkeypatch):
    """A failure of several properties is reduced within ``reduce_s`` in all: each
    finding gets an even part of what is left."""
    import time
    given: list[float] = []

    def refine(f, max_seconds):
        given.append(max_seconds)
        time.sleep(max_seconds / 2)   # uses half of its part
        return f
    monkeypatch.setattr(check.refine, "refine", refine)
    assert refine_all(["p1", "p2", "p3"], reduce_s=0.6) == ("p1", "p2", "p3")
    # 0.6 / 3; then the 0.5 s the first left, shared by two; then the rest.
    assert given == [pytest.approx(0.2, abs=0.03), pytest.approx(0.25, abs=0.03), pytest.approx(0.375, abs=0.04)]
