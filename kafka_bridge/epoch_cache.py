"""Kafka's own ``org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache`` as
each replica log's leader epoch cache (§3.2), on a checkpoint file of its own.

``KafkaLeaderEpochFileCache`` has the methods of ``sut.epoch_cache.
LeaderEpochFileCache`` and answers with Kafka's: ``assign`` (Kafka's
``assign(epoch, startOffset)``), ``truncate_from_end``
(``truncateFromEndAsyncFlush``; the flush runs at once on an immediate
scheduler), ``clear`` (``clearAndFlush``), ``restore`` (the entries a start
reads back), and the lookups ``latest_epoch``,
``entries``, ``epoch_for_offset`` and ``end_offset_for`` (the End Offset for
Leader Epoch of the divergence check, ``endOffsetFor``). Every write goes to the
cache's checkpoint file as in a broker: ``leader-epoch-checkpoint`` in a
temporary folder (in memory where ``/dev/shm`` exists), removed with the cache.
A copy (``copy.deepcopy`` of the cluster, a branch of a lockstep) gets a file of
its own with the same entries.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Optional

from sut.epoch_cache import EpochEntry

from .java import kafka
from .releases import EPOCH_ENTRY_RECORD_SINCE, LATEST_EPOCH_OPTIONAL_SINCE

_FOLDER: Optional[Path] = None


def _pairs(entries: Any) -> list[tuple[int, int]]:
    """Kafka's ``EpochEntry``s as (epoch, start offset): a Java record (accessors)
    from 4.2.0, a class of public fields before."""
    if kafka().release >= EPOCH_ENTRY_RECORD_SINCE:
        return [(int(e.epoch()), int(e.startOffset())) for e in entries]
    return [(int(e.epoch), int(e.startOffset)) for e in entries]


def _folder() -> Path:
    """This process's folder of checkpoint files (removed at exit)."""
    global _FOLDER
    if _FOLDER is None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _FOLDER = Path(tempfile.mkdtemp(prefix="replicheck-epoch-caches-", dir=base))
        atexit.register(shutil.rmtree, _FOLDER, True)
    return _FOLDER


def _remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class KafkaLeaderEpochFileCache:
    """One replica log's epoch cache, Kafka's (see the module doc). ``bugs`` is
    accepted for the SUT's factory signature; Kafka's cache has none of the SUT's
    bugs. Raises ValueError, as the SUT's does, for a negative epoch or offset."""

    def __init__(self, bugs: frozenset = frozenset(), entries: tuple[EpochEntry, ...] = ()) -> None:
        k = kafka()
        self._dir = tempfile.mkdtemp(dir=_folder())
        weakref.finalize(self, _remove, self._dir)
        self._cache = k.LeaderEpochFileCache(k.topic_partition, self._checkpoint_file(), k.scheduler)
        for e in entries:
            self._cache.assign(e.epoch, e.start_offset)

    def __deepcopy__(self, memo: dict) -> "KafkaLeaderEpochFileCache":
        return KafkaLeaderEpochFileCache(entries=self.entries())

    # ------------------------------------------------------------------ writes

    def assign(self, epoch: int, start_offset: int) -> None:
        if epoch < 0 or start_offset < 0:   # Kafka would log and ignore it; the SUT's contract refuses
            raise ValueError(f"invalid epoch entry ({epoch}, {start_offset})")
        self._cache.assign(epoch, start_offset)

    def truncate_from_end(self, end_offset: int) -> None:
        self._cache.truncateFromEndAsyncFlush(end_offset)

    def clear(self) -> None:
        self._cache.clearAndFlush()

    def restore(self, entries: tuple[EpochEntry, ...]) -> None:
        """The cache as a start reads it from its checkpoint file: exactly ``entries``
        (an increasing list, so Kafka's ``assign`` of each in order keeps them all)."""
        self._cache.clearAndFlush()
        for e in entries:
            self._cache.assign(e[0], e[1])

    # ----------------------------------------------------------------- lookups

    def latest_epoch(self) -> Optional[int]:
        latest = self._cache.latestEpoch()
        if not latest.isPresent():
            return None
        return int(latest.get() if kafka().release >= LATEST_EPOCH_OPTIONAL_SINCE else latest.getAsInt())

    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(EpochEntry(epoch, start) for epoch, start in _pairs(self._cache.epochEntries()))

    def epoch_for_offset(self, offset: int) -> Optional[int]:
        found = self._cache.epochForOffset(offset)
        return int(found.getAsInt()) if found.isPresent() else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> Optional[tuple[int, int]]:
        """Kafka's ``endOffsetFor``: ``(epoch, end offset)``, None for Kafka's
        UNDEFINED_EPOCH_OFFSET ``(-1, -1)``."""
        found: Any = self._cache.endOffsetFor(requested_epoch, log_end_offset)
        epoch, end = int(found.getKey()), int(found.getValue())
        return None if (epoch, end) == (-1, -1) else (epoch, end)

    def _checkpoint_file(self) -> Any:
        """Kafka's ``LeaderEpochCheckpointFile`` on this cache's file."""
        k = kafka()
        return k.LeaderEpochCheckpointFile(k.File(os.path.join(self._dir, "leader-epoch-checkpoint")),
                                           k.LogDirFailureChannel(1))

    def checkpoint(self) -> list[tuple[int, int]]:
        """The entries as the checkpoint file on disk holds them."""
        return _pairs(self._checkpoint_file().read())

    def __repr__(self) -> str:
        return "KafkaLeaderEpochFileCache(" + ", ".join(f"{e.epoch}=>{e.start_offset}" for e in self.entries()) + ")"
