"""Corpus rows from real model runs (tests only: spark_reports itself never
imports the model): the minimal counterexample of a protocol variant, run with
the model, serialized as the harness would (attrs values as dicts, enums by
name, sets as sorted lists)."""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
from typing import Any

import attrs

from corpus_factory import counterexample


def to_jsonable(obj: Any) -> Any:
    if attrs.has(type(obj)):
        out = {f.name: to_jsonable(getattr(obj, f.name)) for f in attrs.fields(type(obj))}
        return out
    if isinstance(obj, enum.Enum):
        return obj.name
    if isinstance(obj, (frozenset, set)):
        return sorted(to_jsonable(x) for x in obj)
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(x) for x in obj]
    return obj


def action_args(action: Any) -> dict:
    return {f.name: to_jsonable(getattr(action, f.name)) for f in attrs.fields(type(action))}


def scenario_row(variant_name: str, found_at: dt.datetime, cid: str = "") -> dict:
    """A counterexample row for ``MINIMAL[Variant[variant_name]]`` run under the variant."""
    import properties
    from harness.minimal_scenarios import MINIMAL
    from model import Variant, family_of, initial_state, step

    v = Variant[variant_name]
    sc = MINIMAL[v]
    config = attrs.evolve(sc.config, variants=frozenset({v}))
    state = initial_state(config)
    trace = []
    for i, a in enumerate(sc.actions):
        state = step(state, a)
        trace.append({"idx": i, "family": family_of(a), "action": type(a).__name__,
                      "args_json": json.dumps(action_args(a))})
    violations = properties.check_all(state)
    prop = violations[0].property if violations and hasattr(violations[0], "property") else sc.expected
    cfg = to_jsonable(config)
    row = counterexample(
        cid or hashlib.sha256(f"{variant_name}".encode()).hexdigest()[:16], f"{sc.expected}:{variant_name}",
        sc.expected, variants=[variant_name], trace=trace, found_at=found_at, config=cfg,
        final_state=to_jsonable(state), violation=" | ".join(str(x) for x in violations) or sc.story)
    row["final_state_json"] = json.dumps(to_jsonable(state))
    return row, state, sc
