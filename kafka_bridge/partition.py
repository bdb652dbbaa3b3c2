"""Apache Kafka's own ``kafka.cluster.Partition`` as a partition leader or
follower, driven call by call without a broker: the leader's ISR and HWM logic
of the release ``model.KAFKA_RELEASE`` (the issue's fourth component), the
follower's log (append, HWM, truncation) and the replica's crashes and restarts.

``KafkaPartition`` holds one broker's replica in Kafka's ``Partition`` over a
real ``UnifiedLog`` in a temporary folder, set up by the bridge's shim
(``kafka_bridge/java/kafka/cluster/ReplicheckPartitionShim.java``) as Kafka's
own ``PartitionTest`` sets it up: the clock, the broker's metadata
(``MetadataCache``: alive broker epochs, fenced, in controlled shutdown) and the
``AlterPartitionManager`` (a request waits until the bridge answers it; another
meanwhile is refused with OPERATION_NOT_ATTEMPTED before ``submit`` returns, as
Kafka's ``DefaultAlterPartitionManager.submit`` refuses it) are the bridge's;
there is no ``LogManager`` (the log is handed to the partition).

One ``KafkaPartition`` is one broker's replica through the broker's whole life:
leader (``make_leader``, ``append``, ``fetch``, ``maybe_shrink_isr``, the
AlterPartition answers), follower (``make_follower``, and Kafka's fetcher,
``AbstractFetcherThread``: ``start_fetcher``, ``send_fetch``,
``process_fetch_response``; or its calls one by one: ``append_as_follower``,
``update_high_watermark``, ``truncate_to``),
``flush``, ``unclean_shutdown`` (lossy or not), ``controlled_shutdown`` and
``restart``, with the log's records, epoch cache, HWM and recovery point readable
at every point. The partition's clock starts at ``CLOCK_BASE_MS``: model time
``t`` is Kafka time ``CLOCK_BASE_MS + t``.

``kafka_bridge.replica.KafkaReplica`` puts it in place of the SUT brokers'
``sut.partition.Partition`` in the implementation "kafka" (``kafka_bridge.COMPONENTS``,
``kafka_bridge.implementation``), in lockstep with the model under the
Kafka profile (``tests/kafka_bridge/test_kafka_replica.py``).
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import tempfile
import weakref
from typing import Any, NamedTuple, Optional, Sequence

# The shim builds Kafka's Partition with this lag (its REPLICA_LAG_TIME_MAX_MS, Kafka's default):
# the model's clock and Kafka's must measure the same one.
from model import REPLICA_LAG_TIME_MAX_MS
from sut.metadata import PartitionRegistration

from .calls import Call, CallLog, active
from .change_builder import registration_of
from .java import TOPIC_NAME, kafka
from .releases import PARTITION_REGISTRATION_SINCE

#: Where the partition's clock (the shim's ``ManualTime``, ms) starts. The model's
#: clock starts at 0: model time ``t`` is Kafka time ``CLOCK_BASE_MS + t``
#: (``KafkaPartition.set_now_ms(CLOCK_BASE_MS + t)``).
CLOCK_BASE_MS = 1_000_000

#: Where the replicas' folders go: a memory file system (tmpfs) where there is one.
#: Nothing here needs a disk (a lossy crash is made on the files themselves), and
#: there Kafka's fsyncs (each flush, each epoch checkpoint) cost microseconds, not
#: the milliseconds of a disk.
FOLDER_ROOT: Optional[str] = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class KafkaPartitionError(Exception):
    """Kafka's Partition refused a call: ``error`` is Kafka's error name
    (``Errors.forException``), e.g. NOT_ENOUGH_REPLICAS, FENCED_LEADER_EPOCH."""

    def __init__(self, error: str, message: str, java: Any = None) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error
        #: the Java exception Kafka threw
        self.java = java


def _logged(method: Any) -> Any:
    """``method`` of ``KafkaPartition``, its calls logged (``calls``) when recording:
    the calls that change the replica, as a reproducer makes them again."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def logged(self: "KafkaPartition", *args: Any, **kwargs: Any) -> Any:
        self._reads.clear()
        try:
            return _logged_call(self, method, signature, args, kwargs)
        finally:
            self._reads.clear()   # the call changed what the reads see
    return logged


def _logged_call(self: "KafkaPartition", method: Any, signature: inspect.Signature, args: tuple,
                 kwargs: dict) -> Any:
    if self.calls is None:
        return method(self, *args, **kwargs)
    bound = signature.bind(self, *args, **kwargs)
    bound.apply_defaults()   # logged with every argument, in order: the Java writes each
    call = Call(method.__name__, tuple(bound.arguments.values())[1:], broker=self.broker_id)
    self.calls.request(call)
    try:
        return method(self, *args, **kwargs)
    except KafkaPartitionError as e:
        call.thrown = e.java
        raise


def _read(method: Any) -> Any:
    """``method`` of ``KafkaPartition``, a read of Kafka's state: its value is kept
    until the next call that changes the replica (every such call is ``_logged``,
    which forgets the reads), so the many reads of one step (the enablement probes,
    the observation) cross into the JVM once each. Values are immutable."""
    name = method.__name__

    @functools.wraps(method)
    def read(self: "KafkaPartition", *args: Any) -> Any:
        key = (name, args)
        reads = self._reads
        if key not in reads:
            reads[key] = method(self, *args)
        return reads[key]
    return read


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
    broker epoch (-1: unknown; ``Partition.addBrokerEpochToIsr``), the leader
    and partition epochs it was sent in, and the leader recovery state it carries
    (RECOVERED or RECOVERING)."""

    isr: tuple[tuple[int, int], ...]
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: str


class KafkaPartition:
    """One broker's replica of the partition in Kafka's ``Partition`` (see the
    module doc), through the broker's life: a new replica has an empty log and no
    role until ``make_leader`` or ``make_follower``. ``broker_id`` hosts it, in
    ``broker_epoch``; ``min_isr`` is the topic's MinISR. Offsets are Kafka's: the
    LEO, HWM and recovery point are exclusive ends. Records are (offset, leader
    epoch, value) tuples."""

    def __init__(self, broker_id: int, broker_epoch: int, min_isr: int) -> None:
        k = self._k = kafka()
        self._reads: dict[tuple, Any] = {}   # reads of Kafka's state since the last change (``_read``)
        self.folder = tempfile.mkdtemp(prefix="replicheck-partition-", dir=FOLDER_ROOT)
        self.broker_id = broker_id
        # the log's scheduled tasks run at once, on the caller's thread (the shim's BridgeScheduler)
        self._shim = k.PartitionShim(k.File(self.folder), TOPIC_NAME, k.topic_id, broker_id, min_isr,
                                     k.PartitionShim.ManualTime())
        weakref.finalize(self, _dispose, self._shim, self.folder)
        self._shim.setBrokerEpoch(broker_epoch)
        #: the log of the calls that change this replica (``calls``), when recording
        self.calls: Optional[CallLog] = active()
        if self.calls is not None:
            self.calls.request(Call("create", (broker_id, broker_epoch, min_isr), broker=broker_id))
        self._partition: Any = self._shim.partition()   # None while the broker is down
        self._fetcher: Any = None   # Kafka's fetcher of this follower's partition (start_fetcher)

    # ------------------------------------------------------------ the broker's view

    @_logged
    def set_broker(self, broker: int, epoch: Optional[int], fenced: bool = False,
                   shutting_down: bool = False) -> None:
        """What this broker's metadata says of ``broker``: its broker epoch (None:
        not registered), fenced, in controlled shutdown (``MetadataCache``)."""
        self._shim.setBroker(broker, None if epoch is None else self._k.Long(epoch), fenced, shutting_down)

    @_logged
    def lag(self, ms: int = REPLICA_LAG_TIME_MAX_MS + 1) -> None:
        """Let ``ms`` milliseconds pass on the partition's clock (default: just
        past replica.lag.time.max.ms)."""
        self._shim.time().advance(ms)

    @_logged
    def set_now_ms(self, ms: int) -> None:
        """Set the partition's clock to ``ms`` (absolute Kafka time, ms: what
        ``now_ms`` reads; it starts at ``CLOCK_BASE_MS``, and model time ``t`` is
        ``CLOCK_BASE_MS + t``). Raises ValueError for a moment before ``now_ms``: no
        broker's clock goes back."""
        if ms < self.now_ms:
            raise ValueError(f"the clock cannot go back from {self.now_ms} to {ms} ms")
        self._shim.time().setMilliseconds(ms)

    # ------------------------------------------------------------ Kafka's calls

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self._k.ApiException as e:
            raise KafkaPartitionError(str(self._k.Errors.forException(e).name()), str(e.getMessage()), e) from None
        except self._k.UnexpectedAppendOffsetException as e:
            # not an ApiException: Kafka's error for it is UNKNOWN_SERVER_ERROR
            raise KafkaPartitionError(str(self._k.Errors.forException(e).name()),
                                      f"UnexpectedAppendOffsetException: {e.getMessage()}", e) from None

    def _running(self) -> Any:
        """The broker's ``Partition``; RuntimeError while the broker is down."""
        if self._partition is None:
            raise RuntimeError(f"broker {self.broker_id} is down: restart() it first")
        return self._partition

    @_logged
    def set_min_isr(self, min_isr: int) -> None:
        """The topic's new MinISR reaches the log's config (``UnifiedLog.updateConfig``,
        as Kafka's ``DynamicConfigPublisher`` hands it over); kept across restarts."""
        self._shim.setMinIsr(min_isr)

    @property
    @_read
    def min_isr(self) -> int:
        """The ``min.insync.replicas`` Kafka's log config holds (``UnifiedLog.config``)."""
        return int(self._shim.minIsr())

    @_logged
    def make_leader(self, reg: PartitionRegistration) -> bool:
        """``Partition.makeLeader`` with ``reg``; whether this broker became the leader."""
        return self._make(self._running().makeLeader, reg)

    def _make(self, method: Any, reg: PartitionRegistration) -> bool:
        """``makeLeader`` or ``makeFollower`` (``method``) with ``reg`` as ReplicaManager
        calls it on the release this process runs (``releases.PARTITION_REGISTRATION_SINCE``):
        the registration (not new), or before, the ``LeaderAndIsrRequest.PartitionState``
        made of it; no offset checkpoints; the topic id; no target directory."""
        k = self._k
        registration = registration_of(reg)
        if k.release >= PARTITION_REGISTRATION_SINCE:
            return bool(self._call(method, registration, False, None, k.Option.apply(k.topic_id), k.Option.empty()))
        state = registration.toLeaderAndIsrPartitionState(k.topic_partition, False)
        return bool(self._call(method, state, None, k.Option.apply(k.topic_id), k.Option.empty()))

    @_logged
    def append(self, value: int) -> int:
        """An acks=all produce of one record of ``value`` (``appendRecordsToLeader``);
        its offset. Raises KafkaPartitionError (NOT_ENOUGH_REPLICAS below MinISR,
        NOT_LEADER_OR_FOLLOWER)."""
        self._running()
        return int(self._call(self._shim.appendToLeader, value))

    @_read
    def completes_with(self, required_offset: int) -> Optional[int]:
        """Whether an acks=all write waiting for ``required_offset`` (its offset + 1)
        completes now, as Kafka's ``DelayedProduce`` asks
        (``Partition.checkEnoughReplicasReachOffset``): None while it waits, else the
        error code it completes with (0: acknowledged; NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        the HWM passed it while the Maximal ISR is below MinISR). Off a leader Kafka
        answers that it waits (its NOT_LEADER_OR_FOLLOWER goes with "not done")."""
        self._running()
        code = int(self._call(self._shim.checkEnoughReplicasReachOffset, required_offset))
        return None if code < 0 else code

    @_logged
    def fetch(self, follower: int, broker_epoch: int, leader_epoch: int, fetch_offset: int,
              last_fetched_epoch: Optional[int]) -> FetchAnswer:
        """A replica fetch of ``follower`` (``fetchRecords``, updating its fetch state:
        the HWM may advance and an expansion be proposed). Raises KafkaPartitionError
        (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, ...)."""
        self._running()
        info = self._call(self._shim.fetch, follower, broker_epoch, leader_epoch, fetch_offset,
                          -1 if last_fetched_epoch is None else last_fetched_epoch)
        shim = self._k.PartitionShim
        diverging = shim.divergingEpoch(info)
        return FetchAnswer(
            self._k.triples(shim.records(info)),
            (int(diverging.get().epoch()), int(diverging.get().endOffset())) if diverging.isPresent() else None,
            int(shim.highWatermark(info)))

    @_logged
    def maybe_shrink_isr(self) -> None:
        """The leader's periodic ISR check (``maybeShrinkIsr``)."""
        self._call(self._running().maybeShrinkIsr)

    # ------------------------------------------------------------ the follower's calls

    @_logged
    def make_follower(self, reg: PartitionRegistration) -> bool:
        """``Partition.makeFollower`` with ``reg``: whether the leader epoch is new
        (Kafka's answer; ReplicaManager restarts the fetcher only then). False, and
        nothing changed, for a partition epoch older than the replica's."""
        return self._make(self._running().makeFollower, reg)

    @_logged
    def append_as_follower(self, records: Sequence[tuple[int, int, int]], leader_epoch: int) -> int:
        """Append a fetch answer's records, (offset, leader epoch, value) as
        ``FetchAnswer.records`` has them, to this follower's log
        (``Partition.appendRecordsToFollowerOrFutureReplica``, as
        ``ReplicaFetcherThread.processPartitionData`` calls it); the log end offset
        (exclusive) after.

        Each record goes in a batch of its own whose partitionLeaderEpoch is the
        record's epoch: that is how the leader wrote them (``append``: one record per
        produce, one batch each), so the follower's log holds the leader's batches;
        and a log is cut at batch boundaries only (truncation and recovery remove
        a whole batch; a flush ends at one), so with a batch per record every offset
        is one, as in a log of records. ``leader_epoch`` is the fetch's current
        leader epoch: batches of a later epoch are not appended, nor any after them
        (``UnifiedLog.append``, KAFKA-18723). Offsets are the records' own (Kafka
        takes them as given, gaps included); one below the log end offset raises
        KafkaPartitionError UNKNOWN_SERVER_ERROR (``UnexpectedAppendOffsetException``;
        a fetcher marks the partition failed)."""
        self._running()
        offsets = self._k.longs([r[0] for r in records])
        epochs = self._k.ints([r[1] for r in records])
        values = self._k.longs([r[2] for r in records])
        return int(self._call(self._shim.appendAsFollower, offsets, epochs, values, leader_epoch))

    @_logged
    def update_high_watermark(self, leader_high_watermark: int) -> Optional[int]:
        """The follower takes the leader's HWM from a fetch answer, after appending
        its records (``UnifiedLog.maybeUpdateHighWatermark``, the call
        ``ReplicaFetcherThread.processPartitionData`` makes): the HWM becomes
        ``leader_high_watermark`` bounded by the log start offset below and the log
        end offset above, also when that is lower than the HWM before. The new HWM
        if it changed, None if not."""
        self._running()
        new = self._shim.log().maybeUpdateHighWatermark(leader_high_watermark)
        return int(new.get()) if new.isPresent() else None

    @_logged
    def truncate_to(self, offset: int) -> bool:
        """Truncate the log to ``offset`` (exclusive end; ``Partition.truncateTo``,
        which LogManager carries out as ``UnifiedLog.truncateTo``): records at or
        above it go with their epoch cache entries, and the HWM and recovery point
        are capped by the new log end offset. At or beyond the log end offset no
        record goes, but the epoch cache still loses its entries starting at or
        above the log end offset (a leader epoch with no record yet). Whether
        records went."""
        self._running()
        return bool(self._call(self._shim.truncateTo, offset))

    # ------------------------------------------------------------ Kafka's fetcher

    @_logged
    def start_fetcher(self, leader: int, leader_epoch: int) -> None:
        """Kafka's fetcher (``AbstractFetcherThread``; the bridge's
        ``ReplicheckFetcherShim``) of this follower's partition from broker ``leader``
        in ``leader_epoch``, in place of the one before: ReplicaManager adds the
        partition to a fetcher after a ``make_follower`` that returned True. Its fetch
        state starts at the log end offset, or at the HWM for a log without a leader
        epoch (``ReplicaManager.initialFetchOffset``)."""
        self._running()
        self._fetcher = self._call(self._k.FetcherShim.start, self._shim, self.broker_id, leader, leader_epoch)

    @_read
    def fetcher_state(self) -> Optional[tuple[int, Optional[int], int]]:
        """Kafka's fetch state of the partition (``PartitionFetchState``): (fetch
        offset, last fetched epoch or None, current leader epoch); None without a
        fetcher, or once the fetcher marked the partition failed (removed until a new
        leader epoch)."""
        state = None if self._fetcher is None else self._fetcher.state()
        if state is None:
            return None
        last = state.lastFetchedEpoch()
        return int(state.fetchOffset()), int(last.get()) if last.isPresent() else None, int(state.currentLeaderEpoch())

    @_logged
    def send_fetch(self) -> Optional[tuple[int, Optional[int], int]]:
        """Kafka's fetcher's next fetch (``doWork`` up to the request: ``maybeTruncate``,
        then the request built from its fetch state): (fetch offset, last fetched epoch
        or None, current leader epoch); None when it has nothing to fetch. RuntimeError
        without a fetcher."""
        fetcher = self._running_fetcher()
        request = self._call(fetcher.sendFetch)
        if request is None:
            return None
        offset, last, epoch = (int(x) for x in request)
        return offset, None if last < 0 else last, epoch

    @_logged
    def process_fetch_response(self, fetch_offset: int, leader_epoch: int, error: Optional[str],
                               high_watermark: int, diverging_epoch: Optional[tuple[int, int]],
                               records: Sequence[tuple[int, int, int]]) -> None:
        """The leader's answer to the fetch at ``fetch_offset`` in ``leader_epoch``,
        handed to Kafka's fetcher (``AbstractFetcherThread.processFetchRequest``): it
        decides whether the answer still applies (the fetch state's offset and leader
        epoch), and on ``error`` (an Errors name, None: NONE) handles it
        (FENCED_LEADER_EPOCH removes the partition: ``fetcher_state`` None), on a
        ``diverging_epoch`` (epoch, end offset) truncates, else appends ``records``
        ((offset, leader epoch, value), one batch each) and takes ``high_watermark``.
        RuntimeError without a fetcher, or when the fetcher asked the leader more than
        the fetch (a ListOffsets or OffsetsForLeaderEpoch request: not bridged)."""
        fetcher = self._running_fetcher()
        asked = int(fetcher.unansweredRequests())
        epoch, end = (-1, -1) if diverging_epoch is None else diverging_epoch
        k = self._k
        self._call(fetcher.processResponse, fetch_offset, leader_epoch, error or "NONE", high_watermark, epoch, end,
                   k.longs(r[0] for r in records), k.ints(r[1] for r in records), k.longs(r[2] for r in records))
        if int(fetcher.unansweredRequests()) != asked:
            raise RuntimeError(f"broker {self.broker_id}: Kafka's fetcher asked the leader for offsets (ListOffsets "
                               f"or OffsetsForLeaderEpoch) after the answer {error or 'NONE'} to its fetch at "
                               f"{fetch_offset}: the bridge answers only fetches")

    def _running_fetcher(self) -> Any:
        self._running()
        if self._fetcher is None:
            raise RuntimeError(f"broker {self.broker_id} runs no fetcher: start_fetcher() first")
        return self._fetcher

    @_logged
    def flush(self) -> None:
        """Flush the log to its end (``UnifiedLog.flush``): the recovery point
        becomes the log end offset."""
        self._running()
        self._shim.flush()

    # ------------------------------------------------------------ crashes and restarts

    @_logged
    def defer_epoch_checkpoint_writes(self) -> None:
        """From now on the epoch checkpoint's write a truncation schedules waits for
        ``write_epoch_checkpoint`` (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER); an unclean
        shutdown loses it, a controlled one runs it. Before: it runs at once."""
        self._shim.deferEpochCheckpointWrites()

    @_logged
    def write_epoch_checkpoint(self) -> None:
        """The log's scheduler runs the waiting epoch checkpoint writes
        (``LeaderEpochFileCache.writeIfDirExists``)."""
        self._running()
        self._shim.writeEpochCheckpoint()

    @_read
    def epoch_checkpoint_scheduled(self) -> bool:
        """Whether an epoch checkpoint write waits for the scheduler."""
        return bool(self._shim.epochCheckpointWriteScheduled())

    @_logged
    def unclean_shutdown(self, lossy: bool) -> None:
        """The broker dies: its ``Partition`` is gone (calls other than reads and
        ``restart`` raise RuntimeError until ``restart``), with the AlterPartition
        requests waiting for answers. ``lossy`` (the machine died): every record at
        or above the recovery point is lost; else (the process died) none.

        On disk (the shim's ``uncleanShutdown``): the files are closed as they are,
        no clean-shutdown marker is written, and Kafka's background checkpoints —
        the HWM (ReplicaManager's, every 5 s), the recovery point and log start
        offset (LogManager's, every 60 s) — are taken as of the crash, which is
        what the model assumes (a Kafka broker may restart with older ones: a lower
        HWM, an earlier recovery point). A lossy crash cuts the segment file at the
        recovery point, leaving the leader epoch checkpoint (synced at every epoch
        assignment) with the lost records' entries. The folder is then read back at
        once as the next start will read it (``UnifiedLog.create`` after an unclean
        shutdown: Kafka's recovery, which finds the log end in the files and drops
        the epoch entries at or above it), so the reads here show the replica a
        restart will have: its records, epoch cache, HWM (the checkpoint's, at most
        the log end offset, as ``Partition.createLog`` sets it) and recovery point
        (the checkpoint's, at most the log end offset)."""
        self._running()
        self._call(self._shim.uncleanShutdown, lossy)
        self._partition = self._fetcher = None   # the process is gone, and its fetcher with it

    @_logged
    def controlled_shutdown(self) -> None:
        """The broker stops cleanly (the end of a controlled shutdown:
        ``ReplicaManager.shutdown`` checkpoints the HWM; ``LogManager.shutdown``
        flushes and closes the log, checkpoints the recovery point and writes the
        clean-shutdown marker). The log is read back at once as the next start will
        (``UnifiedLog.create`` after a clean shutdown: no recovery; the recovery
        point is the log end offset). Calls as after ``unclean_shutdown``.

        From 4.4.0 on, first ``UnifiedLog.prepareActiveSegmentForClose``, as 4.4.0's
        ``org.apache.kafka.storage.internals.log.LogManager.shutdown`` calls it
        before flushing and closing each log (4.3.x had no such step): since 4.4.0
        closing an index no longer trims it to its entries (``AbstractIndex.close``),
        and a pre-existing index file is read back as valid to its length, so an
        untrimmed active segment would come back with full indexes (a roll at the
        next append, then BufferOverflowException in ``TimeIndex.maybeAppend`` at a
        later roll)."""
        self._running()
        self._call(self._shim.controlledShutdown)
        self._partition = self._fetcher = None

    @_logged
    def restart(self, broker_epoch: int) -> None:
        """The broker starts again, registered in ``broker_epoch``: a new
        ``Partition`` (as ReplicaManager creates one: no leader, leader epoch -1,
        partition epoch 0, no follower state) over the log read back at the
        shutdown; it acts on its next ``make_leader`` or ``make_follower``. This
        broker's view of the other brokers (``set_broker``) is kept. RuntimeError if
        the broker is running."""
        if self._partition is not None:
            raise RuntimeError(f"broker {self.broker_id} is running")
        self._shim.restart(broker_epoch)
        self._partition = self._shim.partition()

    @property
    def is_running(self) -> bool:
        """Whether the broker is up (False between a shutdown and ``restart``)."""
        return self._partition is not None

    @property
    @_read
    def last_shutdown_clean(self) -> bool:
        """Whether the last read of the log from its folder found the clean-shutdown
        marker (True for a new replica)."""
        return bool(self._shim.lastLoadClean())

    # ------------------------------------------------------------ AlterPartition

    @property
    def proposals(self) -> list[AlterPartitionProposal]:
        """The AlterPartition request waiting for an answer, as a list of at most one:
        while one waits, the shim refuses another at once with OPERATION_NOT_ATTEMPTED
        inside the call that submits it, as Kafka's ``DefaultAlterPartitionManager.
        submit`` does (one entry per partition in ``unsentIsrUpdates`` until the
        answer), and Kafka's ``handleAlterPartitionError`` rolls it back there."""
        out = []
        for s in self._shim.submitted():
            sent = s.leaderAndIsr
            out.append(AlterPartitionProposal(
                tuple(sorted((int(b.brokerId()), int(b.brokerEpoch())) for b in sent.isrWithBrokerEpoch())),
                int(sent.leaderEpoch()), int(sent.partitionEpoch()), str(sent.leaderRecoveryState().name())))
        return out

    @_logged
    def answer(self, isr: frozenset[int], leader_epoch: int, partition_epoch: int) -> None:
        """The controller commits the oldest request: ``isr`` in ``partition_epoch``
        (``handleAlterPartitionUpdate``)."""
        submitted = self._shim.submitted().removeFirst()
        self._call(submitted.future.complete, self._k.LeaderAndIsr(
            self.broker_id, leader_epoch, self._k.int_list(sorted(isr)), self._k.RECOVERED, partition_epoch))

    @_logged
    def answer_error(self, error: str) -> None:
        """The controller refuses the oldest request with Kafka's error ``error``
        (e.g. INELIGIBLE_REPLICA; ``handleAlterPartitionError``)."""
        submitted = self._shim.submitted().removeFirst()
        self._call(submitted.future.completeExceptionally, self._k.Errors.valueOf(error).exception())

    @_read
    def out_of_sync_replicas(self) -> frozenset[int]:
        """The followers the periodic ISR check would remove now
        (``Partition.getOutOfSyncReplicas(replica.lag.time.max.ms)``: none while a
        change is pending); empty while the broker is down."""
        if self._partition is None:
            return frozenset()
        return _ints(self._partition.getOutOfSyncReplicas(REPLICA_LAG_TIME_MAX_MS))

    def list_latest_offset(self) -> Optional[int]:
        """A client's ListOffsets for the latest offset, read uncommitted
        (``Partition.fetchOffsetForTimestamp(LATEST_TIMESTAMP, READ_UNCOMMITTED)`` from
        the leader): the HWM, or None while the HWM is below the Leader Epoch Start
        Offset (Kafka's OFFSET_NOT_AVAILABLE). Raises KafkaPartitionError on a
        non-leader (NOT_LEADER_OR_FOLLOWER)."""
        from jpype import JClass
        level = JClass("org.apache.kafka.common.IsolationLevel").READ_UNCOMMITTED
        optional = JClass("java.util.Optional")
        try:
            held = self._call(self._running().fetchOffsetForTimestamp, self._k.JLong(-1), self._k.Option.apply(level),
                              optional.empty(), True, self._k.Option.empty())
        except KafkaPartitionError as e:
            if e.error == "OFFSET_NOT_AVAILABLE":
                return None
            raise
        return int(held.timestampAndOffsetOpt().get().offset)

    @property
    @_read
    def pending_isr(self) -> Optional[frozenset[int]]:
        """The ISR the pending change proposes (``PendingExpandIsr`` /
        ``PendingShrinkIsr``: ``sentLeaderAndIsr.isr``), None when the state is
        committed (or the broker is down)."""
        if self._partition is None:
            return None
        state = self._partition.partitionState()
        if not state.isInflight():
            return None
        return _ints(state.sentLeaderAndIsr().isr())

    # ------------------------------------------------------------ state
    # The reads below work while the broker is down too, and show what its restart
    # will have: the log read back from the folder, and a Partition's beginning (not
    # the leader, no leader, leader epoch -1, partition epoch 0, no ISR, no follower
    # state).

    @property
    @_read
    def log_end_offset(self) -> int:
        """The log end offset (exclusive: the next record's offset)."""
        return int(self._shim.log().logEndOffset())

    @property
    @_read
    def high_watermark(self) -> int:
        """The replica's HWM (exclusive end)."""
        return int(self._shim.log().highWatermark())

    @property
    @_read
    def recovery_point(self) -> int:
        """The recovery point (exclusive end): records below it are flushed and
        survive a lossy crash (the model's ``flushed``). ``UnifiedLog.recoveryPoint``."""
        return int(self._shim.log().recoveryPoint())

    @property
    @_read
    def log_start_offset(self) -> int:
        """The log start offset (``UnifiedLog.logStartOffset``; 0 here: nothing deletes records)."""
        return int(self._shim.log().logStartOffset())

    @property
    @_read
    def records(self) -> tuple[tuple[int, int, int], ...]:
        """The log's records as (offset, leader epoch, value), from the log start
        offset to the log end offset (``UnifiedLog.read``); a record's leader epoch
        is its batch's partitionLeaderEpoch.

        ``UnifiedLog.read`` (the shim's ``logRecords``) stops at the end of the
        segment holding its start offset, and a log may have several (Kafka rolls a
        new segment, e.g. after a restart): the reads go on segment by segment
        from the offset after the last record read."""
        log = self._shim.log()
        end = int(log.logEndOffset())
        out = list(self._k.triples(self._shim.logRecordsFlat()))
        if out and out[-1][0] + 1 < end:
            from jpype import JClass
            isolation = JClass("org.apache.kafka.server.storage.log.FetchIsolation").LOG_END
            info = JClass("org.apache.kafka.storage.internals.log.LogReadInfo")
            optional = JClass("java.util.Optional")
            while out[-1][0] + 1 < end:
                data = log.read(out[-1][0] + 1, 2 ** 31 - 1, isolation, True)
                rows = self._k.triples(self._k.PartitionShim.records(info(data, optional.empty(), 0, 0, 0, 0)))
                if not rows:
                    break
                out += rows
        return tuple(out)

    @property
    @_read
    def epoch_entries(self) -> tuple[tuple[int, int], ...]:
        """The leader epoch cache as (epoch, start offset), oldest first
        (``LeaderEpochFileCache.epochEntries``)."""
        return tuple((int(e), int(o)) for e, o in self._shim.epochEntries())

    @property
    @_read
    def latest_epoch(self) -> Optional[int]:
        """The epoch cache's latest epoch (``UnifiedLog.latestEpoch``), None when
        empty: the last fetched epoch a follower's fetcher puts in its first request
        and after a truncation (after appending, the fetcher takes the epoch of the
        last appended batch). A leader's epoch with no record yet counts."""
        epoch = self._shim.log().latestEpoch()
        return int(epoch.get()) if epoch.isPresent() else None

    @_read
    def end_offset_for_epoch(self, epoch: int) -> Optional[tuple[int, int]]:
        """``UnifiedLog.endOffsetForEpoch``: (the largest epoch at most ``epoch`` in
        the cache, its end offset, exclusive: the next epoch's start offset, or the
        log end offset for the latest one), the shape of ``FetchAnswer.
        diverging_epoch``; for an epoch below every cached one, (``epoch``, the first
        entry's start offset); None when Kafka has no answer (empty cache,
        UNDEFINED_EPOCH)."""
        found = self._shim.log().endOffsetForEpoch(epoch)
        if not found.isPresent():
            return None
        answer = found.get()
        return int(answer.epoch()), int(answer.offset())

    @property
    @_read
    def is_leader(self) -> bool:
        """Whether this broker leads the partition (``Partition.isLeader``)."""
        return self._partition is not None and bool(self._partition.isLeader())

    @property
    @_read
    def leader(self) -> Optional[int]:
        """The leader this replica acts on (``Partition.leaderReplicaIdOpt``), None
        for none (a new Partition, or the broker down)."""
        if self._partition is None:
            return None
        leader = self._partition.leaderReplicaIdOpt()
        return int(leader.get()) if leader.isDefined() else None

    @property
    @_read
    def leader_epoch(self) -> int:
        """The leader epoch the replica acts on (``Partition.getLeaderEpoch``; -1
        before its first makeLeader / makeFollower, and while the broker is down)."""
        return -1 if self._partition is None else int(self._partition.getLeaderEpoch())

    @property
    @_read
    def partition_epoch(self) -> int:
        """The partition epoch the replica acts on (``Partition.getPartitionEpoch``;
        0 before its first makeLeader / makeFollower, and while the broker is down)."""
        return 0 if self._partition is None else int(self._partition.getPartitionEpoch())

    @property
    @_read
    def isr(self) -> frozenset[int]:
        """The committed ISR (``partitionState.isr``; a follower's is empty)."""
        if self._partition is None:
            return frozenset()
        return _ints(self._partition.partitionState().isr())

    @property
    @_read
    def maximal_isr(self) -> frozenset[int]:
        """The Maximal ISR: the committed ISR and a pending expansion (§6.5.2)."""
        if self._partition is None:
            return frozenset()
        return _ints(self._partition.partitionState().maximalIsr())

    @_read
    def follower_state(self, follower: int) -> Optional[FollowerState]:
        """The leader's record of ``follower`` (``Partition.getReplica``), None for a
        broker outside the replicas (or while the broker is down)."""
        if self._partition is None:
            return None
        replica = self._partition.getReplica(follower)
        if not replica.isDefined():
            return None
        state = replica.get().stateSnapshot()
        epoch = state.brokerEpoch()
        return FollowerState(int(state.logEndOffset()), int(state.lastFetchLeaderLogEndOffset()),
                             int(state.lastFetchTimeMs()), int(state.lastCaughtUpTimeMs()),
                             int(epoch.get()) if epoch.isPresent() else None)

    @_read
    def is_caught_up(self, follower: int) -> bool:
        """Kafka's ``ReplicaState.isCaughtUp`` now: at the leader's LEO, or caught up
        within replica.lag.time.max.ms on the partition's clock."""
        if self._partition is None:
            return False
        replica = self._partition.getReplica(follower)
        return bool(replica.isDefined() and replica.get().stateSnapshot().isCaughtUp(
            self.log_end_offset, self.now_ms, REPLICA_LAG_TIME_MAX_MS))

    @property
    @_read
    def now_ms(self) -> int:
        """The partition's clock (absolute Kafka time, ms; model time ``t`` is
        ``CLOCK_BASE_MS + t``)."""
        return int(self._shim.time().milliseconds())

    @property
    @_read
    def leader_epoch_start_offset(self) -> Optional[int]:
        """The leader's Leader Epoch Start Offset (``leaderEpochStartOffsetOpt``: its
        log end offset when it took its leader epoch), None on a follower."""
        if self._partition is None:
            return None
        start = self._partition.leaderEpochStartOffsetOpt()
        return int(start.get()) if start.isDefined() else None


def _ints(collection: Any) -> frozenset[int]:
    """The broker ids of a Java or a Scala collection (the ISRs of Kafka's
    ``PartitionState`` are Scala sets before 4.2.0, Java sets from it), through the
    iterator both have."""
    found = collection.iterator()
    out = set()
    while found.hasNext():
        out.add(int(found.next()))
    return frozenset(out)


def _dispose(shim: Any, folder: str) -> None:
    """Close a dropped replica's log files (a file in memory stays until its last
    handle is closed), then remove its folder."""
    try:
        shim.dispose()
    except Exception:   # the JVM may be gone at exit
        pass
    shutil.rmtree(folder, True)
