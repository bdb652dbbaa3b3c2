"""Tiny hand-made corpora for the spark_reports tests: rows as dicts with
defaults for every column, written with pyarrow in the hive layout of
``store.schema``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Iterable, Optional, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from store.schema import COUNTEREXAMPLE_SCHEMA, RUN_SCHEMA, SCHEMA_VERSION

FAMILY = {
    "StartBroker": "lifecycle", "UnfenceBroker": "lifecycle", "FenceBroker": "lifecycle",
    "ControlledShutdown": "lifecycle", "UncleanShutdown": "lifecycle", "Flush": "lifecycle",
    "ReplicateMetadata": "metadata", "SendFetch": "fetch", "ReceiveFetchRequest": "fetch",
    "ReceiveFetchResponse": "fetch", "ProposeIsrShrink": "isr", "ProposeIsrExpand": "isr",
    "ReceiveAlterPartition": "isr", "ReceiveAlterPartitionResponse": "isr", "Reassign": "reassignment",
    "CancelReassignment": "reassignment", "UncleanRecovery": "recovery", "UncleanLeaderElection": "recovery",
    "DropMessage": "network", "Produce": "client", "Consume": "client", "ListOffsets": "client",
}

T0 = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.timezone.utc)


def ts(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def steps(*actions: tuple) -> list[dict]:
    """``steps(("FenceBroker", {"broker": 1}), ("Produce", {"broker": 2, "value": 1}), "Consume")``."""
    out = []
    for i, a in enumerate(actions):
        name, args = (a, {}) if isinstance(a, str) else a
        out.append({"idx": i, "family": FAMILY[name], "action": name, "args_json": json.dumps(args)})
    return out


def counterexample(cid: str, signature: str = "sig", prop: str = "LogMatching", *, variants: Sequence[str] = (),
                   bugs: Sequence[str] = (), trace: Optional[list[dict]] = None, found_at: Optional[dt.datetime] = None,
                   step_count: Optional[int] = None, ttf: Optional[float] = 1.0, etf: Optional[int] = 10,
                   kind: str = "property", final_state: Optional[dict] = None, config: Optional[dict] = None,
                   run_id: str = "run1", version: int = SCHEMA_VERSION, violation: str = "") -> dict:
    trace = trace if trace is not None else steps("Produce", "Consume")
    config = config or {"brokers": [1, 2, 3], "assignment": [1, 2, 3], "min_isr": 2, "unclean_recovery": "none",
                        "unclean_leader_election": False, "variants": list(variants)}
    return {
        "schema_version": version, "counterexample_id": cid, "signature": signature, "property": prop,
        "kind": kind, "violation": violation or f"{prop} violated", "variants": list(variants),
        "sut_bugs": list(bugs), "brokers": len(config["brokers"]), "replication_factor": len(config["assignment"]),
        "min_isr": config["min_isr"], "unclean_recovery": config["unclean_recovery"],
        "unclean_leader_election": config["unclean_leader_election"], "config_json": json.dumps(config),
        "steps": trace, "step_count": len(trace) if step_count is None else step_count,
        "final_state_json": json.dumps(final_state or {}), "seed": None, "hypothesis_version": "6.100.0",
        "project_version": "0.1.0", "run_id": run_id, "worker": "gw0", "test_id": "tests/x.py::T",
        "found_at": found_at or T0, "time_to_failure_s": ttf, "examples_to_failure": etf,
    }


def run(run_id: str, *, variants: Sequence[str] = (), bugs: Sequence[str] = (), failed: bool = False,
        rules: Optional[dict] = None, actions: Optional[dict] = None, events: Optional[dict] = None,
        examples: int = 100, duration: float = 10.0, started: Optional[dt.datetime] = None,
        version: int = SCHEMA_VERSION) -> dict:
    actions = actions or {}
    if rules is None:
        rules = {}
        for a, n in actions.items():
            rules[FAMILY[a]] = rules.get(FAMILY[a], 0) + n
    return {
        "schema_version": version, "run_id": run_id, "test_id": "tests/x.py::T", "worker": "gw0",
        "profile": "dev", "variants": list(variants), "sut_bugs": list(bugs), "started_at": started or T0,
        "duration_s": duration, "examples": examples, "steps": sum(actions.values()), "failed": failed,
        "rule_counts": list(rules.items()), "action_counts": list(actions.items()),
        "event_counts": list((events or {}).items()),
    }


def write(root: Path, table: str, rows: Iterable[dict], run_date: str = "2026-01-05", name: str = "part-0.parquet",
          schema: pa.Schema = None) -> Path:
    schema = schema or (COUNTEREXAMPLE_SCHEMA if table == "counterexamples" else RUN_SCHEMA)
    d = root / table / f"run_date={run_date}"
    d.mkdir(parents=True, exist_ok=True)
    path = d / name
    pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), path)
    return path


def make_corpus(root: Path, counterexamples: Sequence[dict] = (), runs: Sequence[dict] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if counterexamples:
        write(root, "counterexamples", counterexamples)
    if runs:
        write(root, "runs", runs)
    return root
