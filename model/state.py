"""State of one partition replicated on a KRaft cluster: immutable, hashable values.

Offsets are exclusive ends where the protocol says so (LEO, HWM, LESO, flushed
offset, §2.2.2). Broker ids are ints; ``NO_LEADER`` (-1) is Kafka's "no leader".
Every class is a frozen attrs class; collections are tuples and frozensets; the
few maps are tuples of ``(key, value)`` pairs sorted by key.
"""

from __future__ import annotations

import enum
from typing import Optional, Union

import attrs

from .config import Config

NO_LEADER = -1          # PartitionRegistration.leader when there is no leader (§2.8)
NO_LEADER_CHANGE = -2   # PartitionChangeRecord.leader when the leader is unchanged


class BrokerStatus(enum.Enum):
    """Broker lifecycle (ch8)."""

    STARTING = "STARTING"            # registered, catching up metadata, replicas inactive
    RUNNING = "RUNNING"              # replicas act on their materialized metadata
    OFFLINE_CLEAN = "OFFLINE_CLEAN"  # after a controlled shutdown (flushed, marker written)
    OFFLINE_DIRTY = "OFFLINE_DIRTY"  # after an unclean shutdown (no marker)

    def __repr__(self) -> str:
        return self.value


class Role(enum.Enum):
    """Role a replica has assumed from its materialized metadata (§2.10)."""

    LEADER = "leader"
    FOLLOWER = "follower"
    NONE = "none"  # broker not running: the replica is inactive

    def __repr__(self) -> str:
        return self.value


# --------------------------------------------------------------------------- logs

@attrs.frozen
class Record:
    """One log record (batch): the leader epoch it was written in and its value.

    Its offset is its index in the replica's log (offsets start at 0, §2.2.2).
    """

    epoch: int
    value: int

    def __repr__(self) -> str:
        return f"e{self.epoch}:{self.value}"


@attrs.frozen
class EpochEndOffset:
    """Result of an End Offset for Leader Epoch lookup (§3.2): the epoch and its
    exclusive end offset. Also the ``divergingEpoch`` field of a fetch response."""

    epoch: int
    end_offset: int


# ----------------------------------------------------------------- partition metadata

#: Kafka's LeaderRecoveryState (KIP-704): a partition whose leader was elected
#: uncleanly is RECOVERING until the leader's next accepted AlterPartition.
RECOVERED = "RECOVERED"
RECOVERING = "RECOVERING"
LEADER_RECOVERY_STATES = (RECOVERED, RECOVERING)


@attrs.frozen
class PartitionMetadata:
    """The controller's partition registration (§2.3), as materialized on a broker.

    replicas: ordered replica set (during a reassignment the union, §4.2).
    leader: broker id or NO_LEADER. isr, elr, last_known_elr: frozensets of broker ids.
    adding, removing: replicas being added/removed by an ongoing reassignment (ch4).
    leader_recovery_state: RECOVERED, or RECOVERING from an unclean election until
    the leader's next accepted AlterPartition (Kafka's LeaderRecoveryState, KIP-704;
    under Rule.LEADER_RECOVERY_STATE only: the chapters have none, so RECOVERED).
    """

    replicas: tuple[int, ...]
    isr: frozenset[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    elr: frozenset[int] = frozenset()
    last_known_elr: frozenset[int] = frozenset()
    adding: frozenset[int] = frozenset()
    removing: frozenset[int] = frozenset()
    leader_recovery_state: str = RECOVERED

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replica set a reassignment is heading for (replicas minus removing)."""
        return tuple(r for r in self.replicas if r not in self.removing)


# ------------------------------------------------------------------ metadata records

@attrs.frozen
class RegisterBrokerRecord:
    """BrokerRegistration accepted (§8.1). ``broker_epoch`` is this record's offset.
    ``clean`` is False when the broker registered with an empty broker epoch (§5.2).
    ``fenced``, ``in_controlled_shutdown``: the registration it states; a new
    incarnation's is fenced, an amended one (Rule.REGISTRATION_AMENDED: the same
    incarnation registering again, its broker epoch kept) copies the registration
    it amends (``ClusterControlManager.registerBroker``)."""

    broker: int
    broker_epoch: int
    clean: bool
    fenced: bool = True
    in_controlled_shutdown: bool = False


@attrs.frozen
class FenceBrokerRecord:
    broker: int


@attrs.frozen
class UnfenceBrokerRecord:
    broker: int


@attrs.frozen
class ControlledShutdownRecord:
    """The broker entered controlled shutdown (§8.3; Kafka's
    BrokerRegistrationChangeRecord with inControlledShutdown set): registered and
    unfenced, but no longer a valid leader or ISR member, until it registers again."""

    broker: int


@attrs.frozen
class PartitionRecord:
    """Creation of the partition with its full initial registration."""

    partition: PartitionMetadata


@attrs.frozen
class PartitionChangeRecord:
    """A delta to the partition registration (§2.3.2). ``None`` fields are unchanged;
    ``leader`` is NO_LEADER_CHANGE when unchanged. Applying it bumps the partition
    epoch, and the leader epoch whenever ``leader`` is set (even to the same leader,
    which is how a completed reassignment bumps the epoch, §2.3.1)."""

    leader: int = NO_LEADER_CHANGE
    isr: Optional[frozenset[int]] = None
    elr: Optional[frozenset[int]] = None
    last_known_elr: Optional[frozenset[int]] = None
    replicas: Optional[tuple[int, ...]] = None
    adding: Optional[frozenset[int]] = None
    removing: Optional[frozenset[int]] = None
    leader_recovery_state: Optional[str] = None


MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
#: The topic configs that change at run time (``AlterMinIsr``, ``AlterUncleanLeaderElection``).
DYNAMIC_CONFIGS = (MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE)


@attrs.frozen
class ConfigRecord:
    """A config set (Kafka's ``ConfigRecord``): ``name`` one of
    ``DYNAMIC_CONFIGS``, ``value`` an int (MinISR) or a bool. ``cluster_default``:
    False for the topic's own config (resource type TOPIC), True for the
    cluster-level default (resource type BROKER with the empty name,
    ``AlterClusterMinIsr``), which the topic's own overrides. It changes no
    partition registration; a broker's log takes a new topic MinISR once it
    applies the record (``Broker.min_isr``)."""

    name: str
    value: Union[int, bool]
    cluster_default: bool = False


#: The feature ``UpdateElrFeature`` sets (Kafka's ``EligibleLeaderReplicasVersion.FEATURE_NAME``).
ELR_FEATURE = "eligible.leader.replicas.version"
#: The ``min.insync.replicas`` of a controller with none in its static config
#: (``ServerLogConfigs.MIN_IN_SYNC_REPLICAS_DEFAULT``): the cluster-level default an
#: ELR upgrade writes when there is none (``ConfigurationControlManager.maybeGenerateElrSafetyRecords``).
STATIC_MIN_INSYNC_REPLICAS = 1


@attrs.frozen
class FeatureLevelRecord:
    """A finalized feature level (Kafka's ``FeatureLevelRecord``): ``name`` is
    ``ELR_FEATURE``, ``level`` 1 (ELR on) or 0 (off). It changes no partition
    registration; the controller's partition changes read it (Rule.ELR_FEATURE_LEVEL)."""

    name: str
    level: int


@attrs.frozen
class ClearElrRecord:
    """Kafka's ``ClearElrRecord`` (Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, Kafka 4.0.0): its
    replay empties the ELR and LastKnownELR of a partition holding either, as a
    merged change that moves the partition epoch, and leaves any other partition
    as it is (``ReplicationControlManager.removeTopicElrs``, ``TopicDelta.replay``):
    what it does depends on the registration it is replayed on. Written only when
    it changes the registration of the active controller or of the log's replay."""


MetadataRecord = Union[RegisterBrokerRecord, FenceBrokerRecord, UnfenceBrokerRecord, ControlledShutdownRecord,
                       PartitionRecord, PartitionChangeRecord, ClearElrRecord, ConfigRecord, FeatureLevelRecord]

_CLEARED = PartitionChangeRecord(elr=frozenset(), last_known_elr=frozenset())


def merge(partition: Optional[PartitionMetadata], record: MetadataRecord) -> Optional[PartitionMetadata]:
    """Apply one metadata record to a materialized partition (§2.3.2). Pure."""
    if isinstance(record, PartitionRecord):
        return record.partition
    if isinstance(record, ClearElrRecord):
        if partition is None or not (partition.elr or partition.last_known_elr):
            return partition
        record = _CLEARED
    if not isinstance(record, PartitionChangeRecord) or partition is None:
        return partition
    p = partition
    bump = record.leader != NO_LEADER_CHANGE
    return PartitionMetadata(
        replicas=p.replicas if record.replicas is None else record.replicas,
        isr=p.isr if record.isr is None else record.isr,
        leader=record.leader if bump else p.leader,
        leader_epoch=p.leader_epoch + 1 if bump else p.leader_epoch,
        partition_epoch=p.partition_epoch + 1,
        elr=p.elr if record.elr is None else record.elr,
        last_known_elr=p.last_known_elr if record.last_known_elr is None else record.last_known_elr,
        adding=p.adding if record.adding is None else record.adding,
        removing=p.removing if record.removing is None else record.removing,
        leader_recovery_state=(p.leader_recovery_state if record.leader_recovery_state is None
                               else record.leader_recovery_state),
    )


def materialize(records: tuple[MetadataRecord, ...], upto: int) -> Optional[PartitionMetadata]:
    """The partition registration after the first ``upto`` metadata records."""
    p: Optional[PartitionMetadata] = None
    for rec in records[:upto]:
        p = merge(p, rec)
    return p


# ---------------------------------------------------------------------- controller

@attrs.frozen
class BrokerRegistration:
    """The controller's registration of one broker (§6.5.1, §8.1).

    broker_epoch: offset of the broker's latest RegisterBrokerRecord (None: never
    registered). fenced: whether the controller has fenced it.
    in_controlled_shutdown: whether it entered controlled shutdown while it led
    (§8.3, Kafka's BrokerRegistration.inControlledShutdown); cleared by its next
    registration. A broker fenced or in controlled shutdown is not active
    (ClusterControlManager.isActive): never elected, never added to the ISR.
    session: whether the controller still tracks a heartbeat session for the
    broker epoch (Kafka's ``BrokerHeartbeatManager``): from its registration until
    it expires (``FenceBroker``); a fencing by controlled shutdown keeps it.
    controlled_shutdown_offset: only under
    Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS (else None): the metadata
    log's end (exclusive) after the records of the heartbeat that put the broker
    in controlled shutdown, which every active broker must have applied before it
    is let go (Kafka's ``BrokerHeartbeatManager`` controlledShutdownOffset, the
    batch's last offset + 1); None once it is fenced, registers again, or a
    failover starts a new heartbeat manager.
    """

    broker: int
    broker_epoch: Optional[int]
    fenced: bool
    in_controlled_shutdown: bool = False
    session: bool = True
    controlled_shutdown_offset: Optional[int] = None


@attrs.frozen
class ControllerState:
    """The active controller: registrations (in ``Config.brokers`` order), the
    partition registration, and the committed metadata log (§2.3, ch8).
    ``min_isr``, ``unclean_leader_election``: the topic's configs once an
    ``AlterMinIsr`` / ``AlterUncleanLeaderElection`` changed them (None: the
    creation's, in ``Config``); read them as ``ClusterState.min_isr`` and
    ``ClusterState.unclean_leader_election``. ``elr_index``: only under
    Rule.CLEARED_ELR_STAYS_INDEXED (else empty): Kafka's broker-to-ELR index
    (``BrokersToElrs``) for the partition, as sorted ``(broker, entries)`` pairs:
    a cleared ELR member keeps its entry, and joining the ELR again adds a
    second. ``unheard``: only under Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS
    (else empty): brokers not running when the controller became active, whose
    metadata offset it has not heard since (Kafka's heartbeat manager holds -1 for
    them until a heartbeat, or a registration, comes). ``elr_enabled``: whether
    the finalized ``eligible.leader.replicas.version`` is 1 (Kafka's
    ``FeatureControlManager.isElrFeatureEnabled``); only ``UpdateElrFeature``
    (Rule.ELR_FEATURE_LEVEL) turns it off. ``snapshot_offset``: only after
    ``FailOverFromSnapshot`` (else -1): the offset of the last record of the
    snapshot the active controller loaded, at which it replayed every registration
    (``QuorumController.handleLoadSnapshot``). ``replayed``: only after
    ``FailOverFromSnapshot``, while what it loaded differs from the log's replay
    (else None): the partition registration and broker-to-ELR index a controller
    that replayed the log holds instead, kept beside the loaded ones for the next
    ``FailOverController``."""

    registrations: tuple[BrokerRegistration, ...]
    partition: PartitionMetadata
    metadata_log: tuple[MetadataRecord, ...]
    min_isr: Optional[int] = None
    unclean_leader_election: Optional[bool] = None
    elr_index: tuple[tuple[int, int], ...] = ()
    unheard: frozenset[int] = frozenset()
    elr_enabled: bool = True
    snapshot_offset: int = -1
    replayed: Optional[tuple[PartitionMetadata, tuple[tuple[int, int], ...]]] = None

    @property
    def log_replay(self) -> tuple[PartitionMetadata, tuple[tuple[int, int], ...]]:
        """The partition registration and broker-to-ELR index the metadata log's
        replay gives (a standby's; the registration a broker's image once caught up):
        ``partition`` and ``elr_index`` unless a snapshot was loaded (``replayed``)."""
        return (self.partition, self.elr_index) if self.replayed is None else self.replayed

    @property
    def log_partition(self) -> PartitionMetadata:
        """The partition registration of ``log_replay``."""
        return self.log_replay[0]

    def elr_entries(self, broker: int) -> int:
        """How many entries ``elr_index`` holds for ``broker``."""
        return dict(self.elr_index).get(broker, 0)


# ------------------------------------------------------------------------ replicas

@attrs.frozen
class FollowerState:
    """What a leader knows of one follower, from its fetch requests (§2.2.2).

    fetch_offset: the follower's LEO as of its last fetch (None: unknown).
    broker_epoch: the follower's broker epoch from that fetch (None: unknown).
    last_fetch_leader_epoch: the leader epoch in which that fetch was received;
      cleared (None) whenever the leader moves to a new leader epoch (§2.10.3), so
      non-None means "fetched in the current leader epoch" (§6.5.4 condition 3).
    caught_up: only under Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS without the clock
      (else False): Kafka's lastCaughtUpTimeMs is "now" (see the rule).
    last_fetch_leader_leo: only under Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS (else
      None): the leader's LEO at the follower's last fetch, the largest so far
      (Replica.updateFetchStateOrThrow, lastFetchLeaderLogEndOffset).
    last_fetch_ms, last_caught_up_ms: only under Rule.REPLICA_LAG_TIME (else None):
      the time of the last fetch and the last caught-up time on the brokers'
      clock (ms; None: never, Kafka's 0; ``model.clock``).
    """

    fetch_offset: Optional[int] = None
    broker_epoch: Optional[int] = None
    last_fetch_leader_epoch: Optional[int] = None
    caught_up: bool = False
    last_fetch_leader_leo: Optional[int] = None
    last_fetch_ms: Optional[int] = None
    last_caught_up_ms: Optional[int] = None


@attrs.frozen
class Replica:
    """One replica of the partition, hosted by one broker (§2.2.2, §2.10, ch3, ch5).

    log: records; offset = index. flushed: records below it survive a lossy unclean
    shutdown. hwm: the local HWM (exclusive). role and leader / leader_epoch /
    partition_epoch: what the replica acted on from its materialized metadata.
    A follower fetches from ``leader`` with fetch offset = LEO and last fetched epoch
    = the latest epoch of its epoch cache (§3.2).
    Leader-only: leso (Leader Epoch Start Offset, §6.4.2), isr (committed ISR),
    pending_isr and pending_request (the in-flight AlterPartition, §2.9.2), and the
    broker epochs it named (``pending_broker_epochs``, which a re-sent request names again),
    followers (sorted ``(broker, FollowerState)`` pairs).
    unwritten_epoch: under Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH, the epoch cache's
    entry ``(leader epoch, start offset = LEO)`` of an epoch this replica led
    without appending a record, kept after it stepped down; None otherwise (the
    cache is then the records' epochs, and a leader's own entry at its LESO).
    abandoned: only under Variant.EXPANSION_ABANDONED_AFTER_REJECTION (else empty):
    ``(leader epoch, follower)`` of every expansion the controller rejected, which
    this leader never proposes again in that epoch.
    stopped_in_epoch: the leader epoch in which this follower stopped fetching
    (else None): under Rule.FENCED_FETCH_AWAITS_NEW_EPOCH, answered
    FENCED_LEADER_EPOCH; under Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE,
    after truncating on a diverging epoch.
    epoch_checkpoint: under Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, the entries
    ``((epoch, start offset), ...)`` of the leader-epoch checkpoint on disk while a
    truncation's write of it is scheduled; None when the file holds the cache.
    epoch_cache: the epoch cache when it is not the one the records give (an
    unclean restart read a checkpoint whose scheduled write was lost: entries of
    epochs it holds no record of); None otherwise (see ``model.log``).
    """

    log: tuple[Record, ...] = ()
    flushed: int = 0
    hwm: int = 0
    role: Role = Role.NONE
    leader: int = NO_LEADER
    leader_epoch: int = -1
    partition_epoch: int = -1
    leso: Optional[int] = None
    isr: frozenset[int] = frozenset()
    pending_isr: Optional[frozenset[int]] = None
    pending_request: Optional[int] = None
    pending_broker_epochs: tuple[tuple[int, Optional[int]], ...] = ()
    followers: tuple[tuple[int, FollowerState], ...] = ()
    unwritten_epoch: Optional[tuple[int, int]] = None
    abandoned: frozenset[tuple[int, int]] = frozenset()
    stopped_in_epoch: Optional[int] = None
    epoch_checkpoint: Optional[tuple[tuple[int, int], ...]] = None
    epoch_cache: Optional[tuple[tuple[int, int], ...]] = None

    @property
    def leo(self) -> int:
        """Log End Offset: the next offset to be written (exclusive end)."""
        return len(self.log)

    @property
    def fetch_offset(self) -> int:
        return len(self.log)

    @property
    def last_fetched_epoch(self) -> Optional[int]:
        """The latest epoch of the epoch cache (§3.2; Kafka's ``UnifiedLog.latestEpoch``):
        the kept unwritten epoch if any, else the epoch of the last record (None for
        an empty log); the restored cache's latest when there is one."""
        if self.epoch_cache is not None:
            return self.epoch_cache[-1][0] if self.epoch_cache else None
        if self.unwritten_epoch is not None:
            return self.unwritten_epoch[0]
        return self.log[-1].epoch if self.log else None

    @property
    def maximal_isr(self) -> frozenset[int]:
        """Committed ISR ∪ proposed ISR (§6.5.2)."""
        return self.isr if self.pending_isr is None else self.isr | self.pending_isr

    def follower(self, broker: int) -> Optional[FollowerState]:
        for b, fs in self.followers:
            if b == broker:
                return fs
        return None


@attrs.frozen
class Broker:
    """One broker (ch8): lifecycle status, broker epoch of its current session,
    clean-shutdown marker (the broker epoch written at controlled shutdown),
    metadata offset (records applied), materialized partition metadata, and the
    replica it hosts (None when it hosts none). ``min_isr``: the MinISR its log
    config holds once it applied a ``ConfigRecord`` (None: the creation's); read
    it as ``ClusterState.leader_min_isr``. ``shutting_down``: the broker asked to
    shut down (§8.3, PENDING_CONTROLLED_SHUTDOWN: its heartbeats carry
    wantShutDown, so the controller never unfences it again) and has not stopped."""

    id: int
    status: BrokerStatus
    broker_epoch: Optional[int]
    clean_shutdown_epoch: Optional[int]
    metadata_offset: int
    image: Optional[PartitionMetadata]
    replica: Optional[Replica]
    min_isr: Optional[int] = None
    shutting_down: bool = False


# ------------------------------------------------------------------------- network

@attrs.frozen
class FetchRequest:
    """Follower → leader (§2.2.2)."""

    id: int
    src: int
    dst: int
    broker_epoch: int
    leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: Optional[int]


@attrs.frozen
class FetchResponse:
    """Leader → follower. Echoes the request's fetch state so the follower can
    validate it; carries an error, a diverging epoch (§3.2), or records + HWM."""

    id: int
    src: int
    dst: int
    broker_epoch: int
    request_leader_epoch: int
    fetch_offset: int
    error: Optional[str] = None
    diverging_epoch: Optional[EpochEndOffset] = None
    records: tuple[Record, ...] = ()
    hwm: int = 0
    log_end_offset: Optional[int] = None  # only with OFFSET_OUT_OF_RANGE (pre-KIP-101 variant)


@attrs.frozen
class AlterPartitionRequest:
    """Leader → controller (§2.9.2): proposed ISR, with the broker epochs of the
    replicas it adds, and the leader recovery state the leader holds (Kafka's
    ``AlterPartitionRequestData.PartitionData.leaderRecoveryState``: a leader marks
    itself RECOVERED when it becomes leader, ``Partition.makeLeader``)."""

    id: int
    src: int
    broker_epoch: int
    leader_epoch: int
    partition_epoch: int
    isr: frozenset[int]
    added_broker_epochs: tuple[tuple[int, Optional[int]], ...]
    leader_recovery_state: str = RECOVERED


@attrs.frozen
class AlterPartitionResponse:
    """Controller → leader: an error, or the accepted ISR with its epochs."""

    id: int
    dst: int
    request_id: int
    error: Optional[str]
    isr: frozenset[int] = frozenset()
    leader_epoch: int = -1
    partition_epoch: int = -1


Message = Union[FetchRequest, FetchResponse, AlterPartitionRequest, AlterPartitionResponse]


@attrs.frozen
class Network:
    """In-flight messages (ordered by id); any may be delivered next."""

    messages: tuple[Message, ...] = ()
    next_id: int = 1

    def get(self, msg_id: int) -> Optional[Message]:
        for m in self.messages:
            if m.id == msg_id:
                return m
        return None


# ------------------------------------------------------------------ history (ghost)

@attrs.frozen
class PendingWrite:
    """An acks=all produce written to ``broker``'s log at ``offset``, awaiting the HWM."""

    value: int
    broker: int
    offset: int


@attrs.frozen
class AckedWrite:
    """A positive acknowledgement of ``value`` at ``offset``. ``produced_before``:
    History.next_value at the time of the ack, so every write with a value at or
    above it was produced after this acknowledgement (real-time order, §6.1)."""

    value: int
    offset: int
    produced_before: int = 0


@attrs.frozen
class ListOffsetsAnswer:
    """A ListOffsets answer from the leader in ``leader_epoch``: the HWM, or None
    for "unknown" (HWM below LESO, §6.4.2)."""

    broker: int
    leader_epoch: int
    hwm: Optional[int]
    true_hwm: int = 0  # the True HWM when the answer was given (ghost)


@attrs.frozen
class UncleanElectionReport:
    """An unclean recovery (§5.3) or legacy unclean election (ch7): reported as
    potential data loss (§5.3.2)."""

    mechanism: str  # "balanced" | "proactive" | "unclean_leader_election"
    leader: int
    leader_epoch: int


@attrs.frozen
class History:
    """Ghost state kept for the properties, as the TLA+ specs keep it.

    committed: the committed log: the records below the highest HWM any leader
    advanced to, as that leader held them; its length is the True HWM (§6.4).
    acked / nacked: the
    outcome of produce requests, in acknowledgement order. pending: writes awaiting
    the HWM. consumed: records consumed by offset (index = offset). list_offsets:
    ListOffsets answers in order (a repeat of the previous answer is not stored).
    lossy_shutdowns: count of lossy unclean shutdowns (the §6.2 fault budget).
    unclean_elections: every unclean recovery or unclean leader election.
    unclean: brokers whose replica restarted after an unclean shutdown and has not
    yet provably caught up (its leader received a fetch, in its current broker
    epoch, from a log holding the whole committed log) — for Unclean Exclusion.
    next_value: the value the next Produce writes (values are unique).
    min_isr_floor: the lowest MinISR ever set by an ``AlterMinIsr`` (None: never
    changed): the fault budget counts from the lowest MinISR any commit may have
    used (``properties.base.within_fault_budget``).
    controller_faults: the message of every controller event that faulted (Rule.
    LEADER_ACCEPTOR_READS_DIRECTORY), in order: each made the active controller fail over.
    """

    committed: tuple[Record, ...] = ()
    acked: tuple[AckedWrite, ...] = ()
    nacked: tuple[int, ...] = ()
    pending: tuple[PendingWrite, ...] = ()
    consumed: tuple[Record, ...] = ()
    list_offsets: tuple[ListOffsetsAnswer, ...] = ()
    lossy_shutdowns: int = 0
    unclean_elections: tuple[UncleanElectionReport, ...] = ()
    unclean: frozenset[int] = frozenset()
    next_value: int = 1
    min_isr_floor: Optional[int] = None
    controller_faults: tuple[str, ...] = ()

    @property
    def true_hwm(self) -> int:
        """The True HWM (§6.4): end of the committed log, never decreasing."""
        return len(self.committed)


# ------------------------------------------------------------------------- cluster

@attrs.frozen(cache_hash=True)
class ClusterState:
    """The whole model state. ``brokers`` is in ``config.brokers`` order.
    ``now_ms``: the brokers' clock in ms from the start (moves only under
    Rule.REPLICA_LAG_TIME, ``model.clock``)."""

    config: Config
    controller: ControllerState
    brokers: tuple[Broker, ...]
    network: Network
    history: History
    now_ms: int = 0

    def broker(self, broker_id: int) -> Broker:
        return self.brokers[self.config.position(broker_id)]

    def registration(self, broker_id: int) -> BrokerRegistration:
        return self.controller.registrations[self.config.position(broker_id)]

    def replica(self, broker_id: int) -> Optional[Replica]:
        return self.broker(broker_id).replica

    def pending_metadata(self, broker_id: int) -> int:
        """Records of the controller's metadata log ``broker_id`` has not applied
        yet (§2.3.2): what a ``ReplicateMetadata`` may apply. Raises ValueError for
        an unknown broker."""
        return len(self.controller.metadata_log) - self.broker(broker_id).metadata_offset

    @property
    def partition(self) -> PartitionMetadata:
        """The controller's partition registration."""
        return self.controller.partition

    @property
    def min_isr(self) -> int:
        """The topic's MinISR as the controller holds it (§2.6): ``Config.min_isr``
        until an ``AlterMinIsr`` changes it. What the controller's elections, ELR
        rules and reassignment checks read."""
        m = self.controller.min_isr
        return self.config.min_isr if m is None else m

    @property
    def unclean_leader_election(self) -> bool:
        """The topic's ``unclean.leader.election.enable`` as the controller holds it
        (ch7): ``Config.unclean_leader_election`` until an
        ``AlterUncleanLeaderElection`` changes it."""
        u = self.controller.unclean_leader_election
        return self.config.unclean_leader_election if u is None else u

    @property
    def elr_enabled(self) -> bool:
        """Whether the controller's partition changes keep an ELR (KIP-966): the ELR
        feature level it holds (``ControllerState.elr_enabled``, Rule.ELR_FEATURE_LEVEL)."""
        return self.controller.elr_enabled

    def leader_min_isr(self, broker_id: int) -> int:
        """The MinISR a leader on ``broker_id`` acts on: its log config (the last
        ``ConfigRecord`` it applied, else ``Config.min_isr``), capped at its replica
        count as Kafka's ``Partition.effectiveMinIsr`` caps it. What its HWM
        advance and its acks=all answers read (§2.6). Raises ValueError for an
        unknown broker."""
        b = self.broker(broker_id)
        m = self.config.min_isr if b.min_isr is None else b.min_isr
        return m if b.image is None else min(m, len(b.image.replicas))
