"""``UnifiedLog``: one replica's log of records, its high watermark, its
recovery point (the flushed offset) and its leader epoch cache (§2.2.2, §3.2,
§5.1), with the cache's checkpoint on disk when its write is late
(``checkpoint_written_later``: Rule.EPOCH_CHECKPOINT_WRITTEN_LATER).

Offsets start at 0; the LEO, the HWM and the recovery point are exclusive ends.
Records are the wire format (``model.Record``: epoch and value); the epoch
cache is maintained explicitly beside them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from model import Record

from .bugs import Bug
from .epoch_cache import LeaderEpochFileCache


class UnifiedLog:
    """The local log of one partition replica."""

    __slots__ = ("_records", "recovery_point", "high_watermark", "leader_epoch_cache", "_bugs",
                 "checkpoint_written_later", "epoch_checkpoint", "_snapshot")

    def __init__(self, bugs: frozenset = frozenset(),
                 epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache,
                 checkpoint_written_later: bool = False) -> None:
        self._records: list[Record] = []
        self.recovery_point = 0     # records below it are on disk (flushed)
        self.high_watermark = 0
        self.leader_epoch_cache = epoch_cache(bugs)
        self._bugs = bugs
        #: Kafka's: an assignment writes the checkpoint at once, a truncation schedules it.
        self.checkpoint_written_later = checkpoint_written_later
        #: The checkpoint file's entries when they are not the cache's (else None).
        self.epoch_checkpoint: Optional[tuple] = None
        #: Bug.EPOCH_CHECKPOINT_WRITES_TRUNCATION_SNAPSHOT: what the scheduled write writes.
        self._snapshot: Optional[tuple] = None

    # ------------------------------------------------------------------ reads

    @property
    def log_end_offset(self) -> int:
        return len(self._records)

    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def view(self) -> list[Record]:
        """The records themselves, for read-only use (no copy)."""
        return self._records

    def read(self, start: int, end: Optional[int] = None) -> tuple[Record, ...]:
        return tuple(self._records[start:end])

    def latest_epoch(self) -> Optional[int]:
        """The latest epoch in the epoch cache (a follower's last fetched epoch, §3.2)."""
        return self.leader_epoch_cache.latest_epoch()

    def last_written_epoch(self) -> int:
        """Epoch of the last record (-1 for an empty log): GetReplicaLogInfo (§5.3.2)."""
        if not self._records:
            return -1
        epoch = self.leader_epoch_cache.epoch_for_offset(len(self._records) - 1)
        return -1 if epoch is None else epoch

    def end_offset_for_epoch(self, epoch: int) -> Optional[tuple[int, int]]:
        """End Offset for Leader Epoch through the cache (§3.2)."""
        return self.leader_epoch_cache.end_offset_for(epoch, len(self._records))

    # ----------------------------------------------------------------- writes

    def assign_epoch_start_offset(self, epoch: int, offset: int) -> None:
        """``LeaderEpochFileCache.assign``; a change writes the checkpoint at once."""
        if self.epoch_checkpoint is None:
            self.leader_epoch_cache.assign(epoch, offset)
            return
        before = self.leader_epoch_cache.entries()
        self.leader_epoch_cache.assign(epoch, offset)
        if self.leader_epoch_cache.entries() != before:
            self.epoch_checkpoint = None

    def truncate_epoch_cache(self, end_offset: int) -> None:
        """``LeaderEpochFileCache.truncateFromEndAsyncFlush``: with the write late, a
        truncation that removes entries leaves the file as it was until
        ``write_epoch_checkpoint``."""
        if not self.checkpoint_written_later or self.epoch_checkpoint is not None:
            self.leader_epoch_cache.truncate_from_end(end_offset)
            return
        before = self.leader_epoch_cache.entries()
        self.leader_epoch_cache.truncate_from_end(end_offset)
        after = self.leader_epoch_cache.entries()
        if after != before:
            self.epoch_checkpoint = before
            if Bug.EPOCH_CHECKPOINT_WRITES_TRUNCATION_SNAPSHOT in self._bugs:
                self._snapshot = after   # BUG: the write takes the entries now, not when it runs

    def _file(self) -> tuple:
        return self.epoch_checkpoint if self.epoch_checkpoint is not None else self.leader_epoch_cache.entries()

    @property
    def epoch_checkpoint_scheduled(self) -> bool:
        """Whether a scheduled checkpoint write would change the file: one that
        ``write_epoch_checkpoint`` runs."""
        if self._snapshot is not None:
            return self._snapshot != self._file()
        return self.epoch_checkpoint is not None

    def write_epoch_checkpoint(self) -> None:
        """The log's scheduler runs the scheduled write: the file holds the cache."""
        written = self._snapshot if self._snapshot is not None else self.leader_epoch_cache.entries()
        self._snapshot = None
        self.epoch_checkpoint = written if written != self.leader_epoch_cache.entries() else None

    def load(self, lost_write: bool) -> None:
        """The log as the next start reads it back (``LogLoader.load``): the cache
        from the checkpoint file (as it was before a scheduled write that was
        ``lost_write`` with the process), truncated at the log end offset."""
        if not lost_write:
            self.write_epoch_checkpoint()   # the scheduler's shutdown runs its queue
        on_disk = self._file()
        self.leader_epoch_cache.restore(on_disk)
        self.epoch_checkpoint = self._snapshot = None
        self.truncate_epoch_cache(len(self._records))

    def append_as_leader(self, value: int, leader_epoch: int) -> int:
        """Append one record in ``leader_epoch``; returns its offset."""
        offset = len(self._records)
        self.assign_epoch_start_offset(leader_epoch, offset)
        self._records.append(Record(leader_epoch, value))
        return offset

    def append_as_follower(self, records: Iterable[Record]) -> None:
        """Append records fetched from the leader, keeping their epochs (§2.2.2)."""
        for rec in records:
            self.assign_epoch_start_offset(rec.epoch, len(self._records))
            self._records.append(rec)

    def truncate_to(self, target_offset: int) -> bool:
        """Remove every record at or above ``target_offset`` (§3.2), with the epoch
        cache entries starting there; HWM and recovery point are capped by the new
        LEO. At or beyond the LEO only the cache's entries at the LEO go (an epoch
        led without writing, Kafka's ``UnifiedLog.truncateTo``), and it answers False."""
        if target_offset >= len(self._records):
            if Bug.EPOCH_CACHE_NOT_TRUNCATED not in self._bugs:
                self.truncate_epoch_cache(len(self._records))
            return False
        del self._records[target_offset:]
        if Bug.EPOCH_CACHE_NOT_TRUNCATED not in self._bugs:
            self.truncate_epoch_cache(target_offset)
        self.high_watermark = min(self.high_watermark, target_offset)
        self.recovery_point = min(self.recovery_point, target_offset)
        return True

    def flush(self) -> None:
        """Write everything to disk: the recovery point moves to the LEO."""
        self.recovery_point = len(self._records)

    def lose_unflushed(self) -> None:
        """An abrupt termination whose page cache is lost (§5.1.1): the log restarts
        from its recovery point. With the checkpoint written late the loss is on
        disk: the records go, the cache is the next ``load``'s."""
        if not self.checkpoint_written_later:
            self.truncate_to(self.recovery_point)
            return
        del self._records[self.recovery_point:]
        self.high_watermark = min(self.high_watermark, self.recovery_point)

    def update_high_watermark(self, hwm: int) -> None:
        self.high_watermark = hwm

    def __repr__(self) -> str:
        return (f"UnifiedLog(leo={len(self._records)}, hwm={self.high_watermark}, "
                f"recovery_point={self.recovery_point}, {self.leader_epoch_cache!r})")
