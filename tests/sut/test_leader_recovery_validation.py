"""The controller's checks of an AlterPartition's leader recovery state
(``Rule.LEADER_RECOVERY_STATE``; Kafka's ``validateAlterPartitionData``). A
leader following the protocol always proposes RECOVERED, so these requests are
written by hand and handed to the controller directly; the model's controller,
the SUT's ``QuorumController`` and Kafka's own controller (implementation
"kafka") must answer them alike, from the same state. Includes the two leader
recovery cases of Kafka's ``ReplicationControlManagerTest.
testInvalidAlterPartitionRequests`` (a RECOVERED partition: a RECOVERING
request with two members, and one with the leader alone)."""

from __future__ import annotations

from typing import Optional

import pytest

from model import (KAFKA, RECOVERED, RECOVERING, AlterPartitionRequest, AlterPartitionResponse, Config, FenceBroker,
                   ReplicateMetadata, UnfenceBroker)
from model import controller as model_controller

from difftools import expect_agreement, lockstep
from engines import require_kafka

#: RF 3, MinISR 2, unclean leader election on.
CONFIG = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_leader_election=True, profile=KAFKA)

ENGINES = pytest.mark.parametrize("engine", ["sut", "kafka"])


def _implementation(engine: str):
    if engine == "sut":
        return None
    require_kafka()
    import kafka_bridge
    return kafka_bridge.implementation


def _recovering(engine: str):
    """The lockstep once 3 is back outside the ISR and 2 and 1 are fenced: 3 is
    elected uncleanly, the registration is RECOVERING; 2 is unfenced again,
    eligible for the ISR."""
    ls = lockstep(CONFIG, implementation=_implementation(engine))
    for action in (FenceBroker(3), 3, UnfenceBroker(3), FenceBroker(2), FenceBroker(1), 3, 2, UnfenceBroker(2)):
        if isinstance(action, int):
            action = ReplicateMetadata(action, ls.state.pending_metadata(action))
        expect_agreement(ls.step(action))
    p = ls.state.partition
    assert (p.leader, p.isr, p.leader_recovery_state) == (3, {3}, RECOVERING)
    return ls


def _request(ls, isr: frozenset[int], recovery: str) -> AlterPartitionRequest:
    """The leader's request for ``isr`` in the epochs it holds, marked ``recovery``."""
    p = ls.state.partition
    reg = ls.state.registration(p.leader)
    return AlterPartitionRequest(0, p.leader, reg.broker_epoch, p.leader_epoch, p.partition_epoch, isr,
                                 tuple((b, ls.state.registration(b).broker_epoch) for b in sorted(isr)), recovery)


def _answers(ls, req: AlterPartitionRequest) -> tuple[tuple[Optional[str], str], tuple[Optional[str], str]]:
    """(error or None, the leader recovery state after it) from the model's
    controller and from the implementation's."""
    state, resp = model_controller.alter_partition(ls.state, req)
    controller = ls.implementation.controller
    controller.handle_alter_partition(req)
    network = ls.implementation.network
    answer = network.get(network.next_id - 1)
    assert isinstance(answer, AlterPartitionResponse)
    return ((resp.error, state.partition.leader_recovery_state),
            (answer.error, controller.replication.partition.leader_recovery_state))


@ENGINES
@pytest.mark.parametrize("isr, recovery, answer", [
    (frozenset({2, 3}), RECOVERING, ("INVALID_REQUEST", RECOVERING)),   # more than the leader while recovering
    (frozenset({3}), RECOVERING, (None, RECOVERING)),                   # the leader alone may stay recovering
    (frozenset({2, 3}), RECOVERED, (None, RECOVERED)),                  # what a leader sends: recovery ends
], ids=["recovering-with-a-follower", "recovering-alone", "recovered"])
def test_a_recovering_partition_takes_only_the_leader_while_the_request_says_recovering(engine, isr, recovery,
                                                                                       answer):
    ls = _recovering(engine)
    assert _answers(ls, _request(ls, isr, recovery)) == (answer, answer)


@ENGINES
@pytest.mark.parametrize("isr", [frozenset({1, 2}), frozenset({1})], ids=["leader-and-follower", "leader-alone"])
def test_ReplicationControlManagerTest_testInvalidAlterPartitionRequests_recovery_states(engine, isr):
    """``testInvalidAlterPartitionRequests``' last two cases: on a RECOVERED
    partition (the topic as created, leader 1), a request marked RECOVERING is an
    INVALID_REQUEST, with a follower ("invalid ISR length and recovery state") and
    with the leader alone ("invalid recovery state transition")."""
    ls = lockstep(CONFIG, implementation=_implementation(engine))
    assert ls.state.partition.leader_recovery_state == RECOVERED
    assert _answers(ls, _request(ls, isr, RECOVERING)) == (("INVALID_REQUEST", RECOVERED),) * 2
