"""The follower's fetcher in the implementation "kafka": Apache Kafka's own
``kafka.server.AbstractFetcherThread`` over the follower's Kafka ``Partition``
(the bridge's ``ReplicheckFetcherShim``; ``partition.KafkaPartition``'s
``start_fetcher``, ``send_fetch``, ``process_fetch_response``), behind the calls of
the SUT's ``sut.fetcher.ReplicaFetcherThread``.

Kafka's fetcher holds the fetch state (fetch offset, last fetched epoch, current
leader epoch) and decides what a fetch answer does: whether it still applies, the
truncation on a diverging epoch (``getOffsetTruncationState``,
``truncateOnFetchResponse``), the append and the leader's HWM
(``ReplicaFetcherThread.processPartitionData``, restated in the shim), and the
errors (FENCED_LEADER_EPOCH removes the partition until a new leader epoch; the
others are retried, replica.fetch.backoff.ms being 0). What stays the SUT's: the
network that carries the request and the answer, one fetch in flight, and the
broker's process: an answer addressed to a previous incarnation of the broker
(another broker epoch) never reaches this process's fetcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from model import Config, FetchRequest, FetchResponse

from sut.network import InMemoryNetwork

if TYPE_CHECKING:
    from .replica import KafkaReplica


class KafkaFetcherThread:
    """A follower's fetcher of one leader epoch (``Components.fetcher``): Kafka's
    fetcher of the partition of ``partition`` (a ``KafkaReplica``) from broker
    ``leader_id`` in ``leader_epoch``, started at construction. ``bugs`` (the
    SUT's) do not reach it."""

    def __init__(self, follower_id: int, partition: "KafkaReplica", leader_id: int, leader_epoch: int,
                 network: InMemoryNetwork, bugs: frozenset, config: Config) -> None:
        self.follower_id = follower_id
        self.partition = partition
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.network = network
        partition.before_call()
        partition.kafka.start_fetcher(leader_id, leader_epoch)

    def why_not_fetch(self) -> Optional[str]:
        """Why Kafka's fetcher sends no fetch now (None: it would): it removed the
        partition (marked failed after FENCED_LEADER_EPOCH)."""
        self.partition.before_call()
        if self.partition.kafka.fetcher_state() is None:
            return (f"Kafka's fetcher of follower {self.follower_id} removed the partition (marked failed after "
                    f"FENCED_LEADER_EPOCH in leader epoch {self.leader_epoch}): it awaits a new leader epoch")
        return None

    def has_outstanding_fetch(self, broker_epoch: Optional[int]) -> bool:
        return self.network.fetch_outstanding(self.follower_id, broker_epoch, self.leader_epoch)

    def send_fetch(self, broker_epoch: int) -> FetchRequest:
        """Kafka's fetcher's next fetch, sent over the network in ``broker_epoch``.
        RuntimeError when Kafka's fetcher has nothing to fetch (the caller asked
        although ``why_not_fetch`` gave a reason)."""
        self.partition.before_call()
        request = self.partition.kafka.send_fetch()
        if request is None:
            raise RuntimeError(f"Kafka's fetcher of follower {self.follower_id} has nothing to fetch")
        fetch_offset, last_fetched_epoch, leader_epoch = request
        return self.network.send(lambda i: FetchRequest(  # type: ignore[return-value]
            i, self.follower_id, self.leader_id, broker_epoch, leader_epoch, fetch_offset, last_fetched_epoch))

    def process_fetch_response(self, resp: FetchResponse, broker_epoch: Optional[int]) -> None:
        """Hand ``resp`` to Kafka's fetcher, unless it answers another incarnation of
        the broker or another leader (whose fetcher thread, in Kafka, no longer holds
        the partition)."""
        if resp.broker_epoch != broker_epoch or resp.src != self.leader_id:
            return
        self.partition.before_call()
        diverging: Optional[Any] = resp.diverging_epoch
        self.partition.kafka.process_fetch_response(
            resp.fetch_offset, resp.request_leader_epoch, resp.error, resp.hwm,
            None if diverging is None else (diverging.epoch, diverging.end_offset),
            [(resp.fetch_offset + i, r.epoch, r.value) for i, r in enumerate(resp.records)])
