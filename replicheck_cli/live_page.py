"""The live view's page (``replicheck_cli.live``), rendered from
``templates/live.html.j2`` and its charts from ``templates/chart.svg.j2``
(Jinja2, ``spark_reports.templating``: every text HTML-escaped): this module
turns a snapshot of the campaign (``LivePage``) into the templates' values.

Times are seconds since the search's start, shown as ``m:ss``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Optional, Sequence

import attrs

from spark_reports.templating import environment

if TYPE_CHECKING:
    from campaign.runner import CampaignResult
    from campaign.scheduler import Progress, TargetResult

#: The browser reloads the page this often (seconds).
REFRESH_S = 2
#: The recent rates are measured over at least this many seconds of snapshots
#: (a unit reports a run's steps when the run ends: up to 20 s at a time).
RATE_WINDOW_S = 10.0
#: At most this many diagrams on the page (each ~100 KB of PNG); further finds are listed.
MAX_DIAGRAMS = 60
#: Points per chart line at most (older snapshots are thinned out).
CHART_POINTS = 240

WAITING, SEARCHING = "waiting", "searching"

_ENV = environment("replicheck_cli")


def _clock(seconds: Optional[float]) -> str:
    """``m:ss`` of a number of seconds (``-`` for None)."""
    if seconds is None:
        return "-"
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


_ENV.filters.update(clock=_clock)


@attrs.frozen(kw_only=True)
class LiveCampaign:
    """What the page says of the campaign itself: its ``targets`` (labels, in
    its order), ``run_id``, whole budget ``budget_s`` and the search's part of
    it ``search_s`` (default: the budget), ``seed`` and ``workers`` (None: not
    shown)."""

    targets: tuple[str, ...] = attrs.field(converter=tuple)
    run_id: Optional[str] = None
    budget_s: float = attrs.field(converter=float)
    search_s: Optional[float] = None
    seed: Optional[int] = None
    workers: Optional[int] = None

    @property
    def search_budget_s(self) -> float:
        return float(self.budget_s if self.search_s is None else self.search_s)


@attrs.frozen(kw_only=True)
class LivePage:
    """A snapshot of what the page shows. ``progress``: the last snapshot
    (None: none yet); ``result``: the final result (None: running);
    ``abandoned``: why the campaign ended without results. ``found_at``: label
    -> seconds when its verdict became final; ``samples``: (seconds, examples,
    steps) per snapshot; ``coverage``: (seconds, distinct events reached);
    ``known_events``: how many events there are (None: unknown). ``finds``:
    (target, its counterexample ids) in the order found; ``rows``: id -> its
    corpus row; ``diagrams``: id -> (drawn, base64 PNG or why not)."""

    campaign: LiveCampaign
    corpus: Optional[str]
    progress: Optional["Progress"]
    result: Optional["CampaignResult"]
    abandoned: Optional[str]
    found_at: dict[str, float]
    samples: list[tuple[float, int, int]]
    coverage: list[tuple[float, float]]
    known_events: Optional[int]
    finds: list[tuple["TargetResult", list[str]]]
    rows: dict[str, dict[str, Any]]
    diagrams: dict[str, tuple[bool, str]]

    @property
    def final(self) -> bool:
        return self.result is not None or self.abandoned is not None


def target_states(labels: Sequence[str], progress: Optional["Progress"]) -> list[tuple[str, str, Any]]:
    """(label, state, TargetResult or None) per target, in the campaign's order,
    during a campaign: a finished target's verdict (``TargetResult.verdict``);
    of the others, the last ``progress.waiting`` (the scheduler starts targets
    in the campaign's order, so those not started are the last) ``waiting``,
    the rest ``searching``. No progress yet: every target ``waiting``."""
    if progress is None:
        return [(label, WAITING, None) for label in labels]
    done = {t.target.label: t for t in progress.finished}
    open_labels = [label for label in labels if label not in done]
    waiting = set(open_labels[max(0, len(open_labels) - progress.waiting):]) if progress.waiting > 0 else set()
    return [(label, done[label].verdict, done[label]) if label in done else
            (label, WAITING if label in waiting else SEARCHING, None) for label in labels]


def svg_chart(points: Sequence[tuple[float, float]], title: str, y_label: str, x_max: float,
              y_max: Optional[float] = None, step: bool = False, width: int = 460, height: int = 170) -> str:
    """A small line chart as inline SVG: ``points`` (x seconds, y) in x order,
    x from 0 to ``x_max`` seconds (labelled m:ss), y from 0 to the largest of
    ``y_max`` (drawn as a dashed line; None: none) and the points' y; ``step``:
    drawn as a staircase (a running count). No points: the axes and "no data
    yet". ``width``, ``height``: pixels."""
    left, right, top, bottom = 46, 10, 22, 26
    pw, ph = width - left - right, height - top - bottom
    x_max = max(x_max, max((x for x, _ in points), default=0.0), 1.0)
    top_y = max(y_max if y_max is not None else 0.0, max((y for _, y in points), default=0.0), 1.0)

    def px(x: float) -> float:
        return left + pw * min(max(x, 0.0), x_max) / x_max

    def py(y: float) -> float:
        return top + ph * (1 - min(max(y, 0.0), top_y) / top_y)

    coords: list[str] = []
    prev_y: Optional[float] = None
    for x, y in points:
        if step and prev_y is not None:
            coords.append(f"{px(x):.1f},{py(prev_y):.1f}")
        coords.append(f"{px(x):.1f},{py(y):.1f}")
        prev_y = y
    if step and prev_y is not None:
        coords.append(f"{px(x_max):.1f},{py(prev_y):.1f}")
    return _ENV.get_template("chart.svg.j2").render(
        title=title, y_label=y_label, width=width, height=height, left=left, top=top, pw=pw, ph=ph, x_max=x_max,
        top_label=f"{top_y:,.0f}" if top_y >= 10 or float(top_y).is_integer() else f"{top_y:.1f}",
        ref_y=None if y_max is None else f"{py(y_max):.1f}", coords=" ".join(coords))


def thin(points: list[tuple[float, float]], n: int = CHART_POINTS) -> list[tuple[float, float]]:
    """At most ``n`` of ``points``, evenly picked, the last kept."""
    if len(points) <= n:
        return points
    k = len(points) / n
    return [points[int(i * k)] for i in range(n)] + [points[-1]]


def rates(samples: Sequence[tuple[float, int, int]]) -> tuple[Optional[float], Optional[float]]:
    """Examples/s and checked steps/s of ``samples`` ((elapsed s, examples,
    steps) per snapshot, in order) over their last ``RATE_WINDOW_S`` seconds
    (over all of them when they span less); (None, None) before two snapshots."""
    if len(samples) < 2:
        return None, None
    last = samples[-1]
    first = next((x for x in reversed(samples[:-1]) if last[0] - x[0] >= RATE_WINDOW_S), samples[0])
    span = last[0] - first[0]
    if span <= 0:
        return None, None
    return (last[1] - first[1]) / span, (last[2] - first[2]) / span


def average_rates(samples: Sequence[tuple[float, int, int]]) -> tuple[Optional[float], Optional[float]]:
    """Examples/s and checked steps/s of ``samples`` (as for ``rates``) since the
    search's start (the last snapshot's totals over its elapsed time); (None,
    None) without a snapshot past 0 s."""
    if not samples or samples[-1][0] <= 0:
        return None, None
    last = samples[-1]
    return last[1] / last[0], last[2] / last[0]


# ------------------------------------------------------------------ the page

def render_page(page: LivePage) -> str:
    """The page's HTML text."""
    from .verdicts import counts_line, final_line
    status, css, states, elapsed = _status(page)
    result = page.result
    return _ENV.get_template("live.html.j2").render(
        final=page.final, status=status, css=css, refresh_s=REFRESH_S,
        now=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        summary=_summary(page, elapsed), abandoned=page.abandoned,
        final_line=None if result is None else final_line(result),
        counts_line=None if result is None else counts_line(result),
        targets=[_target_row(label, state, t, page.found_at) for label, state, t in states],
        charts=_charts(page, elapsed), finds=_finds(page), max_diagrams=MAX_DIAGRAMS)


def _status(page: LivePage) -> tuple[str, str, list[tuple[str, str, Any]], float]:
    """(status word, its CSS class, the targets' states, the search's elapsed seconds)."""
    result = page.result
    if result is not None:
        status = "interrupted" if result.interrupted else "finished"
        css = "interrupted" if result.interrupted else ("finished" if result.ok else "failed")
        return status, css, [(t.target.label, t.verdict, t) for t in result.targets], result.elapsed_s
    states = target_states(page.campaign.targets, page.progress)
    elapsed = page.progress.elapsed_s if page.progress is not None else 0.0
    if page.abandoned is not None:
        return "ended", "failed", states, elapsed
    return "running", "running", states, elapsed


def _summary(page: LivePage, elapsed: float) -> list[tuple[str, str]]:
    """The summary table's (what, value) rows."""
    c, progress, result = page.campaign, page.progress, page.result
    rows = [("budget", f"{_clock(c.budget_s)} (search {_clock(c.search_budget_s)})"),
            ("search elapsed", f"{_clock(elapsed)} of {_clock(c.search_budget_s)}")]
    rows += [(k, str(v)) for k, v in (("seed", c.seed), ("workers", c.workers), ("run id", c.run_id),
                                      ("corpus", page.corpus)) if v is not None]
    if result is not None:
        tally = result.targets
        rows += [("targets", str(len(tally))), ("examples", f"{sum(t.examples for t in tally):,}"),
                 ("checked steps", f"{sum(t.steps for t in tally):,}"), ("runs", f"{sum(t.runs for t in tally):,}")]
    elif progress is not None:
        rows += [("targets", f"{len(progress.finished)} of {progress.targets} done, {progress.searching} "
                             f"searching, {progress.waiting} waiting"),
                 ("examples", f"{progress.examples:,}"), ("checked steps", f"{progress.steps:,}"),
                 ("runs", f"{progress.runs:,}"), ("targets with a counterexample", str(progress.finds))]
    else:
        rows.append(("targets", f"{len(c.targets)}: starting the workers"))
    return rows + _rate_rows(page.samples, recent=result is None)


def _rate_rows(samples: Sequence[tuple[float, int, int]], recent: bool) -> list[tuple[str, str]]:
    """Examples/s and checked steps/s since the start, and (``recent``: while
    running) over the last ``RATE_WINDOW_S`` seconds; none before a snapshot."""
    ex_rate, st_rate = rates(samples)
    ex_avg, st_avg = average_rates(samples)
    if ex_avg is None:
        return []
    recent = recent and ex_rate is not None
    return [("examples/s", (f"{ex_rate:,.1f} (last {RATE_WINDOW_S:g} s), " if recent else "")
             + f"{ex_avg:,.1f} since the start"),
            ("checked steps/s", (f"{st_rate:,.0f} (last {RATE_WINDOW_S:g} s), " if recent else "")
             + f"{st_avg:,.0f} since the start")]


def _target_row(label: str, state: str, t: Any, found_at: dict[str, float]) -> dict[str, str]:
    """A target's row: its state as shown (a find of the correct target FAILED
    the campaign) and CSS class, what caught it, the time to its first failure,
    when its verdict became final, why."""
    row = {"label": label, "shown": state, "caught": "", "first": "", "when": "", "why": ""}
    if t is not None:
        row["caught"] = t.found or ""
        if t.first_failure_s is not None:
            row["first"] = f"{t.first_failure_s:.1f} s" + (
                f", {t.first_failure_examples:,} examples" if t.first_failure_examples is not None else "")
        if label in found_at and state not in (SEARCHING, WAITING):
            row["when"] = _clock(found_at[label])
        row["why"] = t.why
        if state == "found" and t.target.runs_whole_share:
            row["shown"] = "found (FAILED: a real counterexample)"
    row["css"] = "s-failed" if row["shown"] != state else "s-" + state.replace(" ", "-")
    return row


def _charts(page: LivePage, elapsed: float) -> tuple[str, str]:
    """The coverage chart (distinct events reached; dashed: how many there are)
    and the checked-steps chart, as inline SVG."""
    known = page.known_events
    x_max = max(page.campaign.search_budget_s, elapsed)
    coverage = svg_chart(thin(page.coverage),
                         "protocol events reached" + (f" (dashed: the {known} known)" if known else ""),
                         "search time", x_max, y_max=float(known) if known else None, step=True)
    steps = svg_chart(thin([(x[0], float(x[2])) for x in page.samples]), "checked steps so far (slope: steps/s)",
                      "search time", x_max)
    return coverage, steps


def _finds(page: LivePage) -> list[dict[str, Any]]:
    """Per target with counterexamples, its heading and a figure per id: its
    caption, replay command and diagram (``body``: ``too many``, ``late``,
    ``missing``, ``drawing``, ``drawn`` or ``failed``; ``png`` or ``why``)."""
    corpus = page.corpus if page.corpus is not None else "CORPUS"
    out, shown = [], 0
    for t, ids in page.finds:
        figures = []
        for ident in ids:
            shown += 1
            row = page.rows.get(ident)
            drawn = page.diagrams.get(ident)
            figures.append({"id": ident, "replay": f"replicheck replay {corpus} --id {ident}",
                            "caption": ident + (f" ({row.get('step_count')} steps): {row.get('violation')}"
                                                if row else ""),
                            "body": _figure_body(shown, row, drawn, page.final),
                            "diagram": drawn[1] if drawn else None})
        out.append({"label": t.target.label, "heading": t.found or t.verdict, "figures": figures})
    return out


def _figure_body(shown: int, row: Optional[dict], drawn: Optional[tuple[bool, str]], final: bool) -> str:
    if shown > MAX_DIAGRAMS:
        return "too many"
    if drawn is None:
        return ("late" if row else "missing") if final else "drawing"
    return "drawn" if drawn[0] else "failed"
