"""``BrokerServer``: one broker's lifecycle
(ch8) — registration with the controller (new broker epoch, clean-shutdown
marker, §5.2), heartbeats that unfence it (§8.1), metadata replication in
batches materialized into an image (§2.3.2), controlled and unclean shutdown
(§5.1.1, §8.3) — and its ``ReplicaManager``."""

from __future__ import annotations

from typing import Optional

from model import BrokerStatus, Config, Rule

from .bugs import Bug
from .clock import ManualTime
from .components import PYTHON, Components
from .controller import QuorumController
from .lifecycle import BrokerLifecycleManager
from .purgatory import ClientResponses
from .metadata import MetadataDelta, MetadataImage
from .network import InMemoryNetwork
from .replica_manager import ReplicaManager

class BrokerServer:
    def __init__(self, broker_id: int, config: Config, controller: QuorumController, network: InMemoryNetwork,
                 responses: ClientResponses, bugs: frozenset, components: Components = PYTHON,
                 time: Optional[ManualTime] = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.controller = controller
        self.bugs = bugs
        self.lifecycle = BrokerLifecycleManager()
        self.clean_shutdown_marker: Optional[int] = None   # broker epoch written at controlled shutdown
        self.image = MetadataImage()
        # a bound method, not a closure: copy.deepcopy rebinds it to the copied broker
        self.replica_manager = ReplicaManager(broker_id, config, network, responses, bugs, self.lifecycle,
                                              self.metadata_image, components, time)

    def metadata_image(self) -> MetadataImage:
        """The broker's current metadata image (Kafka's ``KRaftMetadataCache``)."""
        return self.image

    # ------------------------------------------------------------ lifecycle (ch8)

    def startup(self) -> None:
        """Register with the controller, presenting the clean-shutdown marker (§5.2,
        §8.1); the marker is consumed. The broker is STARTING and fenced."""
        epoch, _ = self.controller.register_broker(self.broker_id, self.clean_shutdown_marker)
        self.lifecycle.state = BrokerStatus.STARTING
        self.lifecycle.broker_epoch = epoch
        self.lifecycle.wants_shutdown = False
        self.clean_shutdown_marker = None

    def heartbeat(self) -> None:
        """Heartbeat with wantFence=false (§8.1); once unfenced a STARTING broker is
        RUNNING and its replica acts on its metadata."""
        fenced = self.controller.process_broker_heartbeat(self.broker_id, False, self.image.offset)
        if not fenced and self.lifecycle.state is BrokerStatus.STARTING:
            self.lifecycle.state = BrokerStatus.RUNNING
            self.replica_manager.apply_image(self.image.partition)

    def begin_controlled_shutdown(self) -> None:
        """§8.3: the broker asks to shut down (a heartbeat with wantShutDown) and
        keeps running; the controller moves its leadership away or fences it."""
        self.controller.begin_controlled_shutdown(self.broker_id, self.image.offset)
        self.lifecycle.wants_shutdown = True

    def controlled_shutdown(self) -> None:
        """§8.3: leadership moves away and the broker is fenced, the replica stops,
        the log is flushed and the clean-shutdown marker written (§5.2)."""
        self.controller.process_controlled_shutdown(self.broker_id, self.image.offset)
        self.replica_manager.shutdown(flush=Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH not in self.bugs)
        self.clean_shutdown_marker = self.lifecycle.broker_epoch
        self.lifecycle.state = BrokerStatus.OFFLINE_CLEAN
        self.lifecycle.wants_shutdown = False

    def unclean_shutdown(self, lossy: bool) -> None:
        """Abrupt termination (§5.1.1); ``lossy`` loses the unflushed suffix."""
        self.replica_manager.shutdown(lossy=lossy)
        self.clean_shutdown_marker = None
        self.lifecycle.state = BrokerStatus.OFFLINE_DIRTY
        self.lifecycle.wants_shutdown = False

    def flush(self) -> None:
        p = self.replica_manager.partition
        assert p is not None
        p.flush()

    def write_epoch_checkpoint(self) -> None:
        """The log's scheduler runs the epoch checkpoint's scheduled write
        (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER)."""
        p = self.replica_manager.partition
        assert p is not None
        p.log.write_epoch_checkpoint()

    # -------------------------------------------------------- metadata (§2.3.2)

    def pending_metadata(self) -> int:
        return self.controller.end_offset - self.image.offset

    def replicate_metadata(self, count: int) -> None:
        """Fetch the next ``count`` committed records and apply them as ONE batch:
        one delta, one new image, one reconciliation of the replica (§2.3.2)."""
        start = self.image.offset
        delta = MetadataDelta(self.image, self.bugs)
        for record in self.controller.read(start, start + count):
            delta.replay(record)
        before, self.image = self.image, delta.apply()
        # Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES: Kafka's BrokerMetadataPublisher runs
        # ReplicaManager.applyDelta before the DynamicConfigPublisher updates the log config.
        config_last = self.config.follows(Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES)
        if not config_last:
            self.replica_manager.update_min_isr(self.image.min_isr)
        if self.lifecycle.is_running:
            self.replica_manager.apply_image(self.image.partition, changed=delta.changed)
        if config_last and self.image.min_isr != before.min_isr:
            self.replica_manager.update_min_isr(self.image.min_isr)

    # ---------------------------------------------------------------- queries

    def replica_log_info(self) -> Optional[tuple[int, int]]:
        """GetReplicaLogInfo (§5.3.2): answered by a running broker hosting the replica."""
        if not self.lifecycle.is_running:
            return None
        return self.replica_manager.log_info()
