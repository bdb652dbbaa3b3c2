"""The corpus files' columns and types are pinned: written files carry exactly
harness/schema.py's schemas (names, types, nullability, order), tagged with the
schema version, and this test pins that schema itself — a change to it must be
deliberate (additive, with a new SCHEMA_VERSION)."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.parquet as pq
from sut import Bug

from store import schema
from check.statistics import RunObserver
from store.schema import VERSION_KEY
from store.writer import CorpusWriter
from check.machine import machine_for
from check.subject import Subject

from corpus_support import HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, rows_for

STEP = "struct<idx: int32 not null, family: string not null, action: string not null, args_json: string not null>"
SENT = "struct<id: int64 not null, type: string not null, src: int32, dst: int32, error: string>"
BROKER = ("struct<broker: int32 not null, status: string not null, fenced: bool not null, role: string, "
          "leader_epoch: int32, leo: int64, hwm: int64, flushed: int64>")
TIMELINE_STEP = (f"struct<idx: int32 not null, received: int64, sent: list<item: {SENT}> not null, "
                 f"outcome_json: string not null, leader: int32 not null, leader_epoch: int32 not null, "
                 f"partition_epoch: int32 not null, isr: list<item: int32> not null, "
                 f"elr: list<item: int32> not null, brokers: list<item: {BROKER}> not null>")

PINNED_COUNTEREXAMPLES = [
    ("schema_version", "int32", False), ("counterexample_id", "string", False), ("signature", "string", False),
    ("property", "string", False), ("kind", "string", False), ("violation", "string", False),
    ("variants", "list<item: string>", False), ("sut_bugs", "list<item: string>", False),
    ("brokers", "int32", False), ("replication_factor", "int32", False), ("min_isr", "int32", False),
    ("unclean_recovery", "string", False), ("unclean_leader_election", "bool", False),
    ("config_json", "string", False), ("steps", f"list<item: {STEP}>", False), ("step_count", "int32", False),
    ("final_state_json", "string", False), ("seed", "string", True), ("hypothesis_version", "string", False),
    ("project_version", "string", False), ("run_id", "string", False), ("worker", "string", False),
    ("test_id", "string", False), ("found_at", "timestamp[us, tz=UTC]", False),
    ("time_to_failure_s", "double", True), ("examples_to_failure", "int64", True),
    # version 2
    ("shrunk_steps", f"list<item: {STEP}>", True), ("shrunk_step_count", "int32", True),
    ("shrunk_config_json", "string", True), ("reduction", "list<item: string>", True),
    # version 3
    ("timeline", f"list<item: {TIMELINE_STEP}>", True),
    # version 4
    ("implementation", "string", True),
]
PINNED_RUNS = [
    ("schema_version", "int32", False), ("run_id", "string", False), ("test_id", "string", False),
    ("worker", "string", False), ("profile", "string", False), ("variants", "list<item: string>", False),
    ("sut_bugs", "list<item: string>", False), ("started_at", "timestamp[us, tz=UTC]", False),
    ("duration_s", "double", False), ("examples", "int64", False), ("steps", "int64", False),
    ("failed", "bool", False), ("rule_counts", "map<string, int64>", False),
    ("action_counts", "map<string, int64>", False), ("event_counts", "map<string, int64>", False),
]


def columns(s: pa.Schema) -> list[tuple[str, str, bool]]:
    return [(f.name, str(f.type), f.nullable) for f in s]


def test_the_schema_module_is_the_pinned_schema():
    assert schema.SCHEMA_VERSION == 4
    assert columns(schema.COUNTEREXAMPLE_SCHEMA) == PINNED_COUNTEREXAMPLES
    assert columns(schema.RUN_SCHEMA) == PINNED_RUNS
    assert set(schema.SCHEMAS) == {"counterexamples", "runs"}
    assert schema.PARTITION_COLUMN == "run_date"


def test_written_files_have_exactly_the_schema_columns_and_types(tmp_path):
    writer = CorpusWriter(tmp_path, run_id="r1", worker="gw3")
    writer.add_counterexamples(rows_for(HWM_TRACE, HWM_CONFIG))
    writer.add_counterexamples(rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})))
    cls = machine_for(Subject(compare=False), name="SchemaProbe")
    run = RunObserver(cls, test_id="tests/x.py::SchemaProbe")
    with run:
        pass
    writer.record(run.record())
    paths = writer.flush()
    assert len(paths) == 2
    by_table = {p.parent.parent.name: p for p in paths}
    assert set(by_table) == {"counterexamples", "runs"}
    for table, path in by_table.items():
        assert re.fullmatch(r"run_date=\d{4}-\d{2}-\d{2}", path.parent.name)
        assert path.name == "part-r1-gw3-0000.parquet"
        file_schema = pq.read_schema(path)
        expected = schema.SCHEMAS[table]
        # Same names, order, nullability and types (no run_date: it is the partition).
        # Types compare with ==, which ignores the names Parquet gives nested fields
        # ("element" for list items, the column name for map entries).
        assert [(f.name, f.nullable) for f in file_schema] == [(f.name, f.nullable) for f in expected]
        assert [f.type for f in file_schema] == [f.type for f in expected]
        assert file_schema.metadata[VERSION_KEY] == b"4"
        t = pq.read_table(path)
        assert t.schema.equals(schema.SCHEMAS[table])
        assert set(t.column("schema_version").to_pylist()) == {4}


def test_steps_are_structs_with_args_as_json(tmp_path):
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    assert row["steps"][1] == {"idx": 1, "family": "isr", "action": "ProposeIsrShrink",
                               "args_json": '{"follower":2,"leader":1}'}
    assert row["variants"] == ["HWM_ADVANCES_BELOW_MIN_ISR"] and row["sut_bugs"] == []
    assert (row["brokers"], row["replication_factor"], row["min_isr"]) == (3, 2, 2)
    assert row["step_count"] == 4 and row["kind"] == "property"
    assert re.fullmatch(r"[0-9a-f]{64}", row["counterexample_id"])


def test_a_row_counts_for_its_flaws_else_the_target_its_campaign_test_id_names():
    """The label every reader gives a row's target (the report, ``replay --list``,
    ``pytest --replay-corpus``): a profile's and an implementation's campaign rows
    hold no variant and no bug, and are not the correct protocol's."""
    assert schema.row_target(["NO_ELR"], ["PRODUCE_IGNORES_MIN_ISR"], "campaign[variant:NO_ELR]") == \
        "NO_ELR+PRODUCE_IGNORES_MIN_ISR"
    assert schema.row_target([], [], schema.campaign_test_id("profile:kafka-4.4.0"), sep=", ") == \
        "profile:kafka-4.4.0"
    assert schema.row_target([], [], "campaign[implementation:kafka@4.3.1]") == "implementation:kafka@4.3.1"
    assert [schema.row_target([], [], t) for t in ("campaign[correct]", "tests/x.py::T", None)] == ["correct"] * 3
