"""Apache Kafka's own ``kafka.cluster.Partition`` as a partition leader, driven
call by call without a broker: the leader's ISR and HWM logic of the release
``model.KAFKA_RELEASE`` (the issue's fourth component).

``KafkaPartition`` holds one broker's replica in Kafka's ``Partition`` over a
real ``UnifiedLog`` in a temporary folder, set up by the bridge's shim
(``kafka_bridge/java/kafka/cluster/ReplicheckPartitionShim.java``) as Kafka's
own ``PartitionTest`` sets it up: the clock, the broker's metadata
(``MetadataCache``: alive broker epochs, fenced, in controlled shutdown) and the
``AlterPartitionManager`` (each request waits until the bridge answers it) are
the bridge's; there is no ``LogManager`` (the log is handed to the partition).

It is not yet a part the SUT's brokers can put in place of ``sut.partition.
Partition`` in lockstep with the model (README, "Kafka's Partition, driven
alone"). The Kafka profile now proposes an expansion inside the follower's fetch
as Kafka does (``Rule.EXPAND_ISR_ON_FETCH``), and its ISR check removes every
out-of-sync follower at once and never one at the leader's LEO
(``Rule.SHRINK_ALL_OUT_OF_SYNC``: ``ProposeIsrShrinkMany``;
``Rule.CAUGHT_UP_AT_LEADER_LEO``), but without a clock: which followers are out
of sync is the run's choice, and a lockstep would have to set this clock so that
Kafka's check (``maybeShrinkIsr``: last caught-up time older than
replica.lag.time.max.ms) finds exactly that choice, which the order of the
followers' last caught-up times does not always allow.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from typing import Any, NamedTuple, Optional

from sut.metadata import PartitionRegistration

from .change_builder import registration_of
from .java import TOPIC_NAME, kafka

#: Kafka's replica.lag.time.max.ms in the shim (its default, 30 s).
REPLICA_LAG_TIME_MAX_MS = 30_000


class KafkaPartitionError(Exception):
    """Kafka's Partition refused a call: ``error`` is Kafka's error name
    (``Errors.forException``), e.g. NOT_ENOUGH_REPLICAS, FENCED_LEADER_EPOCH."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error


class FetchAnswer(NamedTuple):
    """What the leader answers a follower's fetch (``Partition.fetchRecords``):
    the records from the fetch offset as (offset, leader epoch, value), the
    diverging epoch as (epoch, end offset; the end offset exclusive) or None, and
    the leader's HWM (an exclusive end offset)."""

    records: tuple[tuple[int, int, int], ...]
    diverging_epoch: Optional[tuple[int, int]]
    high_watermark: int


class FollowerState(NamedTuple):
    """What the leader's ``Replica`` records of one follower's fetches
    (``ReplicaState``, set by ``Replica.updateFetchStateOrThrow``): its LEO (the
    fetch offset; -1 unknown), the leader's LEO at its last fetch (the largest
    such; -1 unknown), the time of its last fetch and its last caught-up time
    (ms on the partition's clock), its broker epoch (None unknown)."""

    log_end_offset: int
    last_fetch_leader_log_end_offset: int
    last_fetch_time_ms: int
    last_caught_up_time_ms: int
    broker_epoch: Optional[int]


class AlterPartitionProposal(NamedTuple):
    """An AlterPartition the leader submitted: the proposed ISR with each member's
    broker epoch (-1: unknown; ``Partition.addBrokerEpochToIsr``), and the leader
    and partition epochs it was sent in."""

    isr: tuple[tuple[int, int], ...]
    leader_epoch: int
    partition_epoch: int


class KafkaPartition:
    """One broker's replica of the partition in Kafka's ``Partition`` (see the
    module doc). ``broker_id`` hosts it, in ``broker_epoch``; ``min_isr`` is the
    topic's MinISR. Offsets are Kafka's: the LEO and HWM are exclusive ends."""

    def __init__(self, broker_id: int, broker_epoch: int, min_isr: int) -> None:
        k = self._k = kafka()
        self.folder = tempfile.mkdtemp(prefix="replicheck-partition-")
        weakref.finalize(self, shutil.rmtree, self.folder, True)
        self.broker_id = broker_id
        # the log's scheduled tasks run at once, on the caller's thread, as the epoch cache's do
        self._shim = k.PartitionShim(k.File(self.folder), TOPIC_NAME, k.topic_id, broker_id, min_isr,
                                     k.PartitionShim.ManualTime(), k.scheduler)
        self._shim.setBrokerEpoch(broker_epoch)
        self._partition = self._shim.partition()

    # ------------------------------------------------------------ the broker's view

    def set_broker(self, broker: int, epoch: Optional[int], fenced: bool = False,
                   shutting_down: bool = False) -> None:
        """What this broker's metadata says of ``broker``: its broker epoch (None:
        not registered), fenced, in controlled shutdown (``MetadataCache``)."""
        self._shim.setBroker(broker, None if epoch is None else self._k.Long(epoch), fenced, shutting_down)

    def lag(self, ms: int = REPLICA_LAG_TIME_MAX_MS + 1) -> None:
        """Let ``ms`` milliseconds pass on the partition's clock (default: just
        past replica.lag.time.max.ms)."""
        self._shim.time().advance(ms)

    # ------------------------------------------------------------ Kafka's calls

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self._k.ApiException as e:
            raise KafkaPartitionError(str(self._k.Errors.forException(e).name()), str(e.getMessage())) from None

    def make_leader(self, reg: PartitionRegistration) -> bool:
        """``Partition.makeLeader`` with ``reg``; whether this broker became the leader."""
        return bool(self._call(self._partition.makeLeader, registration_of(reg), False, None,
                               self._k.Option.apply(self._k.topic_id), self._k.Option.empty()))

    def append(self, value: int) -> int:
        """An acks=all produce of one record of ``value`` (``appendRecordsToLeader``);
        its offset. Raises KafkaPartitionError (NOT_ENOUGH_REPLICAS below MinISR,
        NOT_LEADER_OR_FOLLOWER)."""
        return int(self._call(self._shim.appendToLeader, value))

    def fetch(self, follower: int, broker_epoch: int, leader_epoch: int, fetch_offset: int,
              last_fetched_epoch: Optional[int]) -> FetchAnswer:
        """A replica fetch of ``follower`` (``fetchRecords``, updating its fetch state:
        the HWM may advance and an expansion be proposed). Raises KafkaPartitionError
        (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, ...)."""
        info = self._call(self._shim.fetch, follower, broker_epoch, leader_epoch, fetch_offset,
                          -1 if last_fetched_epoch is None else last_fetched_epoch)
        diverging = info.divergingEpoch()
        return FetchAnswer(
            tuple((int(o), int(e), int(v)) for o, e, v in self._k.PartitionShim.records(info)),
            (int(diverging.get().epoch()), int(diverging.get().endOffset())) if diverging.isPresent() else None,
            int(info.highWatermark()))

    def maybe_shrink_isr(self) -> None:
        """The leader's periodic ISR check (``maybeShrinkIsr``)."""
        self._call(self._partition.maybeShrinkIsr)

    # ------------------------------------------------------------ AlterPartition

    @property
    def proposals(self) -> list[AlterPartitionProposal]:
        """The AlterPartition requests waiting for an answer, oldest first."""
        out = []
        for s in self._shim.submitted():
            sent = s.leaderAndIsr
            out.append(AlterPartitionProposal(
                tuple(sorted((int(b.brokerId()), int(b.brokerEpoch())) for b in sent.isrWithBrokerEpoch())),
                int(sent.leaderEpoch()), int(sent.partitionEpoch())))
        return out

    def answer(self, isr: frozenset[int], leader_epoch: int, partition_epoch: int) -> None:
        """The controller commits the oldest request: ``isr`` in ``partition_epoch``
        (``handleAlterPartitionUpdate``)."""
        submitted = self._shim.submitted().removeFirst()
        self._call(submitted.future.complete, self._k.LeaderAndIsr(
            self.broker_id, leader_epoch, self._k.int_list(sorted(isr)), self._k.RECOVERED, partition_epoch))

    def answer_error(self, error: str) -> None:
        """The controller refuses the oldest request with Kafka's error ``error``
        (e.g. INELIGIBLE_REPLICA; ``handleAlterPartitionError``)."""
        submitted = self._shim.submitted().removeFirst()
        self._call(submitted.future.completeExceptionally, self._k.Errors.valueOf(error).exception())

    # ------------------------------------------------------------ state

    @property
    def log_end_offset(self) -> int:
        return int(self._shim.log().logEndOffset())

    @property
    def high_watermark(self) -> int:
        return int(self._shim.log().highWatermark())

    @property
    def isr(self) -> frozenset[int]:
        """The committed ISR (``partitionState.isr``)."""
        return frozenset(int(b) for b in self._partition.partitionState().isr())

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The Maximal ISR: the committed ISR and a pending expansion (§6.5.2)."""
        return frozenset(int(b) for b in self._partition.partitionState().maximalIsr())

    def follower_state(self, follower: int) -> Optional[FollowerState]:
        """The leader's record of ``follower`` (``Partition.getReplica``), None for a
        broker outside the replicas."""
        replica = self._partition.getReplica(follower)
        if not replica.isDefined():
            return None
        state = replica.get().stateSnapshot()
        epoch = state.brokerEpoch()
        return FollowerState(int(state.logEndOffset()), int(state.lastFetchLeaderLogEndOffset()),
                             int(state.lastFetchTimeMs()), int(state.lastCaughtUpTimeMs()),
                             int(epoch.get()) if epoch.isPresent() else None)

    def is_caught_up(self, follower: int) -> bool:
        """Kafka's ``ReplicaState.isCaughtUp`` now: at the leader's LEO, or caught up
        within replica.lag.time.max.ms on the partition's clock."""
        replica = self._partition.getReplica(follower)
        return bool(replica.isDefined() and replica.get().stateSnapshot().isCaughtUp(
            self.log_end_offset, self.now_ms, REPLICA_LAG_TIME_MAX_MS))

    @property
    def now_ms(self) -> int:
        """The partition's clock (ms)."""
        return int(self._shim.time().milliseconds())

    @property
    def leader_epoch_start_offset(self) -> Optional[int]:
        start = self._partition.leaderEpochStartOffsetOpt()
        return int(start.get()) if start.isDefined() else None
