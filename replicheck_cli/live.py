"""The campaign's live view: ``live.html`` in the report folder, rewritten while a
campaign runs and refreshing itself in the browser every ``REFRESH_S`` seconds.

It shows the budget and the search's elapsed time; each target's state
(``searching``, ``waiting`` to be started, or its verdict once final: ``found``,
``not found``, ``clean``, ``not run``, ``error``, ``stopped``) with the
properties that caught it, the worker seconds and examples to its first failure
and when in the search it was found; examples and checked steps per second
(between snapshots ``RATE_WINDOW_S`` apart, and since the start); two small
inline SVG charts, protocol coverage (the distinct ``harness.coverage`` events
reached so far, from the corpus ``runs`` rows, which the units write within
``harness.corpus.FLUSH_EVERY_S`` seconds of each run: the runner's snapshots
carry no coverage) and the checked steps so far; and every find's space-time
diagram (``spark_reports.diagram``, drawn with matplotlib from the
counterexample's corpus row, no Spark), each drawn once. The page is
self-contained (CSS, charts and diagrams inline; no external URL), every text
HTML-escaped, and written atomically (a temp file, then ``os.replace``), so a
browser never reads half a page. ``finish`` writes the final page, which no
longer refreshes.

Only this campaign's corpus files are read (their names carry its run id), and
each file once: the corpus of many campaigns is not re-read every few seconds.
A page that cannot be written (or drawn) never stops the campaign: the problem
is printed once and the view keeps trying.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, TextIO

if TYPE_CHECKING:
    from harness.runner import CampaignResult
    from harness.scheduler import Progress, TargetResult

#: The page's name in the report folder.
LIVE_FILE = "live.html"
#: The browser reloads the page this often (seconds).
REFRESH_S = 2
#: The page is rewritten at most this often (seconds).
WRITE_EVERY_S = 2.0
#: The corpus's ``runs`` rows (coverage) are looked for at most this often
#: (seconds): the units write them every 5 s.
COVERAGE_EVERY_S = 5.0
#: The recent rates are measured over at least this many seconds of snapshots
#: (a unit reports a run's steps when the run ends: up to 20 s at a time).
RATE_WINDOW_S = 10.0
#: At most this many diagrams on the page (each ~100 KB of PNG); further finds are listed.
MAX_DIAGRAMS = 60
#: Seconds ``finish`` may spend drawing the diagrams not drawn yet.
FINISH_DIAGRAMS_S = 5.0
#: Points per chart line at most (older snapshots are thinned out).
CHART_POINTS = 240

WAITING, SEARCHING = "waiting", "searching"
#: The columns of a counterexample row the diagram and its caption need.
_ROW_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                "config_json", "steps", "step_count", "final_state_json", "timeline", "run_id")
_RUN_COLUMNS = ("run_id", "started_at", "duration_s", "event_counts")


def _clock(seconds: Optional[float]) -> str:
    """``m:ss`` of a number of seconds (``-`` for None)."""
    if seconds is None:
        return "-"
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _e(value: Any) -> str:
    """``value`` as HTML-escaped text (quotes included: safe in attributes too)."""
    return html.escape("" if value is None else str(value), quote=True)


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
    yet"."""
    left, right, top, bottom = 46, 10, 22, 26
    pw, ph = width - left - right, height - top - bottom
    x_max = max(x_max, max((x for x, _ in points), default=0.0), 1.0)
    top_y = max(y_max if y_max is not None else 0.0, max((y for _, y in points), default=0.0), 1.0)

    def px(x: float) -> float:
        return left + pw * min(max(x, 0.0), x_max) / x_max

    def py(y: float) -> float:
        return top + ph * (1 - min(max(y, 0.0), top_y) / top_y)

    def num(v: float) -> str:
        return f"{v:,.0f}" if v >= 10 or float(v).is_integer() else f"{v:.1f}"

    out = [f'<svg class="chart" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
           f'<text x="{left}" y="14" class="ct">{_e(title)}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" class="ax"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" class="ax"/>',
           f'<text x="{left - 4}" y="{top + 4}" class="tk" text-anchor="end">{_e(num(top_y))}</text>',
           f'<text x="{left - 4}" y="{top + ph}" class="tk" text-anchor="end">0</text>',
           f'<text x="{left}" y="{height - 8}" class="tk">0:00</text>',
           f'<text x="{left + pw}" y="{height - 8}" class="tk" text-anchor="end">{_e(_clock(x_max))}</text>',
           f'<text x="{left + pw / 2}" y="{height - 8}" class="tk" text-anchor="middle">{_e(y_label)}</text>']
    if y_max is not None:
        out.append(f'<line x1="{left}" y1="{py(y_max):.1f}" x2="{left + pw}" y2="{py(y_max):.1f}" class="ref"/>')
    if not points:
        out.append(f'<text x="{left + pw / 2}" y="{top + ph / 2}" class="tk" text-anchor="middle">no data yet</text>')
    else:
        coords: list[str] = []
        prev_y: Optional[float] = None
        for x, y in points:
            if step and prev_y is not None:
                coords.append(f"{px(x):.1f},{py(prev_y):.1f}")
            coords.append(f"{px(x):.1f},{py(y):.1f}")
            prev_y = y
        if step and prev_y is not None:
            coords.append(f"{px(x_max):.1f},{py(prev_y):.1f}")
        out.append(f'<polyline points="{" ".join(coords)}" class="ln"/>')
    out.append("</svg>")
    return "".join(out)


def _thin(points: list[tuple[float, float]], n: int = CHART_POINTS) -> list[tuple[float, float]]:
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


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.2em 2em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}
.status{display:inline-block;padding:.15em .6em;border-radius:.3em;font-weight:bold;color:#fff}
.status.running{background:#1f5fa8}.status.finished{background:#2b7a3d}.status.failed{background:#c0392b}
.status.interrupted{background:#c98b2b}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.num{text-align:right}
.state{font-weight:bold}.s-searching{color:#1f5fa8}.s-waiting{color:#888}.s-found{color:#2b7a3d}
.s-clean{color:#2b7a3d}.s-not-found,.s-not-run,.s-error,.s-stopped,.s-failed{color:#c0392b}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{border:1px solid #eee;background:#fcfcfc}
.chart .ct{font-size:12px;font-weight:bold}.chart .tk{font-size:10px;fill:#555}
.chart .ax{stroke:#888;stroke-width:1}.chart .ln{fill:none;stroke:#1f5fa8;stroke-width:1.6}
.chart .ref{stroke:#2b7a3d;stroke-dasharray:4 3;stroke-width:1}
figure{margin:.6em 0 1.2em}figcaption{font-size:12px;color:#444}img.diagram{max-width:100%;border:1px solid #eee}
.small{font-size:12px;color:#555}.pending{color:#888;font-style:italic}.problem{color:#c0392b}
code{background:#f4f4f4;padding:0 .2em}
"""


def _corpus_location(corpus_dir: str | os.PathLike) -> Any:
    """The corpus as ``harness.corpus_fs.location`` gives it (a folder path, or a
    URI pyarrow opens); a URI it cannot open (the campaign refused it already)
    stays a path, which reads as no files."""
    from harness.corpus_fs import CorpusLocationError, location
    try:
        return location(corpus_dir)
    except CorpusLocationError:
        return Path(corpus_dir)


class LiveView:
    """``live.html`` in ``report_dir`` for the campaign ``run_id`` writing to
    ``corpus_dir``: ``start`` writes the first page (``running``), ``update``
    takes each ``harness.scheduler.Progress`` snapshot, ``finish`` the
    ``CampaignResult`` (the final page, no refresh).

    ``targets``: the campaign's target labels, in its order. ``budget_s``: the
    whole budget (seconds), ``search_s``: the search's part of it (default the
    budget); ``seed``, ``workers``: shown. ``background`` (default): the page is
    written, and diagrams drawn, by a daemon thread, so the runner's loop is
    never held up by a diagram; False: ``update`` writes the page itself when
    ``interval_s`` seconds have passed since the last write (for tests).
    Problems (the page cannot be written, a diagram fails) go to ``stream``
    (stderr) once; no method raises an ``Exception`` (KeyboardInterrupt passes)."""

    def __init__(self, report_dir: str | os.PathLike, corpus_dir: Optional[str | os.PathLike], *,
                 targets: Sequence[str], run_id: Optional[str] = None, budget_s: float,
                 search_s: Optional[float] = None, seed: Optional[int] = None, workers: Optional[int] = None,
                 interval_s: float = WRITE_EVERY_S, background: bool = True, stream: Optional[TextIO] = None) -> None:
        self.path = Path(report_dir) / LIVE_FILE
        self.corpus_dir = None if corpus_dir is None else _corpus_location(corpus_dir)
        self.labels = list(targets)
        self.run_id = run_id
        self.budget_s = float(budget_s)
        self.search_s = float(budget_s if search_s is None else search_s)
        self.seed, self.workers = seed, workers
        self.interval_s = interval_s
        self.background = background
        self.stream = stream
        self._lock = threading.Lock()        # guards the fields the thread reads
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._draw_lock = threading.Lock()   # one diagram drawn at a time (matplotlib's pyplot state)
        self._latest: Optional["Progress"] = None
        self._samples: list[tuple[float, int, int]] = []    # (elapsed s, examples, steps) per snapshot
        self._found_at: dict[str, float] = {}               # label -> elapsed s when its verdict became final
        self._origin: Optional[float] = None                # time.time() of the search's start
        self._last_write = float("-inf")
        self._last_runs_read = float("-inf")
        self._seen_files: dict[str, set[str]] = {"runs": set(), "counterexamples": set()}
        self._runs: list[tuple[float, frozenset[str]]] = []  # (end s since the start, events) per run
        self._rows: dict[str, dict[str, Any]] = {}          # counterexample id -> its row
        self._diagrams: dict[str, tuple[bool, str]] = {}    # id -> (drawn, base64 PNG or why not)
        self._warned = False
        self._result: Optional["CampaignResult"] = None
        self._abandoned: Optional[str] = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "LiveView":
        """Write the first page (``running``, no snapshot yet) and start the
        writer thread (``background``); returns self."""
        try:
            self._origin = time.time()
            self._write_page()
        except Exception as exc:  # the thread tries again: the folder may become writable
            self._warn(exc)
        if self.background:
            self._thread = threading.Thread(target=self._loop, name="replicheck-live-view", daemon=True)
            self._thread.start()
        return self

    def update(self, progress: "Progress") -> None:
        """Take a snapshot (``harness.runner.run_campaign``'s ``on_progress``):
        the page shows it within ``interval_s`` seconds."""
        try:
            with self._lock:
                self._latest = progress
                if self._origin is None or not self._samples:
                    self._origin = time.time() - progress.elapsed_s
                if not self._samples or progress.elapsed_s > self._samples[-1][0]:
                    self._samples.append((progress.elapsed_s, progress.examples, progress.steps))
                for t in progress.finished:
                    self._found_at.setdefault(t.target.label, progress.elapsed_s)
            if self.background:
                self._wake.set()
            elif time.monotonic() - self._last_write >= self.interval_s:
                self._refresh(draw_for_s=None)
        except Exception as exc:  # the campaign goes on without its page
            self._warn(exc)

    def finish(self, result: "CampaignResult", time_limit_s: float = FINISH_DIAGRAMS_S) -> None:
        """Write the final page of ``result`` (every target's verdict; no refresh):
        the writer thread is stopped, the diagrams not drawn yet are drawn for at
        most ``time_limit_s`` seconds (those left say so) and the coverage is
        read a last time."""
        try:
            self._stop.set()
            self._wake.set()
            if self._thread is not None:
                self._thread.join(timeout=max(time_limit_s, 1.0))
            with self._lock:
                self._result = result
                for t in result.targets:
                    if t.verdict not in (SEARCHING, WAITING):
                        self._found_at.setdefault(t.target.label, result.elapsed_s)
            self._last_runs_read = float("-inf")
            self._refresh(draw_for_s=time_limit_s)
        except Exception as exc:
            self._warn(exc)

    def abandon(self, why: str) -> None:
        """Write a last page saying the campaign ended without results (``why``:
        one line, say the exception that ended it); no refresh."""
        try:
            self._stop.set()
            self._wake.set()
            if self._thread is not None:
                self._thread.join(timeout=1.0)
            with self._lock:
                self._abandoned = why
            self._write_page()
        except Exception as exc:
            self._warn(exc)

    # ------------------------------------------------------------------ the thread

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            if time.monotonic() - self._last_write < self.interval_s:
                continue
            try:
                self._refresh(draw_for_s=self.interval_s)
            except Exception as exc:
                self._warn(exc)

    def _refresh(self, draw_for_s: Optional[float]) -> None:
        """Read what is new in the corpus, draw pending diagrams for up to
        ``draw_for_s`` seconds (None: one at most), write the page."""
        if time.monotonic() - self._last_runs_read >= COVERAGE_EVERY_S:
            self._last_runs_read = time.monotonic()
            self._read_runs()
        self._draw_pending(draw_for_s)
        if self._stop.is_set() and threading.current_thread() is self._thread:
            return   # finish writes the last page; this one could land after it
        self._write_page()

    def _warn(self, exc: BaseException) -> None:
        if self._warned:
            return
        self._warned = True
        stream = self.stream or sys.stderr
        try:
            print(f"replicheck: the live view {self.path} could not be written ({type(exc).__name__}: "
                  f"{' '.join(str(exc).split())}); the campaign goes on without it", file=stream, flush=True)
        except Exception:
            pass

    # ------------------------------------------------------------------ the corpus

    def _new_files(self, table: str) -> list[Any]:
        """This campaign's files of ``table`` not read yet (``part-<run_id>-…``)."""
        if self.corpus_dir is None or self.run_id is None:
            return []
        from harness.corpus import corpus_files
        prefix = f"part-{self.run_id}-"
        seen = self._seen_files[table]
        return [p for p in corpus_files(self.corpus_dir, table) if p.name.startswith(prefix) and str(p) not in seen]

    def _read(self, table: str, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of this campaign's new files of ``table`` (each file once: they
        are never rewritten); a file that cannot be read is left out."""
        from harness.corpus import read_file_rows
        rows: list[dict[str, Any]] = []
        for path in self._new_files(table):
            self._seen_files[table].add(str(path))
            try:
                rows += read_file_rows(path, columns)
            except Exception:  # the report names unreadable files; the live view shows what it can
                continue
        return [r for r in rows if r.get("run_id") == self.run_id]

    def _read_runs(self) -> None:
        if self._origin is None:
            return
        for r in self._read("runs", _RUN_COLUMNS):
            started = r.get("started_at")
            if not isinstance(started, dt.datetime):
                continue
            end = started.timestamp() + float(r.get("duration_s") or 0.0) - self._origin
            counts = r.get("event_counts") or {}
            events = frozenset(k for k, v in (counts.items() if isinstance(counts, dict) else counts) if v)
            self._runs.append((max(end, 0.0), events))

    def _ids(self) -> list[tuple["TargetResult", list[str]]]:
        """(target, its counterexample ids) of every target with any, in the
        order found (the final result's targets at the end)."""
        with self._lock:
            results = list(self._result.targets) if self._result is not None else \
                list(self._latest.finished) if self._latest is not None else []
            order = dict(self._found_at)
        results.sort(key=lambda t: order.get(t.target.label, float("inf")))
        return [(t, list(t.counterexample_ids)) for t in results if t.counterexample_ids]

    def _draw_pending(self, draw_for_s: Optional[float]) -> None:
        """Draw diagrams not drawn yet (within ``MAX_DIAGRAMS``) for up to
        ``draw_for_s`` seconds, or one at most (None)."""
        wanted = [i for _, ids in self._ids() for i in ids][:MAX_DIAGRAMS]
        pending = [i for i in wanted if i not in self._diagrams]
        if any(i not in self._rows for i in pending):
            for r in self._read("counterexamples", _ROW_COLUMNS):
                self._rows.setdefault(r["counterexample_id"], r)
        if not pending or (draw_for_s is not None and draw_for_s <= 0):
            return
        until = time.monotonic() + (draw_for_s or 0.0)
        for n, ident in enumerate(pending):
            if n and (draw_for_s is None or time.monotonic() >= until):
                break
            if self._stop.is_set() and threading.current_thread() is self._thread:
                break
            row = self._rows.get(ident)
            if row is None:
                continue   # not on disk yet, or not readable: looked for again next time
            drawn = self._draw(row)
            with self._lock:
                self._diagrams[ident] = drawn

    def _draw(self, row: dict[str, Any]) -> tuple[bool, str]:
        """(True, base64 PNG) of a row's space-time diagram, or (False, why not)."""
        try:
            from spark_reports.diagram import space_time_png
            with self._draw_lock:
                png = space_time_png(row)
            return True, base64.b64encode(png).decode("ascii")
        except Exception as exc:  # a diagram must never sink the page
            return False, f"the diagram could not be drawn ({type(exc).__name__}: {' '.join(str(exc).split())})"

    # ------------------------------------------------------------------ the page

    def _write_page(self) -> None:
        text = self.page()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
        finally:
            if tmp.exists():
                tmp.unlink()
        self._last_write = time.monotonic()

    def _coverage_points(self) -> list[tuple[float, float]]:
        """(s since the start, distinct protocol events reached by then) at each
        run's end that reached a new one."""
        seen: set[str] = set()
        out: list[tuple[float, float]] = [(0.0, 0.0)] if self._runs else []
        for end, events in sorted(self._runs, key=lambda r: r[0]):
            if not events <= seen:
                seen |= events
                out.append((end, float(len(seen))))
        return out

    def page(self) -> str:
        """The page as it stands (HTML text)."""
        from .verdicts import counts_line, final_line
        with self._lock:
            progress, result, abandoned = self._latest, self._result, self._abandoned
            found_at = dict(self._found_at)
            diagrams = dict(self._diagrams)
            samples = list(self._samples)
        final = result is not None or abandoned is not None
        if result is None and abandoned is not None:
            status, css = "ended", "failed"
            states = target_states(self.labels, progress)
            elapsed = progress.elapsed_s if progress is not None else 0.0
        elif result is not None:
            status = "interrupted" if result.interrupted else "finished"
            css = "interrupted" if result.interrupted else ("finished" if result.ok else "failed")
            states = [(t.target.label, t.verdict, t) for t in result.targets]
            elapsed = result.elapsed_s
        else:
            status = css = "running"
            states = target_states(self.labels, progress)
            elapsed = progress.elapsed_s if progress is not None else 0.0
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        head = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
                "" if final else f'<meta http-equiv="refresh" content="{REFRESH_S}">',
                f"<title>replicheck fuzz: {_e(status)}</title><style>{_CSS}</style></head><body>",
                f'<h1>replicheck fuzz: live view</h1><p><span class="status {css}" id="status">{_e(status)}'
                f'</span> <span class="small">updated {_e(now)}'
                f'{"" if final else f"; this page reloads itself every {REFRESH_S} s"}</span></p>']
        parts = head + self._summary(progress, result, elapsed, samples)
        if result is not None:
            parts.append(f'<p id="final"><b>{_e(final_line(result))}</b><br>'
                         f'<span class="small">{_e(counts_line(result))}</span></p>')
        elif abandoned is not None:
            parts.append(f'<p id="final" class="problem"><b>the campaign ended without results: {_e(abandoned)}</b>'
                         "</p>")
        parts += self._targets_table(states, found_at)
        parts += self._charts(elapsed, samples)
        parts += self._finds(diagrams, final)
        parts.append("</body></html>")
        return "\n".join(p for p in parts if p)

    def _summary(self, progress: Optional["Progress"], result: Optional["CampaignResult"], elapsed: float,
                 samples: list[tuple[float, int, int]]) -> list[str]:
        ex_rate, st_rate = rates(samples)
        ex_avg, st_avg = average_rates(samples)
        rows: list[tuple[str, str]] = [
            ("budget", f"{_clock(self.budget_s)} (search {_clock(self.search_s)})"),
            ("search elapsed", f"{_clock(elapsed)} of {_clock(self.search_s)}"),
        ]
        if self.seed is not None:
            rows.append(("seed", str(self.seed)))
        if self.workers is not None:
            rows.append(("workers", str(self.workers)))
        if self.run_id is not None:
            rows.append(("run id", self.run_id))
        if self.corpus_dir is not None:
            rows.append(("corpus", str(self.corpus_dir)))
        if result is not None:
            tally = result.targets
            rows += [("targets", str(len(tally))),
                     ("examples", f"{sum(t.examples for t in tally):,}"),
                     ("checked steps", f"{sum(t.steps for t in tally):,}"),
                     ("runs", f"{sum(t.runs for t in tally):,}")]
        elif progress is not None:
            rows += [("targets", f"{len(progress.finished)} of {progress.targets} done, {progress.searching} "
                                 f"searching, {progress.waiting} waiting"),
                     ("examples", f"{progress.examples:,}"), ("checked steps", f"{progress.steps:,}"),
                     ("runs", f"{progress.runs:,}"), ("targets with a counterexample", str(progress.finds))]
        else:
            rows.append(("targets", f"{len(self.labels)}: starting the workers"))
        if ex_avg is not None:
            recent = result is None and ex_rate is not None
            rows.append(("examples/s", (f"{ex_rate:,.1f} (last {RATE_WINDOW_S:g} s), " if recent else "")
                         + f"{ex_avg:,.1f} since the start"))
            rows.append(("checked steps/s", (f"{st_rate:,.0f} (last {RATE_WINDOW_S:g} s), " if recent else "")
                         + f"{st_avg:,.0f} since the start"))
        body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
        return [f'<table id="summary">{body}</table>']

    def _targets_table(self, states: list[tuple[str, str, Any]], found_at: dict[str, float]) -> list[str]:
        head = ("target", "state", "caught by", "to first failure (worker time)", "final at (search)", "why")
        out = [f"<h2>Targets</h2><table id=\"targets\"><tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>"]
        for label, state, t in states:
            caught = first = when = why = ""
            shown = state
            if t is not None:
                caught = t.found or ""
                if t.first_failure_s is not None:
                    first = f"{t.first_failure_s:.1f} s"
                    if t.first_failure_examples is not None:
                        first += f", {t.first_failure_examples:,} examples"
                if label in found_at and state not in (SEARCHING, WAITING):
                    when = _clock(found_at[label])
                why = t.why
                if state == "found" and t.target.runs_whole_share:
                    shown = "found (FAILED: a real counterexample)"
            cls = "s-failed" if shown != state else "s-" + state.replace(" ", "-")
            out.append(f'<tr data-target="{_e(label)}"><td>{_e(label)}</td><td class="state {cls}">{_e(shown)}</td>'
                       f"<td>{_e(caught)}</td><td>{_e(first)}</td><td>{_e(when)}</td><td>{_e(why)}</td></tr>")
        out.append("</table>")
        return out

    def _charts(self, elapsed: float, samples: list[tuple[float, int, int]]) -> list[str]:
        try:
            from spark_reports.analyses import KNOWN_EVENTS
            known: Optional[int] = len(KNOWN_EVENTS)
        except Exception:
            known = None
        x_max = max(self.search_s, elapsed)
        cov = svg_chart(_thin(self._coverage_points()),
                        "protocol events reached" + (f" (dashed: the {known} known)" if known else ""),
                        "search time", x_max, y_max=float(known) if known else None, step=True)
        steps = svg_chart(_thin([(x[0], float(x[2])) for x in samples]), "checked steps so far (slope: steps/s)",
                          "search time", x_max)
        return ['<h2>Coverage and speed</h2><p class="small">Coverage: the distinct protocol events '
                "(harness.coverage) the campaign's runs reached, from the corpus's runs rows (written within 5 s "
                "of each run's end, so it lags by a few seconds). Steps: as the workers report them, at each "
                "run's end.</p>", f'<div class="charts">{cov}{steps}</div>']

    def _finds(self, diagrams: dict[str, tuple[bool, str]], final: bool) -> list[str]:
        found = self._ids()
        out = ['<h2>Finds</h2>']
        if not found:
            out.append('<p class="small">No counterexample yet.</p>' if not final else
                       '<p class="small">No counterexample.</p>')
            return out
        corpus = str(self.corpus_dir) if self.corpus_dir is not None else "CORPUS"
        shown = 0
        for t, ids in found:
            out.append(f'<section class="find" data-target="{_e(t.target.label)}"><h3>{_e(t.target.label)}: '
                       f"{_e(t.found or t.verdict)}</h3>")
            for ident in ids:
                shown += 1
                row = self._rows.get(ident)
                caption = f"{ident}" + (f" ({row.get('step_count')} steps): {row.get('violation')}" if row else "")
                replay = f"replicheck replay {corpus} --id {ident}"
                drawn = diagrams.get(ident)
                if shown > MAX_DIAGRAMS:
                    body = f'<p class="small">not drawn here (more than {MAX_DIAGRAMS} finds)</p>'
                elif drawn is None and final:
                    body = '<p class="pending">' + ("the diagram was not drawn in time" if row else
                                                    "its row was not found in the corpus") + "</p>"
                elif drawn is None:
                    body = '<p class="pending">drawing the space-time diagram…</p>'
                elif drawn[0]:
                    body = (f'<img class="diagram" alt="{_e("space-time diagram of " + ident)}" '
                            f'src="data:image/png;base64,{drawn[1]}">')
                else:
                    body = f'<p class="problem">{_e(drawn[1])}</p>'
                out.append(f"<figure>{body}<figcaption>{_e(caption)}<br>replay: <code>{_e(replay)}</code>"
                           f"</figcaption></figure>")
            out.append("</section>")
        return out
