"""The machine passes against the correct reference model and SUT, and its
compound steps and swarm weights do what they say."""

import pytest

from harness import machine_for
from harness.machine import ReplicationMachine, swarm_weights
from model import (ACTION_TYPES, BrokerStatus, Config, FenceBroker, FetchResponse, ReceiveFetchRequest, Reassign,
                   ReplicateMetadata, SendFetch, StartBroker, UncleanShutdown, UnfenceBroker, initial_state)

ModelOnly = machine_for(compare_sut=False, name="ModelOnlyMachine")
TestModelOnly = ModelOnly.TestCase

ModelAndSut = machine_for(compare_sut=True, name="ModelAndSutMachine")
TestModelAndSut = ModelAndSut.TestCase


@pytest.fixture(autouse=True)
def _no_events_outside_hypothesis(monkeypatch):
    monkeypatch.setattr("harness.machine.event", lambda name: None)


def _machine(config: Config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2),
             **scale: float) -> ReplicationMachine:
    """A model-only machine placed in ``config``'s initial state, without Hypothesis."""
    m = machine_for(compare_sut=False, name="Probe")()
    m.config, m.state = config, initial_state(config)
    m.weights = swarm_weights({c: scale[c.__name__] for c in ACTION_TYPES if c.__name__ in scale})
    return m


def test_restart_phases_bring_a_crashed_broker_back_in_order():
    m = _machine()
    m._restart(UncleanShutdown(3, False), 4)
    assert [type(a) for a in m.trace] == [UncleanShutdown, FenceBroker, StartBroker, ReplicateMetadata, UnfenceBroker]
    assert m.state.broker(3).status is BrokerStatus.RUNNING
    assert not m.state.registration(3).fenced


def test_restart_with_no_phases_leaves_the_broker_down():
    m = _machine()
    m._restart(UncleanShutdown(3, False), 0)
    assert m.trace == [UncleanShutdown(3, False)]
    assert m.state.broker(3).status is BrokerStatus.OFFLINE_DIRTY


def test_one_hop_handles_the_request_and_leaves_the_reply_in_flight():
    m = _machine()
    m._exchange(SendFetch(2), 1)
    assert [type(a) for a in m.trace] == [SendFetch, ReceiveFetchRequest]
    assert [type(msg) for msg in m.state.network.messages] == [FetchResponse]


def test_a_class_the_swarm_leaves_out_is_not_drawn():
    assert any(isinstance(a, FenceBroker) for a in _machine().enabled("lifecycle"))
    left_out = _machine(FenceBroker=0)
    assert left_out.enabled("lifecycle")
    assert not any(isinstance(a, FenceBroker) for a in left_out.enabled("lifecycle"))


def test_one_replica_reassignments_come_first():
    m = _machine()
    moves = m._prioritized([Reassign((1,)), Reassign((1, 2))])
    assert moves[0] == Reassign((1, 2))
