"""A running Spark task's progress values, back to the driver while it runs
(``campaign.spark_pool``): the channel local worker processes have in their pipe.

The channel is a TCP connection from the task to a port the driver listens on,
at the address Spark's executors reach the driver by (``spark.driver.host``).
Why not files beside the stop files: executors always reach the driver (Spark's
own traffic goes that way), while a folder they share with it is a property
of the corpus, which may be a URI; and nothing has to be polled.

The same connection carries the driver's request to stop a unit the other
way (``ProgressListener.stop``): a task connects when it starts, so a campaign
whose corpus is a URI (no folder for stop files) still unwinds its units
cleanly.

On the wire: frames of a 4-byte big-endian length and that many bytes. A task's
first frame is the listener's ``token`` (compared in constant time; a
connection that does not present it within ``TOKEN_S`` is closed unread), the
second its key (UTF-8), each later one a pickle of ``(key, value)``. Nothing is
unpickled before the token. The driver sends one frame, ``STOP``, to ask the
task to stop.
"""

from __future__ import annotations

import hmac
import pickle
import secrets
import socket
import struct
import sys
import threading
from typing import Any, Callable, Optional

#: Seconds a new connection has to present the token; a task's connect and
#: send time-out.
TOKEN_S = 10.0
#: The largest frame read (bytes); a longer one closes its connection. A
#: unit's result so far is a few hundred bytes.
MAX_FRAME = 16 << 20
_LENGTH = struct.Struct(">I")

#: What a task needs to reach the driver: (host, port, token); picklable.
Address = tuple[str, int, str]
#: The driver's frame asking a task to stop.
STOP = b"stop"


def _frame(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


def _read_exactly(conn: socket.socket, n: int) -> Optional[bytes]:
    chunks, left = [], n
    while left:
        chunk = conn.recv(min(left, 1 << 16))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(conn: socket.socket) -> Optional[bytes]:
    """The next frame's payload; None at the end of the stream or for a frame
    over ``MAX_FRAME``."""
    head = _read_exactly(conn, _LENGTH.size)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    return None if length > MAX_FRAME else _read_exactly(conn, length)


class ProgressListener:
    """Listens on ``bind`` (a free port) and calls ``deliver(key, value)``, from
    a thread of its own per connection, for every value a task sends
    (``ProgressSender``). ``address``: ``(advertise or bind, port, token)``, for
    the tasks. OSError when ``bind`` cannot be listened on."""

    def __init__(self, bind: str, deliver: Callable[[str, Any], None], advertise: Optional[str] = None) -> None:
        self._deliver = deliver
        self._token = secrets.token_hex(16)
        family = socket.AF_INET6 if ":" in bind.strip("[]") else socket.AF_INET
        self._server = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._server.bind((bind.strip("[]"), 0))
            self._server.listen(64)
            self._server.settimeout(0.5)   # so that the accept loop sees close()
        except OSError:
            self._server.close()
            raise
        self.address: Address = ((advertise or bind).strip("[]"), self._server.getsockname()[1], self._token)
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._by_key: dict[str, socket.socket] = {}
        self._accepter = threading.Thread(target=self._accept, name="replicheck-progress", daemon=True)
        self._accepter.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._server.accept()
            except socket.timeout:
                continue
            except OSError:  # closed
                return
            with self._lock:
                if self._closed.is_set():
                    conn.close()
                    return
                self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn,), name="replicheck-progress-task", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(TOKEN_S)
            token = _read_frame(conn)
            if token is None or not hmac.compare_digest(token, self._token.encode()):
                return
            key = _read_frame(conn)
            if key is None:
                return
            with self._lock:
                self._by_key[key.decode()] = conn
            conn.settimeout(None)   # a unit's runs are seconds to minutes apart
            while True:
                payload = _read_frame(conn)
                if payload is None:
                    return
                key, value = pickle.loads(payload)
                self._deliver(key, value)
        except Exception:  # a connection cut, a value this side cannot load: that task's progress ends
            return
        finally:
            with self._lock:
                self._connections.discard(conn)
                for k in [k for k, c in self._by_key.items() if c is conn]:
                    del self._by_key[k]
            conn.close()

    def stop(self, key: str) -> bool:
        """Ask the task connected under ``key`` to stop; whether it is connected
        (and so was asked)."""
        with self._lock:
            conn = self._by_key.get(key)
            if conn is None:
                return False
            try:
                conn.sendall(_frame(STOP))
            except OSError:
                return False
        return True

    def close(self) -> None:
        """Stop listening and close every task's connection."""
        self._closed.set()
        self._server.close()
        with self._lock:
            for conn in self._connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)   # wakes its reader thread
                except OSError:
                    pass
            self._connections.clear()
        self._accepter.join(2)


class ProgressSender:
    """In a task: ``sender(value)`` sends ``(key, value)`` to the listener at
    ``address``; ``connect()`` (else the first value) connects, and from then
    on a thread of its own sets ``stop_requested`` when the driver asks this
    task to stop. Never raises: a driver that cannot be reached or a connection
    lost drops this and every later value, with one line on stderr (the task's
    log) — progress only feeds the display; the unit's result still comes back
    through Spark (and a unit that cannot be asked to stop is cancelled)."""

    def __init__(self, address: Address, key: str) -> None:
        self._address, self._key = address, key
        self._conn: Optional[socket.socket] = None
        self._broken = False
        self.stop_requested = threading.Event()

    def connect(self) -> bool:
        """Connect now, if not yet; whether connected."""
        if self._conn is None and not self._broken:
            try:
                host, port, token = self._address
                conn = socket.create_connection((host, port), timeout=TOKEN_S)
                conn.sendall(_frame(token.encode()) + _frame(self._key.encode()))
                conn.settimeout(None)
                self._conn = conn
                threading.Thread(target=self._listen, args=(conn,), name="replicheck-stop-request",
                                 daemon=True).start()
            except Exception as e:
                self._lost(e)
        return self._conn is not None

    def _listen(self, conn: socket.socket) -> None:
        try:
            if _read_frame(conn) == STOP:
                self.stop_requested.set()
        except OSError:   # closed: the unit ended
            pass

    def __call__(self, value: Any) -> None:
        if not self.connect():
            return
        try:
            self._conn.sendall(_frame(pickle.dumps((self._key, value), protocol=pickle.HIGHEST_PROTOCOL)))  # type: ignore[union-attr]
        except Exception as e:
            self._lost(e)

    def _lost(self, e: BaseException) -> None:
        self._broken = True
        self.close()
        print(f"replicheck: progress to the driver at {self._address[0]}:{self._address[1]} lost "
              f"({type(e).__name__}: {e}); the unit goes on, its result comes at its end", file=sys.stderr)

    def close(self) -> None:
        if self._conn is not None:
            for end in (lambda c: c.shutdown(socket.SHUT_RDWR), lambda c: c.close()):  # shutdown wakes the reader
                try:
                    end(self._conn)
                except OSError:
                    pass
            self._conn = None
