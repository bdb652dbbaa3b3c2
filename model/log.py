"""Pure helpers over a replica's log and its leader epoch cache (§3.2).

The Start Offset for Leader Epoch cache is derived from the records (Fig 3 of
ch3); a leader also holds an entry for its current epoch at its LESO, even before
it writes a record in that epoch (the ``current`` argument). Under
Rule.EPOCH_CHECKPOINT_WRITTEN_LATER a restart can bring back a cache the records
do not give (``Replica.epoch_cache``); ``assign`` and ``truncate_from_end`` then
change it as Kafka's ``LeaderEpochFileCache`` does, and every lookup takes it as
``cache``.
"""

from __future__ import annotations

from typing import Optional

from .state import EpochEndOffset, Record

#: An epoch cache: ``((epoch, start offset), ...)``, both increasing.
Entries = tuple[tuple[int, int], ...]


def epoch_entries(log: tuple[Record, ...], current: Optional[tuple[int, int]] = None) -> list[tuple[int, int]]:
    """The epoch cache: ``[(epoch, start_offset), ...]`` in increasing epoch order.

    ``current`` is the leader's ``(leader_epoch, leso)`` entry, added when its epoch
    is newer than the last record's (§2.10.1 assigns it when becoming leader).
    """
    entries: list[tuple[int, int]] = []
    last = None
    for offset, rec in enumerate(log):
        if rec.epoch != last:
            entries.append((rec.epoch, offset))
            last = rec.epoch
    if current is not None and (not entries or current[0] > entries[-1][0]):
        entries.append(current)
    return entries


def assign(entries: Entries, epoch: int, start: int) -> Entries:
    """``LeaderEpochFileCache.assign``: unchanged when the latest entry is ``epoch``
    starting at or before ``start``; else the entries of the same or a higher
    epoch, or of the same or a higher start offset, are removed from the end and
    ``(epoch, start)`` appended."""
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return entries
    kept = list(entries)
    while kept and (kept[-1][0] >= epoch or kept[-1][1] >= start):
        kept.pop()
    return tuple(kept) + ((epoch, start),)


def truncate_from_end(entries: Entries, end_offset: int) -> Entries:
    """``LeaderEpochFileCache.truncateFromEndAsyncFlush``: the entries starting at
    or above ``end_offset`` (exclusive end of the truncated log) removed."""
    return tuple(e for e in entries if e[1] < end_offset)


def end_offset_for_epoch(
    log: tuple[Record, ...], requested: int, current: Optional[tuple[int, int]] = None,
    cache: Optional[Entries] = None,
) -> Optional[EpochEndOffset]:
    """End Offset for Leader Epoch lookup (§3.2).

    Returns the highest epoch <= ``requested`` in the cache and its exclusive end
    offset (the start of the next higher epoch, or the LEO for the latest epoch).
    When no epoch <= ``requested`` exists: ``requested`` and the start offset of
    the lowest epoch. None when ``requested`` is above every epoch, is the
    undefined epoch (-1), or the cache is empty: Kafka's UNDEFINED_EPOCH_OFFSET.
    ``cache``: a restored cache, read instead of the records' (``current`` unused).
    """
    entries = list(cache) if cache is not None else epoch_entries(log, current)
    if not entries or requested < 0:
        return None
    if entries[-1][0] == requested:
        return EpochEndOffset(requested, len(log))
    floor: Optional[tuple[int, int]] = None
    for epoch, start in entries:
        if epoch > requested:
            return EpochEndOffset(requested if floor is None else floor[0], start)
        floor = (epoch, start)
    return None


def truncation_offset(log: tuple[Record, ...], diverging: EpochEndOffset, in_rounds: bool = False,
                      unwritten: Optional[tuple[int, int]] = None, cache: Optional[Entries] = None) -> int:
    """Where a follower truncates on a diverging epoch (§3.2): the minimum of its
    own end offset for the diverging epoch and the leader's end offset.

    ``in_rounds`` (Rule.TRUNCATION_IN_ROUNDS, AbstractFetcherThread.
    getOffsetTruncationState): when the follower's own answer is another epoch (it
    lacks the leader's), it truncates to its own end offset alone and fetches again.
    ``unwritten``: the follower's kept entry of an epoch it led without writing
    (Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH), part of its own lookup; ``cache``: its
    restored cache, read instead."""
    own = end_offset_for_epoch(log, diverging.epoch, unwritten, cache)
    if in_rounds and own is not None and own.epoch != diverging.epoch:
        return max(0, min(own.end_offset, len(log)))
    local = len(log) if own is None else own.end_offset
    return max(0, min(local, diverging.end_offset))
