"""``ClientHistory``: what clients and an omniscient observer see of the
cluster — the ghost state the properties read (§6.1, §6.4, §5.1.2, §5.3.2).

Brokers and the controller report to it: produce outcomes (acks=all writes
pending, acknowledged, or failed), HWM advances (which acknowledge writes and
grow the committed log, whose length is the True HWM), consumed records,
ListOffsets answers, lossy shutdowns, unclean elections, and which replicas
restarted uncleanly and have not provably caught up yet.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from model import AckedWrite, ListOffsetsAnswer, PendingWrite, Record, UncleanElectionReport


class ClientHistory:
    """Mutable history of one run; ``snapshot.py`` turns it into ``model.History``."""

    def __init__(self) -> None:
        self.committed: list[Record] = []
        self.acked: list[AckedWrite] = []
        self.nacked: list[int] = []
        self.pending: list[PendingWrite] = []
        self.consumed: list[Record] = []
        self.list_offsets: list[ListOffsetsAnswer] = []
        self.lossy_shutdowns = 0
        self.unclean_elections: list[UncleanElectionReport] = []
        self.unclean: set[int] = set()
        self.next_value = 1
        # The omniscient observer (the cluster): ``peek_replica(broker)`` gives a
        # replica's (broker epoch, log records), or None.
        self.observer: Optional[Any] = None

    @property
    def true_hwm(self) -> int:
        """The True HWM (§6.4): the end of the committed log."""
        return len(self.committed)

    # ------------------------------------------------------------ produce (§2.5, §2.6)

    def take_value(self) -> int:
        v = self.next_value
        self.next_value += 1
        return v

    def write_pending(self, value: int, broker: int, offset: int) -> None:
        self.pending.append(PendingWrite(value, broker, offset))

    def write_failed(self, value: int) -> None:
        self.nacked.append(value)

    def fail_pending(self, broker: int) -> None:
        """Every write waiting on ``broker`` fails (NOT_LEADER_OR_FOLLOWER or
        NOT_ENOUGH_REPLICAS_AFTER_APPEND, §2.6)."""
        if not any(w.broker == broker for w in self.pending):
            return
        keep = []
        for w in self.pending:
            if w.broker == broker:
                self.nacked.append(w.value)
            else:
                keep.append(w)
        self.pending = keep

    def hwm_advanced(self, broker: int, new_hwm: int, leader_log: Sequence[Record]) -> None:
        """Leader ``broker`` moved its HWM to ``new_hwm`` (§2.7): its waiting writes
        below it are acknowledged (in offset order) and the committed log grows."""
        done = [w for w in self.pending if w.broker == broker and w.offset < new_hwm]
        if len(self.committed) < new_hwm:
            self.committed.extend(leader_log[len(self.committed):new_hwm])
        if done:
            self.pending = [w for w in self.pending if not (w.broker == broker and w.offset < new_hwm)]
            done.sort(key=lambda w: w.offset)
            self.acked.extend(AckedWrite(w.value, w.offset, self.next_value) for w in done)

    # ---------------------------------------------------------------- reads (§6.4.2)

    def consume(self, records: Sequence[Record]) -> None:
        self.consumed.extend(records)

    def list_offsets_answered(self, broker: int, leader_epoch: int, hwm: Optional[int]) -> None:
        """Store an answer unless it repeats the previous one."""
        if self.list_offsets:
            last = self.list_offsets[-1]
            if (last.broker, last.leader_epoch, last.hwm) == (broker, leader_epoch, hwm):
                return
        self.list_offsets.append(ListOffsetsAnswer(broker, leader_epoch, hwm, self.true_hwm))

    # ----------------------------------------------------------- faults and recovery

    def lossy_shutdown(self) -> None:
        self.lossy_shutdowns += 1

    def registered_unclean(self, broker: int) -> None:
        self.unclean.add(broker)

    def fetch_served(self, follower: int, broker_epoch: int, fetch_offset: int) -> None:
        """A leader served a fetch: an unclean replica has provably caught up once the
        fetch was sent in its current broker epoch from a log holding the whole
        committed log (§5.1.2)."""
        if follower not in self.unclean:
            return
        seen = None if self.observer is None else self.observer.peek_replica(follower)
        if seen is None:
            return
        epoch, log = seen
        if epoch != broker_epoch:
            return
        n = len(self.committed)
        if fetch_offset < n or len(log) < n or list(log[:n]) != self.committed:
            return
        self.unclean.discard(follower)

    def unclean_election(self, mechanism: str, leader: int, leader_epoch: int) -> None:
        """Report potential data loss (§5.3.2); the elected log is the one the others
        recover from, so its replica no longer counts as unclean."""
        self.unclean_elections.append(UncleanElectionReport(mechanism, leader, leader_epoch))
        self.unclean.discard(leader)
