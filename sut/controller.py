"""``QuorumController``: the active controller. It owns the committed metadata
log and routes requests to the ``ClusterControlManager`` (registrations,
fencing) and the ``ReplicationControlManager`` (the partition), appending one
record per decision (§1.2.1, §2.3, ch8)."""

from __future__ import annotations

import copy
import functools
from typing import Any, Callable, Optional, TypeVar

from model import AlterPartitionRequest, AlterPartitionResponse, Config, Rule

from .bugs import Bug
from .change_builder import PartitionChangeBuilder
from .cluster_control import ClusterControlManager
from .errors import ControllerFault, Errors
from .network import InMemoryNetwork
from .metadata import (ELR_FEATURE, MIN_INSYNC_REPLICAS, STATIC_MIN_INSYNC_REPLICAS, ApiMessage, ConfigRecord,
                       ControlledShutdownRecord, FeatureLevelRecord, FenceBrokerRecord, RegisterBrokerRecord,
                       UnfenceBrokerRecord)
from .replication_control import LogInfo, ReplicationControlManager

_Event = TypeVar("_Event", bound=Callable[..., Any])


def _event(method: _Event) -> _Event:
    """A controller event (Kafka's ``QuorumController`` runs each request as one).
    Under Rule.LEADER_ACCEPTOR_READS_DIRECTORY a ControllerFault inside it undoes
    what it did, as Kafka's controller reverts its in-memory state to the last
    committed offset on renouncing (``SnapshotRegistry.revertToSnapshot``), and is
    raised on: the caller fails the controller over. An event called inside
    another is part of it."""
    @functools.wraps(method)
    def run(self: "QuorumController", *args: Any, **kwargs: Any) -> Any:
        if self._in_event or not self.config.follows(Rule.LEADER_ACCEPTOR_READS_DIRECTORY):
            return method(self, *args, **kwargs)
        saved = self._saved()
        self._in_event = True
        try:
            return method(self, *args, **kwargs)
        except ControllerFault:
            self._restore(saved)
            raise
        finally:
            self._in_event = False
    return run  # type: ignore[return-value]


class QuorumController:
    def __init__(self, config: Config, network: InMemoryNetwork, bugs: frozenset,
                 change_builder: Optional[type] = None) -> None:
        self.network = network
        self.config = config
        self.bugs = bugs
        self.metadata_log: list[ApiMessage] = []
        self.cluster = ClusterControlManager(config.brokers)
        self.replication = ReplicationControlManager(config, self.cluster, self._append, bugs,
                                                     change_builder or PartitionChangeBuilder)
        # Kafka's ClusterControlManager writes a registration's (and a fencing's)
        # partition changes before its own record; the broker epoch is then the
        # batch's first offset.
        self.records_last = config.follows(Rule.METADATA_RECORD_ORDER)
        #: a cluster-level min.insync.replicas was set (ConfigurationControlManager.clusterConfig)
        self.cluster_min_isr_set = False
        #: the last offset of the snapshot the active controller loaded (-1: none)
        self.snapshot_offset = -1
        self._in_event = False

    def _saved(self) -> tuple:
        """What an event may change: the log's end, the registrations, the replication
        manager's fields and this controller's configuration flags."""
        registrations = {b: copy.copy(reg) for b, reg in self.cluster.registrations.items()}
        replication = {k: dict(v) if isinstance(v, dict) else v for k, v in vars(self.replication).items()}
        return self.end_offset, registrations, replication, (self.cluster_min_isr_set, self.snapshot_offset)

    def _restore(self, saved: tuple) -> None:
        end, registrations, replication, (self.cluster_min_isr_set, self.snapshot_offset) = saved
        del self.metadata_log[end:]
        self.cluster.registrations = registrations
        vars(self.replication).update(replication)

    def _append(self, record: ApiMessage) -> None:
        self.metadata_log.append(record)
        self.replication.replay_beside(record)

    @property
    def end_offset(self) -> int:
        return len(self.metadata_log)

    def read(self, start: int, end: int) -> list[ApiMessage]:
        return self.metadata_log[start:end]

    # ------------------------------------------------------------ brokers (ch8)

    def register_broker(self, broker: int, previous_broker_epoch: Optional[int]) -> tuple[int, bool]:
        """BrokerRegistration (§8.1): accepted only once the previous broker epoch is
        fenced; the new broker epoch is the offset of the registration record, and
        the broker stays fenced. Returns (broker epoch, clean)."""
        assert self.cluster.can_register(broker)
        if self.cluster.registration(broker).session and self.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES):
            self.expire_session(broker)   # hasValidSession: the previous session must be over
        return self._register(broker, previous_broker_epoch)

    @_event
    def _register(self, broker: int, previous_broker_epoch: Optional[int]) -> tuple[int, bool]:
        clean = self.cluster.registration_is_clean(broker, previous_broker_epoch)
        epoch = self.end_offset
        self.cluster.register(broker, epoch)
        if not self.records_last:
            self._register_record(broker, epoch, clean)
        self.replication.handle_broker_registration(broker, clean)
        if self.records_last:
            self._register_record(broker, epoch, clean)
        return epoch, clean

    def _register_record(self, broker: int, epoch: int, clean: bool) -> None:
        self.cluster.registration(broker).record_offset = self.end_offset
        self._append(RegisterBrokerRecord(broker, epoch, clean))

    def can_unfence(self, broker: int, metadata_offset: int) -> bool:
        """A heartbeat with wantFence=false unfences a fenced broker once it has
        replicated its own registration record (§8.1; Kafka's
        ``BrokerHeartbeatManager``, registerBrokerRecordOffset)."""
        reg = self.cluster.registration(broker)
        if not reg.fenced or reg.record_offset is None:
            return False
        # a snapshot's records are replayed at its last offset (handleLoadSnapshot)
        return metadata_offset > max(reg.record_offset, self.snapshot_offset)

    @_event
    def process_broker_heartbeat(self, broker: int, want_fence: bool, metadata_offset: int) -> bool:
        """Returns whether the broker is fenced after the heartbeat."""
        if not want_fence and self.can_unfence(broker, metadata_offset):
            self.cluster.unfence(broker)
            self._append(UnfenceBrokerRecord(broker))
            self.replication.handle_broker_unfenced(broker)
        return self.cluster.registration(broker).fenced

    @_event
    def amend_registration(self, broker: int) -> None:
        """The same incarnation registers again (Rule.REGISTRATION_AMENDED;
        ``ClusterControlManager.registerBroker``): the registration's broker epoch,
        fencing and controlled shutdown kept in a RegisterBrokerRecord of their own,
        whose offset the broker's unfencing now waits for."""
        reg = self.cluster.registration(broker)
        assert reg.epoch is not None
        fenced, shutting_down = reg.fenced, reg.in_controlled_shutdown
        if Bug.AMENDED_REGISTRATION_FENCES in self.bugs:   # BUG: the record's defaults, and their replay
            fenced, shutting_down = True, False
            self.cluster.fence(broker)
            reg.in_controlled_shutdown = False
        reg.record_offset = self.end_offset
        self._append(RegisterBrokerRecord(broker, reg.epoch, True, fenced, shutting_down))
        self.cluster.forget_heartbeats(broker)   # the record's replay (remove, register)

    def fail_over(self) -> None:
        """The active controller resigns and a standby that replayed the metadata log
        becomes active (Rule.CONTROLLER_FAILOVER; ``QuorumController.renounce``,
        ``claim``): it writes nothing; its heartbeat manager starts from the
        registrations (``ClusterControlManager.activate``)."""
        self.cluster.activate(self.bugs)
        self.replication.load_replay()
        self.snapshot_offset = -1

    def fail_over_from_snapshot(self) -> None:
        """The active controller resigns and one that restarted becomes active: it
        loaded the latest metadata snapshot, taken at the log's end
        (Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED; ``SnapshotEmitter.maybeEmit``,
        ``QuorumController.handleLoadSnapshot``): the partition as the snapshot wrote
        it (``ReplicationControlManager.load_snapshot``), each registration replayed at
        the snapshot's last offset, which its unfencing waits for; the heartbeat
        manager as ``fail_over`` starts it."""
        self.cluster.activate(self.bugs)
        self.replication.load_snapshot()
        self.snapshot_offset = self.end_offset - 1

    @_event
    def expire_session(self, broker: int) -> None:
        """Session expiry (§2.8; ``ReplicationControlManager.maybeFenceOneStaleBroker``):
        an unfenced broker is fenced; under Rule.FENCED_BROKER_SESSION_EXPIRES one
        fenced by its controlled shutdown, whose session lasts, has the fencing's
        partition change run again (its registration change is a no-op, not
        written). The session ends."""
        if self.cluster.is_unfenced(broker):
            self.fence_broker(broker)
        else:
            self.replication.handle_broker_fenced(broker)
        self.cluster.end_session(broker)

    @_event
    def fence_broker(self, broker: int) -> None:
        """Session expiry or controlled shutdown: fence the broker (§2.8, §2.9.1); the
        session stays (``expire_session`` ends it)."""
        self.cluster.fence(broker)
        if not self.records_last:
            self._append(FenceBrokerRecord(broker))
        self.replication.handle_broker_fenced(broker)
        if self.records_last:
            self._append(FenceBrokerRecord(broker))

    @_event
    def begin_controlled_shutdown(self, broker: int, metadata_offset: int = 0) -> None:
        """A heartbeat with wantShutDown from an unfenced broker (§8.3; Kafka's
        ``BrokerHeartbeatManager.calculateNextBrokerState``): a broker that leads
        enters controlled shutdown (the registration change record, then
        ``handleBrokerInControlledShutdown``'s partition change) and stays unfenced;
        one that leads nothing is fenced at once (SHUTDOWN_NOW)."""
        p = self.replication.partition
        if p is None or p.leader != broker:
            self.fence_broker(broker)
            return
        self.cluster.enter_controlled_shutdown(broker)
        self._append(ControlledShutdownRecord(broker))
        self.replication.handle_broker_in_controlled_shutdown(broker)
        if self.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS):
            # processBatchEndOffset: the batch's last offset (here its end, exclusive)
            self.cluster.registration(broker).controlled_shutdown_offset = self.end_offset

    def report_metadata_offsets(self, offsets: dict[int, int]) -> None:
        """The brokers' periodic heartbeats: each unfenced broker in ``offsets``
        reports the records it has applied (``BrokerHeartbeatManager.touch``); nothing
        else changes."""
        for broker, offset in offsets.items():
            self.cluster.report(broker, offset)

    def controlled_shutdown_wait(self, broker: int, offsets: dict[int, int]) -> Optional[str]:
        """Why a heartbeat of ``broker`` asking to shut down would not let it go once
        the running brokers have reported ``offsets`` (Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS;
        ``BrokerHeartbeatManager.calculateNextBrokerState``), or None. A leader not yet
        in controlled shutdown is let go by its second heartbeat only when no other
        broker is active: its first writes records no other broker has applied."""
        if not self.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS):
            return None
        reg = self.cluster.registration(broker)
        p = self.replication.partition
        awaited = reg.controlled_shutdown_offset
        if awaited is None:
            if reg.fenced or p is None or p.leader != broker:
                return None
            awaited = self.end_offset + 1   # past anything written yet
        fenced_too = Bug.FENCED_BROKER_HOLDS_CONTROLLED_SHUTDOWN in self.bugs   # BUG when set
        lowest = self.cluster.lowest_active_offset(excluding=broker, reports=offsets, fenced_too=fenced_too)
        if lowest is None or lowest[1] >= awaited:
            return None
        return f"broker {broker}'s controlled shutdown waits for broker {lowest[0]} (metadata offset {lowest[1]})"

    def process_controlled_shutdown(self, broker: int, metadata_offset: int = 0) -> None:
        """Heartbeats with wantShutDown until the broker may go (§8.3): a leader first
        enters controlled shutdown (``begin_controlled_shutdown``), then the broker is
        fenced (SHUTDOWN_NOW). ``metadata_offset`` (the records the broker has
        applied) is what its heartbeat carries; the shutdown here does not read it.
        The heartbeats renew its session."""
        self.cluster.renew_session(broker)
        if not self.cluster.is_unfenced(broker) and self.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES):
            self._refence(broker)   # FENCED, then SHUTDOWN_NOW: the fencing again
        if self.cluster.is_unfenced(broker):
            self.begin_controlled_shutdown(broker, metadata_offset)
        if self.cluster.is_unfenced(broker):
            self.fence_broker(broker)

    @_event
    def _refence(self, broker: int) -> None:
        self.replication.handle_broker_fenced(broker)

    # -------------------------------------------------------------- partition

    @_event
    def handle_alter_partition(self, req: AlterPartitionRequest) -> None:
        """Validate and apply an AlterPartition (§2.9.2), then answer the leader."""
        error, reg = self.replication.alter_partition(req)
        if error is not Errors.NONE:
            self.network.send(lambda i: AlterPartitionResponse(i, req.src, req.id, error.name))
        else:
            assert reg is not None
            self.network.send(lambda i: AlterPartitionResponse(i, req.src, req.id, None, reg.isr,
                                                               reg.leader_epoch, reg.partition_epoch))

    @_event
    def alter_partition_reassignments(self, target: tuple[int, ...]) -> None:
        self.replication.alter_partition_reassignments(target)

    @_event
    def cancel_partition_reassignment(self) -> None:
        self.replication.cancel_reassignment()

    @_event
    def unclean_recovery(self, log_info: LogInfo) -> None:
        self.replication.unclean_recovery(log_info)

    @_event
    def unclean_leader_election(self) -> None:
        self.replication.unclean_leader_election()

    @_event
    def elect_preferred_leader(self) -> None:
        """ElectLeaders with ElectionType.PREFERRED (``ReplicationControlManager.electLeaders``)."""
        self.replication.elect_preferred_leader()

    # ------------------------------------------------------ configuration

    @_event
    def incremental_alter_configs(self, name: str, value: object, cluster_default: bool = False) -> None:
        """IncrementalAlterConfigs of the topic config ``name`` (``metadata.MIN_INSYNC_REPLICAS``
        or ``UNCLEAN_LEADER_ELECTION_ENABLE``; ``ConfigurationControlManager.incrementalAlterConfig``):
        its ``ConfigRecord``, then for ``min.insync.replicas`` the partition change
        the new MinISR calls for (``ReplicationControlManager.handle_min_isr_change``).
        ``cluster_default``: the cluster-level ``min.insync.replicas`` instead, which
        the topic's own overrides: its ``ConfigRecord``, then Kafka's ClearElrRecord
        for every topic (``ReplicationControlManager.remove_topic_elrs``)."""
        self._append(ConfigRecord(name, value, cluster_default))
        if cluster_default:
            self.cluster_min_isr_set = True
            if self.replication.elr_enabled:
                self.replication.remove_topic_elrs()
            return
        if name == MIN_INSYNC_REPLICAS:
            self.replication.handle_min_isr_change(value)  # type: ignore[arg-type]
        else:
            self.replication.unclean_leader_election_enable = bool(value)

    @_event
    def update_elr_feature(self, enabled: bool) -> None:
        """UpdateFeatures of ``eligible.leader.replicas.version`` to 1 (``enabled``) or
        0 (``ConfigurationControlManager.updateFeatures``): an upgrade first writes the
        cluster-level ``min.insync.replicas`` at the static value when none was set
        (``maybeGenerateElrSafetyRecords``); then the ``FeatureLevelRecord``. No
        partition registration changes."""
        if enabled and not self.cluster_min_isr_set:
            self._append(ConfigRecord(MIN_INSYNC_REPLICAS, STATIC_MIN_INSYNC_REPLICAS, True))
            self.cluster_min_isr_set = True
        self._append(FeatureLevelRecord(ELR_FEATURE, int(enabled)))
        self.replication.elr_enabled = enabled
