"""Rows of the corpus's two tables (``store.schema``), from the check's values:
``counterexample_rows`` from findings (``check.finding.Finding``), ``run_row``
from a run's record (``check.statistics.RunRecord``).

One ``counterexamples`` row per finding; its id and signature follow
``store.codec``; a reduced finding fills the ``shrunk_*`` and ``reduction``
columns, and a finding with a timeline the ``timeline`` column; ``seed``,
``test_id``, ``examples_to_failure`` and ``time_to_failure_s`` are the
finding's search. One ``runs`` row per machine run (``rule_counts`` = family
counts).
"""

from __future__ import annotations

import datetime as _dt
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Optional, Sequence

import hypothesis

from check.finding import Finding, RunRecord

from .codec import config_to_json, counterexample_id, encode_steps, encode_timeline, names, state_to_json
from .schema import SCHEMA_VERSION


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def project_version() -> str:
    """The installed replicheck's version ("unknown" when it is not installed)."""
    try:
        return version("replicheck")
    except PackageNotFoundError:
        return "unknown"


def counterexample_rows(found: Sequence[Finding], *, run_id: str, worker: str,
                        found_at: Optional[_dt.datetime] = None) -> list[dict[str, Any]]:
    """``counterexamples`` rows (dicts in schema order), one per finding."""
    found_at = found_at or utcnow()
    return [_row(f, run_id, worker, found_at) for f in found]


def _row(f: Finding, run_id: str, worker: str, found_at: _dt.datetime) -> dict[str, Any]:
    config_json = config_to_json(f.config)
    steps = encode_steps(f.trace)
    bug_names = names(f.subject.bugs)
    shrunk = None if f.shrunk is None else encode_steps(f.shrunk.trace)
    return {
        "schema_version": SCHEMA_VERSION,
        "counterexample_id": counterexample_id(config_json, steps, f.prop, bug_names),
        "signature": f.signature,
        "property": f.prop,
        "kind": f.kind,
        "violation": f.violation,
        "variants": names(f.config.variants),
        "sut_bugs": bug_names,
        "brokers": len(f.config.brokers),
        "replication_factor": f.config.replication_factor,
        "min_isr": f.config.min_isr,
        "unclean_recovery": f.config.unclean_recovery,
        "unclean_leader_election": f.config.unclean_leader_election,
        "config_json": config_json,
        "steps": steps,
        "step_count": len(steps),
        "final_state_json": state_to_json(f.state),
        "seed": f.search.seed,
        "hypothesis_version": hypothesis.__version__,
        "project_version": project_version(),
        "run_id": run_id,
        "worker": worker,
        "test_id": f.search.test_id or "",
        "found_at": found_at,
        "time_to_failure_s": f.search.time_to_failure_s,
        "examples_to_failure": f.search.examples_to_failure,
        "shrunk_steps": shrunk,
        "shrunk_step_count": None if shrunk is None else len(shrunk),
        "shrunk_config_json": None if f.shrunk is None else config_to_json(f.shrunk.config),
        "reduction": None if f.shrunk is None else list(f.shrunk.changes),
        "timeline": None if f.timeline is None else encode_timeline(f.timeline),
        "implementation": f.subject.implementation_name,
    }


def run_row(run: RunRecord, run_id: str, worker: str) -> dict[str, Any]:
    """The ``runs`` row of a run."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "test_id": run.test_id,
        "worker": worker,
        "profile": run.profile,
        "variants": names(run.subject.variants),
        "sut_bugs": names(run.subject.bugs),
        "started_at": run.started_at,
        "duration_s": float(run.duration_s),
        "examples": int(run.examples),
        "steps": int(run.steps),
        "failed": run.failed,
        "rule_counts": sorted(run.family_counts.items()),
        "action_counts": sorted(run.action_counts.items()),
        "event_counts": sorted(run.event_counts.items()),
    }
