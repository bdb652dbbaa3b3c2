"""The leader-epoch checkpoint on disk beside the epoch cache in memory, under
Rule.EPOCH_CHECKPOINT_WRITTEN_LATER (Kafka's ``LeaderEpochFileCache``, §3.2, §5.1.1).

An assignment that changes the cache writes and syncs the whole checkpoint at
once; a truncation that removes entries only schedules that write
(``truncateFromEndAsyncFlush``), so until the log's scheduler runs it
(``WriteEpochCheckpoint``) the file holds the entries from before the first
truncation (``Replica.epoch_checkpoint``). A shutdown's restart reads the file
(an unclean shutdown lost the scheduled write; a controlled one ran it) and the
log's load truncates what it read at the log end offset (``LogLoader.load``),
scheduling that write in turn. A cache read back that the records do not give
stays explicit (``Replica.epoch_cache``) until the operations on it make it the
records' again.

Without the rule (and without a restored cache) nothing here changes a replica:
the chapters' cache is as durable as the records.
"""

from __future__ import annotations

from typing import Optional

import attrs

from .log import Entries, assign, epoch_entries, truncate_from_end
from .config import Config
from .profile import Rule
from .state import Record, Replica, Role


def tracked(cfg: Config, r: Replica) -> bool:
    """Whether the checkpoint is tracked for ``r``: under the rule, or for a cache
    restored under it."""
    return r.epoch_cache is not None or cfg.follows(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER)


def _records_cache(r: Replica) -> Entries:
    current = (r.leader_epoch, r.leso) if r.role == Role.LEADER and r.leso is not None else r.unwritten_epoch
    return tuple(epoch_entries(r.log, current))


def cache_of(r: Replica) -> Entries:
    """The replica's epoch cache ``((epoch, start offset), ...)``: the restored one,
    else the records' with the leader's own entry at its LESO, or a follower's
    kept unwritten entry."""
    return r.epoch_cache if r.epoch_cache is not None else _records_cache(r)


def settled(r: Replica, cache: Entries) -> Replica:
    """``r`` holding ``cache``: implicit when the records (with a leader's own entry,
    or a follower's unwritten entry at the LEO) give it, else explicit."""
    plain = attrs.evolve(r, epoch_cache=None, unwritten_epoch=None)
    records = _records_cache(plain)
    if records == cache:
        return plain
    last = r.log[-1].epoch if r.log else None
    if (r.role != Role.LEADER and cache and cache[-1][1] == r.leo and (last is None or cache[-1][0] > last)
            and records == cache[:-1]):
        return attrs.evolve(plain, unwritten_epoch=cache[-1])
    return attrs.evolve(plain, epoch_cache=cache)


def _assigned_each(cfg: Config, r: Replica, new: Replica, entries: Entries) -> Replica:
    """``new`` (``r`` changed) with ``r``'s cache after ``assign`` of each of
    ``entries`` in turn: any change writes the checkpoint at once."""
    if not tracked(cfg, r) or not entries:
        return new
    before = cache_of(r)
    after = before
    for epoch, start in entries:
        after = assign(after, epoch, start)
    if after != before:
        new = attrs.evolve(new, epoch_checkpoint=None)
    return settled(new, after)


def assigned(cfg: Config, r: Replica, new: Replica, epoch: int, start: int) -> Replica:
    """``new`` (``r`` with its records or role changed) after ``assign(epoch,
    start)`` on ``r``'s cache: a change writes the checkpoint at once."""
    return _assigned_each(cfg, r, new, ((epoch, start),))


def appended(cfg: Config, r: Replica, new: Replica, records: tuple[Record, ...]) -> Replica:
    """``new`` (``r`` with ``records`` appended as a follower) with the cache after
    ``UnifiedLog.appendAsFollower``'s assignment of each record's epoch at its
    offset; any change writes the checkpoint at once."""
    return _assigned_each(cfg, r, new, tuple((rec.epoch, r.leo + i) for i, rec in enumerate(records)))


def truncated(cfg: Config, r: Replica, new: Replica, to: int) -> Replica:
    """``new`` (``r`` with its log cut at ``to``) with the cache truncated at ``to``;
    removed entries schedule the checkpoint's write, the file keeping what it held."""
    if not tracked(cfg, r):
        return new
    before = cache_of(r)
    after = truncate_from_end(before, to)
    if after != before and new.epoch_checkpoint is None:
        new = attrs.evolve(new, epoch_checkpoint=before)
    return settled(new, after)


def written(r: Replica) -> Replica:
    """The scheduled write has run: the file holds the cache."""
    return attrs.evolve(r, epoch_checkpoint=None)


def loaded(r: Replica, memory: Entries, lost_write: bool) -> Replica:
    """The replica as the next start reads it back (``r``: stopped, its log as on
    disk): the checkpoint (the cache ``memory`` of the moment it stopped, or the
    file as it was before the scheduled write an unclean shutdown lost), truncated
    at the log end offset by the load, which schedules the write when that removes
    entries."""
    on_disk = r.epoch_checkpoint if lost_write and r.epoch_checkpoint is not None else memory
    after = truncate_from_end(on_disk, r.leo)
    r = attrs.evolve(r, epoch_checkpoint=on_disk if after != on_disk else None)
    return settled(r, after)


def memory_cache(cfg: Config, r: Optional[Replica]) -> Optional[Entries]:
    """The cache a running replica holds, to read back after it stops (None when
    the checkpoint is not tracked)."""
    return cache_of(r) if r is not None and tracked(cfg, r) else None
