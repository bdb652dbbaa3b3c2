"""Matplotlib (Agg) plots of the collected analyses, as PNG bytes."""

from __future__ import annotations

import io
import math
from typing import Sequence


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _png(fig, dpi: int = 100) -> bytes:
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _empty(message: str) -> bytes:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=10, color="#777777")
    return _png(fig)


def shrunk_length_plot(rows: Sequence, limit: int = 40) -> bytes:
    """Horizontal box plots of shrunk step counts per (property, target) from the
    ``shrunk_length_distribution`` rows (whiskers at min / max)."""
    rows = sorted(rows, key=lambda r: -r["count"])[:limit]
    if not rows:
        return _empty("no counterexamples")
    rows = sorted(rows, key=lambda r: (r["property"], r["target"]), reverse=True)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.28 * len(rows)))
    stats = [{"label": f"{r['property']} · {r['target']} (n={r['count']:,})", "whislo": r["min"], "q1": r["p25"],
              "med": r["median"], "q3": r["p75"], "whishi": r["max"], "mean": r["mean"], "fliers": []}
             for r in rows]
    ax.bxp(stats, orientation="horizontal", showmeans=True, patch_artist=True,
           boxprops={"facecolor": "#a6cee3", "edgecolor": "#1f5fa8"},
           meanprops={"marker": "D", "markersize": 3.5, "markerfacecolor": "#c0392b", "markeredgecolor": "#c0392b"})
    ax.set_xlabel("counterexample length (steps, reduced when the campaign reduced it); box p25–p75, line median, ◆ mean, whiskers min–max")
    ax.tick_params(axis="y", labelsize=7.5)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def time_to_failure_plot(rows: Sequence) -> bytes:
    """Median time to first failure per target (log scale), annotated with the
    kill rate (failed runs / runs); targets never caught are listed as survived."""
    if not rows:
        return _empty("no runs and no counterexamples")
    rows = sorted(rows, key=lambda r: (r["median_time_to_failure_s"] is None, -(r["median_time_to_failure_s"] or 0),
                                       r["target"]), reverse=True)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.3 * len(rows)))
    ys = list(range(len(rows)))
    vals = [r["median_time_to_failure_s"] for r in rows]
    positive = [v for v in vals if v is not None and v > 0]
    floor = min(positive) / 2 if positive else 0.1
    colors = {"variant": "#1f77b4", "bug": "#ff7f0e", "correct": "#c0392b", "profile": "#8e44ad",
              "implementation": "#16a085"}
    ax.barh(ys, [v if v is not None and v > 0 else 0 for v in vals], left=0,
            color=[colors.get(r["target_kind"], "#777777") for r in rows])
    for y, r, v in zip(ys, rows, vals):
        rate = r["kill_rate"]
        txt = (f"{v:,.1f}s" if v is not None else "survived") + \
              (f"  kill rate {rate:.0%} of {r['runs']:,} runs" if rate is not None else "  (no runs)") + \
              (f", {r['failures']:,} failures" if r["failures"] else "")
        ax.text(max(v or 0, floor) * 1.05, y, txt, va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['target']} ({r['target_kind']})" for r in rows], fontsize=7.5)
    if positive:
        ax.set_xscale("log")
        ax.set_xlim(floor, max(positive) * 30)
    ax.set_xlabel("median time to first failure (s, log scale)")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def coverage_plot(rows: Sequence) -> bytes:
    """Share of runs reaching each protocol coverage event; never reached in red."""
    if not rows:
        return _empty("no runs")
    rows = sorted(rows, key=lambda r: ((r["share_of_runs"] or 0), r["event"]))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.26 * len(rows)))
    ys = list(range(len(rows)))
    shares = [r["share_of_runs"] or 0.0 for r in rows]
    ax.barh(ys, shares, color=["#c0392b" if r["runs_reaching"] == 0 else "#2b7a3d" for r in rows])
    for y, r, v in zip(ys, rows, shares):
        ax.text(v + 0.01, y, f"{r['runs_reaching']:,} runs, {r['total']:,}×" if r["runs_reaching"] else "never reached",
                va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([r["event"] for r in rows], fontsize=7.5)
    ax.set_xlim(0, 1.3)
    ax.set_xlabel("share of runs reaching the event")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def kill_matrix_plot(rows: Sequence, targets: Sequence[str]) -> bytes:
    """Heat map of the wide kill matrix (log colour scale)."""
    if not rows or not targets:
        return _empty("no counterexamples")
    plt = _plt()
    props = [r["property"] for r in rows]
    data = [[r[t] for t in targets] for r in rows]
    fig, ax = plt.subplots(figsize=(1.6 + 0.45 * len(targets), 1.2 + 0.32 * len(props)))
    scaled = [[math.log10(1 + v) for v in row] for row in data]
    top = max((x for row in scaled for x in row), default=1.0) or 1.0
    ax.imshow(scaled, cmap="Reds", aspect="auto", vmin=0, vmax=top)
    for i, row in enumerate(data):
        for j, v in enumerate(row):
            if v:
                ax.text(j, i, f"{v:,}", ha="center", va="center", fontsize=6.5,
                        color="white" if scaled[i][j] > 0.6 * top else "black")
    ax.set_xticks(range(len(targets)))
    ax.set_xticklabels(targets, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(props)))
    ax.set_yticklabels(props, fontsize=7.5)
    return _png(fig)
