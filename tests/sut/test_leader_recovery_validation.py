"""The controller's checks of an AlterPartition's leader recovery state
(``Rule.LEADER_RECOVERY_STATE``; Kafka's ``validateAlterPartitionData``): a
leader following the protocol always proposes RECOVERED, so these requests are
written by hand, and the model's controller and the SUT's
``ReplicationControlManager`` must answer them alike, from the same state."""

from __future__ import annotations

import attrs
import pytest

from model import (KAFKA, RECOVERED, RECOVERING, AlterPartitionRequest, Config, FenceBroker, ReplicateMetadata,
                   UnfenceBroker)
from model import controller as model_controller

from difftools import expect_agreement, lockstep

#: RF 3, MinISR 2, unclean leader election on: once 3 is back outside the ISR and
#: 2 and 1 are fenced, 3 is elected uncleanly and the registration is RECOVERING;
#: 2 is unfenced again, eligible for the ISR.
CONFIG = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_leader_election=True, profile=KAFKA)


def _recovering():
    """The lockstep after 3's unclean election, 3 holding the registration."""
    ls = lockstep(CONFIG)

    def sync(broker: int) -> None:
        expect_agreement(ls.step(ReplicateMetadata(broker, ls.state.pending_metadata(broker))))
    for action in (FenceBroker(3), 3, UnfenceBroker(3), FenceBroker(2), FenceBroker(1), 3, 2, UnfenceBroker(2)):
        sync(action) if isinstance(action, int) else expect_agreement(ls.step(action))
    p = ls.state.partition
    assert (p.leader, p.isr, p.leader_recovery_state) == (3, {3}, RECOVERING)
    return ls


def _request(ls, isr: frozenset[int], recovery: str) -> AlterPartitionRequest:
    p, reg = ls.state.partition, ls.state.registration(3)
    return AlterPartitionRequest(0, 3, reg.broker_epoch, p.leader_epoch, p.partition_epoch, isr,
                                 tuple((b, ls.state.registration(b).broker_epoch) for b in sorted(isr)), recovery)


def _answers(ls, req: AlterPartitionRequest) -> tuple:
    """(the model's error, the SUT's error name, or None when accepted) and the
    leader recovery state each holds after the request."""
    state, resp = model_controller.alter_partition(ls.state, req)
    replication = ls.implementation.controller.replication
    error, _ = replication.alter_partition(req)
    sut_error = None if error.name == "NONE" else error.name
    return (resp.error, state.partition.leader_recovery_state), (sut_error, replication.partition.leader_recovery_state)


@pytest.mark.parametrize("isr, recovery, answer", [
    (frozenset({2, 3}), RECOVERING, ("INVALID_REQUEST", RECOVERING)),   # more than the leader while recovering
    (frozenset({3}), RECOVERING, (None, RECOVERING)),                   # the leader alone may stay recovering
    (frozenset({2, 3}), RECOVERED, (None, RECOVERED)),                  # what a leader sends: recovery ends
], ids=["recovering-with-a-follower", "recovering-alone", "recovered"])
def test_a_recovering_partition_takes_only_the_leader_while_the_request_says_recovering(isr, recovery, answer):
    ls = _recovering()
    model_answer, sut_answer = _answers(ls, _request(ls, isr, recovery))
    assert model_answer == answer and sut_answer == answer


def test_a_recovered_partition_refuses_a_request_going_back_to_recovering():
    ls = _recovering()
    recovered = attrs.evolve(ls.state.partition, leader_recovery_state=RECOVERED)
    ls.state = attrs.evolve(ls.state, controller=attrs.evolve(ls.state.controller, partition=recovered))
    replication = ls.implementation.controller.replication
    replication.partition.leader_recovery_state = RECOVERED
    assert _answers(ls, _request(ls, frozenset({3}), RECOVERING)) == (("INVALID_REQUEST", RECOVERED),) * 2
