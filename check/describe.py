"""Readable failure reports: a per-replica table, the controller's metadata, and
a field-by-field diff between two states (model vs SUT)."""

from __future__ import annotations

from typing import Iterable, Iterator, Optional, Sequence

import attrs

from model import NO_LEADER, ClusterState


def _set(s: Iterable[int]) -> str:
    return "[" + ",".join(str(x) for x in sorted(s)) + "]"


def _leader(b: int) -> str:
    return "NoLeader" if b == NO_LEADER else str(b)


def fmt_log(log: tuple, limit: int = 12) -> str:
    """``offset:epoch:value`` cells; long logs keep their last ``limit`` records."""
    start = max(0, len(log) - limit)
    cells = [f"{o}:{log[o].epoch}:{log[o].value}" for o in range(start, len(log))]
    return ("… " if start else "") + " ".join(cells)


def replica_table(state: ClusterState) -> str:
    """One line per broker: status, fencing, epochs, role, LEO, HWM, LESO, ISR view, log."""
    rows = [("broker", "status", "fenced", "b.epoch", "md.off", "role", "LE", "PE", "LEO", "HWM", "LESO",
             "flushed", "ISR(max)", "log offset:epoch:value")]
    for b in state.brokers:
        reg = state.registration(b.id)
        r = b.replica
        if r is None:
            rows.append((str(b.id), b.status.value, str(reg.fenced), str(b.broker_epoch), str(b.metadata_offset),
                         "-", "", "", "", "", "", "", "", ""))
            continue
        isr = ""
        if r.role.value == "leader":
            isr = _set(r.isr) + ("" if r.pending_isr is None else f"({_set(r.maximal_isr)})")
        rows.append((str(b.id), b.status.value, str(reg.fenced), str(b.broker_epoch), str(b.metadata_offset),
                     r.role.value, str(r.leader_epoch), str(r.partition_epoch), str(r.leo), str(r.hwm),
                     "" if r.leso is None else str(r.leso), str(r.flushed), isr, fmt_log(r.log)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


def controller_summary(state: ClusterState) -> str:
    p = state.partition
    h = state.history
    line = (f"controller: replicas={list(p.replicas)} leader={_leader(p.leader)} ISR={_set(p.isr)} "
            f"ELR={_set(p.elr)} LastKnownELR={_set(p.last_known_elr)} leaderEpoch={p.leader_epoch} "
            f"partitionEpoch={p.partition_epoch}")
    if p.reassigning:
        line += f" adding={_set(p.adding)} removing={_set(p.removing)}"
    ghost = (f"history: TrueHWM={h.true_hwm} acked={len(h.acked)} nacked={len(h.nacked)} "
             f"consumed={len(h.consumed)} lossyShutdowns={h.lossy_shutdowns} "
             f"uncleanElections={len(h.unclean_elections)} unclean={_set(h.unclean)} "
             f"inFlight={len(state.network.messages)}")
    return line + "\n" + ghost


def describe(state: ClusterState) -> str:
    """The whole picture a Kafka engineer needs next to a violation."""
    return controller_summary(state) + "\n" + replica_table(state)


def _walk_diff(path: str, a: object, b: object) -> Iterator[str]:
    if a == b:
        return
    if type(a) is type(b) and attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            yield from _walk_diff(f"{path}.{f.name}", getattr(a, f.name), getattr(b, f.name))
        return
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and len(a) <= 64 and \
            not (a and type(a[0]).__name__ == "Record"):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _walk_diff(f"{path}[{i}]", x, y)
        return
    yield f"{path}: model={a!r} sut={b!r}"


def diff(model_state: object, sut_state: object, limit: int = 20, root: str = "state") -> list[str]:
    """Field-by-field differences (``root.path: model=… sut=…``) of two attrs
    values (states, observations, outcomes), at most ``limit`` lines."""
    out: list[str] = []
    for line in _walk_diff(root, model_state, sut_state):
        out.append(line)
        if len(out) >= limit:
            out.append("…")
            break
    return out


def first_difference_path(differences: Sequence[str]) -> Optional[str]:
    """The field path of the first ``path: model=… sut=…`` line of a diff."""
    for line in differences:
        if ": model=" in line:
            return line.split(": model=", 1)[0]
    return None
