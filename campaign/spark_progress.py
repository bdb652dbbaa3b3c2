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

On the wire: frames of a 4-byte big-endian length and that many bytes. A
task's first frame is its key (UTF-8), the second its token: the listener's
HMAC-SHA256 of that key under a secret the listener never sends
(``ProgressListener.address_for``), so a task can report, and be asked to stop,
under the key it was given and no other. Each later frame is a pickle of
``(key, value)`` under that same key. The driver sends one frame, ``STOP``, to
ask the task to stop.

Security (the port is open to every host that reaches the driver): before a
connection has authenticated, a frame over ``HANDSHAKE_FRAME`` bytes closes it
unread, the key and token must both arrive within one deadline for the whole
handshake (``HANDSHAKE_S``: a peer sending a byte now and then is cut off), at
most ``MAX_PENDING`` connections wait to authenticate at a time (one more is
closed at once, no thread started for it), and nothing is unpickled. After:
a frame under another key closes the connection, and a key is held by one
connection at a time (the first; a second one presenting it is closed).
"""

from __future__ import annotations

import hashlib
import hmac
import pickle
import secrets
import socket
import struct
import sys
import threading
import time
from typing import Any, Callable, Optional

#: Seconds a new connection has, in all, to present its key and token; a
#: task's connect and send time-out.
HANDSHAKE_S = 10.0
#: The largest frame read before a connection has authenticated (bytes): a key
#: (``address_for`` refuses a longer one) or a token (64 hex digits).
HANDSHAKE_FRAME = 64
#: Connections waiting to authenticate, at most; one more is closed at once.
MAX_PENDING = 16
#: The largest frame read from an authenticated task (bytes); a longer one
#: closes its connection. A unit's result so far is a few hundred bytes.
MAX_FRAME = 16 << 20
_LENGTH = struct.Struct(">I")

#: What a task needs to reach the driver: (host, port, its key's token); picklable.
Address = tuple[str, int, str]
#: The driver's frame asking a task to stop.
STOP = b"stop"


def _frame(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


def _read_exactly(conn: socket.socket, n: int, deadline: Optional[float] = None) -> Optional[bytes]:
    """``n`` bytes of ``conn``; None at the end of the stream. socket.timeout
    when ``deadline`` (``time.monotonic()``) passes first."""
    chunks, left = [], n
    while left:
        if deadline is not None:
            # One deadline for the whole read, not one per recv: a trickle of bytes does not extend it.
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                raise socket.timeout("the handshake's deadline passed")
            conn.settimeout(left_s)
        chunk = conn.recv(min(left, 1 << 16))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(conn: socket.socket, limit: int = MAX_FRAME, deadline: Optional[float] = None) -> Optional[bytes]:
    """The next frame's payload; None at the end of the stream or for a frame
    over ``limit`` bytes (left unread). socket.timeout when ``deadline``
    passes first."""
    head = _read_exactly(conn, _LENGTH.size, deadline)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    return None if length > limit else _read_exactly(conn, length, deadline)


class ProgressListener:
    """Listens on ``bind`` (a free port) and calls ``deliver(key, value)``, from
    a thread of its own per authenticated connection, for every value a task
    sends (``ProgressSender``) under the key its address was made for
    (``address_for``). ``handshake_s``, ``max_pending``: the handshake's
    deadline and how many connections may wait in it (module doc). OSError
    when ``bind`` cannot be listened on."""

    def __init__(self, bind: str, deliver: Callable[[str, Any], None], advertise: Optional[str] = None, *,
                 handshake_s: float = HANDSHAKE_S, max_pending: int = MAX_PENDING) -> None:
        self._deliver = deliver
        self._secret = secrets.token_bytes(32)
        self._handshake_s, self._max_pending = handshake_s, max_pending
        family = socket.AF_INET6 if ":" in bind.strip("[]") else socket.AF_INET
        self._server = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._server.bind((bind.strip("[]"), 0))
            self._server.listen(64)
            self._server.settimeout(0.5)   # so that the accept loop sees close()
        except OSError:
            self._server.close()
            raise
        #: Where the tasks connect: (host, port).
        self.host, self.port = (advertise or bind).strip("[]"), self._server.getsockname()[1]
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._pending = 0
        self._by_key: dict[str, socket.socket] = {}
        self._accepter = threading.Thread(target=self._accept, name=f"replicheck-progress-{self.port}", daemon=True)
        self._accepter.start()

    def address_for(self, key: str) -> Address:
        """What the task reporting under ``key`` needs: ``(host, port, token)``,
        the token good for ``key`` alone. ValueError for an empty key or one
        over ``HANDSHAKE_FRAME`` bytes (UTF-8)."""
        raw = key.encode()
        if not 0 < len(raw) <= HANDSHAKE_FRAME:
            raise ValueError(f"a progress key is 1 to {HANDSHAKE_FRAME} bytes (UTF-8), got {len(raw)}: {key[:80]!r}")
        return self.host, self.port, self._token(raw).decode()

    def _token(self, key: bytes) -> bytes:
        return hmac.new(self._secret, key, hashlib.sha256).hexdigest().encode()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._server.accept()
            except socket.timeout:
                continue
            except OSError:  # closed
                return
            with self._lock:
                admitted = not self._closed.is_set() and self._pending < self._max_pending
                if admitted:
                    self._pending += 1
                    self._connections.add(conn)
            if not admitted:   # closing, or too many waiting to authenticate: no thread for this one
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name=f"replicheck-progress-{self.port}-task",
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            key = self._handshake(conn)
            if key is None:
                return
            conn.settimeout(None)   # a unit's runs are seconds to minutes apart
            while True:
                payload = _read_frame(conn)
                if payload is None:
                    return
                sent_under, value = pickle.loads(payload)
                if sent_under != key:   # a task reports under its own key only
                    return
                self._deliver(key, value)
        except Exception:  # a connection cut, a value this side cannot load: that task's progress ends
            return
        finally:
            with self._lock:
                self._connections.discard(conn)
                for k in [k for k, c in self._by_key.items() if c is conn]:
                    del self._by_key[k]
            conn.close()

    def _handshake(self, conn: socket.socket) -> Optional[str]:
        """The key ``conn`` authenticated under (its key, then that key's token,
        within ``handshake_s`` in all), now held by ``conn``; None when it did
        not, or another connection holds that key. socket.timeout when the
        deadline passes."""
        deadline = time.monotonic() + self._handshake_s
        try:
            key = _read_frame(conn, HANDSHAKE_FRAME, deadline)
            token = None if key is None else _read_frame(conn, HANDSHAKE_FRAME, deadline)
        finally:
            with self._lock:
                self._pending -= 1
        if key is None or token is None or not hmac.compare_digest(token, self._token(key)):
            return None
        name = key.decode()   # a key address_for encoded: the token matched
        with self._lock:
            if name in self._by_key or self._closed.is_set():
                return None   # the key's first connection keeps it: none can take it over
            self._by_key[name] = conn
        return name

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
    ``address`` (``ProgressListener.address_for(key)``); ``connect()`` (else the first value) connects, and from then
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
                conn = socket.create_connection((host, port), timeout=HANDSHAKE_S)
                conn.sendall(_frame(self._key.encode()) + _frame(token.encode()))
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
