"""The corpus writer: the rows of one run (a pytest session's worker, a campaign
unit, a test's own runs), written durably as they come (``CorpusWriter``).

Writing::

    writer = CorpusWriter(corpus_dir)          # run_id, worker, run_date
    with RunObserver(MachineCls, test_id="...") as run:    # check.statistics
        run_state_machine_as_test(MachineCls, settings=...)
    writer.record(run.record())     # counterexample rows written now; the runs row within FLUSH_EVERY_S
    writer.flush()                  # writes what is still buffered

``campaign.record.run_machine`` does all of that (reducing each finding first,
``check.refine``) for a campaign's run; the pytest plugin for every machine test.

Durability: a counterexample is on disk before it is reported. ``record``
writes a failing run's rows as soon as they exist (one part, ``store.part.
write_part``); ``runs`` rows wait at most ``FLUSH_EVERY_S`` seconds. A killed
process loses at most the run in flight and the ``runs`` rows of its last
seconds; a write that fails (disk full, an unwritable corpus) prints each
counterexample it could not write to stderr in a replayable line
(``replayable_text`` / ``row_from_text``) and the run goes on.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import Any, Iterable, Optional

from check.finding import RunRecord

from .errors import CorpusWarning
from .fs import Location, location
from .part import load_conversions, utcnow, write_part
from .rows import counterexample_rows, run_row
from .schema import COUNTEREXAMPLES, RUNS

#: The environment variable naming the corpus folder of the pytest plugin.
ENV_CORPUS = "REPLICHECK_CORPUS"


def worker_id() -> str:
    """The xdist worker id (``gw0``…), or ``main`` outside xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER") or "main"


def new_run_id() -> str:
    return uuid.uuid4().hex


#: Buffered ``runs`` rows are written once this many seconds have passed since
#: the writer's last write (``CorpusWriter.flush_every_s``).
FLUSH_EVERY_S = 5.0
#: The first line of a counterexample printed because it could not be written
#: (``replayable_text``); the JSON follows on the same line.
UNWRITTEN_MARK = "REPLICHECK-UNWRITTEN-COUNTEREXAMPLE"
#: The columns of a ``counterexamples`` row that ``replayable_text`` keeps:
#: what ``decode_counterexample`` replays, and what names the counterexample.
REPLAYABLE_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                      "implementation", "config_json", "steps", "seed", "test_id", "run_id", "worker")


def replayable_text(row: dict[str, Any]) -> str:
    """A ``counterexamples`` row as one line of text that replays it:
    ``UNWRITTEN_MARK`` and a JSON object of ``REPLAYABLE_COLUMNS`` (the
    configuration as ``config_json``, the trace as ``steps``, both in the
    corpus's encoding, ``store.codec``). ``row_from_text`` reads it
    back; ``decode_counterexample`` of that gives the config and actions."""
    return f"{UNWRITTEN_MARK} " + json.dumps({k: row.get(k) for k in REPLAYABLE_COLUMNS}, default=str)


def row_from_text(line: str) -> dict[str, Any]:
    """The row of a ``replayable_text`` line (what ``decode_counterexample``
    takes). ValueError when the line is not one."""
    head, _, body = line.strip().partition(" ")
    if head != UNWRITTEN_MARK:
        raise ValueError(f"not a replicheck counterexample line (it starts with {UNWRITTEN_MARK}): {line[:60]!r}")
    return json.loads(body)


class CorpusWriter:
    """Writes the rows of one run (a pytest session's worker, a campaign unit,
    a test's own runs) for one worker, durably, as they come:

    - ``record(run)``: the run's counterexample rows are written before it
      returns (one file, ``write_part``: temp name, fsync, link), so a
      counterexample is on disk before anything reports it; its ``runs`` row is
      buffered, and written with the next write once ``flush_every_s`` seconds
      have passed since the last one — by a later ``record``, or by a timer
      thread ``flush_every_s`` seconds after it was buffered;
    - ``flush()``: writes whatever is buffered (call it at the end).

    A failed write (OSError: disk full, an unwritable corpus) keeps its rows
    buffered for the next write, warns (``CorpusWarning``) and prints every
    counterexample it could not write, once, to ``err`` (default: stderr) as
    ``replayable_text``: nothing found is lost and the run goes on.
    ``record`` never raises for a write; ``flush`` raises the OSError after
    printing. ``written`` lists the files written; ``written_ids`` the
    counterexample ids on disk, in order; ``parts`` each counterexample file
    written with the ids it holds; ``recorded`` every counterexample row
    recorded or added, written or not. Thread-safe."""

    def __init__(self, root: Path | str | Location, run_id: Optional[str] = None, worker: Optional[str] = None,
                 run_date: Optional[_dt.date] = None, flush_every_s: float = FLUSH_EVERY_S,
                 err: Any = None) -> None:
        self.root = location(root)
        self.run_id = run_id or new_run_id()
        self.worker = worker or worker_id()
        self.run_date = run_date or utcnow().date()
        self.flush_every_s = flush_every_s
        self.err = err
        self.rows: dict[str, list[dict[str, Any]]] = {COUNTEREXAMPLES: [], RUNS: []}
        self.written: list[Location] = []
        self.written_ids: list[str] = []
        self.parts: list[tuple[Location, tuple[str, ...]]] = []
        self.recorded: list[dict[str, Any]] = []
        #: Why the last write failed (None: it did not).
        self.last_error: Optional[str] = None
        self._seq = 0
        self._printed: set[str] = set()
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        load_conversions()   # here, not first on the timer thread (store.part.load_conversions says why)
        self._last_write = time.monotonic()   # after the import, which can take a second

    def add_counterexamples(self, rows: Iterable[dict[str, Any]]) -> None:
        """Buffer counterexample rows (written by the next write)."""
        rows = list(rows)
        with self._lock:
            self.rows[COUNTEREXAMPLES].extend(rows)
            self.recorded.extend(rows)

    def add_run(self, row: dict[str, Any]) -> None:
        """Buffer a ``runs`` row (written by the next write)."""
        with self._lock:
            self.rows[RUNS].append(row)

    def record(self, run: RunRecord, run_row_too: bool = True) -> list[dict[str, Any]]:
        """Record a run: its counterexample rows (one per finding, as they are:
        reduce them first, ``check.refine``) written now, its ``runs`` row
        buffered (see the class doc) unless ``run_row_too`` is false (a run
        recorded before, whose findings come again reduced); returns the
        counterexample rows."""
        ces = counterexample_rows(run.findings, run_id=self.run_id, worker=self.worker)
        self.add_counterexamples(ces)
        if run_row_too:
            self.add_run(run_row(run, self.run_id, self.worker))
        if ces or time.monotonic() - self._last_write >= self.flush_every_s:
            self._write(raise_errors=False)
        else:
            self._arm_timer()
        return ces

    def flush(self) -> list[Location]:
        """Write every buffered row (one file per table); returns the files
        written. Raises the OSError of a failed write, after printing its
        counterexamples (class doc); the rows stay buffered."""
        return self._write(raise_errors=True)

    def close(self) -> None:
        """Stop the timer (rows still buffered stay so: ``flush`` first)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _arm_timer(self) -> None:
        with self._lock:
            if self._timer is not None or not self.rows[RUNS]:
                return
            delay = max(0.0, self.flush_every_s - (time.monotonic() - self._last_write))
            self._timer = threading.Timer(delay, self._on_timer)
            self._timer.daemon = True
            self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
        self._write(raise_errors=False)

    def _write(self, raise_errors: bool) -> list[Location]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            paths: list[Location] = []
            failed: Optional[BaseException] = None
            for table in (COUNTEREXAMPLES, RUNS):
                rows = self.rows[table]
                if not rows:
                    continue
                try:
                    path = write_part(self.root, table, rows, self.run_id, self.worker, self._seq, self.run_date)
                except Exception as e:  # OSError (ENOSPC, EACCES, …), or rows the schema refuses
                    failed = failed or e
                    self._unwritten(table, rows, e)
                    continue
                self.rows[table] = []
                paths.append(path)
                if table == COUNTEREXAMPLES:
                    ids = tuple(r["counterexample_id"] for r in rows)
                    self.written_ids.extend(ids)
                    self.parts.append((path, ids))
            self._last_write = time.monotonic()
            self.last_error = None if failed is None else f"{type(failed).__name__}: {failed}"
            if paths:
                self._seq += 1
                self.written.extend(paths)
            if failed is not None and raise_errors:
                raise failed
            return paths

    def _unwritten(self, table: str, rows: list[dict[str, Any]], error: BaseException) -> None:
        """Say that ``rows`` of ``table`` could not be written, and print the
        counterexamples among them not printed before."""
        fresh = [r for r in rows if r["counterexample_id"] not in self._printed] if table == COUNTEREXAMPLES else []
        self._print_unwritten(fresh, error)
        warnings.warn(CorpusWarning(
            f"could not write {len(rows)} {table} row(s) to the corpus at {self.root} ({type(error).__name__}: "
            f"{error}); they are kept for the next write"
            + (f", and the {len(fresh)} counterexample(s) among them printed, replayable ({UNWRITTEN_MARK} lines)"
               if fresh else "")), stacklevel=4)

    def _print_unwritten(self, rows: list[dict[str, Any]], error: BaseException) -> None:
        if not rows:
            return
        out = self.err or sys.stderr
        try:
            for r in rows:
                print(f"replicheck: could not write counterexample {r['counterexample_id'][:16]} ({r['signature']}) "
                      f"to the corpus at {self.root} ({type(error).__name__}: {error}); it follows, replayable "
                      f"(store.writer.row_from_text, decode_counterexample):\n{replayable_text(r)}",
                      file=out, flush=True)
                self._printed.add(r["counterexample_id"])
        except Exception:  # stderr itself failing: the warning still names the write
            pass
