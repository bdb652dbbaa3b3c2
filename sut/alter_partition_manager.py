"""``AlterPartitionManager``: sends a leader's AlterPartition requests to the
controller (§2.9.2). The request carries the leader's broker epoch, leader
epoch and partition epoch, the proposed ISR, and the broker epochs of the
replicas it adds (§6.5.1 case 3; Kafka: of every member, -1 when unknown); its
message id identifies the in-flight change the leader is waiting on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from model import RECOVERED, AlterPartitionRequest

from .network import InMemoryNetwork

if TYPE_CHECKING:
    from .lifecycle import BrokerLifecycleManager


class AlterPartitionManager:
    """``in_flight``: the id of the request sent and not yet answered (Kafka's
    ``unsentIsrUpdates`` entry for the partition, kept until its response arrives
    whatever the partition's state does meanwhile). The SUT forgets it, as the
    model does, when the broker stops or the replica is deleted."""

    def __init__(self, broker_id: int, network: InMemoryNetwork, lifecycle: "BrokerLifecycleManager") -> None:
        self.broker_id = broker_id
        self.network = network
        self.lifecycle = lifecycle
        self.in_flight: Optional[int] = None

    def forget(self) -> None:
        self.in_flight = None

    def submit(self, leader_epoch: int, partition_epoch: int, new_isr: frozenset[int],
               added_broker_epochs: tuple[tuple[int, Optional[int]], ...],
               leader_recovery_state: str = RECOVERED) -> int:
        """Send the request (``leader_recovery_state``: the leader's own, RECOVERED
        or RECOVERING); returns its id."""
        broker_epoch = self.lifecycle.broker_epoch
        assert broker_epoch is not None
        msg = self.network.send(lambda i: AlterPartitionRequest(
            i, self.broker_id, broker_epoch, leader_epoch, partition_epoch, new_isr, added_broker_epochs,
            leader_recovery_state))
        self.in_flight = msg.id
        return msg.id
