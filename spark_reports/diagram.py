"""Space-time diagrams of a counterexample: one lane per broker (and one for the
controller), the trace's steps along the x-axis, each replica's log drawn as
``offset:epoch`` cells, elections, truncations and the HWM marked — the picture
a Kafka engineer draws on a whiteboard.

spark_reports may not import the model, so nothing here re-executes a trace.
The diagram is drawn from what a corpus row holds:

* ``timeline`` (corpus schema version 3, ``store.schema.TIMELINE_STEP``) —
  what each step visibly did as replay observed it: the message it delivered or
  dropped and those it sent (ids, endpoints, error codes), its outcome (writes
  appended, acknowledged, failed; records consumed; the ListOffsets answer) and
  each broker after it (status, fenced, role, leader epoch, LEO, HWM). Fetch
  arcs follow the message ids (request → served by the leader → response
  applied or dropped), elections are the steps the registration's leader epoch
  changed, truncations and losses the steps a replica's LEO went down, a record
  reached a follower at the step its LEO passed the record's offset, and
  offline and fenced spans are the steps the brokers were so
  (``spark_reports.timeline``).
* ``steps`` — the actions, for the tags naming what each step did (start,
  unfence, ISR−2, md+1, …: each action's registry entry, ``spark_reports.tags``)
  and which Produce wrote which value.
* ``final_state_json`` — the replicas' final logs, HWMs, roles and statuses,
  the controller's partition registration and the ghost history (committed
  log, acknowledged writes), read tolerantly (``spark_reports.final_state``).
  Produce(broker, value) writes a unique value, so a produced value found in a
  final log gives that write's ``offset:epoch``; a value missing from the
  producing broker's final log was truncated or lost there.

A row without a timeline (written before version 3) is drawn from its steps
and final state only, without arcs, arrivals, truncations or elections, and
the diagram says so: nothing is guessed from action names. Anything the row
does not hold is left out of the picture, never guessed.

Drawn with matplotlib (Agg, imported when a diagram is drawn).
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import Any, Optional

from .final_state import ReplicaView, StateView, decode_config, decode_state
from .timeline import Arc, Cell, Mark, Timeline, build_timeline, parse_steps, parse_timeline, step_number

__all__ = ["FINAL_CELLS", "build_timeline", "decode_config", "decode_state", "epoch_color", "parse_steps",
           "parse_timeline", "space_time_png"]

_EPOCH_COLORS = ("#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99", "#8dd3c7", "#bebada",
                 "#80b1d3", "#fccde5")
_KIND_COLORS = {"lifecycle": "#2b7a3d", "fault": "#c0392b", "metadata": "#1f5fa8", "isr": "#7b3fa0",
                "client": "#555555", "controller": "#333333", "unclean": "#c0392b", "loss": "#c0392b",
                "election": "#888888", "healing": "#2b7a3d"}
#: Cells of a final log drawn at most (its last ones; "…" before them).
FINAL_CELLS = 14
_LEGEND = ("Cells offset:epoch, coloured by leader epoch, at the step of the Produce that wrote them (green border: "
           "acknowledged, dashed: negatively acknowledged, red struck: gone from that broker's final log); faded "
           "cells below a lane: the step the record reached that follower (its LEO passed the offset); arcs: a "
           "follower's fetch request → response (dot: served by the leader, ◆ applied — may append or "
           "truncate, ✕ dropped); ✂ / lost: the replica's LEO went down (truncation / crash); grey lines: "
           "the leader epoch changed (an election), red lines: unclean elections; LEn: b = broker b leads "
           "epoch n from that step; grey: offline; hatched: fenced; green band: a healing phase (faults stop, the "
           "cluster recovers, then every liveness goal must hold).")


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


@dataclass
class _Layout:
    """Where the diagram's parts go: ``n`` steps on the time axis, the ``lanes``
    (broker ids) and each lane's y (``ys``, the controller's too), the figure's
    ``width`` and ``height`` (inches), the time axis's and the final logs'
    widths (in steps and in cells)."""

    n: int
    lanes: list
    ys: dict
    width: float
    height: float
    timeline_w: float
    final_w: float


def _layout(tl: Timeline, state: StateView) -> _Layout:
    n = max(tl.n_steps, 1)
    lanes = tl.lanes or [0]
    nl = len(lanes)
    ys: dict[Any, float] = {b: nl - 1 - k for k, b in enumerate(lanes)}
    ys["controller"] = nl + 0.15
    longest = max([len(r.log) for r in state.replicas.values()] + [len(state.committed), 1])
    final_w = min(longest, FINAL_CELLS) + (0.6 if longest > FINAL_CELLS else 0) + 4.2
    tl_w = max(0.3 * n + 1.6, 7.0)
    return _Layout(n, lanes, ys, min(48.0, tl_w + 0.36 * final_w), 1.0 * (nl + 1) + 2.2, tl_w, final_w)


def space_time_png(row: Any, dpi: int = 100) -> bytes:
    """The diagram of one counterexample row (a Row or dict with ``steps``,
    ``final_state_json``, ``config_json``, ``property``, ``signature``,
    ``violation``, ``variants``, ``sut_bugs``, ``counterexample_id``) as PNG
    bytes, ``dpi`` dots per inch."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    state = decode_state(_row_get(row, "final_state_json"))
    tl = build_timeline(parse_steps(_row_get(row, "steps", [])), parse_timeline(_row_get(row, "timeline")), state,
                        decode_config(_row_get(row, "config_json")))
    lay = _layout(tl, state)
    fig, (ax, axf) = plt.subplots(1, 2, figsize=(lay.width, lay.height), sharey=True,
                                  gridspec_kw={"width_ratios": [lay.timeline_w, 0.36 * lay.final_w],
                                               "wspace": 0.02})
    ax.set_ylim(-0.65, len(lay.lanes) + 0.6)
    ax.set_xlim(-0.7, lay.n - 0.3)
    _draw_lanes(ax, tl, lay.ys)
    _draw_healing(ax, tl)
    _draw_elections(ax, tl, lay.ys)
    for arc in tl.arcs:
        if arc.lane in lay.ys:
            _draw_arc(ax, arc, lay.ys[arc.lane], lay.n)
    _draw_cells(ax, tl, lay.ys)
    _draw_marks(ax, tl, lay.ys)
    _label_axes(ax, state, lay)
    _draw_final(axf, state, lay)
    _title(fig, row, tl.n_steps, lay.width)
    legend_lines = _legend(fig, lay.width)
    _notes(fig, tl, state)
    fig.subplots_adjust(left=0.85 / lay.width, right=0.995, top=1 - 0.62 / lay.height,
                        bottom=(0.42 + 0.1 * legend_lines) / lay.height)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


# ------------------------------------------------------------------ the time axis

def _draw_lanes(ax: Any, tl: Timeline, ys: dict) -> None:
    """A line per broker lane, the controller's band, offline (grey) and fenced
    (hatched) spans."""
    from matplotlib.patches import Rectangle
    for b in tl.lanes or [0]:
        ax.axhline(ys[b], color="#999999", lw=0.8, zorder=0)
    ax.axhline(ys["controller"], color="#cccccc", lw=6, zorder=0, alpha=0.5)
    for b, s0, s1 in tl.offline:
        ax.add_patch(Rectangle((s0 - 0.5, ys[b] - 0.42), max(s1 - s0, 0.5), 0.84, facecolor="#bbbbbb", alpha=0.35,
                               edgecolor="none", zorder=0))
    for b, s0, s1 in tl.fenced:
        ax.add_patch(Rectangle((s0 - 0.5, ys[b] - 0.42), max(s1 - s0, 0.5), 0.84, facecolor="none",
                               edgecolor="#c98b2b", hatch="///", lw=0, alpha=0.45, zorder=0))


def _draw_healing(ax: Any, tl: Timeline) -> None:
    """A green band across the lanes at each healing phase (one step of the
    trace, its schedule's actions all at once), labelled at the bottom."""
    for i in tl.healing:
        ax.axvspan(i - 0.45, i + 0.45, color=_KIND_COLORS["healing"], alpha=0.13, lw=0, zorder=0)
        ax.annotate("healing", (i, 0), xycoords=("data", "axes fraction"), xytext=(0, 2), textcoords="offset points",
                    fontsize=6, ha="center", va="bottom", color=_KIND_COLORS["healing"], fontweight="bold")


def _draw_elections(ax: Any, tl: Timeline, ys: dict) -> None:
    """A vertical line per election (red: unclean), and ``LEn: b`` where broker
    b starts leading epoch n."""
    for i, unclean, _label in tl.elections:
        ax.axvline(i, color="#c0392b" if unclean else "#888888", lw=1.6 if unclean else 0.9,
                   ls="-" if unclean else ":", zorder=1)
    for e, (b, i) in sorted(tl.epoch_leaders.items()):
        ax.annotate(f"LE{e}: {b}", (i, ys["controller"]), xytext=(0, 9), textcoords="offset points", fontsize=6.5,
                    ha="center", color="#1f5fa8", fontweight="bold")


def _draw_arc(ax: Any, arc: Arc, y: float, n: int) -> None:
    """A fetch arc over lane ``y``: request sent → served by the leader (dot) →
    response applied (◆) or dropped (✕), or still in flight at the end."""
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


def _draw_cells(ax: Any, tl: Timeline, ys: dict) -> None:
    """The record cells, stacked where several fall on one step and lane."""
    stack: dict[tuple[int, int], int] = {}
    for c in tl.cells:
        if c.lane not in ys:
            continue
        k = stack.get((c.step, c.lane), 0)
        stack[(c.step, c.lane)] = k + 1
        if c.status == "replicated":
            _draw_arrival(ax, c, ys[c.lane], k)
        else:
            _draw_write(ax, c, ys[c.lane], k)


def _cell_label(c: Cell) -> str:
    return "?" if c.offset is None else f"{c.offset}:{c.epoch if c.epoch is not None else '?'}"


def _draw_arrival(ax: Any, c: Cell, y: float, k: int) -> None:
    """A faded cell below lane ``y`` (``k``-th at its step): the record reached this follower."""
    from matplotlib.patches import Rectangle
    yb = y - 0.38 - 0.2 * k
    ax.add_patch(Rectangle((c.step - 0.42, yb), 0.84, 0.18, facecolor=epoch_color(c.epoch), alpha=0.55,
                           edgecolor="#777777", lw=0.4, ls="--", zorder=4))
    ax.text(c.step, yb + 0.09, _cell_label(c), fontsize=5, ha="center", va="center", zorder=5, color="#333333")


def _draw_write(ax: Any, c: Cell, y: float, k: int) -> None:
    """A written cell on lane ``y`` (``k``-th at its step): green border when
    acknowledged, dashed when negatively acknowledged, red and struck when lost."""
    from matplotlib.patches import Rectangle
    yb = y - 0.2 + 0.26 * k
    lost = c.status == "lost"
    ax.add_patch(Rectangle((c.step - 0.45, yb), 0.9, 0.24, facecolor="white" if lost else epoch_color(c.epoch),
                           edgecolor="#c0392b" if lost else ("#1e8449" if c.acked else "#555555"),
                           lw=1.6 if (lost or c.acked) else 0.6, ls="--" if c.acked is False else "-", zorder=4))
    ax.text(c.step, yb + 0.12, _cell_label(c), fontsize=6, ha="center", va="center", zorder=5,
            color="#c0392b" if lost else "black", fontweight="bold")
    if lost:
        ax.plot([c.step - 0.45, c.step + 0.45], [yb, yb + 0.24], color="#c0392b", lw=0.9, zorder=6)


def _draw_marks(ax: Any, tl: Timeline, ys: dict) -> None:
    """Tags above their lane (several at one step share one tag, coloured by
    the most alarming), the controller's on its lane."""
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


def _lane_label(b: Any, rv: Optional[ReplicaView]) -> str:
    """``broker b`` and its final role (or status) and leader epoch."""
    if rv is None:
        return f"broker {b}"
    role = (rv.role or "").lower()
    if not rv.hosts_replica:
        role = "no replica"
    elif role in ("", "none"):
        role = (rv.status or "inactive").replace("_", " ").lower()
    extra = "\n" + role
    if rv.leader_epoch is not None and rv.hosts_replica:
        extra += f" LE{rv.leader_epoch}"
    return f"broker {b}{extra}"


def _label_axes(ax: Any, state: StateView, lay: _Layout) -> None:
    """The lanes' names and the steps' numbers (from 1, as ``replicheck replay``
    prints the trace and names the failing step)."""
    ax.set_yticks([lay.ys[b] for b in lay.lanes] + [lay.ys["controller"]])
    labels = [_lane_label(b, state.replicas.get(b)) for b in lay.lanes]
    labels.append("controller\n& clients")
    ax.set_yticklabels(labels, fontsize=7.5)
    ticks = range(0, lay.n, 1 if lay.n <= 30 else 2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(step_number(i)) for i in ticks])
    ax.tick_params(axis="x", labelsize=6.5)
    ax.set_xlabel("trace step (numbered as replicheck replay numbers them)", fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# ---------------------------------------------------------------- the captions

def _title(fig: Any, row: Any, n_steps: int, width: float) -> None:
    """The property, the counterexample, its targets and (two lines of) its violation."""
    prop = _row_get(row, "property", "")
    targets = list(_row_get(row, "variants", []) or []) + list(_row_get(row, "sut_bugs", []) or [])
    viol = " ".join(str(_row_get(row, "violation", "")).split())
    cid = str(_row_get(row, "counterexample_id", ""))
    cid = cid if len(cid) <= 16 else cid[:16] + "…"
    head = f"{prop} — {cid} ({n_steps} steps) — targets: " \
           f"{', '.join(targets) or 'correct'}"
    wrapped = textwrap.wrap(viol, width=int(width * 14)) or [""]
    fig.suptitle(head + "\n" + "\n".join(wrapped[:2]) + (" …" if len(wrapped) > 2 else ""), fontsize=8.5,
                 x=0.01, ha="left", y=0.995)


def _legend(fig: Any, width: float) -> int:
    """The legend at the bottom; returns its number of lines."""
    legend_lines = textwrap.wrap(_LEGEND, width=int(width * 17))
    fig.text(0.01, 0.005, "\n".join(legend_lines), fontsize=6, color="#444444", va="bottom", ha="left")
    return len(legend_lines)


def _notes(fig: Any, tl: Timeline, state: StateView) -> None:
    """What is not drawn and why (bottom right, red), if anything."""
    if tl.notes or state.problem:
        fig.text(0.99, 0.005, "; ".join(tl.notes + ([state.problem] if state.problem else [])), fontsize=6.5,
                 color="#c0392b", ha="right", va="bottom")


# ------------------------------------------------------------- the final logs

def _draw_final(axf: Any, state: StateView, lay: _Layout) -> None:
    """The right-hand panel: each replica's final log, HWM and status, and the
    committed log with the partition's registration on the controller's lane."""
    axf.set_xlim(-0.3, lay.final_w - 0.3)
    axf.set_xticks([])
    for side in ("top", "right", "bottom"):
        axf.spines[side].set_visible(False)
    axf.text(-0.2, lay.ys["controller"] + 0.58, "final logs (offset:epoch)", fontsize=7, va="top",
             fontweight="bold")
    for b in lay.lanes:
        rv = state.replicas.get(b)
        y = lay.ys[b]
        if rv is None:
            axf.text(0, y, "(no final state)", fontsize=6, va="center", color="#999999")
        elif not rv.hosts_replica:
            axf.text(0, y, f"no replica — {rv.status or ''}", fontsize=6, va="center", color="#777777")
        else:
            status = (rv.status or "").replace("_", " ").lower()
            tag = ", ".join(x for x in (status, "fenced" if rv.fenced else "") if x)
            _final_log(axf, y, rv.log, rv.hwm, "HWM", state.committed, tag)
    _final_controller(axf, state, lay.ys["controller"], lay.final_w)


def _final_log(axf: Any, y: float, log: list, hwm: Optional[int], label: str, committed: Optional[list],
               extra: str = "") -> None:
    """One log's last ``FINAL_CELLS`` cells on row ``y``, its ``hwm`` marked as
    ``label``, its LEO and ``extra`` after it; a cell differing from
    ``committed`` at its offset (None: not compared) framed red."""
    from matplotlib.patches import Rectangle
    start = max(0, len(log) - FINAL_CELLS)
    x0 = 0.0
    if start:
        axf.text(x0, y, "…", fontsize=7, va="center")
        x0 = 0.6
    for k, off in enumerate(range(start, len(log))):
        ep, val = log[off]
        diverged = committed is not None and off < len(committed) and committed[off] != (ep, val)
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


def _final_controller(axf: Any, state: StateView, yc: float, final_w: float) -> None:
    """The committed log (True HWM) and the partition's registration, or why
    there is no final state."""
    if state.committed or state.true_hwm is not None:
        _final_log(axf, yc, state.committed, state.true_hwm, "True HWM", None)
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
