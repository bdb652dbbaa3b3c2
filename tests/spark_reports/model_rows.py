"""Corpus rows from real model runs, made by the harness's own row writer
(``store.rows.counterexample_rows``: the final state and steps serialized
exactly as a fuzz run stores them). Tests only: spark_reports itself never
imports the model or the harness beyond ``store.schema``."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import attrs


def to_jsonable(obj: Any) -> Any:
    from store.codec import to_jsonable as codec
    return codec(obj)


def action_args(action: Any) -> dict:
    from store.codec import action_args as codec
    return codec(action)


def scenario_row(variant_name: str, found_at: dt.datetime, cid: str = "", run_id: str = "run1"):
    """``(row, final state, scenario)`` for ``MINIMAL[Variant[variant_name]]`` run
    under the variant: one ``counterexamples`` row of its first violation (its
    expected property). ``cid`` replaces the content-hash id when given."""
    import properties
    from check.finding import Finding, Search
    from check.scenarios import MINIMAL
    from check.subject import Subject
    from check.timeline import model_timeline
    from check.verdict import Verdict
    from model import Heal, Variant, initial_state
    from model.healing import apply
    from properties.liveness import check_liveness
    from store.rows import counterexample_rows

    v = Variant[variant_name]
    sc = MINIMAL[v]
    config = attrs.evolve(sc.config, variants=frozenset({v}))
    state = initial_state(config)
    for a in sc.actions:
        state = apply(state, a)
    # a liveness-only variant's story ends in a healing phase, its goals judged after it
    heals = isinstance(sc.actions[-1], Heal)
    violations = properties.check_all(state) + (check_liveness(state) if heals else ())
    first = next((x for x in violations if x.property == sc.expected), violations[0] if violations else None)
    text = str(first) if first is not None else sc.story
    verdict = Verdict("liveness" if heals else "property", (first.property if first is not None else sc.expected,),
                      text, text, state, tuple(sc.actions), violations=(first,) if first is not None else ())
    # The story's own timeline: its minimal scenario may go on past its first violation.
    finding = Finding(verdict, Subject.at(config),
                      Search("tests/spark_reports::minimal", None, 10, 1.0 + len(sc.actions)),
                      timeline=model_timeline(config, sc.actions))
    [row] = counterexample_rows([finding], run_id=run_id, worker="gw0", found_at=found_at)
    if cid:
        row["counterexample_id"] = cid
    json.loads(row["final_state_json"])
    return row, state, sc
