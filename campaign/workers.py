"""Worker processes for the campaign's work units: a fixed number of slots, each
owning one process that runs one unit at a time and answers, over a pipe, with
the unit's progress and result as data.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers
dies (a JVM crash under the Kafka bridge, the kernel's out-of-memory killer) the
whole executor breaks, failing every pending unit without saying which unit's
worker died; and on Python 3.11 it cannot stop a worker that overruns the
campaign's end. Here a slot's process dying names the unit it was running, the
slot starts a new process, and ``stop`` kills what still runs. Processes are
spawned, not forked: the runner's display runs a thread, and a fork copies a
process's threads' locks half-taken.
"""

from __future__ import annotations

import os
import signal
import time
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Optional

import attrs

#: What ``WorkerPool.wait`` reports: a running unit's progress, its result, or
#: its loss (the value says why: the worker's exit code, an exception).
PROGRESS, DONE, LOST = "progress", "done", "lost"


@attrs.frozen
class Event:
    """Something a slot's unit did: ``kind`` (PROGRESS, DONE, LOST), the ``slot``
    index, the ``unit`` and the ``value`` (the work function's progress value or
    result; for LOST, one line saying why)."""

    kind: str
    slot: int
    unit: Any
    value: Any


def check_workers(workers: Any) -> None:
    """ValueError unless ``workers`` is an integer >= 1 (a bool is not)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")


def _exit_reason(code: Optional[int]) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Stopped(KeyboardInterrupt):
    """Raised in a worker process by SIGTERM (``WorkerPool.stop``, or the group's
    SIGTERM of ``timeout``, a CI runner, ``docker stop``): like Ctrl-C, it
    unwinds the unit, whose ``finally`` writes what it found, and the worker
    exits."""


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    # Once: a second SIGTERM must not interrupt the writing the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stopped(f"stopped by {signal.Signals(signum).name}")


def _serve(conn: Connection, work: Callable, setup: Optional[Callable], name: str, log_path: Optional[str]) -> None:
    """A worker process: run ``setup()``, then ``work(unit, progress, name)`` for
    every unit received, until None or the pipe closes. SIGTERM stops it: the
    unit running unwinds (``Stopped``), writing what it found, and the process
    then dies of the SIGTERM, without an answer (``WorkerPool.stop`` reports the
    unit; a worker stopped by anyone else is reported "killed by SIGTERM")."""
    try:
        _serve_units(conn, work, setup, name, log_path)
    except Stopped:
        import sys
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _serve_units(conn: Connection, work: Callable, setup: Optional[Callable], name: str,
                 log_path: Optional[str]) -> None:
    # The runner handles Ctrl-C and stops the workers itself (SIGTERM).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    # Whatever a run prints (warnings, an implementation's JVM) goes to the log,
    # never into the runner's display.
    # O_NOFOLLOW: the log is in the corpus's logs folder; a link planted at its name is refused.
    fd = os.open(log_path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    if setup is not None:
        setup()
    while True:
        try:
            unit = conn.recv()
        except EOFError:
            return
        if unit is None:
            return
        try:
            result = work(unit, lambda value: conn.send((PROGRESS, value)), name)
        except Stopped:
            raise
        except BaseException as e:  # the work function returns data; anything else loses the unit
            conn.send((LOST, f"its worker raised {type(e).__name__}: {e}".splitlines()[0]))
        else:
            conn.send((DONE, result))


@attrs.define
class _Slot:
    process: Any
    conn: Connection
    unit: Any = None


class WorkerPool:
    """``size`` worker processes running ``work(unit, progress, worker_name)``
    (a picklable, module-level function; ``progress(value)`` sends a value back
    while the unit runs) after ``setup()`` (module-level, or None). The workers'
    output goes to ``log_path`` (appended), or nowhere. ValueError when ``size``
    is below 1."""

    def __init__(self, size: int, work: Callable, setup: Optional[Callable] = None,
                 log_path: Optional[str] = None) -> None:
        check_workers(size)
        self._context = get_context("spawn")
        self._work, self._setup, self._log_path = work, setup, log_path
        self._slots = [self._start(i) for i in range(size)]

    def _start(self, index: int) -> _Slot:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, name=f"replicheck-w{index}", daemon=True,
                                        args=(child, self._work, self._setup, f"w{index}", self._log_path))
        process.start()
        child.close()
        return _Slot(process, parent)

    @property
    def size(self) -> int:
        return len(self._slots)

    def grow(self) -> int:
        """The pool's size: a local pool's is the plan's, fixed (``SparkPool.grow``'s may grow)."""
        return self.size

    def idle(self) -> list[int]:
        """The slots without a unit."""
        return [i for i, s in enumerate(self._slots) if s.unit is None]

    @property
    def busy(self) -> int:
        return sum(1 for s in self._slots if s.unit is not None)

    def submit(self, slot: int, unit: Any) -> None:
        """Give ``unit`` to the idle ``slot``."""
        s = self._slots[slot]
        if s.unit is not None:
            raise ValueError(f"slot {slot} is busy")
        s.unit = unit
        try:
            s.conn.send(unit)
        except (OSError, ValueError):  # the process died while idle: the next wait reports the unit lost
            pass

    def wait(self, timeout: Optional[float]) -> list[Event]:
        """What the busy slots did within ``timeout`` seconds (None: until one of
        them does something). A slot whose process died while running a unit
        reports it LOST and gets a new process."""
        watched: dict[Any, int] = {}
        for i, s in enumerate(self._slots):
            if s.unit is not None:
                watched[s.conn] = watched[s.process.sentinel] = i
        if not watched:
            return []
        ready = wait(list(watched), timeout)
        events: list[Event] = []
        for i in sorted({watched[r] for r in ready}):
            events += self._drain(i)
        return events

    def _drain(self, i: int) -> list[Event]:
        s = self._slots[i]
        events = self._messages(i)
        if s.unit is not None and not s.process.is_alive():
            s.process.join()
            events.append(Event(LOST, i, s.unit, f"its worker process died ({_exit_reason(s.process.exitcode)})"))
            s.conn.close()
            self._slots[i] = self._start(i)
        return events

    def stop(self, why: str, grace_s: float = 0.0) -> list[Event]:
        """Stop the processes of the busy slots: SIGTERM (their unit unwinds and
        writes what it found, ``Stopped``), then SIGKILL for those still running
        ``grace_s`` seconds later. Returns what the slots reported meanwhile
        (PROGRESS; DONE for a unit that finished first), then LOST with ``why``
        for every unit that did not finish. The slots are left without a
        process: call ``close`` next."""
        busy = {i: s for i, s in enumerate(self._slots) if s.unit is not None}
        for s in busy.values():
            if s.process.is_alive():
                s.process.terminate()
        events: list[Event] = []
        end = time.monotonic() + max(0.0, grace_s)
        running = dict(busy)
        while running:
            for i in list(running):
                events += self._messages(i)
                if not running[i].process.is_alive():
                    del running[i]
            left = end - time.monotonic()
            if not running or left <= 0:
                break
            wait([r for s in running.values() for r in (s.conn, s.process.sentinel)], min(left, 0.5))
        for i, s in busy.items():
            if s.process.is_alive():
                s.process.kill()
            s.process.join()
            events += self._messages(i)
            if s.unit is not None:
                events.append(Event(LOST, i, s.unit, why))
                s.unit = None
        return events

    def _messages(self, i: int) -> list[Event]:
        """What slot ``i``'s process has sent and not yet been read, while it has a unit."""
        s = self._slots[i]
        events: list[Event] = []
        try:
            while s.unit is not None and s.conn.poll():
                kind, value = s.conn.recv()
                events.append(Event(kind, i, s.unit, value))
                if kind != PROGRESS:
                    s.unit = None
        except Exception:  # EOFError, OSError: the process is gone; or its last message was cut short
            pass
        return events

    def close(self, timeout: float = 5.0) -> None:
        """Ask every process to exit, and kill those that do not within ``timeout``
        seconds."""
        for s in self._slots:
            if s.process.is_alive() and s.unit is None:
                try:
                    s.conn.send(None)
                except (OSError, ValueError):
                    pass
        for s in self._slots:
            s.process.join(timeout)
            if s.process.is_alive():
                s.process.kill()
                s.process.join()
            s.conn.close()
