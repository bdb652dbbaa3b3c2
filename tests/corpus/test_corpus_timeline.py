"""The ``timeline`` column (schema version 3): each step of a row as replay
observed it — the message ids it took and sent, its outcome, the partition and
brokers after it — from the implementation under test where it took the step."""

from __future__ import annotations

import json

import pytest
from sut import Bug

import attrs

from check.finding import Finding
from check.refine import RefineWarning, with_timeline
from check.replay import replay
from check.subject import Subject
from check.timeline import model_timeline
from model import Flush
from store.codec import encode_timeline
from store.rows import counterexample_rows

from corpus_support import HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, rows_for


def test_message_ids_outcomes_and_brokers_of_each_step():
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    tl = row["timeline"]
    assert [t["idx"] for t in tl] == [0, 1, 2, 3]
    # Produce; the shrink proposal (AlterPartition 1); the controller's answer (2); applied by the leader
    assert [(t["received"], [(m["id"], m["type"], m["src"], m["dst"], m["error"]) for m in t["sent"]])
            for t in tl] == [(None, []), (None, [(1, "AlterPartitionRequest", 1, None, None)]),
                             (1, [(2, "AlterPartitionResponse", None, 1, None)]), (2, [])]
    outcomes = [json.loads(t["outcome_json"]) for t in tl]
    assert outcomes[0]["appended"] == [[1, 0]] and outcomes[3]["acknowledged"] == [[1, 0]]
    assert [(t["partition_epoch"], t["isr"], t["elr"]) for t in tl] == [(1, [1, 2], []), (1, [1, 2], []),
                                                                         (2, [1], [2]), (2, [1], [2])]
    assert [[(b["broker"], b["role"], b["leo"], b["hwm"]) for b in t["brokers"]][0] for t in tl] == [
        (1, "LEADER", 1, 0), (1, "LEADER", 1, 0), (1, "LEADER", 1, 0), (1, "LEADER", 1, 1)]


def test_the_failing_step_shows_what_the_implementation_did():
    """PRODUCE_IGNORES_MIN_ISR: the SUT appends the write the model refuses; the
    timeline's last step is the SUT's (appended, LEO 1), not the model's (failed, LEO 0)."""
    (row,) = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    last = row["timeline"][-1]
    assert json.loads(last["outcome_json"])["appended"] == [[1, 0]]
    assert json.loads(last["outcome_json"])["failed"] == []
    assert last["brokers"][0]["leo"] == 1
    model_last = encode_timeline(model_timeline(PRODUCE_CONFIG, PRODUCE_TRACE))[-1]
    assert json.loads(model_last["outcome_json"])["failed"] == [1] and model_last["brokers"][0]["leo"] == 0


def test_a_model_only_replay_records_the_model():
    assert replay(HWM_TRACE, Subject.at(HWM_CONFIG), timeline=True).timeline == model_timeline(HWM_CONFIG, HWM_TRACE)
    assert replay(HWM_TRACE, Subject.at(HWM_CONFIG)).timeline == ()


def test_a_row_whose_trace_does_not_replay_to_its_end_is_written_without_a_timeline():
    """A trace that fails before its last step (here: one step past the failure)
    has no timeline of every step: the row is kept, its timeline null, with a warning."""
    result = replay(HWM_TRACE, Subject.at(HWM_CONFIG))
    f = Finding(attrs.evolve(result.verdict, trace=HWM_TRACE + (Flush(1),)), result.subject)
    with pytest.warns(RefineWarning, match="stopped at step 4 of 5"):
        assert with_timeline(f).timeline is None
    (row,) = counterexample_rows([f], run_id="r", worker="main")
    assert row["timeline"] is None and row["step_count"] == 5
