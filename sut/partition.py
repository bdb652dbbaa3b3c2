"""``Partition``: one broker's replica of the partition and, when it leads, the
leader's state: remote replica states from fetches, the committed or pending
partition state (whose union is the Maximal ISR, §6.5.2), the Leader Epoch
Start Offset, HWM advancement and ISR change proposals (§2.2, §2.7, §2.9.2,
§2.10, §6.4, §6.5).
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Optional

from model import NO_LEADER, RECOVERED, Config, EpochEndOffset, Rule

from .alter_partition_manager import AlterPartitionManager
from .bugs import Bug
from .clock import REPLICA_LAG_TIME_MAX_MS, ManualTime
from .epoch_cache import LeaderEpochFileCache
from .errors import Errors
from .purgatory import DelayedProducePurgatory
from .log import UnifiedLog
from .metadata import MetadataImage, PartitionRegistration


class ReplicaRole(enum.Enum):
    LEADER = "leader"
    FOLLOWER = "follower"
    OFFLINE = "offline"  # the hosting broker is not running: the replica is inactive


# ------------------------------------------------------------- remote replicas

class Replica:
    """What the leader knows of one follower (§2.2.2), from its latest fetch:
    its LEO (the fetch offset; None until it fetches), its broker epoch, and the
    leader epoch the fetch was sent in — cleared whenever the leader moves to a
    new leader epoch, so set means "fetched in the current epoch" (§6.5.4).

    Under Kafka's caught-up rule also the leader's LEO at its last fetch
    (``lastFetchLeaderLogEndOffset``) and, with the clock (Kafka's lag-time rule),
    the times of its last fetch and last catching up (``lastFetchTimeMs``,
    ``lastCaughtUpTimeMs``; None: never); without it, whether it is caught up
    (the flag stands for ``lastCaughtUpTimeMs`` being "now")."""

    __slots__ = ("broker_id", "log_end_offset", "broker_epoch", "last_fetch_leader_epoch", "caught_up",
                 "last_fetch_leader_leo", "last_fetch_ms", "last_caught_up_ms")

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.reset_replica_state()

    def reset_replica_state(self, caught_up: bool = False) -> None:
        self.log_end_offset: Optional[int] = None
        self.broker_epoch: Optional[int] = None
        self.last_fetch_leader_epoch: Optional[int] = None
        self.caught_up = caught_up
        self.last_fetch_leader_leo: Optional[int] = None
        self.last_fetch_ms: Optional[int] = None
        self.last_caught_up_ms: Optional[int] = None

    @property
    def has_fetched(self) -> bool:
        return self.log_end_offset is not None

    @property
    def is_empty(self) -> bool:
        return (self.log_end_offset is None and self.broker_epoch is None and self.last_fetch_leader_epoch is None
                and not self.caught_up and self.last_fetch_leader_leo is None and self.last_fetch_ms is None
                and self.last_caught_up_ms is None)

    def is_caught_up(self, leader_end_offset: int, now_ms: int) -> bool:
        """Kafka's ``ReplicaState.isCaughtUp``: at the leader's LEO, or caught up
        within replica.lag.time.max.ms of ``now_ms``."""
        if self.log_end_offset == leader_end_offset:
            return True
        return self.last_caught_up_ms is not None and now_ms - self.last_caught_up_ms <= REPLICA_LAG_TIME_MAX_MS

    def update_fetch_state(self, fetch_offset: int, broker_epoch: int, leader_epoch: int,
                           leader_end_offset: Optional[int] = None, now_ms: Optional[int] = None) -> None:
        """Kafka's ``updateFetchStateOrThrow``; ``leader_end_offset`` (the leader's LEO
        when the fetch was served) only under the caught-up rule, ``now_ms`` only
        with the clock: a fetch at the leader's LEO caught up now, one at the
        leader's LEO of the previous fetch caught up at that fetch's time."""
        if now_ms is not None:
            assert leader_end_offset is not None
            last_fetch_leo = -1 if self.last_fetch_leader_leo is None else self.last_fetch_leader_leo
            caught = -1 if self.last_caught_up_ms is None else self.last_caught_up_ms
            if fetch_offset >= leader_end_offset:
                caught = max(caught, now_ms)
            elif fetch_offset >= last_fetch_leo:
                caught = max(caught, -1 if self.last_fetch_ms is None else self.last_fetch_ms)
            self.last_caught_up_ms = None if caught < 0 else caught
            self.last_fetch_ms = now_ms
            self.last_fetch_leader_leo = max(last_fetch_leo, leader_end_offset)
        elif leader_end_offset is not None:
            before = self.last_fetch_leader_leo
            self.caught_up = self.caught_up or fetch_offset >= leader_end_offset or (
                before is not None and fetch_offset >= before)
            self.last_fetch_leader_leo = leader_end_offset if before is None else max(before, leader_end_offset)
        self.log_end_offset = fetch_offset
        self.broker_epoch = broker_epoch
        self.last_fetch_leader_epoch = leader_epoch

    def __repr__(self) -> str:
        return (f"Replica({self.broker_id}, leo={self.log_end_offset}, be={self.broker_epoch}, "
                f"lfle={self.last_fetch_leader_epoch}, caught_up={self.caught_up}, "
                f"last_caught_up_ms={self.last_caught_up_ms})")


# ------------------------------------------------------------ partition state

class CommittedPartitionState:
    """The ISR as committed by the controller; nothing in flight."""

    __slots__ = ("isr",)
    is_inflight = False
    request_id: Optional[int] = None

    def __init__(self, isr: frozenset[int]) -> None:
        self.isr = isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr

    @property
    def proposed_isr(self) -> Optional[frozenset[int]]:
        return None


class PendingExpandIsr:
    """An AlterPartition adding ``new_in_sync_replica`` is in flight; the Maximal
    ISR already counts it (§6.5.2)."""

    __slots__ = ("isr", "new_in_sync_replica", "request_id", "sent")
    is_inflight = True

    def __init__(self, isr: frozenset[int], new_in_sync_replica: int, request_id: Optional[int]) -> None:
        self.isr, self.new_in_sync_replica, self.request_id = isr, new_in_sync_replica, request_id
        self.sent: tuple = ()   # the submitted request's arguments, which a retry submits again

    @property
    def proposed_isr(self) -> frozenset[int]:
        return self.isr | {self.new_in_sync_replica}

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr | {self.new_in_sync_replica}


class PendingShrinkIsr:
    """An AlterPartition removing ``outgoing_replicas`` (Kafka's
    ``outOfSyncReplicaIds``) is in flight; the Maximal ISR still counts them until
    the controller commits the change (§6.5.2)."""

    __slots__ = ("isr", "outgoing_replicas", "request_id", "sent")
    is_inflight = True

    def __init__(self, isr: frozenset[int], outgoing_replicas: frozenset[int], request_id: Optional[int]) -> None:
        self.isr, self.outgoing_replicas, self.request_id = isr, outgoing_replicas, request_id
        self.sent: tuple = ()   # the submitted request's arguments, which a retry submits again

    @property
    def proposed_isr(self) -> frozenset[int]:
        return self.isr - self.outgoing_replicas

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr


PartitionState = CommittedPartitionState | PendingExpandIsr | PendingShrinkIsr
NO_STATE = CommittedPartitionState(frozenset())


# ------------------------------------------------------------------ partition

class Partition:
    """The replica hosted by ``broker_id``: its log and the state it acts on."""

    def __init__(self, broker_id: int, config: Config, delayed_produce: DelayedProducePurgatory,
                 alter_partition_manager: AlterPartitionManager, bugs: frozenset,
                 metadata_cache: Callable[[], MetadataImage],
                 epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache,
                 time: Optional[ManualTime] = None) -> None:
        self.broker_id = broker_id
        self.time = ManualTime() if time is None else time   # the brokers' clock
        self.alter_partition_manager = alter_partition_manager
        self.config = config
        self.metadata_cache = metadata_cache
        self.min_isr = config.min_isr
        self.delayed_produce = delayed_produce   # the broker's purgatory of acks=all writes
        self.bugs = bugs
        self.log = UnifiedLog(bugs, epoch_cache, config.follows(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER))
        self.role = ReplicaRole.OFFLINE
        self.leader_id = NO_LEADER
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.leader_epoch_start_offset: Optional[int] = None
        self.partition_state: PartitionState = NO_STATE
        #: The leader recovery state the leader proposes its ISR changes with
        #: (``CommittedPartitionState.leaderRecoveryState``).
        self.leader_recovery_state = RECOVERED
        self.assignment: tuple[int, ...] = ()
        self.remote_replicas: dict[int, Replica] = {}

    @property
    def is_leader(self) -> bool:
        return self.role is ReplicaRole.LEADER

    @property
    def in_sync_replicas(self) -> frozenset[int]:
        return self.partition_state.isr

    # ------------------------------------------------------- role transitions

    def _update_assignment(self, replicas: tuple[int, ...]) -> None:
        """Remote replicas follow the assignment: removed replicas are forgotten,
        added ones start with an unknown state (§4.3); with the clock, as Kafka's
        ``ReplicaState.EMPTY``, whose leader LEO at the last fetch is 0."""
        self.assignment = replicas
        remotes = self.remote_replicas
        for b in [b for b in remotes if b not in replicas]:
            del remotes[b]
        for b in replicas:
            if b != self.broker_id and b not in remotes:
                remotes[b] = Replica(b)
                if self.config.follows(Rule.REPLICA_LAG_TIME):
                    remotes[b].last_fetch_leader_leo = 0   # Kafka's ReplicaState.EMPTY

    def make_leader(self, reg: PartitionRegistration, changed: bool = True) -> bool:
        """Kafka's ``makeLeader``: act as leader of ``reg`` (§2.10.1–§2.10.3). A new leader assigns its epoch
        at the LEO (the LESO) in the epoch cache and starts with no follower state.
        A leader in a new epoch does the same but keeps its followers' fetch
        state, clearing every last-fetch marker: a follower must fetch again in the
        new epoch before it may join the ISR (§2.10.3, §6.5.4). In the
        same epoch a newer partition epoch replaces the ISR and drops any pending
        change (§2.10.2) — under Kafka's rule, any changed registration whose
        partition epoch is not older. Callers then run ``on_isr_changed``.
        Under Kafka's caught-up rule the ISR members count as caught up
        (``resetReplicaState``); with the clock they caught up and fetched now,
        the others never. Returns whether it acted on ``reg`` (Kafka skips an
        older partition epoch). The leader marks itself RECOVERED whatever the
        registration says (``updateAssignmentAndIsr(..., RECOVERED)``)."""
        was_leader = self.is_leader
        self.leader_recovery_state = RECOVERED
        if Bug.LEADER_STAYS_RECOVERING in self.bugs:
            self.leader_recovery_state = reg.leader_recovery_state   # BUG: keeps the registration's RECOVERING
        self._update_assignment(reg.replicas)
        caught = self.config.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS)
        clock = self.config.follows(Rule.REPLICA_LAG_TIME)
        now = self.time.milliseconds()
        if not was_leader:
            self.role = ReplicaRole.LEADER
            self.leader_id = self.broker_id
            self._new_leader_epoch(reg)
            for b, remote in self.remote_replicas.items():
                remote.reset_replica_state(caught_up=caught and not clock and b in reg.isr)
                if clock and b in reg.isr:
                    remote.last_caught_up_ms = now
        elif reg.leader_epoch != self.leader_epoch:
            leso = self.log.log_end_offset
            for b, remote in self.remote_replicas.items():
                if b in reg.isr or Bug.OUT_OF_SYNC_FOLLOWER_STATE_NOT_RESET not in self.bugs:
                    remote.last_fetch_leader_epoch = None
                if clock:
                    remote.last_fetch_leader_leo = leso
                    remote.last_fetch_ms = remote.last_caught_up_ms = now if b in reg.isr else None
                elif caught:
                    remote.caught_up = b in reg.isr
                    remote.last_fetch_leader_leo = leso if b in reg.isr else None
            self._new_leader_epoch(reg)
        elif reg.partition_epoch > self.partition_epoch or (
                changed and reg.partition_epoch == self.partition_epoch
                and self.config.follows(Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH)):
            self.partition_epoch = reg.partition_epoch
            self.partition_state = CommittedPartitionState(reg.isr)
        else:
            return False
        return True

    def _new_leader_epoch(self, reg: PartitionRegistration) -> None:
        self.leader_epoch = reg.leader_epoch
        self.partition_epoch = reg.partition_epoch
        leso = self.log.log_end_offset
        self.leader_epoch_start_offset = leso
        self.log.assign_epoch_start_offset(reg.leader_epoch, leso)
        self.partition_state = CommittedPartitionState(reg.isr)

    def make_follower(self, reg: PartitionRegistration, changed: bool = True) -> bool:
        """Kafka's ``makeFollower``: follow ``reg.leader`` (§2.10.4–§2.10.6). A change of leader epoch (or
        leaving leadership, or becoming active) resets the replica's follower
        state; the same epoch changes nothing, but under Kafka's rule a changed
        registration's newer partition epoch. Returns whether the fetcher must
        be (re)started."""
        if not (self.is_leader or self.role is ReplicaRole.OFFLINE or reg.leader_epoch != self.leader_epoch):
            if (changed and reg.partition_epoch > self.partition_epoch
                    and self.config.follows(Rule.FOLLOWER_APPLIES_PARTITION_EPOCH)):
                self.partition_epoch = reg.partition_epoch
            return False
        self._drop_leader_state(keep_unwritten_epoch=self.config.follows(Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH))
        self.role = ReplicaRole.FOLLOWER
        self.leader_id = reg.leader
        self.leader_epoch = reg.leader_epoch
        self.partition_epoch = reg.partition_epoch
        return True

    def make_offline(self) -> None:
        """The broker stops: the replica keeps its log and last epochs on disk and
        forgets the in-memory leader state. Under Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH
        a kept entry at the LEO goes: loading the log at the restart truncates the
        cache there (Kafka's ``LogLoader.load``); under Rule.EPOCH_CHECKPOINT_WRITTEN_LATER
        the load is ``shutdown``'s, from the checkpoint file."""
        if self.log.checkpoint_written_later:
            self._drop_leader_state(keep_unwritten_epoch=True)
            self.role = ReplicaRole.OFFLINE
            return
        self._drop_leader_state()
        if self.config.follows(Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH):
            self.log.truncate_epoch_cache(self.log.log_end_offset)
        self.role = ReplicaRole.OFFLINE

    def flush(self) -> None:
        """Flush the log (``Flush``): the recovery point moves to the LEO."""
        self.log.flush()

    def shutdown(self, flush: bool, lossy: bool) -> None:
        """The broker stopped (after ``make_offline``): at the end of a controlled
        shutdown the log is flushed (``flush``); a ``lossy`` crash loses the
        unflushed suffix (§5.1.1); otherwise the log stays as it is. With the
        checkpoint written late, the log is then read back as the next start reads
        it (an unclean shutdown lost a scheduled checkpoint write)."""
        if flush:
            self.log.flush()
        elif lossy:
            self.log.lose_unflushed()
        if self.log.checkpoint_written_later:
            self.log.load(lost_write=not flush)

    def _drop_leader_state(self, keep_unwritten_epoch: bool = False) -> None:
        if self.is_leader and not keep_unwritten_epoch:
            # An epoch led without writing a record holds no records: its entry (at
            # the LEO) leaves the epoch cache, so the last fetched epoch is the
            # epoch of the last record (§3.2). Kafka keeps it (Rule.
            # EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH: makeFollower leaves the log alone).
            self.log.truncate_epoch_cache(self.log.log_end_offset)
        self.leader_epoch_start_offset = None
        self.partition_state = NO_STATE
        self.remote_replicas = {}
        self.assignment = ()

    # ------------------------------------------------------------ HWM (§2.7)

    def maybe_increment_leader_hw(self) -> bool:
        """Kafka's ``maybeIncrementLeaderHW``: advance the HWM to the lowest LEO
        among the leader and every follower in
        the Maximal ISR, only while the ISR has at least MinISR members (§2.7,
        §6.5.2). An unknown follower LEO blocks. Completes the waiting writes
        below the new HWM (``tryCompleteDelayedRequests``)."""
        state = self.partition_state
        if len(state.isr) < self.effective_min_isr():
            return False
        members = state.isr if Bug.HWM_FROM_ISR_NOT_MAXIMAL_ISR in self.bugs else state.maximal_isr
        log = self.log
        new_hw = log.log_end_offset
        for b in members:
            if b == self.broker_id:
                continue
            remote = self.remote_replicas.get(b)
            if remote is None or remote.log_end_offset is None:
                return False
            if remote.log_end_offset < new_hw:
                new_hw = remote.log_end_offset
        if self.config.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS):
            # shouldWaitForReplicaToJoinIsr
            clock = self.config.follows(Rule.REPLICA_LAG_TIME)
            now = self.time.milliseconds()
            for b, remote in self.remote_replicas.items():
                caught_up = remote.is_caught_up(log.log_end_offset, now) if clock else remote.caught_up
                if b not in members and caught_up and self.is_replica_isr_eligible(b):
                    if remote.log_end_offset is None:
                        return False
                    new_hw = min(new_hw, remote.log_end_offset)
        if new_hw <= log.high_watermark:
            return False
        log.update_high_watermark(new_hw)
        self.delayed_produce.check_and_complete(new_hw)
        return True

    def effective_min_isr(self) -> int:
        """The log config's MinISR capped at the replica count (Kafka's
        ``Partition.effectiveMinIsr``)."""
        return min(self.min_isr, len(self.assignment)) if self.assignment else self.min_isr

    def update_min_isr(self, min_isr: int) -> None:
        """The log config's new ``min.insync.replicas`` (``UnifiedLog.updateConfig``):
        read by the next HWM advance and acks=all produce, nothing re-checked now."""
        self.min_isr = min_isr

    def on_isr_changed(self) -> None:
        """After the committed ISR changed: below MinISR the waiting writes fail
        (NOT_ENOUGH_REPLICAS_AFTER_APPEND, §2.6); otherwise the HWM may move."""
        if len(self.partition_state.isr) < self.effective_min_isr():
            self.delayed_produce.fail_all()
        else:
            self.maybe_increment_leader_hw()

    # ---------------------------------------------------------- produce (§2.6)

    def append_records_to_leader(self, value: int) -> None:
        """An acks=all produce: rejected (NOT_ENOUGH_REPLICAS) while the ISR is below
        MinISR, else appended in the leader epoch and waiting for the HWM."""
        if len(self.partition_state.isr) < self.effective_min_isr() and Bug.PRODUCE_IGNORES_MIN_ISR not in self.bugs:
            self.delayed_produce.rejected(value)
            return
        offset = self.log.append_as_leader(value, self.leader_epoch)
        self.delayed_produce.watch(value, offset)
        self.maybe_increment_leader_hw()

    def fetch_offset_for_timestamp(self) -> Optional[int]:
        """ListOffsets (latest committed): the HWM, or None ('unknown') while the HWM
        is below the LESO, since it may lag the True HWM (§6.4.2)."""
        hwm = self.log.high_watermark
        if Bug.LIST_OFFSETS_IGNORES_LESO in self.bugs:
            return hwm
        assert self.leader_epoch_start_offset is not None
        return hwm if hwm >= self.leader_epoch_start_offset else None

    # --------------------------------------------------------- fetch (§2.2.2)

    def fetch_records(self, src: int, broker_epoch: int, leader_epoch: int, fetch_offset: int,
                      last_fetched_epoch: Optional[int]) -> dict:
        """Kafka's ``fetchRecords`` + ``updateFollowerFetchState``: serve a
        follower's fetch: leader-epoch fencing, divergence detection by
        End Offset for Leader Epoch on the last fetched epoch (§3.2), then the
        follower's state, the HWM, and the records from the fetch offset.
        Returns the response fields; under Kafka's rule the HWM is the one read
        before this fetch's update."""
        cfg = self.config
        error = self._check_fetch(src, leader_epoch)
        if error is not None:
            return {"error": error}
        log = self.log
        if last_fetched_epoch is not None:
            found = log.end_offset_for_epoch(last_fetched_epoch)
            if found is None and cfg.follows(Rule.FETCH_ERROR_ORDER):
                return {"error": Errors.OFFSET_OUT_OF_RANGE.name}   # readRecords: no end offset for that epoch
            if found is None:
                latest = log.latest_epoch()
                found = (latest, log.log_end_offset)
            epoch, end_offset = found
            if epoch < last_fetched_epoch or end_offset < fetch_offset:
                return {"diverging_epoch": EpochEndOffset(epoch, end_offset), "hwm": log.high_watermark}
        if cfg.follows(Rule.STALE_BROKER_EPOCH_FETCH_FENCED):
            # Replica.updateFetchStateOrThrow: fence a fetch from an older broker session
            known = self.metadata_cache().alive_broker_epoch(src)
            if known is not None and known > broker_epoch:
                return {"error": Errors.NOT_LEADER_OR_FOLLOWER.name}
        remote = self.remote_replicas.get(src)
        if remote is None:
            remote = self.remote_replicas[src] = Replica(src)
        leader_end = log.log_end_offset if cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS) else None
        clock = cfg.follows(Rule.REPLICA_LAG_TIME)
        read_hwm = log.high_watermark   # Kafka reads the records and the HWM first
        previous_leo = remote.log_end_offset
        remote.update_fetch_state(fetch_offset, broker_epoch, leader_epoch, leader_end,
                                  self.time.milliseconds() if clock else None)
        if cfg.follows(Rule.EXPAND_ISR_ON_FETCH) and self.why_not_expand(src) is None:
            self.maybe_expand_isr(src)   # updateFollowerFetchState: maybeExpandIsr, then the HWM
        if not clock or previous_leo != fetch_offset:   # Kafka: only when the follower's LEO moved
            self.maybe_increment_leader_hw()
        hwm = read_hwm if cfg.follows(Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE) else log.high_watermark
        return {"records": log.read(fetch_offset), "hwm": hwm}

    def _check_fetch(self, src: int, leader_epoch: int) -> Optional[str]:
        """The errors a fetch gets before any read: not the leader or a requester
        outside the replica set, then the leader epoch; Kafka checks the leader
        epoch first (``getLocalLog``) and answers a requester outside the replica
        set UNKNOWN_LEADER_EPOCH (``followerReplicaOrThrow``)."""
        fenced = leader_epoch < self.leader_epoch and Bug.STALE_LEADER_EPOCH_ACCEPTED_IN_FETCH not in self.bugs
        if self.config.follows(Rule.FETCH_ERROR_ORDER):
            if fenced:
                return Errors.FENCED_LEADER_EPOCH.name
            if leader_epoch > self.leader_epoch:
                return Errors.UNKNOWN_LEADER_EPOCH.name
            if not self.is_leader:
                return Errors.NOT_LEADER_OR_FOLLOWER.name
            return None if src in self.assignment else Errors.UNKNOWN_LEADER_EPOCH.name
        if not self.is_leader or src not in self.assignment:
            return Errors.NOT_LEADER_OR_FOLLOWER.name
        if fenced:
            return Errors.FENCED_LEADER_EPOCH.name
        if leader_epoch > self.leader_epoch:
            return Errors.UNKNOWN_LEADER_EPOCH.name
        return None

    # ------------------------------------------------- ISR changes (§2.9.2)

    def is_replica_isr_eligible(self, follower: int) -> bool:
        """Kafka's ``isReplicaIsrEligible``: the broker's metadata has the follower
        unfenced, not in controlled shutdown, in the broker epoch its fetches carry."""
        remote = self.remote_replicas.get(follower)
        cache = self.metadata_cache()
        epoch = cache.alive_broker_epoch(follower)
        return (remote is not None and remote.broker_epoch is not None and epoch == remote.broker_epoch
                and not cache.is_broker_shutting_down(follower))

    @property
    def in_flight_request(self) -> Optional[int]:
        """The AlterPartition this leader awaits an answer to: the pending change's,
        or under Kafka's one-in-flight rule the broker manager's."""
        if self.config.follows(Rule.ONE_ALTER_PARTITION_IN_FLIGHT):
            return self.alter_partition_manager.in_flight
        return self.partition_state.request_id

    def is_follower_in_sync(self, follower: int) -> Optional[str]:
        """Why ``follower`` may not join the ISR, or None: it must have fetched in the
        current leader epoch (§6.5.4) up to the local HWM and the LESO (§6.5.3)."""
        remote = self.remote_replicas.get(follower)
        if remote is None or remote.log_end_offset is None:
            return f"the leader has no fetch state for follower {follower}"
        if remote.log_end_offset < self.log.high_watermark:
            return f"follower {follower} is below the HWM"
        assert self.leader_epoch_start_offset is not None
        if remote.log_end_offset < self.leader_epoch_start_offset and Bug.ISR_EXPANSION_IGNORES_LESO not in self.bugs:
            return f"follower {follower} is below the LESO"
        if remote.last_fetch_leader_epoch is None:  # cleared at every new leader epoch
            return f"follower {follower} has not fetched in leader epoch {self.leader_epoch}"
        if self.config.follows(Rule.LEADER_CHECKS_ISR_ELIGIBILITY) and not self.is_replica_isr_eligible(follower):
            return f"follower {follower} is fenced or in another broker epoch in this broker's metadata"
        return None

    def alter_partition_in_flight(self) -> Optional[str]:
        """Why this leader may propose no ISR change now (an AlterPartition in
        flight: ``in_flight_request`` or a pending state), or None."""
        if self.in_flight_request is not None or self.partition_state.is_inflight:
            return f"leader {self.broker_id} has an AlterPartition in flight"
        return None

    def why_not_expand(self, follower: int) -> Optional[str]:
        """Why this leader may not propose adding ``follower`` to the ISR now, or
        None: no AlterPartition in flight, ``follower`` a replica outside the ISR, in
        sync (``is_follower_in_sync``). Kafka's ``canAddReplicaToIsr`` and
        ``needsExpandIsr``, asked inside the fetch under Kafka's rule."""
        if (e := self.alter_partition_in_flight()):
            return e
        if follower in self.in_sync_replicas or follower not in self.assignment:
            return f"{follower} is not an out-of-sync replica of leader {self.broker_id}"
        return self.is_follower_in_sync(follower)

    def maybe_expand_isr(self, follower: int) -> None:
        """Propose adding an in-sync follower (``is_follower_in_sync``) to the ISR:
        the pending expansion counts in the Maximal ISR at once (§2.9.2, §6.5.2)."""
        self._submit_alter_partition(PendingExpandIsr(self.partition_state.isr, follower, None))

    def is_follower_out_of_sync(self, follower: int) -> Optional[str]:
        """Why the ISR check cannot find ``follower`` out of sync, or None when it
        may (no clock: any follower may have lagged too long). Under Kafka's rule
        not one whose LEO is the leader's LEO (``isFollowerOutOfSync``,
        ``ReplicaState.isCaughtUp``); with the clock, exactly one not caught up now."""
        remote = self.remote_replicas.get(follower)
        leo = self.log.log_end_offset
        if self.config.follows(Rule.REPLICA_LAG_TIME):
            now = self.time.milliseconds()
            if remote is not None and remote.is_caught_up(leo, now):
                return f"follower {follower} is caught up at {now} ms"
            return None
        if (self.config.follows(Rule.CAUGHT_UP_AT_LEADER_LEO) and remote is not None
                and remote.log_end_offset == leo):
            return f"follower {follower} is at the leader's LEO {leo}, so caught up"
        return None

    def out_of_sync_replicas(self) -> frozenset[int]:
        """Kafka's ``getOutOfSyncReplicas`` with the clock: the ISR followers not
        caught up now; none while an AlterPartition is in flight."""
        if self.alter_partition_in_flight():
            return frozenset()
        return frozenset(b for b in self.in_sync_replicas - {self.broker_id}
                         if self.is_follower_out_of_sync(b) is None)

    def maybe_shrink_isr(self, followers: frozenset[int]) -> None:
        """Propose removing lagging followers from the ISR (one; under Kafka's rule
        every one found out of sync, ``maybeShrinkIsr``); until the controller
        commits it they stay in the Maximal ISR (§2.9.2, §6.5.2)."""
        self._submit_alter_partition(PendingShrinkIsr(self.partition_state.isr, followers, None))

    def _submit_alter_partition(self, state: PendingExpandIsr | PendingShrinkIsr) -> None:
        """Send the proposal. It names the added replicas' broker epochs (Kafka's
        ``addBrokerEpochToIsr``: every member's, the leader's own included). Under
        the caught-up rule a follower shrunk out has lagged too long to be caught up."""
        cfg = self.config
        named = state.proposed_isr if cfg.follows(Rule.ALTER_PARTITION_VALIDATION) else state.proposed_isr - state.isr
        epochs = tuple(sorted((b, self._broker_epoch(b)) for b in named))
        state.sent = (self.leader_epoch, self.partition_epoch, state.proposed_isr, epochs, self.leader_recovery_state)
        state.request_id = self.alter_partition_manager.submit(*state.sent)
        self.partition_state = state
        if cfg.follows(Rule.REPLICA_LAG_TIME):
            return   # prepareIsrExpand / prepareIsrShrink leave the HWM alone; the clock says who is caught up
        if cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS):
            for b in state.isr - state.proposed_isr:
                remote = self.remote_replicas.get(b)
                if remote is not None:
                    remote.caught_up = False
                    remote.last_fetch_leader_leo = None
        self.maybe_increment_leader_hw()

    def _broker_epoch(self, broker: int) -> Optional[int]:
        if broker == self.broker_id:
            return self.alter_partition_manager.lifecycle.broker_epoch
        remote = self.remote_replicas.get(broker)
        return remote.broker_epoch if remote is not None and remote.has_fetched else None

    def handle_alter_partition_update(self, request_id: int, error: Optional[str], isr: frozenset[int],
                                      leader_epoch: int, partition_epoch: int) -> None:
        """Kafka's ``handleAlterPartitionUpdate`` / ``handleAlterPartitionError``: the
        controller answered the in-flight AlterPartition (§2.9.2): an error
        rolls the pending state back; a success is committed only in the same
        leader epoch and for a newer partition epoch. Answers to other requests
        are ignored."""
        state = self.partition_state
        cfg = self.config
        one = cfg.follows(Rule.ONE_ALTER_PARTITION_IN_FLIGHT)
        keep = cfg.follows(Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING)
        if one or keep:
            self._handle_alter_partition_answer(request_id, error, isr, leader_epoch, partition_epoch, one, keep)
            return
        if not self.is_leader or not state.is_inflight or state.request_id != request_id:
            return
        if error is not None:
            if Bug.PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR in self.bugs:
                state.request_id = None  # BUG: answered, but the proposal stays in the Maximal ISR
            else:
                self.partition_state = CommittedPartitionState(state.isr)
        else:
            if Bug.STALE_ALTER_PARTITION_RESPONSE_APPLIED not in self.bugs:
                if leader_epoch != self.leader_epoch or partition_epoch <= self.partition_epoch:
                    return
            self.partition_state = CommittedPartitionState(isr)
            self.partition_epoch = partition_epoch
        self.on_isr_changed()

    def _handle_alter_partition_answer(self, request_id: int, error: Optional[str], isr: frozenset[int],
                                       leader_epoch: int, partition_epoch: int, one: bool, keep: bool) -> None:
        """Kafka's answer handling: the manager drops its item whatever became of the
        change (one in flight); only INELIGIBLE_REPLICA rolls back, other errors and a
        stale success leave the change pending until new metadata, and a success with
        the partition epoch the leader knows is applied (``handleAlterPartitionError``,
        ``handleAlterPartitionUpdate``)."""
        if self.in_flight_request != request_id:
            return
        state = self.partition_state
        if one:
            self.alter_partition_manager.in_flight = None
        if not self.is_leader or not state.is_inflight:
            return
        if error is not None:
            if keep and error == Errors.NOT_CONTROLLER.name:
                # handleAlterPartitionError's default case: "Retrying." (submitAlterPartition)
                state.request_id = self.alter_partition_manager.submit(*state.sent)
                return
            rolled_back = error == Errors.INELIGIBLE_REPLICA.name or not keep
            if not rolled_back or Bug.PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR in self.bugs:
                state.request_id = None
                return
            self.partition_state = CommittedPartitionState(state.isr)
            if self.config.follows(Rule.REPLICA_LAG_TIME):
                return   # handleAlterPartitionError: no HWM recomputation
        elif (leader_epoch != self.leader_epoch or partition_epoch < self.partition_epoch or (
                partition_epoch == self.partition_epoch and not keep)) \
                and Bug.STALE_ALTER_PARTITION_RESPONSE_APPLIED not in self.bugs:
            state.request_id = None
            return
        else:
            self.partition_state = CommittedPartitionState(isr)
            self.partition_epoch = partition_epoch
        self.on_isr_changed()
