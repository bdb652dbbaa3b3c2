"""``KafkaReplica``: Apache Kafka's own ``kafka.cluster.Partition`` as the SUT
brokers' hosted replica, in place of ``sut.partition.Partition``
(``Components.partition``), in the implementation "kafka" (``kafka_bridge.COMPONENTS``).

Every decision is Kafka's (``kafka_bridge.partition.KafkaPartition``): makeLeader
and makeFollower, the HWM, the followers' caught-up bookkeeping on Kafka's clock,
the ISR expansion inside a fetch, the periodic ISR check, the handling of the
controller's AlterPartition answers, and the log (records, epoch cache, HWM,
recovery point, truncation, flush, crashes and restarts). What is ours is the glue
between the SUT's broker and that Partition:

- before each call into Kafka, its clock is set from the brokers' ``ManualTime``
  (Kafka ms = ``CLOCK_BASE_MS`` + model ms) and this broker's metadata image
  (alive broker epochs, fenced, in controlled shutdown) is pushed into the shim's ``MetadataCache``;
- each AlterPartition Kafka submits is one request of the SUT's
  ``AlterPartitionManager`` (its id remembered there); a submission while one is in
  flight is refused by the shim with OPERATION_NOT_ATTEMPTED before ``submit``
  returns, as Kafka's ``DefaultAlterPartitionManager.submit`` refuses it, so Kafka
  rolls it back inside the call that proposed it (a fetch: before the fetch's HWM
  update); the controller's answer completes Kafka's future (``answer`` /
  ``answer_error``);
- the broker's produce purgatory stays the SUT's ``DelayedProducePurgatory``, but
  whether a waiting write completes, and how, is Kafka's answer
  (``Partition.checkEnoughReplicasReachOffset``, as ``DelayedProduce`` asks it after
  each call into Kafka's replica); the writes still fail as the SUT fails them
  (step-down, shutdown, a committed ISR below MinISR: where Kafka's would wait for
  their request timeout);
- a broker's shutdown stops Kafka's broker (controlled: flushed, clean; else an
  unclean shutdown, lossy or not); the next call after it restarts Kafka's replica
  in the broker's new broker epoch;
- what the observation shows and Kafka does not keep is bookkept here from the
  calls: the role OFFLINE and the leader / epochs an offline replica last acted on
  (Kafka's Partition is gone while the broker is down), and each follower's
  ``last_fetch_leader_epoch`` (the "fetched in this leader epoch" marker: the
  request's leader epoch of its last fetch that updated its state, cleared at
  every new leader epoch).

Times in the observation are model ms (Kafka ms - ``CLOCK_BASE_MS``; Kafka's 0,
"never", is None). The SUT's bugs are not Kafka's: a ``KafkaReplica`` ignores them.
It cannot be deep-copied (``LockStep.resumed`` rebuilds an implementation instead).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from model import NO_LEADER, Config, EpochEndOffset, Record, Rule

from sut.alter_partition_manager import AlterPartitionManager
from sut.clock import ManualTime
from sut.metadata import MetadataImage, PartitionRegistration
from sut.partition import (CommittedPartitionState, PartitionState, PendingExpandIsr, PendingShrinkIsr, Replica,
                           ReplicaRole)
from sut.purgatory import DelayedProducePurgatory

from .partition import CLOCK_BASE_MS, KafkaPartition, KafkaPartitionError

#: Kafka's answer to an acks=all produce below MinISR (``appendRecordsToLeader``).
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"


def model_ms(kafka_ms: int) -> Optional[int]:
    """A time of Kafka's replica state in model ms (None for Kafka's 0: never)."""
    return None if kafka_ms == 0 else kafka_ms - CLOCK_BASE_MS


class KafkaLog:
    """The replica's log as the SUT's fetcher, observation and cluster read and
    write it (``sut.log.UnifiedLog``'s calls), on Kafka's ``UnifiedLog`` through
    the replica's ``KafkaPartition``. Offsets are exclusive ends; records are
    ``model.Record`` (epoch, value), offset = index."""

    def __init__(self, replica: "KafkaReplica") -> None:
        self._replica = replica

    @property
    def _kp(self) -> KafkaPartition:
        return self._replica.kafka

    # ------------------------------------------------------------------ reads

    @property
    def log_end_offset(self) -> int:
        return self._kp.log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._kp.high_watermark

    @property
    def recovery_point(self) -> int:
        return self._kp.recovery_point

    def records(self) -> tuple[Record, ...]:
        """The records (read from Kafka once per change of the replica)."""
        return self._replica.records()

    def view(self) -> tuple[Record, ...]:
        return self.records()

    def read(self, start: int, end: Optional[int] = None) -> tuple[Record, ...]:
        return self.records()[start:end]

    def latest_epoch(self) -> Optional[int]:
        """``UnifiedLog.latestEpoch``: the follower's last fetched epoch (§3.2)."""
        return self._kp.latest_epoch

    def last_written_epoch(self) -> int:
        """Epoch of the last record (-1 for an empty log): GetReplicaLogInfo (§5.3.2)."""
        records = self.records()
        return records[-1].epoch if records else -1

    def end_offset_for_epoch(self, epoch: int) -> Optional[tuple[int, int]]:
        """``UnifiedLog.endOffsetForEpoch``: (epoch, end offset) or None."""
        return self._kp.end_offset_for_epoch(epoch)

    # ----------------------------------------------------------------- writes

    def append_as_follower(self, records: Iterable[Record]) -> None:
        """Append records fetched from the leader at the log end offset, in the
        follower's current leader epoch (``appendRecordsToFollowerOrFutureReplica``)."""
        records = tuple(records)
        if not records:
            return
        self._replica.before_call()
        leo = self._kp.log_end_offset
        self._kp.append_as_follower([(leo + i, r.epoch, r.value) for i, r in enumerate(records)],
                                    self._replica.leader_epoch)

    def update_high_watermark(self, hwm: int) -> None:
        """The follower takes the leader's HWM (``maybeUpdateHighWatermark``)."""
        self._replica.before_call()
        self._kp.update_high_watermark(hwm)

    def truncate_to(self, target_offset: int) -> bool:
        """``Partition.truncateTo``; whether records went."""
        self._replica.before_call()
        return self._kp.truncate_to(target_offset)

    def flush(self) -> None:
        self._replica.flush()

    @property
    def epoch_checkpoint_scheduled(self) -> bool:
        """Whether Kafka's epoch checkpoint write waits for the log's scheduler."""
        self._replica.before_call()
        return self._kp.epoch_checkpoint_scheduled()

    def write_epoch_checkpoint(self) -> None:
        """The log's scheduler runs Kafka's waiting epoch checkpoint writes."""
        self._replica.before_call()
        self._kp.write_epoch_checkpoint()

    def __repr__(self) -> str:
        return (f"KafkaLog(leo={self.log_end_offset}, hwm={self.high_watermark}, "
                f"recovery_point={self.recovery_point})")


class KafkaReplica:
    """One broker's replica of the partition, Kafka's ``Partition`` behind
    ``sut.partition.Partition``'s calls (see the module doc). Built with
    ``Partition``'s constructor signature; ``epoch_cache`` and ``bugs`` are not
    used (Kafka's log keeps its own epoch cache; the SUT's bugs are not Kafka's).
    Starts OFFLINE, as the SUT's replica does, until ``make_leader`` or
    ``make_follower``."""

    def __init__(self, broker_id: int, config: Config, delayed_produce: DelayedProducePurgatory,
                 alter_partition_manager: AlterPartitionManager, bugs: frozenset,
                 metadata_cache: Callable[[], MetadataImage], epoch_cache: Any = None,
                 time: Optional[ManualTime] = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.delayed_produce = delayed_produce
        self.alter_partition_manager = alter_partition_manager
        self.bugs = bugs
        self.metadata_cache = metadata_cache
        self.time = ManualTime() if time is None else time
        epoch = alter_partition_manager.lifecycle.broker_epoch
        self.kafka = KafkaPartition(broker_id, -1 if epoch is None else epoch, config.min_isr)
        if config.follows(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER):
            self.kafka.defer_epoch_checkpoint_writes()
        self.log = KafkaLog(self)
        self.assignment: tuple[int, ...] = ()
        # glue bookkeeping (see the module doc)
        self._offline = True          # role OFFLINE: before the first make_*, and from make_offline on
        self._offline_view = (NO_LEADER, -1, -1)   # (leader, leader epoch, partition epoch) shown while offline
        self._stopped = False         # Kafka's broker is down: restart() before the next call
        self._fetched_in: dict[int, int] = {}      # follower -> leader epoch of its last state-updating fetch
        self._waiting = 0             # Kafka's submitted AlterPartitions sent as SUT requests, unanswered
        self._pushed: Optional[tuple] = None       # the metadata last pushed into the shim
        self._pushed_image: Optional[MetadataImage] = None   # the image it was read from (images are replaced)
        self._pushed_ms: Optional[int] = None      # the clock last set in the shim
        # the records as model Records, and the read of Kafka's they were made from: a read is kept
        # until a call changes the replica (KafkaPartition's cache), so the same object means the same log
        self._records: tuple[Any, tuple[Record, ...]] = (None, ())

    def __deepcopy__(self, memo: dict) -> Any:
        raise TypeError("a KafkaReplica (Kafka's Partition over files) cannot be copied; "
                        "rebuild the implementation and replay the trace (LockStep.resumed)")

    # ----------------------------------------------------------------- glue

    def before_call(self) -> None:
        """Before any call into Kafka: restart a stopped broker's replica (in the
        broker's current broker epoch), then ``_sync``."""
        if self._stopped:
            epoch = self.alter_partition_manager.lifecycle.broker_epoch
            assert epoch is not None, "a stopped replica acts again only on a started broker"
            self.kafka.restart(epoch)
            self._stopped = False
            self._waiting = 0
        self._sync()

    def _sync(self) -> None:
        """Set Kafka's clock from the brokers' clock and push this broker's metadata
        image into the shim's MetadataCache (what a read of Kafka's state needs too);
        each only when it changed, so that the reads Kafka's replica keeps between its
        changes stay (every call into the shim that sets something forgets them)."""
        kp = self.kafka
        now = CLOCK_BASE_MS + self.time.milliseconds()
        if now != self._pushed_ms:
            kp.set_now_ms(now)
            self._pushed_ms = now
        image = self.metadata_cache()
        if image is self._pushed_image:
            return
        pushed = tuple((b, image.alive_broker_epoch(b), image.is_broker_fenced(b), image.is_broker_shutting_down(b))
                       for b in self.config.brokers)
        if pushed != self._pushed:
            for b, epoch, fenced, shutting_down in pushed:
                kp.set_broker(b, epoch, fenced, shutting_down)
            self._pushed = pushed
        self._pushed_image = image

    def _after_call(self) -> None:
        """After a call into Kafka: send what Kafka submitted, complete the waiting
        writes as Kafka answers for each."""
        kp = self.kafka
        proposals = kp.proposals
        manager = self.alter_partition_manager
        for proposal in proposals[self._waiting:]:
            if manager.in_flight is not None:
                # Kafka's request was accepted while the broker's manager waits on another:
                # the shim and the manager disagree on what is in flight (a bridge error)
                raise RuntimeError(f"broker {self.broker_id}: Kafka's Partition submitted an AlterPartition "
                                   f"while request {manager.in_flight} is unanswered")
            manager.submit(proposal.leader_epoch, proposal.partition_epoch,
                           frozenset(b for b, _ in proposal.isr),
                           tuple((b, None if e < 0 else e) for b, e in proposal.isr), proposal.leader_recovery_state)
            self._waiting += 1
        self._complete_waiting()

    def _complete_waiting(self) -> None:
        """Each waiting write completes as Kafka's leader answers ``DelayedProduce``
        (``KafkaPartition.completes_with``); nothing to ask off a leader or with none waiting."""
        if self.kafka.is_leader and self.delayed_produce.waiting:
            self.delayed_produce.complete_as(self.kafka.completes_with)

    def records(self) -> tuple[Record, ...]:
        rows = self.kafka.records
        if rows is not self._records[0]:
            self._records = (rows, tuple(Record(e, v) for _, e, v in rows))
        return self._records[1]

    # ------------------------------------------------------------- the replica's view

    @property
    def role(self) -> ReplicaRole:
        if self._offline:
            return ReplicaRole.OFFLINE
        return ReplicaRole.LEADER if self.kafka.is_leader else ReplicaRole.FOLLOWER

    @property
    def is_leader(self) -> bool:
        return not self._offline and self.kafka.is_leader

    @property
    def leader_id(self) -> int:
        if self._offline:
            return self._offline_view[0]
        leader = self.kafka.leader
        return NO_LEADER if leader is None else leader

    @property
    def leader_epoch(self) -> int:
        return self._offline_view[1] if self._offline else self.kafka.leader_epoch

    @property
    def partition_epoch(self) -> int:
        return self._offline_view[2] if self._offline else self.kafka.partition_epoch

    @property
    def leader_epoch_start_offset(self) -> Optional[int]:
        return None if not self.is_leader else self.kafka.leader_epoch_start_offset

    @property
    def in_sync_replicas(self) -> frozenset[int]:
        return self.kafka.isr if self.is_leader else frozenset()

    @property
    def partition_state(self) -> PartitionState:
        """Kafka's ``partitionState`` in the SUT's shapes (a follower's: empty)."""
        if not self.is_leader:
            return CommittedPartitionState(frozenset())
        kp = self.kafka
        isr, pending = kp.isr, kp.pending_isr
        if pending is None:
            return CommittedPartitionState(isr)
        if pending - isr:
            (added,) = pending - isr
            return PendingExpandIsr(isr, added, None)
        return PendingShrinkIsr(isr, isr - pending, None)

    @property
    def remote_replicas(self) -> dict[int, Replica]:
        """The leader's follower states (``Replica.stateSnapshot``) in the SUT's
        ``Replica`` shape, times in model ms; ``last_fetch_leader_epoch`` is the
        glue's marker. Empty on a follower."""
        if not self.is_leader:
            return {}
        out = {}
        for b in self.assignment:
            if b == self.broker_id:
                continue
            state = self.kafka.follower_state(b)
            if state is None:
                continue
            r = Replica(b)
            r.log_end_offset = None if state.log_end_offset < 0 else state.log_end_offset
            r.broker_epoch = state.broker_epoch
            r.last_fetch_leader_epoch = self._fetched_in.get(b)
            r.last_fetch_leader_leo = (None if state.last_fetch_leader_log_end_offset < 0
                                       else state.last_fetch_leader_log_end_offset)
            r.last_fetch_ms = model_ms(state.last_fetch_time_ms)
            r.last_caught_up_ms = model_ms(state.last_caught_up_time_ms)
            out[b] = r
        return out

    # ------------------------------------------------------- role transitions

    def make_leader(self, reg: PartitionRegistration, changed: bool = True) -> bool:
        """Kafka's ``makeLeader`` with ``reg``; whether it acted on it (Kafka skips an
        older partition epoch). A registration the metadata batch did not change is
        not handed to Kafka (its ReplicaManager applies ``TopicsDelta.localChanges``
        only). Callers then run ``on_isr_changed``."""
        if not changed and not self._offline:
            return False
        self.before_call()
        kp = self.kafka
        was_leader = self.is_leader
        before_epoch = kp.leader_epoch
        acted = reg.partition_epoch >= kp.partition_epoch
        kp.make_leader(reg)
        self._offline = False
        self.assignment = reg.replicas
        if not was_leader or kp.leader_epoch != before_epoch:
            self._fetched_in.clear()   # a new leader epoch: nobody has fetched in it yet
        self._fetched_in = {b: e for b, e in self._fetched_in.items() if b in reg.replicas}
        self._after_call()
        return acted

    def make_follower(self, reg: PartitionRegistration, changed: bool = True) -> bool:
        """Kafka's ``makeFollower`` with ``reg``: whether the leader epoch is new
        (Kafka's ReplicaManager restarts the fetcher only then). A registration the
        metadata batch did not change is not handed to Kafka, as in ``make_leader``."""
        if not changed and not self._offline:
            return False
        self.before_call()
        new_epoch = self.kafka.make_follower(reg)
        self._offline = False
        self.assignment = reg.replicas
        self._fetched_in.clear()
        self._after_call()
        return new_epoch

    def make_offline(self) -> None:
        """The broker stops: the replica shows OFFLINE with the leader and epochs it
        last acted on (``shutdown`` then stops Kafka's broker)."""
        if not self._offline:
            self._offline_view = (self.leader_id, self.kafka.leader_epoch, self.kafka.partition_epoch)
        self._offline = True
        self._fetched_in.clear()
        self.assignment = ()

    def shutdown(self, flush: bool, lossy: bool) -> None:
        """Kafka's broker stops (after ``make_offline``): flushed and clean
        (``controlled_shutdown``) when ``flush``, else an unclean shutdown,
        ``lossy`` or not (so the SUT's bug CONTROLLED_SHUTDOWN_WITHOUT_FLUSH makes a
        controlled shutdown Kafka's unclean one, not lossy: nothing flushed, no
        clean-shutdown marker). Its AlterPartitions die with it."""
        self.before_call()
        if flush:
            self.kafka.controlled_shutdown()
        else:
            self.kafka.unclean_shutdown(lossy)
        self._stopped = True
        self._waiting = 0

    def flush(self) -> None:
        """``UnifiedLog.flush``: the recovery point moves to the log end offset."""
        self.before_call()
        self.kafka.flush()

    def update_min_isr(self, min_isr: int) -> None:
        """The topic's new ``min.insync.replicas`` reaches Kafka's log config
        (``UnifiedLog.updateConfig``); Kafka's ``Partition`` reads it from there."""
        self.kafka.set_min_isr(min_isr)

    @property
    def min_isr(self) -> int:
        """The ``min.insync.replicas`` Kafka's log config holds: what the
        observation shows and the purgatory rule reads."""
        return self.kafka.min_isr

    def on_isr_changed(self) -> None:
        """After the committed ISR changed (the SUT's purgatory rule): below MinISR
        (capped at the replica count, ``Partition.effectiveMinIsr``) the waiting
        writes fail (NOT_ENOUGH_REPLICAS_AFTER_APPEND, §2.6); otherwise each completes
        as Kafka answers (``_complete_waiting``)."""
        min_isr = min(self.min_isr, len(self.assignment)) if self.assignment else self.min_isr
        if len(self.in_sync_replicas) < min_isr:
            self.delayed_produce.fail_all()
        else:
            self._complete_waiting()

    # ---------------------------------------------------------- produce (§2.6)

    def append_records_to_leader(self, value: int) -> None:
        """Kafka's acks=all ``appendRecordsToLeader``: NOT_ENOUGH_REPLICAS rejects the
        write; else it waits in the purgatory for Kafka's HWM."""
        self.before_call()
        try:
            offset = self.kafka.append(value)
        except KafkaPartitionError as e:
            if e.error != NOT_ENOUGH_REPLICAS:
                raise
            self.delayed_produce.rejected(value)
            return
        self.delayed_produce.watch(value, offset)
        self._after_call()

    def fetch_offset_for_timestamp(self) -> Optional[int]:
        """ListOffsets (latest, read uncommitted): Kafka's ``fetchOffsetForTimestamp``."""
        self.before_call()
        return self.kafka.list_latest_offset()

    # --------------------------------------------------------- fetch (§2.2.2)

    def fetch_records(self, src: int, broker_epoch: int, leader_epoch: int, fetch_offset: int,
                      last_fetched_epoch: Optional[int]) -> dict:
        """Kafka's ``fetchRecords`` for a follower's fetch: the FetchResponse fields
        (``error``; or ``diverging_epoch`` and ``hwm``; or ``records`` and ``hwm``).
        An expansion Kafka proposes inside it is sent before the answer."""
        self.before_call()
        try:
            answer = self.kafka.fetch(src, broker_epoch, leader_epoch, fetch_offset, last_fetched_epoch)
        except KafkaPartitionError as e:
            self._after_call()
            return {"error": e.error}
        if answer.diverging_epoch is not None:
            self._after_call()
            return {"diverging_epoch": EpochEndOffset(*answer.diverging_epoch), "hwm": answer.high_watermark}
        self._fetched_in[src] = leader_epoch   # the fetch updated the follower's state in this epoch
        self._after_call()
        return {"records": tuple(Record(e, v) for _, e, v in answer.records), "hwm": answer.high_watermark}

    # ------------------------------------------------- ISR changes (§2.9.2)

    def alter_partition_in_flight(self) -> Optional[str]:
        """Why no ISR change can be proposed now: the broker's AlterPartition manager
        holds a request, or Kafka's partition state is pending."""
        if self.alter_partition_manager.in_flight is not None or self.kafka.pending_isr is not None:
            return f"leader {self.broker_id} has an AlterPartition in flight"
        return None

    def is_follower_in_sync(self, follower: int) -> Optional[str]:
        """Kafka's ``isFollowerInSync`` (private in Partition.scala, so restated on
        Kafka's state): the follower's LEO at least the HWM and the LESO."""
        state = self.kafka.follower_state(follower)
        if state is None or state.log_end_offset < 0:
            return f"the leader has no fetch state for follower {follower}"
        leso = self.kafka.leader_epoch_start_offset
        if state.log_end_offset < self.kafka.high_watermark or leso is None or state.log_end_offset < leso:
            return f"follower {follower} is below the HWM or the LESO"
        return None

    def why_not_expand(self, follower: int) -> Optional[str]:
        """Kafka's Partition proposes an expansion only inside the follower's fetch."""
        return "Kafka's Partition proposes ISR expansions inside the follower's fetch"

    def maybe_expand_isr(self, follower: int) -> None:
        raise NotImplementedError("Kafka's Partition proposes ISR expansions inside the follower's fetch only")

    def is_follower_out_of_sync(self, follower: int) -> Optional[str]:
        """Why the ISR check cannot find ``follower`` out of sync now, or None: Kafka's
        ``ReplicaState.isCaughtUp`` on Kafka's clock."""
        self._sync()
        if self.kafka.is_caught_up(follower):
            return f"follower {follower} is caught up at {self.time.milliseconds()} ms"
        return None

    def out_of_sync_replicas(self) -> frozenset[int]:
        """Kafka's ``getOutOfSyncReplicas``; none while an AlterPartition is in flight."""
        if self.alter_partition_in_flight():
            return frozenset()
        self._sync()
        return self.kafka.out_of_sync_replicas()

    def maybe_shrink_isr(self, followers: frozenset[int]) -> None:
        """Kafka's periodic ISR check (``maybeShrinkIsr``), which finds the followers
        itself (the cluster's guard made sure they are ``followers``)."""
        self.before_call()
        self.kafka.maybe_shrink_isr()
        self._after_call()

    def handle_alter_partition_update(self, request_id: int, error: Optional[str], isr: frozenset[int],
                                      leader_epoch: int, partition_epoch: int) -> None:
        """The controller answered request ``request_id``: if it is the one this
        broker's manager waits on, complete Kafka's future with the answer (Kafka's
        ``handleAlterPartitionUpdate`` / ``handleAlterPartitionError`` decide);
        other answers are dropped, as the manager drops them."""
        manager = self.alter_partition_manager
        if manager.in_flight != request_id:
            return
        manager.in_flight = None
        if self._waiting == 0 or self._stopped:
            return
        self.before_call()
        kp = self.kafka
        before = kp.partition_epoch
        self._waiting -= 1
        if error is None:
            kp.answer(isr, leader_epoch, partition_epoch)
        else:
            kp.answer_error(error)
        self._after_call()
        if self.is_leader and kp.partition_epoch != before:
            self.on_isr_changed()
