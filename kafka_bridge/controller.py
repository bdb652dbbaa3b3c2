"""Apache Kafka's own controller request handling in place of the SUT's
``QuorumController``: ``org.apache.kafka.controller.ClusterControlManager``
(broker registration, heartbeats, session expiry) and
``ReplicationControlManager`` (AlterPartition validation and changes,
reassignment and its cancellation, elections on fencing, unfencing and unclean
registration, unclean leader election), with the ``FeatureControlManager``
(the ELR feature level: on at bootstrap, set by UpdateFeatures) and
``ConfigurationControlManager`` (the topic's MinISR and unclean leader election,
the cluster-level MinISR) they read. They are built and driven through
``ReplicheckControllerShim`` (``kafka_bridge/java``), and every record they emit
is replayed into them, as Kafka's ``QuorumController`` does.

``KafkaQuorumController`` is built and used as ``sut.controller.QuorumController``
is (``sut.components.Components.controller``): the SUT's brokers send it the
same calls, read the same metadata log, and the SUT's enablement and
observation read its ``cluster`` and ``replication`` views.

The metadata log the brokers replicate is Kafka's, record for record, in the
SUT's record types, with what the model does not have left out:
- ``RegisterBrokerRecord``, ``PartitionRecord`` and ``PartitionChangeRecord``
  are translated field for field (directories are dropped: the model has one
  log directory per broker);
- a ``BrokerRegistrationChangeRecord`` is a ``FenceBrokerRecord`` or
  ``UnfenceBrokerRecord`` when it changes whether the broker is fenced, a
  ``ControlledShutdownRecord`` when it puts the broker in controlled shutdown,
  and is left out when it changes neither (the fencing of a fenced broker, which
  Kafka writes when the session of a broker that shut down cleanly expires and
  replays as "no-op registration change");
- a ``ConfigRecord`` of ``min.insync.replicas`` or ``unclean.leader.election.enable``
  written after the topic's creation (a config change, or the cluster-level
  MinISR an ELR upgrade writes first) is the SUT's ``ConfigRecord``; a
  ``ClearElrRecord`` is the SUT's when it changed Kafka's registration or the
  log's replay (Kafka merges it into a partition with either set, moving its
  partition epoch; after a failover to a controller that loaded a snapshot the
  two may differ), and is left out when it changed neither;
- a ``FeatureLevelRecord`` of ``eligible.leader.replicas.version`` (UpdateFeatures)
  is the SUT's ``FeatureLevelRecord``;
- ``TopicRecord``, the topic's creation configs and the bootstrap feature levels
  (replayed at the controller's construction, never committed) are left out.
Offsets are positions in that log: the broker epoch Kafka hands out (the next
write offset, as ``QuorumController.registerBroker`` passes) and the offset of
each ``RegisterBrokerRecord`` are the model's.

Epochs: Kafka numbers leader and partition epochs from 0, the model (the
chapters) from 1; the views add one, and an AlterPartition's epochs lose one on
the way in.

Time: a session expires only on ``FenceBroker`` (the model's session expiry) and
before its broker's registration (a restarted broker registers once its previous
session is over); every other broker with a session keeps heartbeating meanwhile.
A broker's session starts with its registration (its first heartbeat) and lasts
through a controlled shutdown's fencing, as Kafka's ``BrokerHeartbeatManager``
keeps it (Rule.FENCED_BROKER_SESSION_EXPIRES).
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Callable, Iterator, Optional

from model import DYNAMIC_CONFIGS, MIN_INSYNC_REPLICAS, NO_LEADER, AlterPartitionRequest, AlterPartitionResponse, Config, Rule

from sut.metadata import (ELR_FEATURE, ApiMessage, ClearElrRecord, ConfigRecord, ControlledShutdownRecord,
                          FeatureLevelRecord, FenceBrokerRecord, MetadataDelta, MetadataImage, PartitionRecord,
                          PartitionRegistration, RegisterBrokerRecord, UnfenceBrokerRecord)
from sut.errors import ControllerFault
from sut.network import InMemoryNetwork

from .calls import Call, CallLog, claim
from .change_builder import change_record_of, recovery_state
from .java import kafka


def preferred_election_error(result: Any) -> Optional[str]:
    """The error Kafka's ElectLeaders answer ``result`` (a ``ControllerResult``)
    gives the partition, ``NAME: message``; None when it elected."""
    k = kafka()
    for topic in result.response().replicaElectionResults():
        for partition in topic.partitionResult():
            name = k.error_name(partition.errorCode())
            if name is not None:
                return f"{name}: {partition.errorMessage()}"
    return None


def config_record_of(message: Any) -> ConfigRecord:
    """Kafka's ``ConfigRecord`` of a dynamic topic config, or of the cluster-level
    default (resource type BROKER, empty name), as the SUT's (its value parsed: an
    int MinISR, a bool for unclean leader election)."""
    name, value = str(message.name()), str(message.value())
    cluster_default = int(message.resourceType()) == int(kafka().broker_resource_type)
    return ConfigRecord(name, int(value) if name == MIN_INSYNC_REPLICAS else value == "true", cluster_default)


@contextlib.contextmanager
def faults() -> Iterator[None]:
    """A Java exception Kafka's controller managers throw that is not an
    ``ApiException`` raised as ControllerFault (its message): ``QuorumController``
    takes it for a fault and renounces (``handleEventException``), which the SUT's
    ``Cluster`` does (Rule.LEADER_ACCEPTOR_READS_DIRECTORY)."""
    try:
        yield
    except Exception as e:
        k = kafka()
        if hasattr(e, "getMessage") and not isinstance(e, k.ApiException):
            message = e.getMessage()   # None for some (a NullPointerException): the class names it then
            raise ControllerFault(str(e.getClass().getName() if message is None else message)) from e
        raise


class KafkaRejected(RuntimeError):
    """Kafka's controller refused a request the model accepts (its error and message)."""


def registration_of(p: Any) -> PartitionRegistration:
    """Kafka's ``PartitionRegistration`` as the SUT's (epochs numbered from 1)."""
    return PartitionRegistration(
        replicas=tuple(int(r) for r in p.replicas), isr=frozenset(int(r) for r in p.isr), leader=int(p.leader),
        leader_epoch=int(p.leaderEpoch) + 1, partition_epoch=int(p.partitionEpoch) + 1,
        elr=frozenset(int(r) for r in p.elr), last_known_elr=frozenset(int(r) for r in p.lastKnownElr),
        adding=frozenset(int(r) for r in p.addingReplicas), removing=frozenset(int(r) for r in p.removingReplicas),
        leader_recovery_state=str(p.leaderRecoveryState.name()))


class BrokerRegistrationView:
    """The controller's registration of one broker (``epoch`` None: never registered)."""

    __slots__ = ("broker_id", "epoch", "fenced", "in_controlled_shutdown", "record_offset", "session",
                 "controlled_shutdown_offset")

    def __init__(self, broker_id: int, epoch: Optional[int], fenced: bool, record_offset: Optional[int],
                 in_controlled_shutdown: bool = False, session: bool = False,
                 controlled_shutdown_offset: Optional[int] = None) -> None:
        self.broker_id, self.epoch, self.fenced, self.record_offset = broker_id, epoch, fenced, record_offset
        self.in_controlled_shutdown, self.session = in_controlled_shutdown, session
        self.controlled_shutdown_offset = controlled_shutdown_offset


class ClusterControlView:
    """What the SUT reads of ``sut.cluster_control.ClusterControlManager``, read from
    Kafka's ``ClusterControlManager``."""

    def __init__(self, controller: "KafkaQuorumController") -> None:
        self._controller = controller

    @property
    def registrations(self) -> dict[int, BrokerRegistrationView]:
        return self._controller.registrations()

    def registration(self, broker: int) -> BrokerRegistrationView:
        return self.registrations[broker]

    def is_unfenced(self, broker: int) -> bool:
        return not self.registration(broker).fenced

    def is_active(self, broker: int) -> bool:
        reg = self.registration(broker)
        return not reg.fenced and not reg.in_controlled_shutdown

    def can_register(self, broker: int) -> bool:
        """A broker whose registration is unfenced keeps its session (it heartbeats), and
        Kafka refuses another incarnation of it (DuplicateBrokerRegistrationException)."""
        return self.registration(broker).fenced


class ReplicationControlView:
    """What the SUT reads of ``sut.replication_control.ReplicationControlManager``, and
    the partition's creation, answered by Kafka's ``ReplicationControlManager``.
    Questions about whether a request would be accepted are asked of Kafka's code:
    its managers generate records without changing state until they are replayed."""

    def __init__(self, controller: "KafkaQuorumController") -> None:
        self._controller = controller

    @property
    def partition(self) -> Optional[PartitionRegistration]:
        return self._controller.partition()

    @property
    def min_isr(self) -> int:
        """The topic's MinISR as Kafka's ``ConfigurationControlManager`` holds it."""
        return self._controller.configs()[0]

    @property
    def unclean_leader_election_enable(self) -> bool:
        """The topic's ``unclean.leader.election.enable`` as Kafka's controller reads it."""
        return self._controller.configs()[1]

    @property
    def elr_enabled(self) -> bool:
        """Whether Kafka's ``FeatureControlManager.isElrFeatureEnabled``: what its
        partition changes read."""
        return self._controller.configs()[2]

    def create_partition(self, assignment: tuple[int, ...]) -> None:
        """CreateTopics with the replicas ``assignment``, MinISR and unclean leader
        election as topic configs."""
        c = self._controller
        c.commit(c.request("createTopic", kafka().ints(assignment)).records())

    def can_cancel_reassignment(self) -> bool:
        """Whether Kafka accepts cancelling now (``cancelPartitionReassignment``: a move in
        progress, and a revert needing an unclean election only when it is allowed),
        asked of Kafka itself, with no move in progress too (its own refusal,
        ``PartitionReassignmentReplicas.isReassignmentInProgress``, is then what the
        enablement probes compare), once per replayed change."""
        return self.partition is not None and self._controller.cancel_refused() is None

    def recovery_candidates(self, log_info: Callable) -> tuple[int, ...]:
        """Kafka has no unclean recovery (``unclean.recovery.strategy``): none."""
        return ()

    def preferred_election_refused(self) -> Optional[str]:
        """Why ElectLeaders(PREFERRED) writes nothing now, asked of Kafka's
        ``ReplicationControlManager.electLeaders`` (its records are not replayed):
        its error for the partition, or None when it writes a change. A partition
        whose first replica leads is answered from the registration
        (ELECTION_NOT_NEEDED), without a call into Kafka on every probe."""
        p = self.partition
        if p is None:
            return "no partition"
        if p.replicas and p.leader == p.replicas[0]:
            return "ELECTION_NOT_NEEDED"
        return self._controller.preferred_election_refused()

    def unclean_leader_election_candidate(self) -> Optional[int]:
        """The leader ``maybeElectUncleanLeaders`` would elect now, or None. It takes only
        leaderless partitions (``partitionsWithNoLeader``): a partition with a leader is
        answered from the registration, without a call into Kafka on every probe."""
        p = self.partition
        if p is None or p.leader != NO_LEADER:
            return None
        with faults():
            records = self._controller.shim.electUncleanLeaders().records()
        for record in records:
            leader = int(record.message().leader())
            if leader >= 0:
                return leader
        return None


class KafkaQuorumController:
    """Kafka's controller managers behind ``sut.controller.QuorumController``'s calls
    (see the module doc). ``bugs`` and ``change_builder`` are accepted for the
    component's signature: Kafka's code has none of the SUT's bugs and builds its
    changes with its own ``PartitionChangeBuilder``. Raises ``KafkaRejected`` when
    Kafka refuses a request the SUT's guards (the model's) let through."""

    def __init__(self, config: Config, network: InMemoryNetwork, bugs: frozenset = frozenset(),
                 change_builder: Optional[type] = None, _replayed: tuple = (),
                 _snapshot: tuple[int, int] = (-1, -1)) -> None:
        k = kafka()
        self.config = config
        self.network = network
        self.metadata_log: list[ApiMessage] = []
        self.shim = k.ControllerShim(config.min_isr, config.unclean_leader_election)
        #: the log of the requests that change Kafka's state (``calls``), when recording
        self.calls: Optional[CallLog] = None if _replayed else claim()
        self._partition: Optional[PartitionRegistration] = None
        self._registrations: Optional[dict[int, BrokerRegistrationView]] = None
        self._configs: Optional[tuple[int, bool, bool]] = None
        self._preferred: Optional[tuple[Optional[str]]] = None   # preferred_election_refused's answer
        self._cancel: Optional[tuple[Optional[str]]] = None      # cancel_refused's answer
        # a copy replays what the original's fixture replayed (ReplicheckControllerFixture.replayed),
        # and loads the snapshot where the original's managers loaded one (snapshotAt)
        at, last_offset = _snapshot
        for i, (record, offset) in enumerate(_replayed or [(r, -1) for r in self.shim.bootstrapRecords()]):
            if i == at:
                self.shim.failOverFromSnapshot(last_offset)
            self.shim.replay(record, offset)
        if at == len(_replayed) > 0:
            self.shim.failOverFromSnapshot(last_offset)
        self.shim.activate()
        self.cluster = ClusterControlView(self)
        self.replication = ReplicationControlView(self)

    def __deepcopy__(self, memo: dict) -> "KafkaQuorumController":
        """A standby's catch-up: a new controller replays every record, then activates;
        a fenced broker's session (which activation does not start) is renewed where
        this controller still holds one, so the copy holds the same sessions."""
        replayed = tuple((e.getKey(), int(e.getValue())) for e in self.shim.replayed())
        other = KafkaQuorumController(self.config, copy.deepcopy(self.network, memo), _replayed=replayed,
                                      _snapshot=(int(self.shim.snapshotAt()), int(self.shim.snapshotOffset())))
        other.metadata_log = list(self.metadata_log)   # records are immutable
        for broker, reg in self.registrations().items():
            if reg.session and not other.registrations()[broker].session:
                other.shim.trackSession(broker)
        other.shim.adoptHeartbeats(self.shim)   # the reported metadata offsets, controlled shutdown offsets
        other._registrations = None
        return other

    def fail_over(self) -> None:
        """A controller failover (``ReplicheckControllerFixture.failOver``): Kafka's
        managers are replaced by a standby's, which replayed every record, and
        activated; nothing is written."""
        self.request("failOver")
        self._forget()

    def fail_over_from_snapshot(self) -> None:
        """A controller failover to one that restarted and loaded a snapshot of the log
        (``ReplicheckControllerFixture.failOverFromSnapshot``: Kafka's ``MetadataImage``
        written as ``SnapshotEmitter`` writes it, replayed into new managers at its last
        offset, then activated); nothing is written. The snapshot's last offset is the
        last record's of the metadata log (a Kafka record left out of it, replayed at
        the next record's offset, is not the snapshot's end)."""
        self.request("failOverFromSnapshot", len(self.metadata_log) - 1)
        self._forget()

    # ------------------------------------------------------------ the log

    def request(self, method: str, *args: Any) -> Any:
        """The shim's request ``method`` called with ``args``: Kafka's result, logged
        with the Kafka request (``calls``) when recording. A Java exception is
        logged, then raised."""
        try:
            with faults():
                result = getattr(self.shim, method)(*args)
        except Exception as e:
            if self.calls is not None:
                thrown = e.__cause__ if isinstance(e, ControllerFault) else e   # the Java exception
                self.calls.request(Call(method, args, self.shim.lastRequest(), thrown=thrown))
            raise
        if self.calls is not None:
            self.calls.request(Call(method, args, self.shim.lastRequest(), result))
        return result

    @property
    def end_offset(self) -> int:
        return len(self.metadata_log)

    def read(self, start: int, end: int) -> list[ApiMessage]:
        return self.metadata_log[start:end]

    def commit(self, records: Any, clean: bool = False, configs: bool = False) -> None:
        """Replay Kafka's ``records`` into its managers, appending their translations
        (the module doc) to the metadata log (``clean``: a registration among them
        follows a clean shutdown; ``configs``: a ``ConfigRecord`` among them is a
        change, not the topic's creation)."""
        k = kafka()
        for record in records:
            message = record.message()
            kind = type(message)
            broker = int(message.brokerId()) if kind in k.registration_records else None
            before = self._registration_state(broker) if broker is not None else None
            offset = len(self.metadata_log)
            clearing = kind is k.ClearElrRecord and self.partition() is not None
            epoch_before = self.partition().partition_epoch if clearing else None   # type: ignore[union-attr]
            # the log's replay, which a controller that loaded a snapshot may not hold
            replayed = self._log_partition() if clearing else None
            self.shim.replay(record, offset)
            if self.calls is not None:
                self.calls.replayed(offset)
            self._forget()
            translated: Optional[ApiMessage] = None
            if kind is k.RegisterBrokerRecord:
                translated = RegisterBrokerRecord(broker, int(message.brokerEpoch()), clean, bool(message.fenced()),
                                                  bool(message.inControlledShutdown()))
            elif broker is not None:
                after = self._registration_state(broker)
                if after is not None and before is not None and after[0] != before[0]:
                    translated = FenceBrokerRecord(broker) if after[0] else UnfenceBrokerRecord(broker)
                elif after is not None and after[1] and not (before is not None and before[1]):
                    translated = ControlledShutdownRecord(broker)
            elif kind is k.PartitionRecord:
                translated = PartitionRecord(self.partition())   # type: ignore[arg-type]
            elif kind is k.PartitionChangeRecord:
                translated = change_record_of(message)
            elif configs and kind is k.ConfigRecord and str(message.name()) in DYNAMIC_CONFIGS:
                translated = config_record_of(message)
            elif kind is k.FeatureLevelRecord and str(message.name()) == ELR_FEATURE:
                translated = FeatureLevelRecord(ELR_FEATURE, int(message.featureLevel()))
            elif clearing and (self.partition().partition_epoch != epoch_before   # type: ignore[union-attr]
                               or replayed.cleared() is not replayed):   # type: ignore[union-attr]
                # the clear changed a registration, Kafka's or the log's replay (removeTopicElrs
                # and TopicDelta.replay merge only a partition with an ELR or LastKnownELR)
                translated = ClearElrRecord()
            if translated is not None:
                self.metadata_log.append(translated)

    def _log_partition(self) -> Optional[PartitionRegistration]:
        """The partition registration the translated log's replay gives (a broker's image)."""
        delta = MetadataDelta(MetadataImage())
        for record in self.metadata_log:
            delta.replay(record)
        return delta.apply().partition

    def _registration_state(self, broker: int) -> Optional[tuple[bool, bool]]:
        """(fenced, in controlled shutdown) of Kafka's registration (None: none)."""
        r = self.shim.registration(broker)
        return None if r is None else (bool(r.fenced()), bool(r.inControlledShutdown()))

    # ------------------------------------------------------------ state views

    def _forget(self) -> None:
        """Forget what was read of Kafka's managers: a record was replayed, or the
        managers were replaced."""
        self._partition = self._registrations = self._configs = self._preferred = self._cancel = None

    def preferred_election_refused(self) -> Optional[str]:
        """Why ElectLeaders(PREFERRED) writes nothing now (``ReplicationControlView.
        preferred_election_refused``), asked of Kafka once per replayed change: its
        answer depends on the registrations and the partition only."""
        if self._preferred is None:
            with faults():
                result = self.shim.electPreferredLeader()   # a probe's question: not logged
            error = preferred_election_error(result)
            self._preferred = (error if error is not None or list(result.records()) else "no record",)
        return self._preferred[0]

    def cancel_refused(self) -> Optional[str]:
        """Kafka's error for cancelling the partition's move now (``reassignment(None)``,
        its records not replayed), None when it would cancel; asked of Kafka once per
        replayed change."""
        if self._cancel is None:
            self._cancel = (self.reassignment(None)[0],)
        return self._cancel[0]

    def partition(self) -> Optional[PartitionRegistration]:
        if self._partition is None:
            p = self.shim.partition()
            self._partition = None if p is None else registration_of(p)
        return self._partition

    def configs(self) -> tuple[int, bool, bool]:
        """(MinISR, unclean leader election, ELR on) as Kafka's ConfigurationControlManager
        and FeatureControlManager hold them, read once per replayed record: the
        enablement probes ask at every step."""
        if self._configs is None:
            self._configs = (int(self.shim.minIsr()), bool(self.shim.uncleanLeaderElection()),
                             bool(self.shim.elrEnabled()))
        return self._configs

    def registrations(self) -> dict[int, BrokerRegistrationView]:
        if self._registrations is None:
            out = {}
            for b in self.config.brokers:
                r = self.shim.registration(b)
                offset = int(self.shim.registerBrokerRecordOffset(b))
                shutdown = int(self.shim.controlledShutdownOffset(b)) if self._waits else -1
                out[b] = BrokerRegistrationView(b, None if r is None else int(r.epoch()),
                                                True if r is None else bool(r.fenced()), None if offset < 0 else offset,
                                                r is not None and bool(r.inControlledShutdown()),
                                                bool(self.shim.hasSession(b)), None if shutdown < 0 else shutdown + 1)
            self._registrations = out
        return self._registrations

    # ------------------------------------------------------------ brokers (ch8)

    def _expire_sessions(self, expiring: int) -> None:
        """Time passes: every broker with a session but ``expiring`` keeps heartbeating;
        ``maybeFenceOneStaleBroker`` fences ``expiring`` (again, if a controlled
        shutdown fenced it: ``handleBrokerFenced`` runs all the same)."""
        k = kafka()
        alive = [b for b, r in self.registrations().items() if r.session and b != expiring]
        self.request("expireSessions", k.ints(alive))
        while True:
            result = self.request("fenceOneStaleBroker")
            self.commit(result.records())
            if not result.response():
                break

    def register_broker(self, broker: int, previous_broker_epoch: Optional[int]) -> tuple[int, bool]:
        """BrokerRegistration of a new incarnation presenting its clean-shutdown marker
        (``previous_broker_epoch``, None: none); returns (broker epoch, clean), clean
        as ``ClusterControlManager.registerBroker`` decides it (the marker names the
        registered broker epoch)."""
        self._expire_sessions(expiring=broker)
        previous = self.registrations()[broker].epoch
        clean = previous is not None and previous_broker_epoch == previous
        result = self.request("registerBroker", broker, self.end_offset,
                              -1 if previous_broker_epoch is None else previous_broker_epoch)
        self.commit(result.records(), clean)
        self.request("trackSession", broker)
        self._registrations = None
        return int(result.response().epoch()), clean

    def amend_registration(self, broker: int) -> None:
        """The registration of the incarnation Kafka holds sent again: Kafka's
        ``registerBroker`` amends it (its record replayed)."""
        result = self.request("amendRegistration", broker, self.end_offset)
        self.commit(result.records(), clean=True)
        self._registrations = None

    def can_unfence(self, broker: int, metadata_offset: int) -> bool:
        """``BrokerHeartbeatManager.calculateNextBrokerState``: a fenced broker asking to be
        unfenced is, once the last offset it applied (``metadata_offset`` - 1: the SUT
        counts records) reaches its ``RegisterBrokerRecord``'s."""
        reg = self.registrations()[broker]
        return reg.fenced and reg.record_offset is not None and metadata_offset - 1 >= reg.record_offset

    def _heartbeat(self, broker: int, metadata_offset: int, want_shut_down: bool) -> Any:
        """A heartbeat, its records replayed; one that leaves the broker in controlled
        shutdown sets its controlled shutdown offset to the batch's last offset
        (QuorumController's processBatchEndOffset), under
        Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS."""
        reg = self.registrations()[broker]
        result = self.request("heartbeat", broker, reg.epoch, metadata_offset - 1, False, want_shut_down)
        self.commit(result.records())
        reply = result.response()
        if self._waits and reply.inControlledShutdown():
            self.request("processBatchEndOffset", broker, self.end_offset - 1)
            self._registrations = None
        return reply

    @property
    def _waits(self) -> bool:
        return self.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)

    def report_metadata_offsets(self, offsets: dict[int, int]) -> None:
        """The brokers' periodic heartbeats: each unfenced broker in ``offsets`` reports
        the records it has applied (``BrokerHeartbeatManager.touch``; Kafka counts the
        last offset applied, ``offsets`` - 1). Only under
        Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS: nothing else reads them."""
        if not self._waits:
            return
        registrations = self.registrations()
        for broker, offset in offsets.items():
            if not registrations[broker].fenced:
                self.request("reportMetadataOffset", broker, offset - 1)

    def controlled_shutdown_wait(self, broker: int, offsets: dict[int, int]) -> Optional[str]:
        """Why Kafka's heartbeat manager would not let ``broker`` go once the running
        brokers reported ``offsets`` (``ReplicheckControllerFixture.controlledShutdownWaitsFor``,
        which asks ``BrokerHeartbeatManager.calculateNextBrokerState`` and changes
        nothing), or None; always None when the rule is off."""
        if not self._waits:
            return None
        k = kafka()
        running = sorted(offsets)
        other = int(self.shim.controlledShutdownWaitsFor(broker, k.ints(running),
                                                         k.longs([offsets[b] - 1 for b in running])))
        if other < 0:
            return None
        return f"Kafka's heartbeat manager keeps broker {broker} in controlled shutdown: broker {other} is behind"

    def process_broker_heartbeat(self, broker: int, want_fence: bool, metadata_offset: int) -> bool:
        """A heartbeat (``wantFence`` false: the SUT's brokers never ask to be fenced);
        returns whether the broker is fenced after it."""
        assert not want_fence
        return bool(self._heartbeat(broker, metadata_offset, False).isFenced())

    def expire_session(self, broker: int) -> None:
        """Session expiry (§2.8): ``broker`` stops heartbeating."""
        self._expire_sessions(expiring=broker)

    def begin_controlled_shutdown(self, broker: int, metadata_offset: int = 0) -> None:
        """One heartbeat with ``wantShutDown`` (§8.3): Kafka's
        ``calculateNextBrokerState`` puts a broker that leads in controlled shutdown
        (``handleBrokerInControlledShutdown``) and fences one that leads nothing
        (``SHUTDOWN_NOW``, ``handleBrokerFenced``)."""
        self._heartbeat(broker, metadata_offset, True)

    def process_controlled_shutdown(self, broker: int, metadata_offset: int = 0) -> None:
        """Heartbeats with ``wantShutDown`` until Kafka lets the broker go: a broker that
        leads enters controlled shutdown (``handleBrokerInControlledShutdown`` moves its
        leaderships away), then is fenced (``SHUTDOWN_NOW``, ``handleBrokerFenced``)."""
        for _ in range(3):
            if self._heartbeat(broker, metadata_offset, True).shouldShutDown():
                return
        raise KafkaRejected(f"Kafka's controller did not let broker {broker} shut down")

    # -------------------------------------------------------------- partition

    def handle_alter_partition(self, req: AlterPartitionRequest) -> None:
        """AlterPartition (§2.9.2) through ``ReplicationControlManager.alterPartition``,
        answered with Kafka's response. The proposed ISR lists the current ISR's members
        in Kafka's order, then the added ones (the leader's ISR is a Scala set, which
        iterates small sets in insertion order)."""
        k = kafka()
        current = self.shim.partition()
        kept = [int(r) for r in current.isr if int(r) in req.isr]
        isr = kept + sorted(req.isr - frozenset(kept))
        given = dict(req.added_broker_epochs)
        epochs = [-1 if given.get(r) is None else given[r] for r in isr]
        result = self.request("alterPartition", req.src, req.broker_epoch, req.leader_epoch - 1,
                              req.partition_epoch - 1, k.ints(isr), k.longs(epochs),
                              recovery_state(req.leader_recovery_state).value())
        self.commit(result.records())
        response = result.response()
        error = k.error_name(response.errorCode())
        answer = None
        if error is None:
            answer = response.topics().get(0).partitions().get(0)
            error = k.error_name(answer.errorCode())
        if error is not None:
            self.network.send(lambda i: AlterPartitionResponse(i, req.src, req.id, error))
        else:
            self.network.send(lambda i: AlterPartitionResponse(
                i, req.src, req.id, None, frozenset(int(r) for r in answer.isr()), int(answer.leaderEpoch()) + 1,
                int(answer.partitionEpoch()) + 1))

    def reassignment(self, target: Optional[tuple[int, ...]], logged: bool = False) -> tuple[Optional[str], Any]:
        """(Kafka's error with its message, or None; the records) of
        AlterPartitionReassignments to ``target`` (None: cancel), nothing replayed
        (``logged``: a request whose records are, not a probe's question)."""
        k = kafka()
        replicas = None if target is None else k.ints(target)
        if logged:
            result = self.request("alterPartitionReassignment", replicas)
        else:
            with faults():
                result = self.shim.alterPartitionReassignment(replicas)
        error = k.error_name(result.response().error().code())
        return (None if error is None else f"{error}: {result.response().message()}"), result.records()

    def _reassign(self, target: Optional[tuple[int, ...]]) -> None:
        error, records = self.reassignment(target, logged=True)
        if error is not None:
            raise KafkaRejected(f"AlterPartitionReassignments({'cancel' if target is None else list(target)}): {error}")
        self.commit(records)

    def alter_partition_reassignments(self, target: tuple[int, ...]) -> None:
        """AlterPartitionReassignments (ch4), replication factor changes allowed."""
        self._reassign(target)

    def cancel_partition_reassignment(self) -> None:
        """AlterPartitionReassignments with no replicas: the move is reverted (§4.5)."""
        self._reassign(None)

    def unclean_recovery(self, log_info: Callable) -> None:
        raise KafkaRejected("Kafka has no unclean recovery (unclean.recovery.strategy)")

    def unclean_leader_election(self) -> None:
        """The periodic unclean election of a leaderless partition
        (``maybeElectUncleanLeaders``)."""
        self.commit(self.request("electUncleanLeaders").records())

    def elect_preferred_leader(self) -> None:
        """ElectLeaders with ElectionType.PREFERRED through Kafka's
        ``ReplicationControlManager.electLeaders``, its records replayed; raises
        ``KafkaRejected`` with the partition's error when Kafka elects nothing."""
        result = self.request("electPreferredLeader")
        error = preferred_election_error(result)
        if error is not None:
            raise KafkaRejected(f"ElectLeaders(PREFERRED): {error}")
        self.commit(result.records())

    # ---------------------------------------------------------- configuration

    def incremental_alter_configs(self, name: str, value: object, cluster_default: bool = False) -> None:
        """IncrementalAlterConfigs of the topic config ``name`` (one of
        ``model.DYNAMIC_CONFIGS``), or with ``cluster_default`` of the cluster-level
        default (resource BROKER, empty name), through Kafka's
        ``ConfigurationControlManager``: its ``ConfigRecord`` and, for
        ``min.insync.replicas`` with ELR on, the ``ClearElrRecord`` it adds
        (``createClearElrRecordsAsNeeded``: the topic's, or every topic's), replayed.
        Raises KafkaRejected with Kafka's error."""
        k = kafka()
        text = str(value).lower() if isinstance(value, bool) else str(value)
        result = self.request("alterClusterConfig" if cluster_default else "alterTopicConfig", name, text)
        error = k.error_name(result.response().error().code())
        if error is not None:
            raise KafkaRejected(f"IncrementalAlterConfigs({name}={text}): {error}: {result.response().message()}")
        self.commit(result.records(), configs=True)

    def update_elr_feature(self, enabled: bool) -> None:
        """UpdateFeatures of ``eligible.leader.replicas.version`` to 1 (``enabled``, an
        upgrade) or 0 (a safe downgrade) through Kafka's
        ``ConfigurationControlManager.updateFeatures``: the ``FeatureLevelRecord``,
        after the cluster-level ``min.insync.replicas`` an upgrade writes when there is
        none (``maybeGenerateElrSafetyRecords``), replayed. Raises KafkaRejected with
        Kafka's error."""
        result = self.request("updateElrFeature", enabled)
        error = kafka().error_name(result.response().error().code())
        if error is not None:
            raise KafkaRejected(f"UpdateFeatures({ELR_FEATURE}={int(enabled)}): {error}: {result.response().message()}")
        self.commit(result.records(), configs=True)
