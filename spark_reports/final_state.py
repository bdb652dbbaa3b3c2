"""What the space-time diagram reads of a corpus row's ``final_state_json`` and
``config_json``, decoded tolerantly (``spark_reports.diagram``'s module doc):
the ``attrs``-style dict of the model's ``ClusterState``
(``brokers[].replica.log[]`` records as ``{"epoch", "value"}``,
``[epoch, value]`` or ``"e<epoch>:<value>"``; ``controller.partition``;
``history.committed`` / ``history.acked``), enums as names or values, sets as
lists. Anything not found is left out, never guessed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .lenient import as_int, as_ints, enum_name, lookup

_RECORD_RE = re.compile(r"^e?(-?\d+):(-?\d+)$")


def _record(r: Any) -> Optional[tuple[int, Optional[int]]]:
    """(epoch, value) of one log record in any of the accepted encodings."""
    if isinstance(r, dict):
        e = as_int(lookup(r, "epoch", "leader_epoch"))
        return None if e is None else (e, as_int(r.get("value")))
    if isinstance(r, (list, tuple)) and r:
        e = as_int(r[0])
        return None if e is None else (e, as_int(r[1]) if len(r) > 1 else None)
    if isinstance(r, str):
        m = _RECORD_RE.match(r.strip())
        if m:
            return int(m.group(1)), int(m.group(2))
    e = as_int(r)
    return None if e is None else (e, None)


def _log(v: Any) -> list[tuple[int, Optional[int]]]:
    if not isinstance(v, (list, tuple)):
        return []
    out = []
    for r in v:
        rec = _record(r)
        if rec is None:
            return []  # an encoding we do not understand: draw no log rather than a wrong one
        out.append(rec)
    return out


@dataclass
class ReplicaView:
    broker: int
    status: Optional[str] = None
    fenced: Optional[bool] = None
    hosts_replica: bool = True
    role: Optional[str] = None
    leader_epoch: Optional[int] = None
    hwm: Optional[int] = None
    flushed: Optional[int] = None
    leso: Optional[int] = None
    log: list[tuple[int, Optional[int]]] = field(default_factory=list)
    #: leader only: follower -> fetch offset (the follower's LEO when it sent its last served fetch)
    follower_fetch_offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class StateView:
    """What the diagram needs of a final state; ``problem`` says why it is empty."""

    replicas: dict[int, ReplicaView] = field(default_factory=dict)
    leader: Optional[int] = None
    leader_epoch: Optional[int] = None
    partition_epoch: Optional[int] = None
    replica_set: list[int] = field(default_factory=list)
    isr: list[int] = field(default_factory=list)
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    committed: list[tuple[int, Optional[int]]] = field(default_factory=list)
    true_hwm: Optional[int] = None
    acked: dict[int, Optional[int]] = field(default_factory=dict)   # value -> offset
    nacked: set[int] = field(default_factory=set)
    problem: Optional[str] = None


def decode_state(text: Optional[str]) -> StateView:
    """Decode ``final_state_json`` (see the module docstring); never raises."""
    view = StateView()
    try:
        st = json.loads(text) if text else None
    except (TypeError, ValueError) as exc:
        view.problem = f"final_state_json is not JSON ({exc})"
        return view
    if not isinstance(st, dict) or not st:
        view.problem = "final_state_json holds no state"
        return view
    st = lookup(st, "state", default=st)
    controller = lookup(st, "controller", default={})
    _decode_partition(view, lookup(controller, "partition", default=None) or lookup(st, "partition", default={}))
    fenced = {}
    for reg in lookup(controller, "registrations", default=[]) or []:
        b = as_int(lookup(reg, "broker", "id"))
        if b is not None:
            fenced[b] = bool(lookup(reg, "fenced", default=False))
    brokers = lookup(st, "brokers", default=[])
    if isinstance(brokers, dict):
        brokers = [dict(v, id=lookup(v, "id", default=k)) if isinstance(v, dict) else v for k, v in brokers.items()]
    for b in brokers or []:
        bid = as_int(lookup(b, "id", "broker"))
        if bid is not None:
            view.replicas[bid] = _decode_broker(bid, b, fenced.get(bid))
    _decode_history(view, lookup(st, "history", default={}))
    if not view.replicas:
        view.problem = "final_state_json has no brokers"
    return view


def _decode_partition(view: StateView, part: Any) -> None:
    """The controller's partition registration: leader, epochs, replicas, ISR, ELR."""
    view.leader = as_int(lookup(part, "leader"))
    if view.leader is not None and view.leader < 0:
        view.leader = None
    view.leader_epoch = as_int(lookup(part, "leader_epoch"))
    view.partition_epoch = as_int(lookup(part, "partition_epoch"))
    view.replica_set = [b for b in (as_int(x) for x in (lookup(part, "replicas", default=[]) or [])) if b is not None]
    view.isr, view.elr = as_ints(lookup(part, "isr")), as_ints(lookup(part, "elr"))
    view.last_known_elr = as_ints(lookup(part, "last_known_elr"))


def _decode_broker(bid: int, b: Any, fenced: Optional[bool]) -> ReplicaView:
    """One broker ``b`` (id ``bid``) and its replica, if it hosts one."""
    rep = lookup(b, "replica")
    rv = ReplicaView(bid, status=enum_name(lookup(b, "status")), fenced=fenced, hosts_replica=rep is not None)
    if not isinstance(rep, dict):
        return rv
    rv.role = enum_name(lookup(rep, "role"))
    rv.leader_epoch = as_int(lookup(rep, "leader_epoch"))
    rv.hwm = as_int(lookup(rep, "hwm"))
    rv.flushed = as_int(lookup(rep, "flushed"))
    rv.leso = as_int(lookup(rep, "leso"))
    rv.log = _log(lookup(rep, "log", default=[]))
    fols = lookup(rep, "followers", default=[]) or []
    pairs = fols.items() if isinstance(fols, dict) else (p for p in fols if isinstance(p, (list, tuple))
                                                         and len(p) == 2)
    for fb, fs in pairs:
        fo = as_int(lookup(fs, "fetch_offset"))
        if as_int(fb) is not None and fo is not None:
            rv.follower_fetch_offsets[as_int(fb)] = fo
    return rv


def _decode_history(view: StateView, hist: Any) -> None:
    """The ghost history: the committed log, the true HWM, the (n)acknowledged writes."""
    view.committed = _log(lookup(hist, "committed", default=[]))
    view.true_hwm = as_int(lookup(hist, "true_hwm")) if lookup(hist, "true_hwm") is not None else (
        len(view.committed) if "committed" in (hist or {}) else None)
    for a in lookup(hist, "acked", default=[]) or []:
        if isinstance(a, dict) and as_int(a.get("value")) is not None:
            view.acked[as_int(a["value"])] = as_int(a.get("offset"))
        elif isinstance(a, (list, tuple)) and a and as_int(a[0]) is not None:
            view.acked[as_int(a[0])] = as_int(a[1]) if len(a) > 1 else None
    view.nacked = set(as_ints(lookup(hist, "nacked", default=[])))


def decode_config(text: Optional[str]) -> dict:
    """``brokers``, ``assignment``, ``min_isr`` and ``variants`` of ``config_json``
    (missing ones absent)."""
    try:
        cfg = json.loads(text) if text else {}
    except (TypeError, ValueError):
        return {}
    if not isinstance(cfg, dict):
        return {}
    out: dict = {}
    for key in ("brokers", "assignment"):
        v = [b for b in (as_int(x) for x in (cfg.get(key) or [])) if b is not None]
        if v:
            out[key] = v
    if as_int(cfg.get("min_isr")) is not None:
        out["min_isr"] = as_int(cfg["min_isr"])
    out["variants"] = [enum_name(v) for v in (cfg.get("variants") or [])]
    return out
