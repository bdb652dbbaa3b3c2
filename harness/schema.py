"""The counterexample corpus schema (Parquet, hive-partitioned by ``run_date``).

This module depends on pyarrow and the model's action registry only
(``model.actions``, data), so readers (``spark_reports``) take the schema and the
action vocabulary from here and need nothing else of the model or the harness.
Changes are additive only: a new column gets a new
``SCHEMA_VERSION``; readers accept every version up to theirs and refuse newer
files with a clear error.

Versions: 1, the first; 2 adds ``shrunk_steps``, ``shrunk_step_count``,
``shrunk_config_json`` and ``reduction`` (a row whose trace was reduced after
Hypothesis's shrinking keeps the shrunk trace beside it; null in version 1 rows
and in rows that were not reduced); 3 adds ``timeline`` (what each step visibly
did as replay observed it, ``harness.timeline``; null in older rows); 4 adds
``implementation`` (the implementation under test a row was found with, by
``harness.implementations`` name; null: the bundled SUT, as in every older row).

Layout under a corpus directory::

    counterexamples/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet
    runs/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet
"""

from __future__ import annotations

import pyarrow as pa

from model.actions import ACTIONS

SCHEMA_VERSION = 4

#: Action class name -> family (``model.ActionKind.family``): the reports' action
#: vocabulary, the lift baseline of actions that never occur in a failing trace.
ACTION_FAMILIES: dict[str, str] = {k.name: k.family for k in ACTIONS}

COUNTEREXAMPLES = "counterexamples"
RUNS = "runs"
PARTITION_COLUMN = "run_date"


def campaign_test_id(label: str) -> str:
    """The ``test_id`` of a fuzz campaign target's rows (both tables): ``campaign[LABEL]``,
    LABEL being ``correct``, ``variant:NAME``, ``bug:NAME`` or ``implementation:NAME``."""
    return f"campaign[{label}]"

#: One step of a trace: its index (0-based), action family, action class name and
#: the action's fields as JSON (e.g. ``{"broker": 2}``).
STEP = pa.struct([
    pa.field("idx", pa.int32(), nullable=False),
    pa.field("family", pa.string(), nullable=False),
    pa.field("action", pa.string(), nullable=False),
    pa.field("args_json", pa.string(), nullable=False),
])

#: A message a step sent (``harness.timeline.SentMessage``): id (the network's
#: numbering), type (``FetchRequest``, ``FetchResponse``, ``AlterPartitionRequest``,
#: ``AlterPartitionResponse``), source and destination broker (null: the
#: controller), error code (null: none).
SENT_MESSAGE = pa.struct([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("type", pa.string(), nullable=False),
    pa.field("src", pa.int32(), nullable=True),
    pa.field("dst", pa.int32(), nullable=True),
    pa.field("error", pa.string(), nullable=True),
])

#: One broker after a step (``harness.timeline.BrokerMoment``): status
#: (``BrokerStatus`` name), fenced by the controller, its replica's role (null: no
#: replica), leader epoch, LEO, HWM and flushed offset (exclusive ends).
BROKER_MOMENT = pa.struct([
    pa.field("broker", pa.int32(), nullable=False),
    pa.field("status", pa.string(), nullable=False),
    pa.field("fenced", pa.bool_(), nullable=False),
    pa.field("role", pa.string(), nullable=True),
    pa.field("leader_epoch", pa.int32(), nullable=True),
    pa.field("leo", pa.int64(), nullable=True),
    pa.field("hwm", pa.int64(), nullable=True),
    pa.field("flushed", pa.int64(), nullable=True),
])

#: What one step visibly did (``harness.timeline.Moment``): the id of the message
#: it delivered or dropped (null: none), the messages it sent, its outcome as JSON
#: (``appended`` and ``acknowledged`` ``[value, offset]`` pairs, ``failed`` values,
#: ``consumed`` records, the ``list_offsets`` answer), and the partition
#: registration and brokers after it (leader -1: none).
TIMELINE_STEP = pa.struct([
    pa.field("idx", pa.int32(), nullable=False),
    pa.field("received", pa.int64(), nullable=True),
    pa.field("sent", pa.list_(SENT_MESSAGE), nullable=False),
    pa.field("outcome_json", pa.string(), nullable=False),
    pa.field("leader", pa.int32(), nullable=False),
    pa.field("leader_epoch", pa.int32(), nullable=False),
    pa.field("partition_epoch", pa.int32(), nullable=False),
    pa.field("isr", pa.list_(pa.int32()), nullable=False),
    pa.field("elr", pa.list_(pa.int32()), nullable=False),
    pa.field("brokers", pa.list_(BROKER_MOMENT), nullable=False),
])

COUNTEREXAMPLE_SCHEMA = pa.schema([
    pa.field("schema_version", pa.int32(), nullable=False),
    pa.field("counterexample_id", pa.string(), nullable=False),   # content hash of config + trace + failure
    pa.field("signature", pa.string(), nullable=False),           # dedup key: property + violation kind, ids/offsets normalized
    pa.field("property", pa.string(), nullable=False),            # property name, "SutDiffersFromModel" or "HarnessError"
    pa.field("kind", pa.string(), nullable=False),                # "property" | "divergence" | "harness_error"
    pa.field("violation", pa.string(), nullable=False),           # the violation text as reported
    pa.field("variants", pa.list_(pa.string()), nullable=False),
    pa.field("sut_bugs", pa.list_(pa.string()), nullable=False),
    pa.field("brokers", pa.int32(), nullable=False),
    pa.field("replication_factor", pa.int32(), nullable=False),
    pa.field("min_isr", pa.int32(), nullable=False),
    pa.field("unclean_recovery", pa.string(), nullable=False),
    pa.field("unclean_leader_election", pa.bool_(), nullable=False),
    pa.field("config_json", pa.string(), nullable=False),         # the full model.Config, for replay
    pa.field("steps", pa.list_(STEP), nullable=False),
    pa.field("step_count", pa.int32(), nullable=False),
    pa.field("final_state_json", pa.string(), nullable=False),
    pa.field("seed", pa.string(), nullable=True),                 # Hypothesis seed, when known
    pa.field("hypothesis_version", pa.string(), nullable=False),
    pa.field("project_version", pa.string(), nullable=False),
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("worker", pa.string(), nullable=False),
    pa.field("test_id", pa.string(), nullable=False),
    pa.field("found_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("time_to_failure_s", pa.float64(), nullable=True),   # run start → first failure
    pa.field("examples_to_failure", pa.int64(), nullable=True),   # examples run when the first failure was found, it included
    # Version 2. ``steps``/``config_json`` above are then the reduced counterexample
    # (harness.reduce); these keep what Hypothesis's shrinking reported. Null: not reduced.
    pa.field("shrunk_steps", pa.list_(STEP), nullable=True),
    pa.field("shrunk_step_count", pa.int32(), nullable=True),
    pa.field("shrunk_config_json", pa.string(), nullable=True),   # the run's configuration
    pa.field("reduction", pa.list_(pa.string()), nullable=True),  # the configuration's simplifications, in order
    # Version 3: one entry per step of ``steps`` as replay observed it (null: not recorded).
    pa.field("timeline", pa.list_(TIMELINE_STEP), nullable=True),
    # Version 4: "kafka", "module:qualname", or null for the bundled SUT (harness.implementations).
    pa.field("implementation", pa.string(), nullable=True),
])

RUN_SCHEMA = pa.schema([
    pa.field("schema_version", pa.int32(), nullable=False),
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("test_id", pa.string(), nullable=False),
    pa.field("worker", pa.string(), nullable=False),
    pa.field("profile", pa.string(), nullable=False),
    pa.field("variants", pa.list_(pa.string()), nullable=False),
    pa.field("sut_bugs", pa.list_(pa.string()), nullable=False),
    pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("duration_s", pa.float64(), nullable=False),
    pa.field("examples", pa.int64(), nullable=False),
    pa.field("steps", pa.int64(), nullable=False),
    pa.field("failed", pa.bool_(), nullable=False),
    pa.field("rule_counts", pa.map_(pa.string(), pa.int64()), nullable=False),   # steps per action family
    pa.field("action_counts", pa.map_(pa.string(), pa.int64()), nullable=False),  # steps per action class
    pa.field("event_counts", pa.map_(pa.string(), pa.int64()), nullable=False),  # protocol coverage events
])

SCHEMAS = {COUNTEREXAMPLES: COUNTEREXAMPLE_SCHEMA, RUNS: RUN_SCHEMA}
