"""Metadata records, the partition registration, and how a broker materializes
them: a ``MetadataDelta`` replays one batch of records onto the previous
``MetadataImage`` and produces the next image (§2.3, §2.3.2).

Records and registrations are immutable once built (as Kafka's are).
"""

from __future__ import annotations

from typing import Optional, Union

from model import NO_LEADER_CHANGE, RECOVERED

from .bugs import Bug


class PartitionRegistration:
    """The controller's registration of the partition (§2.3): replicas in order
    (the union during a reassignment, ch4), ISR, leader (or NO_LEADER), leader
    epoch, partition epoch, ELR, LastKnownELR, adding and removing replicas, and
    the leader recovery state (Kafka's ``LeaderRecoveryState``: RECOVERED, or
    RECOVERING after an unclean election)."""

    __slots__ = ("replicas", "isr", "leader", "leader_epoch", "partition_epoch", "elr",
                 "last_known_elr", "adding", "removing", "leader_recovery_state", "_abstract")
    FIELDS = __slots__[:-1]   # the registration's fields, without the memo

    def __init__(self, replicas: tuple[int, ...], isr: frozenset[int], leader: int, leader_epoch: int,
                 partition_epoch: int, elr: frozenset[int] = frozenset(),
                 last_known_elr: frozenset[int] = frozenset(), adding: frozenset[int] = frozenset(),
                 removing: frozenset[int] = frozenset(), leader_recovery_state: str = RECOVERED) -> None:
        self.replicas = tuple(replicas)
        self.isr = frozenset(isr)
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.elr = frozenset(elr)
        self.last_known_elr = frozenset(last_known_elr)
        self.adding = frozenset(adding)
        self.removing = frozenset(removing)
        self.leader_recovery_state = leader_recovery_state
        self._abstract = None  # memo of the observed value

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def merge(self, record: "PartitionChangeRecord") -> "PartitionRegistration":
        """The registration after ``record`` (Kafka's ``PartitionRegistration.merge``,
        §2.3.2): each field the record sets replaces this one's; the partition epoch
        always increments, the leader epoch whenever the record sets the leader (even
        to the same broker, §2.3.1)."""
        changes = dict(record.changed_fields())
        merged = {field: getattr(self, field) for field in self.FIELDS}
        merged.update(changes)
        if "leader" in changes:
            merged["leader_epoch"] += 1
        merged["partition_epoch"] += 1
        return PartitionRegistration(**merged)  # type: ignore[arg-type]

    def without_elr(self) -> "PartitionRegistration":
        """This registration with no ELR nor LastKnownELR, its epochs kept: what a
        snapshot written with the ELR feature off holds (``PartitionRegistration.toRecord``)."""
        fields = {field: getattr(self, field) for field in self.FIELDS}
        fields.update(elr=frozenset(), last_known_elr=frozenset())
        return PartitionRegistration(**fields)  # type: ignore[arg-type]

    def cleared(self) -> "PartitionRegistration":
        """The replay of a ``ClearElrRecord`` (``ReplicationControlManager.removeTopicElrs``,
        ``TopicDelta.replay``): with an ELR or LastKnownELR, both emptied by a merge (the
        partition epoch moves); otherwise this registration."""
        if not (self.elr or self.last_known_elr):
            return self
        return self.merge(PartitionChangeRecord(elr=frozenset(), last_known_elr=frozenset()))

    def __repr__(self) -> str:
        return (f"PartitionRegistration(replicas={list(self.replicas)}, isr={sorted(self.isr)}, "
                f"leader={self.leader}, le={self.leader_epoch}, pe={self.partition_epoch}, "
                f"elr={sorted(self.elr)}, lkelr={sorted(self.last_known_elr)}, "
                f"adding={sorted(self.adding)}, removing={sorted(self.removing)}, "
                f"leader_recovery_state={self.leader_recovery_state})")


# ------------------------------------------------------------------------ records

class RegisterBrokerRecord:
    """A BrokerRegistration accepted (§8.1); ``broker_epoch`` is its log offset, or
    the one an amended registration keeps; ``fenced`` and ``in_controlled_shutdown``:
    the registration it states (an amendment copies them)."""
    __slots__ = ("broker_id", "broker_epoch", "clean", "fenced", "in_controlled_shutdown")

    def __init__(self, broker_id: int, broker_epoch: int, clean: bool, fenced: bool = True,
                 in_controlled_shutdown: bool = False) -> None:
        self.broker_id, self.broker_epoch, self.clean = broker_id, broker_epoch, clean
        self.fenced, self.in_controlled_shutdown = fenced, in_controlled_shutdown


class FenceBrokerRecord:
    __slots__ = ("broker_id",)

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id


class UnfenceBrokerRecord:
    __slots__ = ("broker_id",)

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id


class ControlledShutdownRecord:
    """The broker entered controlled shutdown (§8.3; Kafka's
    BrokerRegistrationChangeRecord with inControlledShutdown set)."""
    __slots__ = ("broker_id",)

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id


class PartitionRecord:
    """Creation of the partition with its full registration."""
    __slots__ = ("registration",)

    def __init__(self, registration: PartitionRegistration) -> None:
        self.registration = registration


class PartitionChangeRecord:
    """A delta of the partition registration (§2.3.2; Kafka's ``PartitionChangeRecord``
    message): a field left unset is unchanged (None; the leader NO_LEADER_CHANGE).
    ``PartitionChangeBuilder.build`` sets the fields one by one, as Kafka's does."""
    __slots__ = ("leader", "isr", "elr", "last_known_elr", "replicas", "adding", "removing", "leader_recovery_state")

    def __init__(self, leader: int = NO_LEADER_CHANGE, isr: Optional[frozenset[int]] = None,
                 elr: Optional[frozenset[int]] = None, last_known_elr: Optional[frozenset[int]] = None,
                 replicas: Optional[tuple[int, ...]] = None, adding: Optional[frozenset[int]] = None,
                 removing: Optional[frozenset[int]] = None, leader_recovery_state: Optional[str] = None) -> None:
        self.leader, self.isr, self.elr, self.last_known_elr = leader, isr, elr, last_known_elr
        self.replicas, self.adding, self.removing = replicas, adding, removing
        self.leader_recovery_state = leader_recovery_state

    def changed_fields(self) -> list[tuple[str, object]]:
        """(field, new value) of every field the record sets, the leader included."""
        return [(field, value) for field in self.__slots__
                if (value := getattr(self, field)) is not None and value != NO_LEADER_CHANGE]

    def is_empty(self) -> bool:
        """Kafka's ``PartitionChangeBuilder.changeRecordIsNoOp``: no field is set."""
        return not self.changed_fields()


class ClearElrRecord:
    """Kafka's ``ClearElrRecord`` (Kafka 4.0.0): replayed, it empties the ELR and
    LastKnownELR of a registration holding either (``PartitionRegistration.cleared``),
    and changes nothing otherwise."""
    __slots__ = ()


#: Kafka's topic config names (``TopicConfig``) that change at run time here.
MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


class ConfigRecord:
    """A config set (Kafka's ``ConfigRecord``): ``name`` ``MIN_INSYNC_REPLICAS`` (an
    int) or ``UNCLEAN_LEADER_ELECTION_ENABLE`` (a bool); ``cluster_default``: False
    for the topic's own config (resource type TOPIC), True for the cluster-level
    default (resource type BROKER, empty name), which the topic's own overrides. A
    broker's log takes the topic's new ``min.insync.replicas`` once the broker
    applies the record."""
    __slots__ = ("name", "value", "cluster_default")

    def __init__(self, name: str, value: object, cluster_default: bool = False) -> None:
        self.name, self.value, self.cluster_default = name, value, cluster_default


#: Kafka's feature name (``EligibleLeaderReplicasVersion.FEATURE_NAME``) whose level switches the ELR.
ELR_FEATURE = "eligible.leader.replicas.version"
#: The controller's static ``min.insync.replicas`` (Kafka's default, none configured).
STATIC_MIN_INSYNC_REPLICAS = 1


class FeatureLevelRecord:
    """A finalized feature level (Kafka's ``FeatureLevelRecord``): ``name``
    ``ELR_FEATURE``, ``level`` 1 (ELR on) or 0. Brokers apply it as nothing: only
    the controller's partition changes read it."""
    __slots__ = ("name", "level")

    def __init__(self, name: str, level: int) -> None:
        self.name, self.level = name, level


ApiMessage = Union[RegisterBrokerRecord, FenceBrokerRecord, UnfenceBrokerRecord, ControlledShutdownRecord,
                   PartitionRecord,
                   PartitionChangeRecord, ClearElrRecord, ConfigRecord, FeatureLevelRecord]


# ----------------------------------------------------------------- image and delta

class BrokerImage:
    """A broker registration as another broker's metadata has it: its broker epoch,
    whether it is fenced and whether it is in controlled shutdown (Kafka's
    ``BrokerRegistration`` in the cluster image)."""

    __slots__ = ("epoch", "fenced", "in_controlled_shutdown")

    def __init__(self, epoch: int, fenced: bool, in_controlled_shutdown: bool = False) -> None:
        self.epoch, self.fenced, self.in_controlled_shutdown = epoch, fenced, in_controlled_shutdown


class MetadataImage:
    """What a broker has materialized from the metadata log: the partition
    registration (None before the PartitionRecord), the broker registrations, the
    offset reached, and the topic's MinISR from the last ``ConfigRecord`` (None:
    the topic's creation config; Kafka's ``ConfigurationsImage``)."""

    __slots__ = ("partition", "offset", "brokers", "min_isr")

    def __init__(self, partition: Optional[PartitionRegistration] = None, offset: int = 0,
                 brokers: Optional[dict[int, BrokerImage]] = None, min_isr: Optional[int] = None) -> None:
        self.partition = partition
        self.offset = offset
        self.brokers: dict[int, BrokerImage] = {} if brokers is None else brokers
        self.min_isr = min_isr

    # KRaftMetadataCache's questions (Partition.isReplicaIsrEligible, Replica.updateFetchStateOrThrow)
    def alive_broker_epoch(self, broker: int) -> Optional[int]:
        """The broker epoch of an unfenced registered broker, else None."""
        b = self.brokers.get(broker)
        return None if b is None or b.fenced else b.epoch

    def is_broker_fenced(self, broker: int) -> bool:
        b = self.brokers.get(broker)
        return b is None or b.fenced

    def is_broker_shutting_down(self, broker: int) -> bool:
        """Kafka's ``isBrokerShuttingDown``: the registration is in controlled shutdown."""
        b = self.brokers.get(broker)
        return b is not None and b.in_controlled_shutdown


class MetadataDelta:
    """One batch of records replayed on top of an image (§2.3.2): changes to the
    partition accumulate within the batch, and ``apply`` produces the next image."""

    def __init__(self, image: MetadataImage, bugs: frozenset = frozenset()) -> None:
        self.image = image
        self.bugs = bugs
        self.changed = False
        self.partition: Optional[PartitionRegistration] = image.partition
        self.brokers: Optional[dict[int, BrokerImage]] = None   # copied on the first broker record
        self.min_isr = image.min_isr
        self.records = 0

    def _broker_changes(self) -> dict[int, BrokerImage]:
        if self.brokers is None:
            self.brokers = dict(self.image.brokers)
        return self.brokers

    def replay(self, record: ApiMessage) -> None:
        self.records += 1
        if isinstance(record, PartitionRecord):
            self.partition = record.registration
            self.changed = True
        elif isinstance(record, PartitionChangeRecord):
            base = self.partition
            if Bug.METADATA_BATCH_LAST_DELTA_ONLY in self.bugs:
                base = self.image.partition  # BUG: merges onto the old image, not the batch so far
            if base is not None:
                self.partition = base.merge(record)
                self.changed = True
        elif isinstance(record, ClearElrRecord):
            if self.partition is not None and self.partition.cleared() is not self.partition:
                self.partition = self.partition.cleared()
                self.changed = True
        elif isinstance(record, ConfigRecord):
            # the topic was created with its own MinISR, which overrides the cluster-level default
            own = not record.cluster_default or Bug.CLUSTER_MIN_ISR_OVERRIDES_TOPIC in self.bugs  # BUG when not
            if record.name == MIN_INSYNC_REPLICAS and own:
                self.min_isr = record.value  # type: ignore[assignment]
        elif isinstance(record, RegisterBrokerRecord):
            self._broker_changes()[record.broker_id] = BrokerImage(record.broker_epoch, record.fenced,
                                                                   record.in_controlled_shutdown)
        elif isinstance(record, (FenceBrokerRecord, UnfenceBrokerRecord)):
            brokers = self._broker_changes()
            known = brokers.get(record.broker_id)
            if known is not None:
                brokers[record.broker_id] = BrokerImage(known.epoch, isinstance(record, FenceBrokerRecord),
                                                        known.in_controlled_shutdown)
        elif isinstance(record, ControlledShutdownRecord):
            brokers = self._broker_changes()
            known = brokers.get(record.broker_id)
            if known is not None:
                brokers[record.broker_id] = BrokerImage(known.epoch, known.fenced, True)

    def apply(self) -> MetadataImage:
        return MetadataImage(self.partition, self.image.offset + self.records,
                             self.image.brokers if self.brokers is None else self.brokers, self.min_isr)
