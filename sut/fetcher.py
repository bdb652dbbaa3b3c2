"""``ReplicaFetcherThread``: a follower partition's fetcher (§2.2.1, §2.2.2, §3.2).

Created when the replica starts following a leader in a leader epoch; it
fetches from its fetch state (fetch offset = the log's LEO, last fetched epoch =
the latest epoch of the epoch cache, current leader epoch), one request at a
time, and applies responses: records and the leader's HWM, or truncation on a
diverging epoch. Stale responses (another session or fetch state) are dropped.
Under Rule.FENCED_FETCH_AWAITS_NEW_EPOCH an answer FENCED_LEADER_EPOCH ends the
fetching (Kafka's fetcher marks the partition failed): the next leader epoch
brings a new fetcher.
"""

from __future__ import annotations

from typing import Optional

from model import Config, FetchRequest, FetchResponse, Rule

from .bugs import Bug
from .errors import Errors
from .network import InMemoryNetwork
from .partition import Partition


class PartitionFetchState:
    __slots__ = ("fetch_offset", "last_fetched_epoch", "current_leader_epoch")

    def __init__(self, fetch_offset: int, last_fetched_epoch: Optional[int], current_leader_epoch: int) -> None:
        self.fetch_offset = fetch_offset
        self.last_fetched_epoch = last_fetched_epoch
        self.current_leader_epoch = current_leader_epoch


class ReplicaFetcherThread:
    def __init__(self, follower_id: int, partition: Partition, leader_id: int, leader_epoch: int,
                 network: InMemoryNetwork, bugs: frozenset, config: Config) -> None:
        self.follower_id = follower_id
        self.config = config
        self.partition = partition
        self.leader_id = leader_id
        self.network = network
        self.bugs = bugs
        log = partition.log
        self.fetch_state = PartitionFetchState(log.log_end_offset, log.latest_epoch(), leader_epoch)
        self.fenced = False   # answered FENCED_LEADER_EPOCH (Rule.FENCED_FETCH_AWAITS_NEW_EPOCH)

    def _refresh_fetch_state(self) -> None:
        log = self.partition.log
        self.fetch_state.fetch_offset = log.log_end_offset
        self.fetch_state.last_fetched_epoch = log.latest_epoch()

    def why_not_fetch(self) -> Optional[str]:
        """Why this fetcher sends no fetch (None: it may): it was answered FENCED_LEADER_EPOCH."""
        if self.fenced:
            return (f"follower {self.follower_id} was answered FENCED_LEADER_EPOCH in leader epoch "
                    f"{self.fetch_state.current_leader_epoch}: it awaits a new leader epoch")
        return None

    def has_outstanding_fetch(self, broker_epoch: Optional[int]) -> bool:
        return self.network.fetch_outstanding(self.follower_id, broker_epoch, self.fetch_state.current_leader_epoch)

    def send_fetch(self, broker_epoch: int) -> FetchRequest:
        fs = self.fetch_state
        return self.network.send(lambda i: FetchRequest(  # type: ignore[return-value]
            i, self.follower_id, self.leader_id, broker_epoch, fs.current_leader_epoch,
            fs.fetch_offset, fs.last_fetched_epoch))

    def process_fetch_response(self, resp: FetchResponse, broker_epoch: Optional[int]) -> None:
        """Apply a response if it answers this session's current fetch state."""
        fs = self.fetch_state
        if (resp.broker_epoch != broker_epoch or resp.src != self.leader_id
                or resp.request_leader_epoch != fs.current_leader_epoch or resp.fetch_offset != fs.fetch_offset):
            return
        if resp.error == Errors.FENCED_LEADER_EPOCH.name and self.config.follows(Rule.FENCED_FETCH_AWAITS_NEW_EPOCH):
            self.fenced = True
        if resp.error is not None:
            return
        log = self.partition.log
        if resp.diverging_epoch is not None:
            self._truncate_on_diverging_epoch(resp)
        else:
            log.append_as_follower(resp.records)
            log.update_high_watermark(min(resp.hwm, log.log_end_offset))
        self._refresh_fetch_state()

    def _truncate_on_diverging_epoch(self, resp: FetchResponse) -> None:
        """§3.2: truncate to the minimum of the follower's own End Offset for the
        diverging epoch and the leader's end offset for it (the LEO when the
        follower has no answer). Kafka (``getOffsetTruncationState``): when the
        follower's answer is another epoch, to its own end offset alone, and fetch
        again."""
        log = self.partition.log
        diverging = resp.diverging_epoch
        assert diverging is not None
        own = log.end_offset_for_epoch(diverging.epoch)
        local_end = log.log_end_offset if own is None else own[1]
        if own is not None and own[0] != diverging.epoch and self.config.follows(Rule.TRUNCATION_IN_ROUNDS):
            target = min(own[1], log.log_end_offset)
        elif Bug.TRUNCATE_TO_LEADER_OFFSET in self.bugs:
            target = max(0, diverging.end_offset)  # BUG: ignores the follower's own lookup
        else:
            target = max(0, min(local_end, diverging.end_offset))
        if Bug.FOLLOWER_HWM_UPDATED_BEFORE_TRUNCATION in self.bugs:
            log.update_high_watermark(resp.hwm)  # BUG (KAFKA-14704): leader HWM, not capped by the LEO
        log.truncate_to(target)
