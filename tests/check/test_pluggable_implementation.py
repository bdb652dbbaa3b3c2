"""Any implementation of the interface of ``check.lockstep`` can be put under test,
not only the bundled SUT: these two are written against the interface alone
(``apply`` returning the ``model.Outcome``, ``is_enabled``, ``observe``), with the
bundled SUT behind them as their engine.

``Faithful`` passes every check; ``LateAcks`` acknowledges each write one action
late — the same broker state, the same messages, only a produce response held
back — and the lockstep check catches it on the outcome."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import json

from campaign.regression import replay_row
from check.failures import SutDiverged
from check.finding import Finding, findings
from check.implementations import factory
from check.machine import machine_for
from check.refine import refine
from check.replay import replay
from check.subject import Subject
from store.codec import TraceDecodeError
from store.decode import decode_counterexample
from store.reader import read_counterexamples
from store.rows import counterexample_rows
from store.writer import CorpusWriter
from model import Produce

from late_acks import COMMIT_ONE, RF2, Faithful, LateAcks


SHORT = settings(max_examples=15, stateful_step_count=30, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])


def test_a_late_acknowledgement_is_an_outcome_divergence_at_the_step_it_belongs_to():
    result = replay(COMMIT_ONE, Subject.at(RF2, implementation=LateAcks))
    assert result.failed_at == 6 and result.verdict.kind == "outcome" and result.kind == "divergence"
    assert result.divergence == ("outcome.acknowledged: model=((1, 0),) sut=()",)
    assert replay(COMMIT_ONE, Subject.at(RF2, implementation=Faithful)).verdict is None


def test_the_machine_puts_another_implementation_under_test():
    run_state_machine_as_test(machine_for(Subject(implementation=Faithful), name="FaithfulMachine"), settings=SHORT)
    with pytest.raises(SutDiverged) as caught:
        run_state_machine_as_test(machine_for(Subject(implementation=LateAcks), name="LateAcksMachine"), settings=SHORT)
    assert caught.value.verdict.kind == "outcome"
    assert caught.value.verdict.template == "outcome.acknowledged"


def _late_acks_finding(subject: Subject = Subject.at(RF2, implementation=LateAcks)) -> Finding:
    [found] = findings(replay(COMMIT_ONE, Subject.at(RF2, implementation=LateAcks)).verdict, subject)
    return found


def test_a_counterexample_of_another_implementation_is_reduced_and_recorded_with_it():
    """The corpus row of a LateAcks divergence is reduced by replaying LateAcks (the
    bundled SUT does not diverge: reduced with it, nothing would reproduce) and its
    timeline is what LateAcks answered: the write appended, its acknowledgement
    held back, where the model acknowledges it."""
    reduced = refine(_late_acks_finding(), 20)
    assert reduced.trace == (Produce(1, 1),) and reduced.shrunk.changes == ("without replica 2",)
    [row] = counterexample_rows([reduced], run_id="r", worker="main")
    assert row["violation"] == "outcome.acknowledged: model=((1, 0),) sut=()"
    [only] = row["timeline"]
    assert json.loads(only["outcome_json"])["appended"] == [[1, 0]]
    assert json.loads(only["outcome_json"])["acknowledged"] == []
    assert [(b["broker"], b["leo"], b["hwm"]) for b in only["brokers"]] == [(1, 1, 1), (2, None, None), (3, None, None)]


def test_a_row_names_its_implementation_and_replays_with_it(tmp_path):
    """The row of a LateAcks divergence records ``module:qualname``; decoding it
    gives that name back, and the corpus's replay reproduces the divergence with
    it (with the bundled SUT it would pass)."""
    [row] = counterexample_rows([_late_acks_finding()], run_id="r", worker="main")
    assert row["implementation"] == f"{LateAcks.__module__}:LateAcks" == "late_acks:LateAcks"
    writer = CorpusWriter(tmp_path, run_id="r", worker="main")
    writer.add_counterexamples([row])
    writer.flush()
    [read] = read_counterexamples(tmp_path).rows
    assert decode_counterexample(read).subject.implementation == "late_acks:LateAcks"
    assert factory(decode_counterexample(read).subject) is LateAcks
    assert replay_row(read).verdict.template == "outcome.acknowledged"
    assert replay_row(read | {"implementation": None}).verdict is None


def test_an_implementation_that_cannot_be_loaded_is_named():
    [row] = counterexample_rows([_late_acks_finding(Subject.at(RF2))], run_id="r", worker="main")
    assert row["implementation"] is None
    with pytest.raises(ValueError, match=r"implementation 'nowhere:Gone' cannot be loaded .*allowed: null "
                                         r"\(the bundled SUT\), 'kafka', 'kafka@X' \(X one of 4.0.0, .*\), or "
                                         r"'module:qualname'"):
        replay_row(row | {"implementation": "nowhere:Gone"})
    with pytest.raises(TraceDecodeError, match=r"implementation 'Gone' is not a name; allowed: null"):
        decode_counterexample(row | {"implementation": "Gone"})
    # Kafka's classes of a release: its number, which the bridge must be built for
    assert decode_counterexample(row | {"implementation": "kafka@4.3.1"}).subject.implementation == "kafka@4.3.1"
    with pytest.raises(TraceDecodeError, match=r"implementation 'kafka@4.x' is not a name; allowed: .*'kafka@X.Y.Z'"):
        decode_counterexample(row | {"implementation": "kafka@4.x"})
    with pytest.raises(ValueError, match=r"implementation 'kafka@3.9.0': kafka version '3.9.0': allowed are 4.0.0, "):
        replay_row(row | {"implementation": "kafka@3.9.0"})


def test_shrinks_of_several_followers_are_probed_only_where_the_profile_has_them():
    """An implementation must refuse a multi-follower shrink the model refuses,
    and accept one it takes (Rule.SHRINK_ALL_OUT_OF_SYNC, the Kafka profile)."""
    from check.lockstep import probe_actions
    from model import KAFKA, Config, ProposeIsrShrinkMany, initial_state
    for profile, expected in (("chapters", []), (KAFKA, [(2, 3), (2, 4), (3, 4), (2, 3, 4)])):
        state = initial_state(Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3, 4), min_isr=1, profile=profile))
        assert [a.followers for a in probe_actions(state) if isinstance(a, ProposeIsrShrinkMany)] == expected
