"""Properties of the replicated log: completeness, matching, reads and writes
(§2.4, ch3, §6.1, §6.5, §6.6, ch9) and the ZooKeeper-era ISR invariants of
``KafkaReplication.tla`` restated in KRaft terms."""

from __future__ import annotations

import bisect

from typing import Optional

from model import AckedWrite, BrokerStatus, ClusterState, History, Role

from .base import (LastValueMemo, Property, Violation, current_leader, first_difference, fmt_set, record_at,
                   guarantees_apply, hosted, no_unguarded_election, running_replica)


def _leader_completeness(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    cur = current_leader(state)
    if cur is None:
        return ()
    b, r = cur
    h = state.history
    out: list[Violation] = []
    at = first_difference(r.log, h.committed, h.true_hwm)
    if at is not None:
        out.append(Violation(
            "LeaderCompleteness",
            f"leader {b} (leader epoch {r.leader_epoch}, LEO {r.leo}) lacks committed offset {at}: "
            f"its log has {record_at(r.log, at)}, the committed log {record_at(h.committed, at)} "
            f"(True HWM {h.true_hwm})", (b,), (at, h.true_hwm), (r.leader_epoch,)))
    if at is None and _first_acked_outside_committed(h) is None:
        return tuple(out)  # holds the committed log, and every ack lies in it
    for w in h.acked:
        if w.offset >= r.leo or r.log[w.offset].value != w.value:
            out.append(Violation(
                "LeaderCompleteness",
                f"leader {b} (leader epoch {r.leader_epoch}) does not hold acknowledged write "
                f"value {w.value} at offset {w.offset}", (b,), (w.offset,), (r.leader_epoch,)))
            break
    return tuple(out)


def _log_matching(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    reps = hosted(state)
    out: list[Violation] = []
    for i, (a, ra) in enumerate(reps):
        for b, rb in reps[i + 1:]:
            bound = min(ra.hwm, rb.hwm)
            at = first_difference(ra.log, rb.log, bound)
            if at is not None:
                out.append(Violation(
                    "LogMatching",
                    f"replicas {a} and {b} differ at offset {at} below min(local HWM) = {bound}: "
                    f"{a} has {record_at(ra.log, at)}, {b} has {record_at(rb.log, at)}",
                    (a, b), (at, bound)))
    return tuple(out)


def _leader_candidate_completeness(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    p, h = state.partition, state.history
    out: list[Violation] = []
    for b in sorted(p.isr | p.elr):
        r = running_replica(state, b)
        if r is None:
            continue
        at = first_difference(r.log, h.committed, h.true_hwm)
        if at is not None:
            where = "ISR" if b in p.isr else "ELR"
            out.append(Violation(
                "LeaderCandidateCompleteness",
                f"replica {b} is in the controller's {where} (ISR {fmt_set(p.isr)}, ELR {fmt_set(p.elr)}) "
                f"but lacks committed offset {at} (LEO {r.leo}, True HWM {h.true_hwm})",
                (b,), (at, h.true_hwm), (p.leader_epoch,)))
    return tuple(out)


def _consistent_read(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    cur = current_leader(state)
    if cur is None:
        return ()
    b, r = cur
    consumed = state.history.consumed
    at = first_difference(r.log, consumed, len(consumed))
    if at is None:
        return ()
    return (Violation(
        "ConsistentRead",
        f"offset {at} was consumed as {record_at(consumed, at)} but leader {b} "
        f"(leader epoch {r.leader_epoch}) now has {record_at(r.log, at)} there",
        (b,), (at,), (r.leader_epoch,)),)


def _first_outside(h: History) -> Optional[AckedWrite]:
    """The first acknowledged write that is not at its offset in the committed log."""
    for w in h.acked:
        if w.offset >= len(h.committed) or h.committed[w.offset].value != w.value:
            return w
    return None


_first_acked_outside_committed = LastValueMemo(_first_outside)


def _no_committed_record_lost(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    reps = hosted(state)
    h = state.history
    n = h.true_hwm
    if _first_acked_outside_committed(h) is None and any(r.log[:n] == h.committed for _, r in reps):
        return ()  # some replica holds the committed log, which holds every ack
    for w in state.history.acked:
        if not any(w.offset < r.leo and r.log[w.offset].value == w.value for _, r in reps):
            return (Violation(
                "NoCommittedRecordLostGlobally",
                f"acknowledged write value {w.value} at offset {w.offset} is on no replica "
                f"(replica LEOs: {', '.join(f'{b}={r.leo}' for b, r in reps) or 'none'})",
                tuple(b for b, _ in reps), (w.offset,)),)
    return ()


def _acked_writes_linearizable(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    return _linearizability_of(state.history)  # type: ignore[return-value]


def _check_linearizable(h: History) -> tuple[Violation, ...]:
    # Acks are stored in real-time order and produced_before never decreases along
    # them, so "acked before w was produced" is a prefix: keep its max offset.
    bounds: list[int] = []
    best: list[AckedWrite] = []
    for w in h.acked:
        if w.offset >= len(h.committed) or h.committed[w.offset].value != w.value:
            found = record_at(h.committed, w.offset)
            return (Violation(
                "AckedWritesLinearizable",
                f"write value {w.value} was acknowledged at offset {w.offset} but the committed log "
                f"holds {found} there", (), (w.offset,)),)
        i = bisect.bisect_right(bounds, w.value)
        if i and best[i - 1].offset >= w.offset:
            a = best[i - 1]
            return (Violation(
                "AckedWritesLinearizable",
                f"write value {a.value} was acknowledged at offset {a.offset} before write value {w.value} "
                f"was produced, yet value {w.value} was acknowledged at the lower offset {w.offset}",
                (), (a.offset, w.offset)),)
        if best and best[-1].offset >= w.offset:
            w_best = best[-1]
        else:
            w_best = w
        if bounds and bounds[-1] == w.produced_before:
            best[-1] = w_best
        else:
            bounds.append(w.produced_before)
            best.append(w_best)
    return ()


_linearizability_of = LastValueMemo(_check_linearizable)


def _isr_holds_leader_prefix(state: ClusterState, name: str, controller_isr: bool) -> tuple[Violation, ...]:
    out: list[Violation] = []
    for b, r in hosted(state):
        if r.role != Role.LEADER or state.broker(b).status != BrokerStatus.RUNNING or r.hwm == 0:
            continue
        if not controller_isr and r.leader_epoch != state.partition.leader_epoch:
            continue  # a stale leader's ISR may name replicas a reassignment has since deleted (§4.3)
        members = state.partition.isr if controller_isr else r.isr
        for m in sorted(members - {b}):
            rm = state.replica(m)
            log = () if rm is None else rm.log
            at = first_difference(r.log, log, r.hwm)
            if at is not None:
                which = "controller's ISR" if controller_isr else "its ISR"
                out.append(Violation(
                    name, f"leader {b} (HWM {r.hwm}) and {which} member {m} differ at offset {at}",
                    (b, m), (at, r.hwm), (r.leader_epoch,)))
    return tuple(out)


def _weak_isr(state: ClusterState) -> tuple[Violation, ...]:
    if state.history.lossy_shutdowns or not no_unguarded_election(state):
        return ()
    return _isr_holds_leader_prefix(state, "WeakIsr", controller_isr=False)


def _strong_isr(state: ClusterState) -> tuple[Violation, ...]:
    if state.history.lossy_shutdowns or not no_unguarded_election(state):
        return ()
    return _isr_holds_leader_prefix(state, "StrongIsr", controller_isr=True)


LEADER_COMPLETENESS = Property(
    "LeaderCompleteness", "§2.4",
    "The non-stale leader's log holds the committed log (every offset below the True HWM, "
    "unchanged) and every positively acknowledged write. Promised inside the fault budget "
    "(<= MinISR-1 lossy unclean shutdowns, §6.2) and without unclean/proactive elections.",
    _leader_completeness)
LOG_MATCHING = Property(
    "LogMatching", "§2.4, ch3, §6.6",
    "For every pair of replicas, the log prefix below min(their local HWMs) is identical. "
    "Promised inside the fault budget and without unclean/proactive elections.",
    _log_matching)
LEADER_CANDIDATE_COMPLETENESS = Property(
    "LeaderCandidateCompleteness", "§2.4.1, §6.5",
    "Every running member of the controller's ISR and ELR holds the complete committed log. "
    "Promised inside the fault budget and without unclean/proactive elections.",
    _leader_candidate_completeness)
CONSISTENT_READ = Property(
    "ConsistentRead", "ch9, §6.1",
    "A record once consumed at an offset is still at that offset, unchanged, on the non-stale "
    "leader. Promised inside the fault budget and without unclean/proactive elections.",
    _consistent_read)
NO_COMMITTED_RECORD_LOST = Property(
    "NoCommittedRecordLostGlobally", "ch9",
    "Every positively acknowledged write exists at its offset on some replica. Promised inside "
    "the fault budget and without unclean/proactive elections.",
    _no_committed_record_lost)
ACKED_WRITES_LINEARIZABLE = Property(
    "AckedWritesLinearizable", "§6.1",
    "Positively acknowledged writes occupy, in the committed log, the offsets they were "
    "acknowledged at, and a write produced after another's acknowledgement sits at a higher "
    "offset (real-time order). Promised inside the fault budget and without unclean/proactive "
    "elections.",
    _acked_writes_linearizable)
WEAK_ISR = Property(
    "WeakIsr", "KafkaReplication.tla",
    "Every running replica presuming leadership in the controller's current leader epoch holds, "
    "below its HWM, the same records as every member of its own ISR. KRaft restricts it to the "
    "current leader epoch (a stale leader's ISR may still name a replica a completed reassignment "
    "deleted, §4.3) and guarantees it only without lossy unclean shutdowns (the ZooKeeper-era "
    "spec assumed synchronous storage: a lossy member stays in the leader's ISR until fenced) and "
    "without unclean/proactive elections.",
    _weak_isr)
STRONG_ISR = Property(
    "StrongIsr", "KafkaReplication.tla",
    "Every running replica presuming leadership holds, below its HWM, the same records as every "
    "member of the controller's ISR. Guaranteed under the same conditions as WeakIsr.",
    _strong_isr)
