"""What an implementation under test can be asked to show, and what it answers.

``Observation`` is the **observable projection** of a cluster: what a Kafka engineer
can read off a running cluster (the controller's registrations, each broker's
metadata image and replica, the messages in flight) and nothing of the ghost
history the properties need (the True HWM, acknowledged writes, consumed records,
unclean elections: ``History`` lives in the model only). ``observe(state)`` is the
model's projection; an implementation gives its own (``observe()``), and the
lockstep check compares the two after every step.

``Outcome`` is what one action visibly did: the produce responses (a write
appended at an offset, acknowledged, or failed), the records a consumer read,
the ListOffsets answer, and the messages sent (fetch and AlterPartition requests
and responses, with their error codes). ``outcome(before, after, action)`` is the
model's; an implementation's ``apply(action)`` returns its own.

Offsets are exclusive ends where the protocol says so (LEO, HWM, LESO, flushed
offset, §2.2.2).
"""

from __future__ import annotations

from typing import Optional

import attrs

from .actions import Action, ListOffsets, Produce
from .config import Variant
from .state import (BrokerRegistration, BrokerStatus, ClusterState, FollowerState, Message, PartitionMetadata,
                    Record, Replica, Role)


@attrs.frozen
class ReplicaObservation:
    """One replica as its broker shows it (Kafka: ``Partition`` and its ``UnifiedLog``).

    role, leader, leader_epoch, partition_epoch: what the replica acts on (§2.10).
    log: the records (offset = index; ``offset:epoch:value`` in reports); hwm:
    the local HWM; flushed: the recovery point (records below it survive a crash).
    Leader only (else None / empty): leso, the Leader Epoch Start Offset (§6.4.2);
    isr, the committed ISR; pending_isr, the ISR its in-flight AlterPartition
    proposes (None: none in flight; Kafka: ``PendingExpandIsr`` /
    ``PendingShrinkIsr``, §2.9.2); maximal_isr, the ISR with that proposal
    (§6.5.2); followers, the follower fetch state (``(broker, FollowerState)``
    pairs sorted by broker, §2.2.2); min_isr, the ``min.insync.replicas`` its
    log config holds (the last ``ConfigRecord`` its broker applied, else the
    topic creation's; uncapped: its HWM and acks=all answers read it capped at
    the replica count, §2.6).
    """

    role: Role
    leader: int
    leader_epoch: int
    partition_epoch: int
    log: tuple[Record, ...]
    hwm: int
    flushed: int
    leso: Optional[int] = None
    isr: frozenset[int] = frozenset()
    pending_isr: Optional[frozenset[int]] = None
    maximal_isr: frozenset[int] = frozenset()
    followers: tuple[tuple[int, FollowerState], ...] = ()
    min_isr: Optional[int] = None

    @property
    def leo(self) -> int:
        """Log End Offset (exclusive)."""
        return len(self.log)


@attrs.frozen
class BrokerObservation:
    """One broker: lifecycle status, the broker epoch of its session (None before
    it registers), the metadata offset it has applied, its metadata image of the
    partition (Kafka: the broker's ``MetadataCache``) and its replica."""

    id: int
    status: BrokerStatus
    broker_epoch: Optional[int]
    metadata_offset: int
    image: Optional[PartitionMetadata]
    replica: Optional[ReplicaObservation]


@attrs.frozen
class Observation:
    """The observable projection of a cluster.

    registrations: the controller's broker registrations (broker epoch, fenced), in
    ``Config.brokers`` order; partition: its partition registration (replicas,
    leader, leader epoch, partition epoch, ISR, ELR, LastKnownELR, adding,
    removing); metadata_end_offset: the metadata log's end (exclusive); brokers:
    in ``Config.brokers`` order; messages: in flight, by id; now_ms: the brokers'
    clock (ms from the start; it moves only under Rule.REPLICA_LAG_TIME);
    min_isr, unclean_leader_election: the topic's ``min.insync.replicas`` and
    ``unclean.leader.election.enable`` as the controller holds them (ch7;
    ``AlterMinIsr``, ``AlterUncleanLeaderElection``); elr_enabled: whether the
    controller's finalized ``eligible.leader.replicas.version`` is 1
    (``UpdateElrFeature``).
    """

    registrations: tuple[BrokerRegistration, ...]
    partition: PartitionMetadata
    metadata_end_offset: int
    brokers: tuple[BrokerObservation, ...]
    messages: tuple[Message, ...]
    now_ms: int = 0
    min_isr: Optional[int] = None
    unclean_leader_election: Optional[bool] = None
    elr_enabled: bool = True


def observe_replica(r: Optional[Replica], min_isr: Optional[int] = None) -> Optional[ReplicaObservation]:
    """The observable part of a model ``Replica`` (None stays None); ``min_isr``:
    its log config's, shown by a leader."""
    if r is None:
        return None
    leading = r.role == Role.LEADER
    return ReplicaObservation(
        role=r.role, leader=r.leader, leader_epoch=r.leader_epoch, partition_epoch=r.partition_epoch,
        log=r.log, hwm=r.hwm, flushed=r.flushed, leso=r.leso if leading else None,
        isr=r.isr if leading else frozenset(), pending_isr=r.pending_isr if leading else None,
        maximal_isr=r.maximal_isr if leading else frozenset(),
        followers=r.followers if leading else (), min_isr=min_isr if leading else None)


def observe(state: ClusterState) -> Observation:
    """The model state's observable projection."""
    return Observation(
        registrations=state.controller.registrations, partition=state.controller.partition,
        metadata_end_offset=len(state.controller.metadata_log),
        brokers=tuple(BrokerObservation(b.id, b.status, b.broker_epoch, b.metadata_offset, b.image,
                                        observe_replica(b.replica, state.config.min_isr if b.min_isr is None
                                                        else b.min_isr)) for b in state.brokers),
        messages=state.network.messages, now_ms=state.now_ms, min_isr=state.min_isr,
        unclean_leader_election=state.unclean_leader_election, elr_enabled=state.elr_enabled)


# ------------------------------------------------------------------- outcomes

@attrs.frozen
class ListOffsetsResult:
    """A ListOffsets (latest) answer from ``broker``, the leader in ``leader_epoch``:
    the HWM (exclusive), or None for "unknown" (HWM below the LESO, §6.4.2)."""

    broker: int
    leader_epoch: int
    hwm: Optional[int]


@attrs.frozen
class Outcome:
    """What one action visibly did.

    appended: ``(value, offset)`` of the write a Produce appended on the leader
    (acks=all: not acknowledged yet, unless ``acknowledged`` has it too).
    acknowledged: ``(value, offset)`` of the writes positively acknowledged by
    this action, in offset order (§2.6: the HWM passed them). failed: values whose
    produce failed with this action (NOT_ENOUGH_REPLICAS before the append, or a
    pending write failed by a step-down or an ISR below MinISR). consumed: the
    records a Consume read, from the consumer's position to the HWM. list_offsets:
    a ListOffsets answer. sent: the messages this action sent (requests and
    responses, with their error codes). controller_fault: the message of the
    exception a controller event of this action threw (a fault: the active controller
    failed over, Rule.LEADER_ACCEPTOR_READS_DIRECTORY), else None.
    """

    appended: tuple[tuple[int, int], ...] = ()
    acknowledged: tuple[tuple[int, int], ...] = ()
    failed: tuple[int, ...] = ()
    consumed: tuple[Record, ...] = ()
    list_offsets: Optional[ListOffsetsResult] = None
    sent: tuple[Message, ...] = ()
    controller_fault: Optional[str] = None


def list_offsets_result(state: ClusterState, leader: int, *, before_leso: bool = False) -> ListOffsetsResult:
    """The answer leader ``leader`` gives: its HWM, or None while the HWM is below
    its LESO (§6.4.2) unless ``before_leso`` (the LIST_OFFSETS_BEFORE_LESO variant)."""
    r = state.replica(leader)
    assert r is not None and r.leso is not None
    return ListOffsetsResult(leader, r.leader_epoch, r.hwm if r.hwm >= r.leso or before_leso else None)


def outcome(before: ClusterState, after: ClusterState, action: Action) -> Outcome:
    """The model's outcome of ``action`` taken in ``before`` (reaching ``after``),
    read off the ghost history and the network."""
    hb, ha = before.history, after.history
    acknowledged = tuple((w.value, w.offset) for w in ha.acked[len(hb.acked):])
    failed = ha.nacked[len(hb.nacked):]
    appended: tuple[tuple[int, int], ...] = ()
    if isinstance(action, Produce) and action.value not in failed:
        placed = [(w.value, w.offset) for w in ha.pending if w.value == action.value] + \
                 [a for a in acknowledged if a[0] == action.value]
        appended = tuple(placed[:1])
    answer = None
    if isinstance(action, ListOffsets):
        answer = list_offsets_result(after, after.partition.leader,
                                     before_leso=after.config.has(Variant.LIST_OFFSETS_BEFORE_LESO))
    return Outcome(appended=appended, acknowledged=acknowledged, failed=failed,
                   consumed=ha.consumed[len(hb.consumed):], list_offsets=answer,
                   sent=tuple(m for m in after.network.messages if m.id >= before.network.next_id),
                   controller_fault=next(iter(ha.controller_faults[len(hb.controller_faults):]), None))
