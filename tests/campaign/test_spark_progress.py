"""A Spark task's progress reaches the driver while it runs
(``campaign.spark_progress``, ``campaign.spark_pool``): the channel alone, then a
unit on ``local[1]`` whose progress values come out of ``SparkPool.wait`` as
PROGRESS events before its DONE, as from a local worker."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from campaign.spark_progress import ProgressListener, ProgressSender, _frame

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def listener():
    got: queue.Queue = queue.Queue()
    listening = ProgressListener("127.0.0.1", lambda key, value: got.put((key, value)))
    yield listening, got
    listening.close()


def test_values_arrive_in_order_under_their_key(listener):
    listening, got = listener
    sender = ProgressSender(listening.address, "job-1")
    for value in ({"runs": 1}, {"runs": 2}, ("a", 3)):
        sender(value)
    assert [got.get(timeout=5) for _ in range(3)] == [("job-1", {"runs": 1}), ("job-1", {"runs": 2}),
                                                      ("job-1", ("a", 3))]
    sender.close()


def test_a_connection_without_the_token_is_closed_unread(listener):
    import pickle
    listening, got = listener
    host, port, token = listening.address
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(_frame(b"0" * len(token)) + _frame(pickle.dumps(("job-1", "forged"))))
        conn.settimeout(5)
        try:
            assert conn.recv(1) == b""   # closed by the listener
        except ConnectionResetError:     # closed with the forged frame unread
            pass
    with pytest.raises(queue.Empty):
        got.get(timeout=0.3)


def _search_until_stopped(unit, progress, worker):
    progress({"runs": 1})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.01)
    return "not stopped"


def test_the_driver_asks_a_running_task_to_stop_over_its_connection(listener):
    """No stop file (a URI corpus has no folder for one): ``SparkPool.stop`` asks
    over the task's connection, and the unit unwinds within a poll or two."""
    from campaign.spark_pool import _run_task, _Task
    listening, got = listener
    timer = threading.Timer(0.5, listening.stop, args=("job-7",))
    timer.start()
    t0 = time.monotonic()
    assert _run_task(_Task(_search_until_stopped, None, "u", None, None, True, listening.address, "job-7")) is None
    assert time.monotonic() - t0 < 5
    assert got.get(timeout=5) == ("job-7", {"runs": 1})
    deadline = time.monotonic() + 5      # its connection closes with the unit
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
