"""``BrokerLifecycleManager``: a broker's lifecycle state and the broker epoch of
its session (Kafka's ``BrokerLifecycleManager``), which the broker's parts read
(``ReplicaManager``, ``AlterPartitionManager``) and ``BrokerServer`` drives (ch8)."""

from __future__ import annotations

from typing import Optional

from model import BrokerStatus

ACTIVE = (BrokerStatus.STARTING, BrokerStatus.RUNNING)
OFFLINE = (BrokerStatus.OFFLINE_CLEAN, BrokerStatus.OFFLINE_DIRTY)


class BrokerLifecycleManager:
    """The broker's lifecycle state, the broker epoch of its current session, and
    whether it asked to shut down (Kafka's PENDING_CONTROLLED_SHUTDOWN: its
    heartbeats then carry wantShutDown)."""

    def __init__(self) -> None:
        self.state = BrokerStatus.OFFLINE_DIRTY   # never started: no clean-shutdown marker
        self.broker_epoch: Optional[int] = None
        self.wants_shutdown = False

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE

    @property
    def is_running(self) -> bool:
        return self.state is BrokerStatus.RUNNING
