"""The parts of the SUT another implementation may put its own in place of
(``kafka_bridge`` puts Apache Kafka's): the class that decides the controller's
partition changes, and the leader epoch cache each replica's log keeps."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .change_builder import PartitionChangeBuilder
from .epoch_cache import LeaderEpochFileCache


@attrs.frozen
class Components:
    """change_builder: a class built and used as ``PartitionChangeBuilder`` is.
    epoch_cache: a factory ``bugs -> cache`` with ``LeaderEpochFileCache``'s
    methods (``assign``, ``truncate_from_end``, ``clear``, ``latest_epoch``,
    ``entries``, ``epoch_for_offset``, ``end_offset_for``); a copy of the cluster
    (``copy.deepcopy``) must copy it too."""

    change_builder: type = PartitionChangeBuilder
    epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache


#: The SUT's own parts.
PYTHON = Components()
