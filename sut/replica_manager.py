"""``ReplicaManager``: the broker's hosted replica of the partition and its
fetcher; applies metadata images to them (§2.10, §4.3), serves fetches, takes
produce requests, proposes ISR changes and handles AlterPartition responses
(§2.9.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from model import NO_LEADER, Config, FetchRequest, FetchResponse, Rule

from .alter_partition_manager import AlterPartitionManager
from .bugs import Bug
from .clock import ManualTime
from .components import PYTHON, Components
from .errors import Errors
from .purgatory import ClientResponses, DelayedProducePurgatory
from .metadata import MetadataImage, PartitionRegistration
from .network import InMemoryNetwork
from .partition import Partition

if TYPE_CHECKING:
    from .lifecycle import BrokerLifecycleManager


class ReplicaManager:
    def __init__(self, broker_id: int, config: Config, network: InMemoryNetwork, responses: ClientResponses,
                 bugs: frozenset, lifecycle: "BrokerLifecycleManager",
                 metadata_cache: Callable[[], MetadataImage], components: Components = PYTHON,
                 time: Optional[ManualTime] = None) -> None:
        self.broker_id = broker_id
        self.time = ManualTime() if time is None else time   # the brokers' clock
        self.epoch_cache = components.epoch_cache   # builds each new replica log's leader epoch cache
        self.partition_factory = components.partition   # builds the hosted replica
        self.fetcher_factory = components.fetcher   # builds the follower's fetcher of a leader epoch
        self.config = config
        self.metadata_cache = metadata_cache   # the broker's current image (KRaftMetadataCache)
        self.network = network
        self.delayed_produce_purgatory = DelayedProducePurgatory(responses)
        self.bugs = bugs
        self.lifecycle = lifecycle   # the broker epoch of the current session
        self.alter_partition_manager = AlterPartitionManager(broker_id, network, lifecycle)
        self.partition: Optional[Partition] = None
        self.fetcher: Optional[Any] = None   # a ReplicaFetcherThread (Components.fetcher)

    # ----------------------------------------------------------- metadata (§2.10)

    def apply_image(self, reg: Optional[PartitionRegistration], changed: bool = True) -> None:
        """Act on the materialized registration (§2.10, §4.3): a replica removed
        from the replica set is deleted, an added one created empty; then the
        replica makes itself leader or follower. ``changed``: whether the batch
        changed the registration (Kafka's ``TopicDelta.localChanges``; a start-up
        applies the whole image)."""
        me = self.broker_id
        partition = self.partition
        if reg is None or me not in reg.replicas:
            if partition is None:
                return
            if partition.is_leader:
                self._fail_waiting_writes()
            self.partition = None
            self.fetcher = None
            self.alter_partition_manager.forget()
            return
        if partition is None:
            partition = self.partition = self.partition_factory(
                me, self.config, self.delayed_produce_purgatory, self.alter_partition_manager, self.bugs,
                self.metadata_cache, self.epoch_cache, self.time)
            # a new log takes the topic's config from the current image (LogManager.getOrCreateLog)
            self.update_min_isr(self.metadata_cache().min_isr)
        if reg.leader == me:
            self.fetcher = None
            if partition.make_leader(reg, changed) or not self.config.follows(Rule.REPLICA_LAG_TIME):
                partition.on_isr_changed()
            return
        if partition.is_leader:
            self._fail_waiting_writes()
        if partition.make_follower(reg, changed):
            self.fetcher = None if reg.leader == NO_LEADER else self.fetcher_factory(
                me, partition, reg.leader, reg.leader_epoch, self.network, self.bugs, self.config)

    def update_min_isr(self, min_isr: Optional[int]) -> None:
        """The topic's MinISR reaches the hosted log's config (Kafka's
        ``DynamicConfigPublisher`` → ``LogManager.updateTopicConfig``); None: the
        topic's creation config. Nothing to do without a replica."""
        if self.partition is None or Bug.MIN_ISR_CHANGE_NOT_APPLIED_TO_LOG in self.bugs:
            return   # BUG (the latter): the log keeps the creation's MinISR
        self.partition.update_min_isr(self.config.min_isr if min_isr is None else min_isr)

    def _fail_waiting_writes(self) -> None:
        """The leader steps down: its waiting produce requests fail (§2.6, §2.10.4)."""
        if Bug.PENDING_WRITES_KEPT_ON_STEP_DOWN in self.bugs:
            return
        self.delayed_produce_purgatory.fail_all()

    def shutdown(self, flush: bool = False, lossy: bool = False) -> None:
        """The broker stops: waiting writes fail, the replica goes offline and the
        fetcher stops; then the replica's log is flushed (``flush``: the end of a
        controlled shutdown) or, on a ``lossy`` crash, loses its unflushed suffix
        (``Partition.shutdown``)."""
        self.fetcher = None
        self.alter_partition_manager.forget()
        if self.partition is not None:
            self.delayed_produce_purgatory.fail_all()
            self.partition.make_offline()
            self.partition.shutdown(flush, lossy)

    # -------------------------------------------------------------- queries

    def leader_partition(self) -> Optional[Partition]:
        p = self.partition
        return p if p is not None and p.is_leader else None

    def log_info(self) -> Optional[tuple[int, int]]:
        """GetReplicaLogInfo (§5.3.2): (last written epoch, LEO), None without a replica."""
        p = self.partition
        if p is None:
            return None
        return p.log.last_written_epoch(), p.log.log_end_offset

    # ---------------------------------------------------------------- fetch

    def handle_fetch_request(self, req: FetchRequest) -> None:
        p = self.partition
        if p is None:
            fields = {"error": Errors.NOT_LEADER_OR_FOLLOWER.name}
        else:
            fields = p.fetch_records(req.src, req.broker_epoch, req.leader_epoch, req.fetch_offset,
                                     req.last_fetched_epoch)
        self.network.send(lambda i: FetchResponse(i, self.broker_id, req.src, req.broker_epoch, req.leader_epoch,
                                                  req.fetch_offset, **fields))

    def handle_fetch_response(self, resp: FetchResponse) -> None:
        if self.fetcher is not None:
            self.fetcher.process_fetch_response(resp, self.lifecycle.broker_epoch)

    # ----------------------------------------------------------- produce (§2.6)

    def append_records(self, value: int) -> None:
        p = self.leader_partition()
        assert p is not None
        p.append_records_to_leader(value)

    # ------------------------------------------------------ ISR changes (§2.9.2)

    def maybe_expand_isr(self, follower: int) -> None:
        p = self.leader_partition()
        assert p is not None
        p.maybe_expand_isr(follower)

    def maybe_shrink_isr(self, followers: frozenset[int]) -> None:
        p = self.leader_partition()
        assert p is not None
        p.maybe_shrink_isr(followers)

    def handle_alter_partition_response(self, request_id: int, error: Optional[str], isr: frozenset[int],
                                        leader_epoch: int, partition_epoch: int) -> None:
        if self.partition is not None:
            self.partition.handle_alter_partition_update(request_id, error, isr, leader_epoch, partition_epoch)
