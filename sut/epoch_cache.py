"""``LeaderEpochFileCache``: the Start Offset for Leader Epoch cache of one log
(§3.2, Fig 3 of ch3).

Entries ``(epoch, start_offset)`` in increasing epoch and start-offset order.
They are written explicitly: ``assign`` when a record of a newer epoch is
appended or when the replica becomes leader (§2.10.1), ``truncate_from_end``
when the log is truncated. Lookups (End Offset for Leader Epoch, the latest
epoch) read the cache, never the log.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from .bugs import Bug


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class LeaderEpochFileCache:
    """§3.2: the epoch cache, shaped like Kafka's ``LeaderEpochFileCache``."""

    __slots__ = ("_epochs", "_bugs")

    def __init__(self, bugs: frozenset = frozenset()) -> None:
        self._epochs: list[EpochEntry] = []
        self._bugs = bugs

    # ------------------------------------------------------------------ writes

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (§3.2). A no-op when the
        latest entry already is ``epoch`` starting at or before that offset;
        otherwise entries that are not monotonic with the new one (same or higher
        epoch, same or higher start offset) are removed first."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid epoch entry ({epoch}, {start_offset})")
        if self._epochs:
            latest = self._epochs[-1]
            if latest.epoch == epoch and start_offset >= latest.start_offset:
                return
        if Bug.EPOCH_ASSIGN_KEEPS_LATER_OFFSETS in self._bugs:
            self._remove_from_end(lambda e: e.epoch >= epoch)
        else:
            self._remove_from_end(lambda e: e.epoch >= epoch or e.start_offset >= start_offset)
        self._epochs.append(EpochEntry(epoch, start_offset))

    def truncate_from_end(self, end_offset: int) -> None:
        """Kafka's ``truncateFromEnd``: remove every entry whose start offset is >=
        ``end_offset`` (the log was truncated to ``end_offset``, §3.2); a negative
        (undefined) offset changes nothing."""
        if end_offset >= 0:
            self._remove_from_end(lambda e: e.start_offset >= end_offset)

    def clear(self) -> None:
        self._epochs.clear()

    def restore(self, entries: tuple[EpochEntry, ...]) -> None:
        """The cache a start reads from the checkpoint file: exactly ``entries``
        (``LeaderEpochFileCache``'s constructor over ``LeaderEpochCheckpointFile.read``)."""
        self._epochs = [EpochEntry(*e) for e in entries]

    def _remove_from_end(self, predicate) -> None:
        epochs = self._epochs
        while epochs and predicate(epochs[-1]):
            epochs.pop()

    # ----------------------------------------------------------------- lookups

    def latest_epoch(self) -> Optional[int]:
        return self._epochs[-1].epoch if self._epochs else None

    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._epochs)

    def epoch_for_offset(self, offset: int) -> Optional[int]:
        """The epoch of the record at ``offset``: the last entry starting at or
        before it (None when no entry does)."""
        found = None
        for e in self._epochs:
            if e.start_offset > offset:
                break
            found = e.epoch
        return found

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> Optional[tuple[int, int]]:
        """Kafka's ``endOffsetFor``, the End Offset for Leader Epoch lookup (§3.2):
        ``(epoch, end_offset)`` where epoch is
        the highest epoch <= ``requested_epoch`` and end_offset its exclusive end
        (the start of the next higher epoch, or the LEO for the latest epoch).
        With no epoch <= requested: ``(requested_epoch, start of the lowest epoch)``.
        None (UNDEFINED_EPOCH_OFFSET) when the cache is empty, for the undefined
        epoch (-1), or when every epoch is below the requested one but the latest
        is not it."""
        epochs = self._epochs
        if not epochs or requested_epoch < 0:
            return None
        if epochs[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        floor: Optional[EpochEntry] = None
        higher: Optional[EpochEntry] = None
        for e in epochs:
            if e.epoch > requested_epoch:
                higher = e
                break
            floor = e
        if higher is None:
            return None
        if floor is None:
            return requested_epoch, higher.start_offset
        end = higher.start_offset
        if Bug.END_OFFSET_FOR_EPOCH_OFF_BY_ONE in self._bugs:
            end -= 1  # BUG: the last offset of the epoch, not its exclusive end
        return floor.epoch, end

    def __repr__(self) -> str:
        return "LeaderEpochFileCache(" + ", ".join(f"{e.epoch}=>{e.start_offset}" for e in self._epochs) + ")"
