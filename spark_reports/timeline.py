"""Everything a space-time diagram draws on its time axis, from a corpus row
(``spark_reports.diagram``'s module doc): the steps' tags and writes (from the
steps, ``spark_reports.tags``) and, from the recorded timeline, fetch arcs,
message and outcome tags, elections, truncations, arrivals, offline and
fenced spans."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from .final_state import StateView
from .lenient import as_int
from .tags import CONTROLLER, TAGS, StepTag


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
        idx = as_int(d.get("idx"))
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
    """One entry of a row's ``timeline`` column (``store.schema.TIMELINE_STEP``)."""

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
            if as_int(b.get("broker")) is not None:
                brokers[as_int(b["broker"])] = b
        leader = as_int(d.get("leader"))
        out.append(Moment(as_int(d.get("idx")) or 0, as_int(d.get("received")),
                          [_as_dict(m) for m in d.get("sent") or []], outcome if isinstance(outcome, dict) else {},
                          None if leader is None or leader < 0 else leader, as_int(d.get("leader_epoch")), brokers))
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
    healing: list[int] = field(default_factory=list)  # the steps that were healing phases
    recorded: bool = True     # drawn from the row's timeline (False: from its steps alone)
    notes: list[str] = field(default_factory=list)

    def mark(self, step: int, lane: Any, label: str, kind: str) -> None:
        """Tag ``step`` on ``lane`` (none when the lane is unknown: None)."""
        if lane is not None:
            self.marks.append(Mark(step, lane, label, kind))


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
    lanes = list(config.get("brokers") or [])
    for b in list(sorted(state.replicas)) + [b for m in moments or [] for b in m.brokers]:
        if b not in lanes:
            lanes.append(b)
    tl = Timeline(len(steps), lanes, recorded=moments is not None)
    assignment = config.get("assignment") or []
    if assignment:
        tl.epoch_leaders[1] = (assignment[0], 0)
    produced: dict[int, tuple[int, int]] = {}   # value -> (step, broker)
    for i, s in enumerate(steps):
        tag = TAGS.get(s.action)
        if tag is None:
            continue   # an action this reader does not know (a newer model's): not tagged
        if tag.heals:
            tl.healing.append(i)
        if tag.writes:
            _write(tl, produced, i, s, tag)
        elif tag.template is not None and not tag.from_outcome:
            label = tag.label(s.args)
            if tag.unclean:
                tl.elections.append((i, True, label))
            tl.mark(i, tag.lane(s.args), label, tag.kind)
    if moments is None:
        _cells_from_final_state(tl, produced, state, {})
        tl.notes.append("no timeline in this row (written before corpus schema version 3): "
                        "fetch arcs, arrivals, truncations and elections are not drawn")
        return tl
    _Recorded(tl, steps).read(moments)
    arrivals = _arrivals(moments, state)
    _cells_from_final_state(tl, produced, state, arrivals, moments)
    return tl


def _write(tl: Timeline, produced: dict[int, tuple[int, int]], i: int, s: Step, tag: StepTag) -> None:
    """Step ``i`` (``s``) writes its value on its broker: placed later from the
    final logs (``produced``), or a cell without offset when it has no value."""
    broker = tag.lane(s.args)
    if broker is None or broker == CONTROLLER:
        return
    value = as_int(s.args.get("value"))
    if value is not None:
        produced[value] = (i, broker)
    else:
        tl.cells.append(Cell(i, broker, None, None, None, "kept"))


class _Recorded:
    """One pass over a row's recorded timeline, adding to its ``Timeline`` the
    fetch arcs, the tags of the messages delivered and of the clients' answers,
    elections, truncations and the offline and fenced spans."""

    def __init__(self, tl: Timeline, steps: Sequence[Step]) -> None:
        self.tl, self.steps = tl, steps
        self.arcs: dict[int, Arc] = {}        # message id -> the fetch it belongs to
        self.messages: dict[int, dict] = {}   # message id -> the sent entry
        self.epoch = min(tl.epoch_leaders, default=None)   # the initial leader epoch

    def read(self, moments: Sequence[Moment]) -> None:
        prev: Optional[Moment] = None
        for m in moments:
            step = self.steps[m.idx] if m.idx < len(self.steps) else None
            tag = TAGS.get(step.action) if step is not None else None
            got = self.messages.pop(m.received, None) if m.received is not None else None
            if got is not None:
                self._delivered(m.idx, got, tag)
            self._sent(m, got)
            self._election(m)
            self._truncations(m, prev)
            self._answers(m, step, tag)
            prev = m
        n = self.tl.n_steps
        self.tl.offline = _spans(list(moments), self.tl.lanes, n,
                                 lambda bm: str(bm.get("status", "")).startswith("OFFLINE"))
        self.tl.fenced = _spans(list(moments), self.tl.lanes, n, lambda bm: bm.get("fenced"))

    def _delivered(self, i: int, got: dict, tag: Optional[StepTag]) -> None:
        """Step ``i`` took the message ``got`` off the network: delivered or dropped."""
        arc = self.arcs.get(got.get("id"))
        if tag is not None and tag.drops:
            if arc is not None:
                arc.end, arc.outcome = i, "dropped"
            else:
                self.tl.mark(i, got.get("src") if got.get("src") is not None else got.get("dst"), "✕ drop", "fault")
        elif got.get("type") == "FetchResponse" and arc is not None:
            arc.end, arc.outcome = i, "delivered"
        elif got.get("type") == "AlterPartitionRequest":
            self.tl.mark(i, CONTROLLER, f"AlterPartition from {got.get('src')}", "controller")
        elif got.get("type") == "AlterPartitionResponse":
            err = got.get("error")
            self.tl.mark(i, got.get("dst"), "AP resp" + (f" {err}" if err else ""), "isr")

    def _sent(self, m: Moment, got: Optional[dict]) -> None:
        """The messages step ``m`` sent: a fetch request starts an arc, the
        leader's response to it marks where it was served."""
        for msg in m.sent:
            mid = as_int(msg.get("id"))
            if mid is None:
                continue
            self.messages[mid] = msg
            if msg.get("type") == "FetchRequest" and as_int(msg.get("src")) is not None:
                self.arcs[mid] = Arc(as_int(msg["src"]), m.idx)
                self.tl.arcs.append(self.arcs[mid])
            elif msg.get("type") == "FetchResponse" and got is not None and got.get("id") in self.arcs:
                self.arcs[mid] = self.arcs[got["id"]]
                self.arcs[mid].served = m.idx

    def _election(self, m: Moment) -> None:
        """An election: the registration's leader epoch moved at ``m``."""
        if m.leader_epoch is None or m.leader_epoch == self.epoch:
            return
        if not any(e[0] == m.idx for e in self.tl.elections):
            self.tl.elections.append((m.idx, False, f"LE{m.leader_epoch}"))
        if m.leader is not None and m.leader_epoch not in self.tl.epoch_leaders:
            self.tl.epoch_leaders[m.leader_epoch] = (m.leader, m.idx)
        self.epoch = m.leader_epoch

    def _truncations(self, m: Moment, prev: Optional[Moment]) -> None:
        """Truncations and losses: a replica's LEO went down at ``m``."""
        for b, bm in m.brokers.items():
            was = prev.brokers.get(b, {}) if prev is not None else {}
            leo, before = as_int(bm.get("leo")), as_int(was.get("leo"))
            if leo is not None and before is not None and leo < before:
                crashed = str(bm.get("status", "")).startswith("OFFLINE")
                self.tl.mark(m.idx, b, f"{'lost' if crashed else '✂'} LEO {before}→{leo}", "loss")

    def _answers(self, m: Moment, step: Optional[Step], tag: Optional[StepTag]) -> None:
        """What the clients were told at ``m``: writes acknowledged, and the
        answer of a read whose tag shows it (``StepTag.from_outcome``)."""
        acks = [f"ack v{v}@{o}" for v, o in m.outcome.get("acknowledged") or [] if v is not None]
        if acks:
            self.tl.mark(m.idx, CONTROLLER, ", ".join(acks), "client")
        if step is not None and tag is not None and tag.from_outcome:
            self.tl.mark(m.idx, tag.lane(step.args), tag.label(step.args, m.outcome), tag.kind)


def _arrivals(moments: Sequence[Moment], state: StateView) -> dict[tuple[int, int], int]:
    """(broker, offset) -> the step the record now at that offset of the broker's
    final log arrived: the last step after which the broker's LEO passed the
    offset."""
    out: dict[tuple[int, int], int] = {}
    for b, rv in state.replicas.items():
        for off in range(len(rv.log)):
            below = True
            for m in moments:
                leo = as_int((m.brokers.get(b) or {}).get("leo"))
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

