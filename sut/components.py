"""The parts of the SUT another implementation may put its own in place of
(``kafka_bridge`` puts Apache Kafka's): the controller, the class that decides
its partition changes, and the leader epoch cache each replica's log keeps."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .change_builder import PartitionChangeBuilder
from .controller import QuorumController
from .epoch_cache import LeaderEpochFileCache


@attrs.frozen
class Components:
    """controller: a factory ``(config, network, bugs, change_builder) -> controller``
    with ``QuorumController``'s calls and its ``cluster`` and ``replication`` views
    (``registrations``, ``is_unfenced``, ``can_register``; ``partition``,
    ``create_partition``, ``can_cancel_reassignment``, ``recovery_candidates``,
    ``unclean_leader_election_candidate``).
    change_builder: a class built and used as ``PartitionChangeBuilder`` is (by the
    SUT's controller).
    epoch_cache: a factory ``bugs -> cache`` with ``LeaderEpochFileCache``'s
    methods (``assign``, ``truncate_from_end``, ``clear``, ``latest_epoch``,
    ``entries``, ``epoch_for_offset``, ``end_offset_for``); a copy of the cluster
    (``copy.deepcopy``) must copy it too."""

    controller: Callable[..., Any] = QuorumController
    change_builder: type = PartitionChangeBuilder
    epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache


#: The SUT's own parts.
PYTHON = Components()
