"""A Spark task's progress reaches the driver while it runs
(``campaign.spark_progress``, ``campaign.spark_pool``): the channel alone, then a
unit on ``local[1]`` whose progress values come out of ``SparkPool.wait`` as
PROGRESS events before its DONE, as from a local worker."""

from __future__ import annotations

import json
import os
import pickle
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from campaign.spark_progress import HANDSHAKE_FRAME, ProgressListener, ProgressSender, _frame

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def listener():
    got: queue.Queue = queue.Queue()
    listening = ProgressListener("127.0.0.1", lambda key, value: got.put((key, value)))
    yield listening, got
    listening.close()


def test_values_arrive_in_order_under_their_key(listener):
    listening, got = listener
    sender = ProgressSender(listening.address_for("job-1"), "job-1")
    for value in ({"runs": 1}, {"runs": 2}, ("a", 3)):
        sender(value)
    assert [got.get(timeout=5) for _ in range(3)] == [("job-1", {"runs": 1}), ("job-1", {"runs": 2}),
                                                      ("job-1", ("a", 3))]
    sender.close()


def test_a_connection_without_the_token_is_closed_unread(listener):
    listening, got = listener
    host, port, token = listening.address_for("job-1")
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(_frame(b"job-1") + _frame(b"0" * len(token)) + _frame(pickle.dumps(("job-1", "forged"))))
        assert _closed_by_peer(conn, within_s=30)
    with pytest.raises(queue.Empty):
        got.get(timeout=0.3)


def _closed_by_peer(conn: socket.socket, within_s: float) -> bool:
    """Whether the listener closes ``conn`` within ``within_s`` seconds (it
    sends nothing to a connection that has not authenticated)."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        conn.settimeout(max(0.05, min(0.5, end - time.monotonic())))
        try:
            if conn.recv(1) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:   # reset: closed with something unread
            return True
    return False


def _drip_until_closed(conn: socket.socket, data: bytes, every_s: float, within_s: float) -> bool:
    """Send ``data`` a byte every ``every_s`` seconds; whether the listener
    closed the connection within ``within_s`` seconds."""
    end = time.monotonic() + within_s
    for i in range(len(data)):
        if time.monotonic() >= end:
            return False
        try:
            conn.sendall(data[i:i + 1])
        except OSError:
            return True
        if _closed_by_peer(conn, every_s):
            return True
    return _closed_by_peer(conn, max(0.0, end - time.monotonic()))


# ------------------------------------------------------------------ security: the handshake


def test_a_frame_over_the_handshake_limit_is_dropped_before_it_is_read():
    """A peer announcing a large first frame is cut off at its header, however
    slowly it then sends (the deadline is long here: the size alone closes it)."""
    got: queue.Queue = queue.Queue()
    listening = ProgressListener("127.0.0.1", lambda k, v: got.put((k, v)), handshake_s=600.0)
    try:
        with socket.create_connection((listening.host, listening.port), timeout=5) as conn:
            conn.sendall((16 << 20).to_bytes(4, "big"))                    # a 16 MiB "key"
            assert _drip_until_closed(conn, b"k" * 200, every_s=0.5, within_s=25)
        with socket.create_connection((listening.host, listening.port), timeout=5) as conn:
            conn.sendall((HANDSHAKE_FRAME + 1).to_bytes(4, "big"))         # one byte over the limit
            assert _drip_until_closed(conn, b"k" * 200, every_s=0.5, within_s=25)
        assert got.empty()
    finally:
        listening.close()


def test_the_whole_handshake_has_one_deadline():
    """A peer sending a byte every half second (each recv answered long before
    any per-recv time-out) is closed once the handshake's deadline (1 s here)
    has passed; the margin is wide: 25 s."""
    listening = ProgressListener("127.0.0.1", lambda k, v: None, handshake_s=1.0)
    try:
        with socket.create_connection((listening.host, listening.port), timeout=5) as conn:
            conn.sendall(HANDSHAKE_FRAME.to_bytes(4, "big"))
            assert _drip_until_closed(conn, b"k" * HANDSHAKE_FRAME, every_s=0.5, within_s=25)
    finally:
        listening.close()


def test_connections_waiting_to_authenticate_are_capped():
    """Four silent connections fill the cap (``max_pending`` 4): each further one
    is closed at once and gets no thread; once the silent ones go, a task
    connects and reports again."""
    got: queue.Queue = queue.Queue()
    listening = ProgressListener("127.0.0.1", lambda k, v: got.put((k, v)), handshake_s=600.0, max_pending=4)
    baseline = threading.active_count()
    silent = [socket.create_connection((listening.host, listening.port), timeout=5) for _ in range(4)]
    try:
        deadline = time.monotonic() + 20     # the listener has taken the four in
        while threading.active_count() - baseline < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        most = 0
        for _ in range(30):
            with socket.create_connection((listening.host, listening.port), timeout=5) as extra:
                most = max(most, threading.active_count() - baseline)
                assert _closed_by_peer(extra, within_s=30)
            most = max(most, threading.active_count() - baseline)
        assert most <= 4, f"{most} threads for 4 connections waiting to authenticate"
    finally:
        for conn in silent:
            conn.close()
    deadline = time.monotonic() + 30        # the listener sees the silent ones go, and frees their places
    while got.empty() and time.monotonic() < deadline:
        sender = ProgressSender(listening.address_for("job-1"), "job-1")
        sender("after")
        time.sleep(0.2)
        sender.close()
    assert got.get(timeout=5) == ("job-1", "after")
    listening.close()


# ------------------------------------------------------------------ security: keys


def test_a_token_is_good_for_its_own_key_only(listener):
    """A task's token (job-A's) presented with another key is refused."""
    listening, got = listener
    host, port, token_a = listening.address_for("job-A")
    listening.address_for("job-B")
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(_frame(b"job-B") + _frame(token_a.encode()) + _frame(pickle.dumps(("job-B", "forged"))))
        assert _closed_by_peer(conn, within_s=30)
    with pytest.raises(queue.Empty):
        got.get(timeout=0.3)


def test_a_task_cannot_report_under_another_tasks_key(listener):
    """Authenticated as job-A, a value sent under job-B is not delivered, and
    ends the connection."""
    listening, got = listener
    host, port, token_a = listening.address_for("job-A")
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(_frame(b"job-A") + _frame(token_a.encode()) + _frame(pickle.dumps(("job-A", "mine"))))
        assert got.get(timeout=10) == ("job-A", "mine")
        conn.sendall(_frame(pickle.dumps(("job-B", "forged"))) + _frame(pickle.dumps(("job-A", "after"))))
        assert _closed_by_peer(conn, within_s=30)
    with pytest.raises(queue.Empty):
        got.get(timeout=0.3)


def test_a_second_connection_cannot_take_a_connected_tasks_key(listener):
    """While job-A is connected, another connection presenting job-A's key and
    token is closed: the driver's stop request still reaches job-A."""
    listening, got = listener
    address = listening.address_for("job-A")
    sender = ProgressSender(address, "job-A")
    sender("first")
    assert got.get(timeout=10) == ("job-A", "first")
    host, port, token = address
    with socket.create_connection((host, port), timeout=5) as thief:
        thief.sendall(_frame(b"job-A") + _frame(token.encode()))
        assert _closed_by_peer(thief, within_s=30)
    assert listening.stop("job-A")
    assert sender.stop_requested.wait(10)
    sender.close()


def test_a_key_over_the_handshake_limit_gets_no_address(listener):
    listening, _ = listener
    with pytest.raises(ValueError, match="1 to 64 bytes"):
        listening.address_for("k" * (HANDSHAKE_FRAME + 1))


def _search_until_stopped(unit, progress, worker):
    progress({"runs": 1})
    deadline = time.monotonic() + 300   # a net: the driver's stop ends it
    while time.monotonic() < deadline:
        time.sleep(0.01)
    return "not stopped"


def _stop_when_connected(listening, key: str) -> None:
    """Ask the task to stop, again until its connection has registered its key
    (``stop`` is False before): a loaded machine may take a while to connect."""
    while not listening.stop(key):
        time.sleep(0.05)


def test_the_driver_asks_a_running_task_to_stop_over_its_connection(listener):
    """No stop file (a URI corpus has no folder for one): ``SparkPool.stop`` asks
    over the task's connection, and the unit unwinds (it would search for minutes)."""
    from campaign.spark_pool import _run_task, _Task
    listening, got = listener
    stopper = threading.Thread(target=_stop_when_connected, args=(listening, "job-7"), daemon=True)
    stopper.start()
    assert _run_task(_Task(_search_until_stopped, None, "u", None, None, True, listening.address_for("job-7"),
                           "job-7")) is None
    assert got.get(timeout=60) == ("job-7", {"runs": 1})
    deadline = time.monotonic() + 60     # its connection closes with the unit
    while listening.stop("job-7") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not listening.stop("job-7")


def test_a_driver_out_of_reach_loses_the_progress_not_the_unit(capfd):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]   # nothing listens there once closed
    sender = ProgressSender(("127.0.0.1", port, "t"), "job-1")
    sender(1)
    sender(2)   # dropped without a second attempt
    err = capfd.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"replicheck: progress to the driver at 127.0.0.1:{port} lost ("), err


#: The driver, in a process of its own (a SparkContext is one per process):
#: a unit's work sends two progress values, then ends a second later.
_DRIVER = """
import json, sys, time
from campaign.plan import Campaign
from campaign.spark_pool import SparkPool
from campaign.targets import Target

def work(unit, progress, worker):
    for runs in (1, 2):
        progress({"unit": unit, "runs": runs})
    time.sleep(1.0)
    return {"unit": unit, "runs": 3}

pool = SparkPool(Campaign([Target("correct")], budget_s=60.0, workers=1, master="local[1]"), work)
try:
    pool.submit(0, "u1")
    events = []
    while not events or events[-1][0] == "progress":
        events += [(e.kind, e.slot, e.value) for e in pool.wait(30)]
finally:
    pool.close()
print(json.dumps(events))
"""


def test_a_running_units_progress_reaches_wait_before_its_end():
    driver = subprocess.run([sys.executable, "-c", _DRIVER], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert driver.returncode == 0, driver.stderr[-3000:]
    events = json.loads(driver.stdout.splitlines()[-1])
    assert events == [["progress", 0, {"unit": "u1", "runs": 1}], ["progress", 0, {"unit": "u1", "runs": 2}],
                      ["done", 0, {"unit": "u1", "runs": 3}]], events
