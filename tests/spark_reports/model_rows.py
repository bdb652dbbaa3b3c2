"""Corpus rows from real model runs, made by the harness's own row writer
(``harness.corpus.counterexample_rows``: the final state and steps serialized
exactly as a fuzz run stores them). Tests only: spark_reports itself never
imports the model or the harness beyond ``harness.schema``."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from typing import Any

import attrs


def to_jsonable(obj: Any) -> Any:
    from harness.trace_codec import to_jsonable as codec
    return codec(obj)


def action_args(action: Any) -> dict:
    from harness.trace_codec import action_args as codec
    return codec(action)


def scenario_row(variant_name: str, found_at: dt.datetime, cid: str = "", run_id: str = "run1"):
    """``(row, final state, scenario)`` for ``MINIMAL[Variant[variant_name]]`` run
    under the variant: one ``counterexamples`` row of its first violation (its
    expected property). ``cid`` replaces the content-hash id when given."""
    import properties
    from harness.corpus import CorpusWarning, Failure, counterexample_rows
    from harness.minimal_scenarios import MINIMAL
    from harness.timeline import model_timeline
    from harness.trace_codec import encode_timeline
    from model import Variant, initial_state, step

    v = Variant[variant_name]
    sc = MINIMAL[v]
    config = attrs.evolve(sc.config, variants=frozenset({v}))
    state = initial_state(config)
    for a in sc.actions:
        state = step(state, a)
    violations = properties.check_all(state)
    first = next((x for x in violations if x.property == sc.expected), violations[0] if violations else None)
    text = str(first) if first is not None else sc.story
    failure = Failure(prop=first.property if first is not None else sc.expected, kind="property", violation=text,
                      template=text, config=config, trace=tuple(sc.actions), state=state)
    with warnings.catch_warnings():  # the timeline replay stops at the story's first violation: replaced below
        warnings.simplefilter("ignore", CorpusWarning)
        [row] = counterexample_rows([failure], run_id=run_id, worker="gw0", test_id="tests/spark_reports::minimal",
                                    time_to_failure_s=1.0 + len(sc.actions), examples_to_failure=10,
                                    found_at=found_at)
    # The story's own timeline: its minimal scenario may go on past its first violation.
    row["timeline"] = encode_timeline(model_timeline(config, sc.actions))
    if cid:
        row["counterexample_id"] = cid
    json.loads(row["final_state_json"])
    return row, state, sc
