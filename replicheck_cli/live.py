"""The campaign's live view: ``live.html`` in the report folder, rewritten while a
campaign runs and refreshing itself in the browser every ``REFRESH_S`` seconds.

It shows the budget and the search's elapsed time; each target's state
(``searching``, ``waiting`` to be started, or its verdict once final: ``found``,
``not found``, ``clean``, ``not run``, ``error``, ``stopped``) with the
properties that caught it, the worker seconds and examples to its first failure
and when in the search it was found; examples and checked steps per second
(between snapshots ``RATE_WINDOW_S`` apart, and since the start); two small
inline SVG charts, protocol coverage (the distinct ``check.coverage`` events
reached so far, from the corpus ``runs`` rows, which the units write within
``store.writer.FLUSH_EVERY_S`` seconds of each run: the runner's snapshots
carry no coverage) and the checked steps so far; and every find's space-time
diagram (``spark_reports.diagram``, drawn with matplotlib from the
counterexample's corpus row, no Spark), each drawn once. The page is
self-contained (CSS, charts and diagrams inline; no external URL), rendered
from a template (``replicheck_cli.live_page``) with every text HTML-escaped,
and written atomically (a temp file, then ``os.replace``), so a browser never
reads half a page; the temp file is a new file of a random name, created without
following a link (``store.nofollow.replace_file``: security, a report folder
others can write in). ``finish`` writes the final page, which no longer refreshes.

Only this campaign's corpus files are read (their names carry its run id), and
each file once (``_identity``: a name a removed part left may be taken by a new
one): the corpus of many campaigns is not re-read every few seconds.
A page that cannot be written (or drawn) never stops the campaign: the problem
is printed once and the view keeps trying.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, TextIO

from store.nofollow import replace_file

from .live_page import (MAX_DIAGRAMS, RATE_WINDOW_S, REFRESH_S, SEARCHING, WAITING, LiveCampaign, LivePage,
                        render_page, svg_chart, target_states)

if TYPE_CHECKING:
    from campaign.runner import CampaignResult
    from campaign.scheduler import Progress, TargetResult

__all__ = ["LIVE_FILE", "LiveCampaign", "LiveView", "MAX_DIAGRAMS", "RATE_WINDOW_S", "REFRESH_S", "svg_chart",
           "target_states"]

#: The page's name in the report folder.
LIVE_FILE = "live.html"
#: The page is rewritten at most this often (seconds).
WRITE_EVERY_S = 2.0
#: The corpus's ``runs`` rows (coverage) are looked for at most this often
#: (seconds): the units write them every 5 s.
COVERAGE_EVERY_S = 5.0
#: Seconds ``finish`` may spend drawing the diagrams not drawn yet.
FINISH_DIAGRAMS_S = 5.0

#: The columns of a counterexample row the diagram and its caption need.
_ROW_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                "config_json", "steps", "step_count", "final_state_json", "timeline", "run_id")
_RUN_COLUMNS = ("run_id", "started_at", "duration_s", "event_counts")


def _identity(path: Any) -> tuple:
    """A corpus file as read once: its path, and for a local file its inode and
    modification time. A campaign's deferred reduction removes the part holding
    a find as found, and a later part of the same worker may take its name (a
    local part's name is the first free one): that is another file, read too.
    A part at a URI has a name unique to its write."""
    try:
        st = os.stat(path) if isinstance(path, Path) else None
    except OSError:
        st = None
    return (str(path),) if st is None else (str(path), st.st_ino, st.st_mtime_ns)


def _corpus_location(corpus_dir: str | os.PathLike) -> Any:
    """The corpus as ``store.fs.location`` gives it (a folder path, or a
    URI pyarrow opens); a URI it cannot open (the campaign refused it already)
    stays a path, which reads as no files."""
    from store.fs import CorpusLocationError, location
    try:
        return location(corpus_dir)
    except CorpusLocationError:
        return Path(corpus_dir)


class LiveView:
    """``live.html`` in ``report_dir`` for the campaign ``run_id`` writing to
    ``corpus_dir``: ``start`` writes the first page (``running``), ``update``
    takes each ``campaign.scheduler.Progress`` snapshot, ``finish`` the
    ``CampaignResult`` (the final page, no refresh).

    ``campaign``: the ``LiveCampaign`` fields: ``targets``, the campaign's
    target labels, in its order; ``run_id``; ``budget_s``, the whole budget
    (seconds), ``search_s``, the search's part of it (default the budget);
    ``seed``, ``workers``: shown. ``background`` (default): the page is
    written, and diagrams drawn, by a daemon thread, so the runner's loop is
    never held up by a diagram; False: ``update`` writes the page itself when
    ``interval_s`` seconds have passed since the last write (for tests).
    Problems (the page cannot be written, a diagram fails) go to ``stream``
    (stderr) once; no method raises an ``Exception`` (KeyboardInterrupt passes)."""

    def __init__(self, report_dir: str | os.PathLike, corpus_dir: Optional[str | os.PathLike], *,
                 interval_s: float = WRITE_EVERY_S, background: bool = True, stream: Optional[TextIO] = None,
                 **campaign: Any) -> None:
        self.path = Path(report_dir) / LIVE_FILE
        self.corpus_dir = None if corpus_dir is None else _corpus_location(corpus_dir)
        self.campaign = LiveCampaign(**campaign)
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
        self._seen_files: dict[str, set[tuple]] = {"runs": set(), "counterexamples": set()}
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
        """Take a snapshot (``campaign.runner.run_campaign``'s ``on_progress``):
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
        if self.corpus_dir is None or self.campaign.run_id is None:
            return []
        from store.reader import corpus_files
        prefix = f"part-{self.campaign.run_id}-"
        seen = self._seen_files[table]
        return [p for p in corpus_files(self.corpus_dir, table) if p.name.startswith(prefix) and _identity(p) not in seen]

    def _read(self, table: str, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of this campaign's new files of ``table`` (each file once: they
        are never rewritten); a file that cannot be read is left out."""
        from store.reader import read_file_rows
        rows: list[dict[str, Any]] = []
        for path in self._new_files(table):
            self._seen_files[table].add(_identity(path))
            try:
                rows += read_file_rows(path, columns)
            except Exception:  # the report names unreadable files; the live view shows what it can
                continue
        return [r for r in rows if r.get("run_id") == self.campaign.run_id]

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
        # A new temp file (O_EXCL | O_NOFOLLOW, a random name), then os.replace:
        # a link planted in the report folder is never written through.
        replace_file(self.path.parent, self.path.name, self.page().encode("utf-8"))
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
        try:
            from spark_reports.analyses import KNOWN_EVENTS
            known: Optional[int] = len(KNOWN_EVENTS)
        except Exception:
            known = None
        with self._lock:
            snapshot = dict(progress=self._latest, result=self._result, abandoned=self._abandoned,
                            found_at=dict(self._found_at), diagrams=dict(self._diagrams), samples=list(self._samples))
        return render_page(LivePage(campaign=self.campaign, corpus=None if self.corpus_dir is None else
                                    str(self.corpus_dir), coverage=self._coverage_points(), known_events=known,
                                    finds=self._ids(), rows=self._rows, **snapshot))
