"""``UnifiedLog``: one replica's log of records, its high watermark, its
recovery point (the flushed offset) and its leader epoch cache (§2.2.2, §3.2,
§5.1).

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

    __slots__ = ("_records", "recovery_point", "high_watermark", "leader_epoch_cache", "_bugs")

    def __init__(self, bugs: frozenset = frozenset(),
                 epoch_cache: Callable[[frozenset], Any] = LeaderEpochFileCache) -> None:
        self._records: list[Record] = []
        self.recovery_point = 0     # records below it are on disk (flushed)
        self.high_watermark = 0
        self.leader_epoch_cache = epoch_cache(bugs)
        self._bugs = bugs

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

    def _maybe_assign_epoch_start_offset(self, epoch: int, offset: int) -> None:
        self.leader_epoch_cache.assign(epoch, offset)

    def append_as_leader(self, value: int, leader_epoch: int) -> int:
        """Append one record in ``leader_epoch``; returns its offset."""
        offset = len(self._records)
        self._maybe_assign_epoch_start_offset(leader_epoch, offset)
        self._records.append(Record(leader_epoch, value))
        return offset

    def append_as_follower(self, records: Iterable[Record]) -> None:
        """Append records fetched from the leader, keeping their epochs (§2.2.2)."""
        for rec in records:
            self._maybe_assign_epoch_start_offset(rec.epoch, len(self._records))
            self._records.append(rec)

    def truncate_to(self, target_offset: int) -> bool:
        """Remove every record at or above ``target_offset`` (§3.2), with the epoch
        cache entries starting there; HWM and recovery point are capped by the new
        LEO. At or beyond the LEO only the cache's entries at the LEO go (an epoch
        led without writing, Kafka's ``UnifiedLog.truncateTo``), and it answers False."""
        if target_offset >= len(self._records):
            if Bug.EPOCH_CACHE_NOT_TRUNCATED not in self._bugs:
                self.leader_epoch_cache.truncate_from_end(len(self._records))
            return False
        del self._records[target_offset:]
        if Bug.EPOCH_CACHE_NOT_TRUNCATED not in self._bugs:
            self.leader_epoch_cache.truncate_from_end(target_offset)
        self.high_watermark = min(self.high_watermark, target_offset)
        self.recovery_point = min(self.recovery_point, target_offset)
        return True

    def flush(self) -> None:
        """Write everything to disk: the recovery point moves to the LEO."""
        self.recovery_point = len(self._records)

    def lose_unflushed(self) -> None:
        """An abrupt termination whose page cache is lost (§5.1.1): the log restarts
        from its recovery point."""
        self.truncate_to(self.recovery_point)

    def update_high_watermark(self, hwm: int) -> None:
        self.high_watermark = hwm

    def __repr__(self) -> str:
        return (f"UnifiedLog(leo={len(self._records)}, hwm={self.high_watermark}, "
                f"recovery_point={self.recovery_point}, {self.leader_epoch_cache!r})")
