"""The parts of the SUT another implementation may put its own in place of
(``kafka_bridge`` puts Apache Kafka's): the controller, the class that decides
its partition changes, the leader epoch cache each replica's log keeps, and the
hosted replica itself (the broker's ``Partition``), and the follower's fetcher."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .change_builder import PartitionChangeBuilder
from .controller import QuorumController
from .epoch_cache import LeaderEpochFileCache
from .fetcher import ReplicaFetcherThread
from .partition import Partition


@attrs.frozen
class Components:
    """controller: a factory ``(config, network, bugs, change_builder) -> controller``
    with ``QuorumController``'s calls and its ``cluster`` and ``replication`` views
    (``registrations``, ``is_unfenced``, ``is_active``, ``can_register``; ``partition``,
    ``create_partition``, ``can_cancel_reassignment``, ``recovery_candidates``,
    ``unclean_leader_election_candidate``).
    change_builder: a class built and used as ``PartitionChangeBuilder`` is (by the
    SUT's controller).
    epoch_cache: a factory ``bugs -> cache`` with ``LeaderEpochFileCache``'s
    methods (``assign``, ``truncate_from_end``, ``clear``, ``latest_epoch``,
    ``entries``, ``epoch_for_offset``, ``end_offset_for``); a copy of the cluster
    (``copy.deepcopy``) must copy it too.
    partition: a factory with ``Partition``'s constructor signature ``(broker_id,
    config, delayed_produce, alter_partition_manager, bugs, metadata_cache,
    epoch_cache, time) -> replica``, building each broker's hosted replica
    (``ReplicaManager``) with ``Partition``'s calls and its ``log`` (``UnifiedLog``'s
    reads and the follower's writes); ``kafka_bridge.replica`` builds Kafka's.
    fetcher: a factory with ``ReplicaFetcherThread``'s constructor signature
    ``(follower_id, partition, leader_id, leader_epoch, network, bugs, config) ->
    fetcher``, building a follower's fetcher of one leader epoch (after a
    ``make_follower`` that returned True) with its calls (``why_not_fetch``,
    ``has_outstanding_fetch``, ``send_fetch``, ``process_fetch_response``), for the
    hosted replica ``partition`` builds; ``kafka_bridge.fetcher`` builds Kafka's."""

    controller: Callable[..., Any] = QuorumController
    change_builder: type = PartitionChangeBuilder
    epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache
    partition: Callable[..., Any] = Partition
    fetcher: Callable[..., Any] = ReplicaFetcherThread


#: The SUT's own parts.
PYTHON = Components()
