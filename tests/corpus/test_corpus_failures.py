"""What a failing run's exception becomes in the corpus: the rows of the lockstep
``Verdict`` it carries — one per failing property, a SUT refusing an action the
model takes (a divergence), any other exception inside the machine (a harness
error, with the step being applied) — exception groups flattened; and the
signature rule that deduplicates them."""

from __future__ import annotations

import json

import pytest
from hypothesis.stateful import run_state_machine_as_test

import attrs

import check.lockstep
from check.failures import PropertyViolated, SutDiverged, findings_of
from check.finding import Search
from check.machine import machine_for
from check.replay import replay
from check.subject import Subject
from check.signature import normalize, signature
from store.decode import decode_counterexample
from store.rows import counterexample_rows
from model import Produce
from properties import Violation

from corpus_support import FIND, HWM_CONFIG, HWM_TRACE


def rows(exc, subject=Subject()):
    return counterexample_rows(findings_of(exc, subject, Search("t")), run_id="r", worker="main")


def test_one_row_per_failing_property():
    result = replay(HWM_TRACE, Subject.at(HWM_CONFIG))
    extra = Violation("LogMatching", "replicas 1 and 2 differ at offset 0 below min(local HWM) = 1: …", (1, 2), (0, 1))
    verdict = result.verdict
    exc = PropertyViolated(attrs.evolve(verdict, violations=verdict.violations + (extra,),
                                        properties=verdict.properties + ("LogMatching",)))
    out = rows(exc)
    assert [r["property"] for r in out] == ["LeaderCandidateCompleteness", "LogMatching"]
    assert out[1]["violation"] == str(extra)
    assert len({r["counterexample_id"] for r in out}) == 2            # the property is part of the hash
    assert len({r["steps"][-1]["args_json"] for r in out}) == 1


def test_exception_groups_are_flattened():
    exc = replay(HWM_TRACE, Subject.at(HWM_CONFIG)).exception()
    group = ExceptionGroup("two bugs", [exc, ExceptionGroup("nested", [exc])])
    assert [f.prop for f in findings_of(group)] == ["LeaderCandidateCompleteness"] * 2


def test_an_exception_without_a_verdict_is_not_a_counterexample():
    assert findings_of(RuntimeError("health check")) == ()


def find(machine):
    with pytest.raises(Exception) as info:
        run_state_machine_as_test(machine, settings=FIND)
    return info.value


def test_a_crash_in_the_model_is_a_harness_error_with_the_step_being_applied(monkeypatch):
    real_step = check.lockstep.step

    def crashing_step(state, action):
        if isinstance(action, Produce) and action.value == 3:
            raise ZeroDivisionError(f"model crashed on {action!r}")
        return real_step(state, action)

    monkeypatch.setattr(check.lockstep, "step", crashing_step)
    exc = find(machine_for(Subject(compare=False), name="Crashing"))
    (row,) = rows(exc)
    assert row["kind"] == "harness_error" and row["property"] == "HarnessError"
    assert row["violation"] == "ZeroDivisionError: model crashed on Produce(broker=1, value=3)"
    assert row["signature"] == "HarnessError|harness_error|ZeroDivisionError: model crashed on Produce(broker=N, value=N)"
    # the step being applied when the model crashed is the trace's last
    assert (row["steps"][-1]["action"], json.loads(row["steps"][-1]["args_json"])) == ("Produce", {"broker": 1, "value": 3})
    assert [s["action"] for s in row["steps"]].count("Produce") == 3


def test_the_sut_refusing_an_action_the_model_takes_is_a_divergence(monkeypatch):
    from sut import Cluster
    monkeypatch.setattr(Cluster, "_g_receive_fetch_request", lambda self, a: "refused by the test")
    exc = find(machine_for(Subject(compare=True), name="Refusing"))
    assert isinstance(exc, SutDiverged) and exc.verdict.kind == "divergence"
    (row,) = rows(exc)
    assert row["kind"] == "divergence" and row["property"] == "SutDiffersFromModel"
    assert row["violation"].startswith("the SUT refuses ReceiveFetchRequest(msg=")
    assert row["violation"].endswith(", which the model takes: refused by the test")
    assert row["signature"] == ("SutDiffersFromModel|divergence|the SUT refuses ReceiveFetchRequest: "
                                "refused by the test")
    assert row["steps"][-1]["action"] == "ReceiveFetchRequest"
    # and the replay sees the same refusal, with the same (monkeypatched) SUT
    d = decode_counterexample(row)
    result = replay(d.actions, d.subject)
    assert result.failed_at == row["step_count"] and result.divergence == (row["violation"],)


@pytest.mark.parametrize("a, b", [
    ("replica 2 is in the controller's ISR (ISR [1, 2], ELR []) but lacks committed offset 0 (LEO 0, True HWM 1)",
     "replica 4 is in the controller's ISR (ISR [4], ELR [1, 5]) but lacks committed offset 7 (LEO 3, True HWM 12)"),
    ("acknowledged write value 3 at offset 2 is on no replica (replica LEOs: 1=1, 2=0, 3=2)",
     "acknowledged write value 9 at offset 0 is on no replica (replica LEOs: 1=0, 2=0)"),
    ("leader 1 (leader epoch 3, LEO 2) lacks committed offset 1: its log has 1:2:5, the committed log 1:1:4 (True HWM 2)",
     "leader 3 (leader epoch 7, LEO 9) lacks committed offset 4: its log has 4:6:8, the committed log 4:5:7 (True HWM 5)"),
])
def test_signatures_normalize_ids_offsets_and_sets_away(a, b):
    assert signature("P", "property", a) == signature("P", "property", b)


@pytest.mark.parametrize("a, b", [
    ("replica 2 is in the controller's ISR (ISR [1, 2], ELR []) but lacks committed offset 0 (LEO 0, True HWM 1)",
     "replica 2 is in the controller's ELR (ISR [1], ELR [2]) but lacks committed offset 0 (LEO 0, True HWM 1)"),
    ("leader 1 (leader epoch 3, LEO 2) lacks committed offset 1: its log has no record, the committed log 1:1:4 (True HWM 2)",
     "leader 1 (leader epoch 3, LEO 2) lacks committed offset 1: its log has 1:2:5, the committed log 1:1:4 (True HWM 2)"),
])
def test_signatures_keep_the_shape_of_the_violation(a, b):
    assert signature("P", "property", a) != signature("P", "property", b)
    assert signature("P", "property", a) != signature("Q", "property", a)


def test_normalize_and_paths():
    assert normalize("ISR [1, 2] ELR [] LEOs: 1=3, 2=4") == "ISR […] ELR […] LEOs: N…"
    assert signature("SutDiffersFromModel", "divergence", "state.brokers[2].replica.followers[0][1].fetch_offset",
                     path=True) == "SutDiffersFromModel|divergence|state.brokers[N].replica.followers[N][N].fetch_offset"
