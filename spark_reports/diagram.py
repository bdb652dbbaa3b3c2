"""Space-time diagrams of a counterexample: one lane per broker (and one for the
controller), the trace's steps along the x-axis, each replica's log drawn as
``offset:epoch`` cells, elections, truncations and the HWM marked — the picture
a Kafka engineer draws on a whiteboard.

spark_reports may not import the model, so nothing here re-executes a trace.
The diagram is drawn from what a corpus row holds:

* ``timeline`` (corpus schema version 3, ``harness.schema.TIMELINE_STEP``) —
  what each step visibly did as replay observed it: the message it delivered or
  dropped and those it sent (ids, endpoints, error codes), its outcome (writes
  appended, acknowledged, failed; records consumed; the ListOffsets answer) and
  each broker after it (status, fenced, role, leader epoch, LEO, HWM). Fetch
  arcs follow the message ids (request → served by the leader → response
  applied or dropped), elections are the steps the registration's leader epoch
  changed, truncations and losses the steps a replica's LEO went down, a record
  reached a follower at the step its LEO passed the record's offset, and
  offline and fenced spans are the steps the brokers were so.
* ``steps`` — the actions, for the tags naming what each step did (start,
  unfence, ISR−2, md+1, …) and which Produce wrote which value.
* ``final_state_json`` — the replicas' final logs, HWMs, roles and statuses,
  the controller's partition registration and the ghost history (committed
  log, acknowledged writes). Produce(broker, value) writes a unique value, so
  a produced value found in a final log gives that write's ``offset:epoch``;
  a value missing from the producing broker's final log was truncated or lost
  there.

A row without a timeline (written before version 3) is drawn from its steps
and final state only, without arcs, arrivals, truncations or elections, and
the diagram says so: nothing is guessed from action names.

``final_state_json`` is read tolerantly: the ``attrs``-style dict of the model's
``ClusterState`` (``brokers[].replica.log[]`` records as ``{"epoch", "value"}``,
``[epoch, value]`` or ``"e<epoch>:<value>"``; ``controller.partition``;
``history.committed`` / ``history.acked``), enums as names or values, sets as
lists. Anything it cannot find is left out of the picture, never guessed.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

# ------------------------------------------------------------------ state decoding

_RECORD_RE = re.compile(r"^e?(-?\d+):(-?\d+)$")


def _get(d: Any, *names: str, default: Any = None) -> Any:
    if not isinstance(d, dict):
        return default
    for n in names:
        if n in d and d[n] is not None:
            return d[n]
    return default


def _int(v: Any) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


def _ints(v: Any) -> list[int]:
    if isinstance(v, dict):  # {"items": [...]} or a set encoded as a dict
        v = _get(v, "items", "values", default=list(v))
    if not isinstance(v, (list, tuple)):
        return []
    return sorted(x for x in (_int(e) for e in v) if x is not None)


def _enum(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, dict):
        v = _get(v, "value", "name")
    s = str(v)
    return s.split(".")[-1]


def _record(r: Any) -> Optional[tuple[int, Optional[int]]]:
    """(epoch, value) of one log record in any of the accepted encodings."""
    if isinstance(r, dict):
        e = _int(_get(r, "epoch", "leader_epoch"))
        return None if e is None else (e, _int(r.get("value")))
    if isinstance(r, (list, tuple)) and r:
        e = _int(r[0])
        return None if e is None else (e, _int(r[1]) if len(r) > 1 else None)
    if isinstance(r, str):
        m = _RECORD_RE.match(r.strip())
        if m:
            return int(m.group(1)), int(m.group(2))
    e = _int(r)
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
    st = _get(st, "state", default=st)
    controller = _get(st, "controller", default={})
    part = _get(controller, "partition", default=None) or _get(st, "partition", default={})
    view.leader = _int(_get(part, "leader"))
    if view.leader is not None and view.leader < 0:
        view.leader = None
    view.leader_epoch = _int(_get(part, "leader_epoch"))
    view.partition_epoch = _int(_get(part, "partition_epoch"))
    view.replica_set = [b for b in (_int(x) for x in (_get(part, "replicas", default=[]) or [])) if b is not None]
    view.isr, view.elr = _ints(_get(part, "isr")), _ints(_get(part, "elr"))
    view.last_known_elr = _ints(_get(part, "last_known_elr"))
    fenced = {}
    for reg in _get(controller, "registrations", default=[]) or []:
        b = _int(_get(reg, "broker", "id"))
        if b is not None:
            fenced[b] = bool(_get(reg, "fenced", default=False))
    brokers = _get(st, "brokers", default=[])
    if isinstance(brokers, dict):
        brokers = [dict(v, id=_get(v, "id", default=k)) if isinstance(v, dict) else v for k, v in brokers.items()]
    for b in brokers or []:
        bid = _int(_get(b, "id", "broker"))
        if bid is None:
            continue
        rep = _get(b, "replica")
        rv = ReplicaView(bid, status=_enum(_get(b, "status")), fenced=fenced.get(bid), hosts_replica=rep is not None)
        if isinstance(rep, dict):
            rv.role = _enum(_get(rep, "role"))
            rv.leader_epoch = _int(_get(rep, "leader_epoch"))
            rv.hwm = _int(_get(rep, "hwm"))
            rv.flushed = _int(_get(rep, "flushed"))
            rv.leso = _int(_get(rep, "leso"))
            rv.log = _log(_get(rep, "log", default=[]))
            fols = _get(rep, "followers", default=[]) or []
            pairs = fols.items() if isinstance(fols, dict) else (p for p in fols if isinstance(p, (list, tuple))
                                                                 and len(p) == 2)
            for fb, fs in pairs:
                fo = _int(_get(fs, "fetch_offset"))
                if _int(fb) is not None and fo is not None:
                    rv.follower_fetch_offsets[_int(fb)] = fo
        view.replicas[bid] = rv
    hist = _get(st, "history", default={})
    view.committed = _log(_get(hist, "committed", default=[]))
    view.true_hwm = _int(_get(hist, "true_hwm")) if _get(hist, "true_hwm") is not None else (
        len(view.committed) if "committed" in (hist or {}) else None)
    for a in _get(hist, "acked", default=[]) or []:
        if isinstance(a, dict) and _int(a.get("value")) is not None:
            view.acked[_int(a["value"])] = _int(a.get("offset"))
        elif isinstance(a, (list, tuple)) and a and _int(a[0]) is not None:
            view.acked[_int(a[0])] = _int(a[1]) if len(a) > 1 else None
    view.nacked = set(_ints(_get(hist, "nacked", default=[])))
    if not view.replicas:
        view.problem = "final_state_json has no brokers"
    return view


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
        v = [b for b in (_int(x) for x in (cfg.get(key) or [])) if b is not None]
        if v:
            out[key] = v
    if _int(cfg.get("min_isr")) is not None:
        out["min_isr"] = _int(cfg["min_isr"])
    out["variants"] = [_enum(v) for v in (cfg.get("variants") or [])]
    return out


# ----------------------------------------------------------------------- timeline

def step_number(idx: int) -> int:
    """The number a step at 0-based ``idx`` of a trace is shown with: from 1, as
    ``replicheck replay`` lists a trace and names the step it fails at."""
    return idx + 1


@dataclass
class Step:
    idx: int
    action: str
    args: dict


def parse_steps(steps: Iterable[Any]) -> list[Step]:
    """Steps from Rows or dicts (``idx``, ``action``, ``args_json``), in idx order."""
    out = []
    for i, s in enumerate(steps or []):
        d = _as_dict(s)
        try:
            args = json.loads(d.get("args_json") or "{}")
        except ValueError:
            args = {}
        idx = _int(d.get("idx"))
        out.append(Step(i if idx is None else idx, str(d.get("action")), args if isinstance(args, dict) else {}))
    out.sort(key=lambda s: s.idx)
    return out


def _as_dict(v: Any) -> dict:
    """A Row (recursively) or dict as a dict; anything else as {}."""
    if hasattr(v, "asDict"):
        return v.asDict(recursive=True)
    return v if isinstance(v, dict) else {}


@dataclass
class Moment:
    """One entry of a row's ``timeline`` column (``harness.schema.TIMELINE_STEP``)."""

    idx: int
    received: Optional[int]
    sent: list[dict]
    outcome: dict
    leader: Optional[int]
    leader_epoch: Optional[int]
    brokers: dict[int, dict]


def parse_timeline(entries: Optional[Iterable[Any]]) -> Optional[list[Moment]]:
    """The ``timeline`` column (Rows or dicts), in idx order; None when the row has
    none (written before corpus schema version 3)."""
    if entries is None:
        return None
    out = []
    for e in entries:
        d = _as_dict(e)
        try:
            outcome = json.loads(d.get("outcome_json") or "{}")
        except ValueError:
            outcome = {}
        brokers = {}
        for b in d.get("brokers") or []:
            b = _as_dict(b)
            if _int(b.get("broker")) is not None:
                brokers[_int(b["broker"])] = b
        leader = _int(d.get("leader"))
        out.append(Moment(_int(d.get("idx")) or 0, _int(d.get("received")),
                          [_as_dict(m) for m in d.get("sent") or []], outcome if isinstance(outcome, dict) else {},
                          None if leader is None or leader < 0 else leader, _int(d.get("leader_epoch")), brokers))
    out.sort(key=lambda m: m.idx)
    return out


@dataclass
class Arc:
    lane: int
    start: int
    served: Optional[int] = None
    end: Optional[int] = None
    outcome: str = "in flight"  # delivered | dropped | in flight


@dataclass
class Mark:
    step: int
    lane: Any          # broker id or "controller"
    label: str
    kind: str          # lifecycle | fault | metadata | isr | client | controller | election | unclean | loss


@dataclass
class Cell:
    step: int
    lane: int
    offset: Optional[int]
    epoch: Optional[int]
    value: Optional[int]
    status: str        # kept | lost | replicated (arrival at a follower)
    acked: Optional[bool] = None


@dataclass
class Timeline:
    n_steps: int
    lanes: list[int]
    marks: list[Mark] = field(default_factory=list)
    arcs: list[Arc] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    offline: list[tuple[int, int, int]] = field(default_factory=list)  # (lane, start, end)
    fenced: list[tuple[int, int, int]] = field(default_factory=list)
    elections: list[tuple[int, bool, str]] = field(default_factory=list)  # (step, unclean, label)
    epoch_leaders: dict[int, tuple[int, int]] = field(default_factory=dict)  # epoch -> (leader, first step)
    recorded: bool = True     # drawn from the row's timeline (False: from its steps alone)
    notes: list[str] = field(default_factory=list)


#: Action name -> (lane argument, tag, mark kind): the tags drawn from the steps alone.
_ACTION_TAGS = {
    "StartBroker": ("broker", "start", "lifecycle"), "UnfenceBroker": ("broker", "unfence", "lifecycle"),
    "FenceBroker": ("broker", "FENCED", "fault"), "ControlledShutdown": ("broker", "shutdown", "fault"),
    "Flush": ("broker", "flush", "lifecycle"),
}


def _spans(moments: list[Moment], lanes: list[int], n: int, on: Any) -> list[tuple[int, int, int]]:
    """(lane, first step, end step) of each run of steps after which ``on(broker
    moment)`` holds (the initial state counts as not)."""
    out = []
    for b in lanes:
        since = None
        for m in moments:
            now = b in m.brokers and bool(on(m.brokers[b]))
            if now and since is None:
                since = m.idx
            elif not now and since is not None:
                out.append((b, since, m.idx))
                since = None
        if since is not None:
            out.append((b, since, n))
    return out


def build_timeline(steps: Sequence[Step], moments: Optional[Sequence[Moment]], state: StateView,
                   config: dict) -> Timeline:
    """Everything the diagram draws on the time axis (see the module docstring):
    from ``moments`` (the row's recorded timeline) when given, else from the
    steps' own arguments only, with a note saying what is not drawn."""
    n = len(steps)
    lanes = list(config.get("brokers") or [])
    for b in list(sorted(state.replicas)) + [b for m in moments or [] for b in m.brokers]:
        if b not in lanes:
            lanes.append(b)
    tl = Timeline(n, lanes, recorded=moments is not None)
    assignment = config.get("assignment") or []
    if assignment:
        tl.epoch_leaders[1] = (assignment[0], 0)

    def mark(i: int, lane: Any, label: str, kind: str) -> None:
        if lane is not None:
            tl.marks.append(Mark(i, lane, label, kind))

    produced: dict[int, tuple[int, int]] = {}   # value -> (step, broker)
    for i, s in enumerate(steps):
        a, g = s.action, s.args
        if a in _ACTION_TAGS:
            arg, label, kind = _ACTION_TAGS[a]
            mark(i, _int(g.get(arg)), label, kind)
        elif a == "UncleanShutdown":
            mark(i, _int(g.get("broker")), "CRASH lossy" if g.get("lossy") else "crash", "fault")
        elif a == "ReplicateMetadata":
            mark(i, _int(g.get("broker")), f"md+{g.get('count', '?')}", "metadata")
        elif a in ("ProposeIsrShrink", "ProposeIsrExpand"):
            mark(i, _int(g.get("leader")), f"ISR{'−' if a == 'ProposeIsrShrink' else '+'}{g.get('follower')}", "isr")
        elif a == "ProposeIsrShrinkMany":
            followers = g.get("followers") if isinstance(g.get("followers"), list) else []
            mark(i, _int(g.get("leader")), "ISR−" + ",".join(str(f) for f in followers), "isr")
        elif a in ("UncleanRecovery", "UncleanLeaderElection"):
            label = "UNCLEAN RECOVERY" if a == "UncleanRecovery" else "UNCLEAN LEADER ELECTION"
            tl.elections.append((i, True, label))
            mark(i, "controller", label, "unclean")
        elif a == "Reassign":
            mark(i, "controller", f"reassign→{g.get('target')}", "controller")
        elif a == "CancelReassignment":
            mark(i, "controller", "cancel reassignment", "controller")
        elif a == "Produce" and _int(g.get("broker")) is not None:
            v = _int(g.get("value"))
            if v is not None:
                produced[v] = (i, _int(g["broker"]))
            else:
                tl.cells.append(Cell(i, _int(g["broker"]), None, None, None, "kept"))
    if moments is None:
        _cells_from_final_state(tl, produced, state, {})
        tl.notes.append("no timeline in this row (written before corpus schema version 3): "
                        "fetch arcs, arrivals, truncations and elections are not drawn")
        return tl
    _draw_moments(tl, steps, moments, mark)
    arrivals = _arrivals(moments, state)
    _cells_from_final_state(tl, produced, state, arrivals, moments)
    return tl


def _draw_moments(tl: Timeline, steps: Sequence[Step], moments: Sequence[Moment], mark: Any) -> None:
    """Arcs, message tags, elections, offline and fenced spans, truncations and the
    clients' answers, from the recorded timeline."""
    n = tl.n_steps
    arcs: dict[int, Arc] = {}        # message id -> the fetch it belongs to
    messages: dict[int, dict] = {}   # message id -> the sent entry
    prev: Optional[Moment] = None
    epoch = min(tl.epoch_leaders, default=None)   # the initial leader epoch
    for m in moments:
        i = m.idx
        action = steps[i].action if i < len(steps) else ""
        got = messages.pop(m.received, None) if m.received is not None else None
        if got is not None:
            arc = arcs.get(got.get("id"))
            if action == "DropMessage":
                if arc is not None:
                    arc.end, arc.outcome = i, "dropped"
                else:
                    mark(i, got.get("src") if got.get("src") is not None else got.get("dst"), "✕ drop", "fault")
            elif got.get("type") == "FetchResponse" and arc is not None:
                arc.end, arc.outcome = i, "delivered"
            elif got.get("type") == "AlterPartitionRequest":
                mark(i, "controller", f"AlterPartition from {got.get('src')}", "controller")
            elif got.get("type") == "AlterPartitionResponse":
                err = got.get("error")
                mark(i, got.get("dst"), "AP resp" + (f" {err}" if err else ""), "isr")
        for msg in m.sent:
            mid = _int(msg.get("id"))
            if mid is None:
                continue
            messages[mid] = msg
            if msg.get("type") == "FetchRequest" and _int(msg.get("src")) is not None:
                arcs[mid] = Arc(_int(msg["src"]), i)
                tl.arcs.append(arcs[mid])
            elif msg.get("type") == "FetchResponse" and got is not None and got.get("id") in arcs:
                arcs[mid] = arcs[got["id"]]
                arcs[mid].served = i
        # elections: the registration's leader epoch moved
        if m.leader_epoch is not None and m.leader_epoch != epoch:
            if not any(e[0] == i for e in tl.elections):
                tl.elections.append((i, False, f"LE{m.leader_epoch}"))
            if m.leader is not None and m.leader_epoch not in tl.epoch_leaders:
                tl.epoch_leaders[m.leader_epoch] = (m.leader, i)
            epoch = m.leader_epoch
        # truncations and losses: a replica's LEO went down
        for b, bm in m.brokers.items():
            was = prev.brokers.get(b, {}) if prev is not None else {}
            leo, before = _int(bm.get("leo")), _int(was.get("leo"))
            if leo is not None and before is not None and leo < before:
                crashed = str(bm.get("status", "")).startswith("OFFLINE")
                mark(i, b, f"{'lost' if crashed else '✂'} LEO {before}→{leo}", "loss")
        out = m.outcome
        acks = [f"ack v{v}@{o}" for v, o in out.get("acknowledged") or [] if v is not None]
        if acks:
            mark(i, "controller", ", ".join(acks), "client")
        if action == "Consume":
            vals = [_get(r, "value") for r in out.get("consumed") or []]
            mark(i, "controller", f"consume → {vals}", "client")
        elif action == "ListOffsets":
            lo = out.get("list_offsets") or {}
            hwm = lo.get("hwm") if isinstance(lo, dict) else None
            mark(i, "controller", f"ListOffsets → {'unknown' if hwm is None else hwm}", "client")
        prev = m
    tl.offline = _spans(list(moments), tl.lanes, n, lambda bm: str(bm.get("status", "")).startswith("OFFLINE"))
    tl.fenced = _spans(list(moments), tl.lanes, n, lambda bm: bm.get("fenced"))


def _arrivals(moments: Sequence[Moment], state: StateView) -> dict[tuple[int, int], int]:
    """(broker, offset) -> the step the record now at that offset of the broker's
    final log arrived: the last step after which the broker's LEO passed the
    offset."""
    out: dict[tuple[int, int], int] = {}
    for b, rv in state.replicas.items():
        for off in range(len(rv.log)):
            below = True
            for m in moments:
                leo = _int((m.brokers.get(b) or {}).get("leo"))
                above = leo is not None and leo > off
                if above and below:
                    out[(b, off)] = m.idx
                below = not above
    return out


def _cells_from_final_state(tl: Timeline, produced: dict[int, tuple[int, int]], state: StateView,
                            arrivals: dict[tuple[int, int], int], moments: Sequence[Moment] = ()) -> None:
    """A cell per produced value where it was written (kept, or lost when gone from
    that broker's final log), acknowledged or not (from the recorded outcomes, else
    the final state's history), and, with arrivals, where it reached each follower."""
    where: dict[int, dict[int, tuple[int, int]]] = {}  # value -> broker -> (offset, epoch)
    for b, rv in state.replicas.items():
        for off, (ep, val) in enumerate(rv.log):
            if val is not None:
                where.setdefault(val, {})[b] = (off, ep)
    written: dict[int, int] = {}   # value -> offset, from the recorded outcomes
    acked, nacked = set(state.acked), set(state.nacked)
    for m in moments:
        for v, o in m.outcome.get("appended") or []:
            written[v] = o
        acked |= {v for v, _ in m.outcome.get("acknowledged") or []}
        nacked |= set(m.outcome.get("failed") or [])
    for v, (i, b) in sorted(produced.items(), key=lambda kv: kv[1][0]):
        ack = True if v in acked else (False if v in nacked else None)
        spots = where.get(v, {})
        if b in spots:
            off, ep = spots[b]
            tl.cells.append(Cell(i, b, off, ep, v, "kept", ack))
        else:
            anywhere = next(iter(spots.values()), None)
            off, ep = anywhere if anywhere else (written.get(v, state.acked.get(v)), None)
            tl.cells.append(Cell(i, b, off, ep, v, "lost", ack))
        if ep is not None and not tl.recorded and (ep not in tl.epoch_leaders or tl.epoch_leaders[ep][1] > i):
            tl.epoch_leaders[ep] = (b, i)
        for f, (off, ep) in spots.items():
            if f != b and (f, off) in arrivals:
                tl.cells.append(Cell(arrivals[(f, off)], f, off, ep, v, "replicated", ack))


# --------------------------------------------------------------------------- drawing

_EPOCH_COLORS = ("#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99", "#8dd3c7", "#bebada",
                 "#80b1d3", "#fccde5")
_KIND_COLORS = {"lifecycle": "#2b7a3d", "fault": "#c0392b", "metadata": "#1f5fa8", "isr": "#7b3fa0",
                "client": "#555555", "controller": "#333333", "unclean": "#c0392b", "loss": "#c0392b",
                "election": "#888888"}
FINAL_CELLS = 14


def epoch_color(epoch: Optional[int]) -> str:
    if epoch is None:
        return "#eeeeee"
    return _EPOCH_COLORS[epoch % len(_EPOCH_COLORS)]


def _row_get(row: Any, key: str, default: Any = None) -> Any:
    if isinstance(row, dict):
        return row.get(key, default)
    try:
        return row[key]
    except (KeyError, ValueError, IndexError):
        return default


def space_time_png(row: Any, dpi: int = 100) -> bytes:
    """The diagram of one counterexample row (a Row or dict with ``steps``,
    ``final_state_json``, ``config_json``, ``property``, ``signature``,
    ``violation``, ``variants``, ``sut_bugs``, ``counterexample_id``) as PNG."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    steps = parse_steps(_row_get(row, "steps", []))
    state = decode_state(_row_get(row, "final_state_json"))
    config = decode_config(_row_get(row, "config_json"))
    tl = build_timeline(steps, parse_timeline(_row_get(row, "timeline")), state, config)
    n = max(tl.n_steps, 1)
    lanes = tl.lanes or [0]
    nl = len(lanes)
    ys = {b: nl - 1 - k for k, b in enumerate(lanes)}
    ys["controller"] = nl + 0.15
    longest = max([len(r.log) for r in state.replicas.values()] + [len(state.committed), 1])
    final_w = min(longest, FINAL_CELLS) + (0.6 if longest > FINAL_CELLS else 0) + 4.2
    tl_w = max(0.3 * n + 1.6, 7.0)
    width = min(48.0, tl_w + 0.36 * final_w)
    height = 1.0 * (nl + 1) + 2.2
    fig, (ax, axf) = plt.subplots(1, 2, figsize=(width, height), sharey=True,
                                  gridspec_kw={"width_ratios": [tl_w, 0.36 * final_w], "wspace": 0.02})
    top = nl + 0.6
    ax.set_ylim(-0.65, top)
    ax.set_xlim(-0.7, n - 0.3)

    # lanes, offline and fenced spans
    for b in lanes:
        y = ys[b]
        ax.axhline(y, color="#999999", lw=0.8, zorder=0)
    ax.axhline(ys["controller"], color="#cccccc", lw=6, zorder=0, alpha=0.5)
    for b, s0, s1 in tl.offline:
        ax.add_patch(Rectangle((s0 - 0.5, ys[b] - 0.42), max(s1 - s0, 0.5), 0.84, facecolor="#bbbbbb", alpha=0.35,
                               edgecolor="none", zorder=0))
    for b, s0, s1 in tl.fenced:
        ax.add_patch(Rectangle((s0 - 0.5, ys[b] - 0.42), max(s1 - s0, 0.5), 0.84, facecolor="none",
                               edgecolor="#c98b2b", hatch="///", lw=0, alpha=0.45, zorder=0))

    # elections
    for i, unclean, label in tl.elections:
        ax.axvline(i, color="#c0392b" if unclean else "#888888", lw=1.6 if unclean else 0.9,
                   ls="-" if unclean else ":", zorder=1)
    for e, (b, i) in sorted(tl.epoch_leaders.items()):
        ax.annotate(f"LE{e}: {b}", (i, ys["controller"]), xytext=(0, 9), textcoords="offset points", fontsize=6.5,
                    ha="center", color="#1f5fa8", fontweight="bold")

    # fetch arcs (request sent → served by the leader → response applied)
    for arc in tl.arcs:
        if arc.lane not in ys:
            continue
        y = ys[arc.lane]
        end = arc.end if arc.end is not None else n - 0.4
        span = max(end - arc.start, 0.3)
        h = min(0.32, 0.1 + 0.03 * span)
        ts = [k / 24 for k in range(25)]
        xs = [arc.start + span * t for t in ts]
        yy = [y + 0.05 + 2 * h * t * (1 - t) for t in ts]
        style = {"delivered": "-", "dropped": "--", "in flight": ":"}[arc.outcome]
        ax.plot(xs, yy, ls=style, color="#1f5fa8", lw=0.8, alpha=0.75, zorder=2)
        if arc.served is not None and span > 0:
            t = (arc.served - arc.start) / span
            ax.plot([arc.served], [y + 0.05 + 2 * h * t * (1 - t)], "o", ms=2.5, color="#1f5fa8", zorder=3)
        if arc.outcome == "delivered":
            ax.plot([end], [y + 0.05], marker="D", ms=3.2, color="#1f5fa8", zorder=3)
        elif arc.outcome == "dropped":
            ax.plot([end], [y + 0.05], marker="x", ms=5, color="#c0392b", mew=1.5, zorder=3)

    # record cells
    stack: dict[tuple[int, int], int] = {}
    for c in tl.cells:
        if c.lane not in ys:
            continue
        k = stack.get((c.step, c.lane), 0)
        stack[(c.step, c.lane)] = k + 1
        y = ys[c.lane]
        label = "?" if c.offset is None else f"{c.offset}:{c.epoch if c.epoch is not None else '?'}"
        if c.status == "replicated":
            yb = y - 0.38 - 0.2 * k
            ax.add_patch(Rectangle((c.step - 0.42, yb), 0.84, 0.18, facecolor=epoch_color(c.epoch), alpha=0.55,
                                   edgecolor="#777777", lw=0.4, ls="--", zorder=4))
            ax.text(c.step, yb + 0.09, label, fontsize=5, ha="center", va="center", zorder=5, color="#333333")
            continue
        yb = y - 0.2 + 0.26 * k
        lost = c.status == "lost"
        ax.add_patch(Rectangle((c.step - 0.45, yb), 0.9, 0.24, facecolor="white" if lost else epoch_color(c.epoch),
                               edgecolor="#c0392b" if lost else ("#1e8449" if c.acked else "#555555"),
                               lw=1.6 if (lost or c.acked) else 0.6, ls="--" if c.acked is False else "-", zorder=4))
        ax.text(c.step, yb + 0.12, label, fontsize=6, ha="center", va="center", zorder=5,
                color="#c0392b" if lost else "black", fontweight="bold")
        if lost:
            ax.plot([c.step - 0.45, c.step + 0.45], [yb, yb + 0.24], color="#c0392b", lw=0.9, zorder=6)

    # marks: tags above their lane (several at one step share one tag), controller tags on its lane
    merged: dict[tuple[int, Any], list[Mark]] = {}
    for mk in tl.marks:
        if mk.lane in ys:
            merged.setdefault((mk.step, mk.lane), []).append(mk)
    for (i, lane), mks in merged.items():
        lead = next((m for m in mks if m.kind in ("unclean", "fault", "loss")), mks[0])
        color = _KIND_COLORS.get(lead.kind, "#333333")
        text = "\n".join(m.label for m in mks)
        if lane == "controller":
            ax.text(i, ys["controller"] - 0.1, text, fontsize=5.8, rotation=90, ha="center", va="top",
                    color=color, fontweight="bold" if lead.kind == "unclean" else "normal", zorder=5,
                    linespacing=0.95)
            continue
        ax.text(i, ys[lane] + 0.3, text, fontsize=5.8, rotation=90, ha="center", va="bottom", color=color,
                linespacing=0.95,
                fontweight="bold" if lead.kind in ("fault", "loss") else "normal", zorder=5)

    ax.set_yticks([ys[b] for b in lanes] + [ys["controller"]])
    labels = []
    for b in lanes:
        rv = state.replicas.get(b)
        extra = ""
        if rv is not None:
            role = (rv.role or "").lower()
            if not rv.hosts_replica:
                role = "no replica"
            elif role in ("", "none"):
                role = (rv.status or "inactive").replace("_", " ").lower()
            extra = "\n" + role
            if rv.leader_epoch is not None and rv.hosts_replica:
                extra += f" LE{rv.leader_epoch}"
        labels.append(f"broker {b}{extra}")
    labels.append("controller\n& clients")
    ax.set_yticklabels(labels, fontsize=7.5)
    ticks = range(0, n, 1 if n <= 30 else 2)
    ax.set_xticks(ticks)
    # Numbered from 1, as ``replicheck replay`` prints the trace and names the failing step.
    ax.set_xticklabels([str(step_number(i)) for i in ticks])
    ax.tick_params(axis="x", labelsize=6.5)
    ax.set_xlabel("trace step (numbered as replicheck replay numbers them)", fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)

    _draw_final(axf, state, lanes, ys, Rectangle, final_w)

    prop = _row_get(row, "property", "")
    targets = list(_row_get(row, "variants", []) or []) + list(_row_get(row, "sut_bugs", []) or [])
    viol = " ".join(str(_row_get(row, "violation", "")).split())
    cid = str(_row_get(row, "counterexample_id", ""))
    cid = cid if len(cid) <= 16 else cid[:16] + "…"
    head = f"{prop} — {cid} ({tl.n_steps} steps) — targets: " \
           f"{', '.join(targets) or 'correct'}"
    wrapped = textwrap.wrap(viol, width=int(width * 14)) or [""]
    fig.suptitle(head + "\n" + "\n".join(wrapped[:2]) + (" …" if len(wrapped) > 2 else ""), fontsize=8.5,
                 x=0.01, ha="left", y=0.995)
    legend = ("Cells offset:epoch, coloured by leader epoch, at the step of the Produce that wrote them (green border: "
              "acknowledged, dashed: negatively acknowledged, red struck: gone from that broker's final log); faded "
              "cells below a lane: the step the record reached that follower (its LEO passed the offset); arcs: a "
              "follower's fetch request → response (dot: served by the leader, ◆ applied — may append or "
              "truncate, ✕ dropped); ✂ / lost: the replica's LEO went down (truncation / crash); grey lines: "
              "the leader epoch changed (an election), red lines: unclean elections; LEn: b = broker b leads "
              "epoch n from that step; grey: offline; hatched: fenced.")
    legend_lines = textwrap.wrap(legend, width=int(width * 17))
    fig.text(0.01, 0.005, "\n".join(legend_lines), fontsize=6, color="#444444", va="bottom", ha="left")
    if tl.notes or state.problem:
        fig.text(0.99, 0.005, "; ".join(tl.notes + ([state.problem] if state.problem else [])), fontsize=6.5,
                 color="#c0392b", ha="right", va="bottom")
    fig.subplots_adjust(left=0.85 / width, right=0.995, top=1 - 0.62 / height,
                        bottom=(0.42 + 0.1 * len(legend_lines)) / height)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def _draw_final(axf: Any, state: StateView, lanes: list, ys: dict, Rectangle: Any, final_w: float) -> None:
    axf.set_xlim(-0.3, final_w - 0.3)
    axf.set_xticks([])
    for side in ("top", "right", "bottom"):
        axf.spines[side].set_visible(False)
    axf.text(-0.2, ys["controller"] + 0.58, "final logs (offset:epoch)", fontsize=7, va="top",
             fontweight="bold")
    committed = state.committed

    def cells(y: float, log: list, hwm: Optional[int], label: str, compare: bool, extra: str = "") -> None:
        start = max(0, len(log) - FINAL_CELLS)
        x0 = 0.0
        if start:
            axf.text(x0, y, "…", fontsize=7, va="center")
            x0 = 0.6
        for k, off in enumerate(range(start, len(log))):
            ep, val = log[off]
            diverged = compare and off < len(committed) and committed[off] != (ep, val)
            x = x0 + k
            axf.add_patch(Rectangle((x, y - 0.2), 0.94, 0.4, facecolor=epoch_color(ep),
                                    edgecolor="#c0392b" if diverged else "#555555", lw=1.6 if diverged else 0.5))
            axf.text(x + 0.47, y + 0.04, f"{off}:{ep}", fontsize=5.6, ha="center", va="center")
            if val is not None:
                axf.text(x + 0.47, y - 0.13, f"v{val}", fontsize=4.3, ha="center", va="center", color="#555555")
        if hwm is not None and hwm >= start:
            xh = x0 + hwm - start - 0.03
            axf.plot([xh, xh], [y - 0.3, y + 0.3], color="#1e8449", lw=2.2)
            axf.text(xh, y + 0.31, label, fontsize=5.5, ha="center", va="bottom", color="#1e8449", fontweight="bold")
        end = x0 + len(log) - start
        axf.text(end + 0.15, y, f"LEO {len(log)}" + (f"\n{extra}" if extra else ""), fontsize=5.5, va="center",
                 color="#c0392b" if "offline" in extra else "#555555")

    for b in lanes:
        rv = state.replicas.get(b)
        y = ys[b]
        if rv is None:
            axf.text(0, y, "(no final state)", fontsize=6, va="center", color="#999999")
            continue
        if not rv.hosts_replica:
            axf.text(0, y, f"no replica — {rv.status or ''}", fontsize=6, va="center", color="#777777")
            continue
        status = (rv.status or "").replace("_", " ").lower()
        tag = ", ".join(x for x in (status, "fenced" if rv.fenced else "") if x)
        cells(y, rv.log, rv.hwm, "HWM", True, tag)
    yc = ys["controller"]
    if committed or state.true_hwm is not None:
        cells(yc, committed, state.true_hwm, "True HWM", False)
    p = [f"leader {state.leader if state.leader is not None else 'none'}"]
    if state.leader_epoch is not None:
        p.append(f"LE {state.leader_epoch}")
    if state.partition_epoch is not None:
        p.append(f"PE {state.partition_epoch}")
    p.append(f"ISR {state.isr}")
    if state.elr or state.last_known_elr:
        p.append(f"ELR {state.elr} LKELR {state.last_known_elr}")
    text = state.problem or ("committed log; " + ", ".join(p))
    axf.text(-0.2, yc - 0.3, "\n".join(textwrap.wrap(text, width=max(int(final_w * 3.2), 18))[:3]),
             fontsize=5.8, va="top")
