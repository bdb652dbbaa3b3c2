"""Once the bridge's JVM runs, the process's signals stay Python's
(``kafka_bridge.jvm``: ``-Xrs``, ``interrupt=False``).

A campaign asks a unit to stop with SIGTERM, which the unit's Python handler
turns into ``Stopped`` (``campaign.spark_pool._stop_file``; ``campaign.workers``
likewise). With HotSpot's handlers in place, the SIGTERM began the JVM's
shutdown instead: the process went on with a JVM stopped for good, and the
unit's next run raised ``OSError: JVM cannot be restarted`` (a Kafka unit on a
loaded Spark cluster, asked to stop while it started). Ctrl-C is Python's
``KeyboardInterrupt``, and a Spark Python worker dies of the SIGHUP its daemon
sends at shutdown. Each case runs in a fresh process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from processes import ROOT, child_env

#: A unit's task as ``campaign.spark_pool`` runs it: within ``_stop_file``, the
#: JVM started; the stop file appears; the task's ``Stopped`` ends the wait.
STOPPED = textwrap.dedent('''
    import sys, threading, time
    from pathlib import Path
    from campaign.spark_pool import _stop_file
    from campaign.workers import Stopped
    from kafka_bridge.jvm import start

    stop = Path(sys.argv[1])
    try:
        with _stop_file(str(stop)):
            jpype = start()
            threading.Timer(0.2, stop.touch).start()
            time.sleep(60)
        print("not stopped", flush=True)
    except Stopped as e:
        print(f"Stopped: {e}", flush=True)
    jpype = start()  # the JVM still runs: the next run of the unit uses it
    print(jpype.java.lang.Math.addExact(40, 2), flush=True)
''')

#: Ctrl-C while the JVM runs.
INTERRUPTED = textwrap.dedent('''
    import os, signal, time
    from kafka_bridge.jvm import start

    jpype = start()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(60)
        print("not interrupted", flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
    print(start().java.lang.Math.addExact(40, 2), flush=True)
''')

#: A stop arriving while the JVM starts (in JPype's Python set-up, where a
#: handler would run between two lines): handled once the JVM has started.
DURING_START = textwrap.dedent('''
    import os, signal
    import jpype

    said = []
    # JPype's own flag: set as the last line of its set-up.
    signal.signal(signal.SIGTERM, lambda signum, frame: said.append(f"stopped, set up: {jpype._core._JVM_started}"))
    real = jpype.startJVM

    def start_then_stop(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100000))  # Python lines: a handler not held off runs among them
        said.append("set-up")
        real(*args, **kwargs)

    jpype.startJVM = start_then_stop
    from kafka_bridge.jvm import start
    start()
    print(said, flush=True)
''')

#: A Spark Python worker: SIGHUP at its default (pyspark.daemon.worker), then the JVM started.
HUNG_UP = textwrap.dedent('''
    import os, signal, time
    from kafka_bridge.jvm import start

    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    start()
    os.kill(os.getpid(), signal.SIGHUP)
    time.sleep(5)
    print("lived on", flush=True)
''')


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, env=child_env(), capture_output=True, text=True,
                          timeout=600)


def _said(proc: subprocess.CompletedProcess) -> str:
    return f"status {proc.returncode}\n--- stdout\n{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-2000:]}"


def test_a_unit_asked_to_stop_unwinds_and_its_jvm_runs_on(tmp_path):
    proc = _run(STOPPED, str(tmp_path / "stop"))
    assert (proc.returncode, proc.stdout.splitlines()) == (0, ["Stopped: stopped by SIGTERM", "42"]), _said(proc)


def test_ctrl_c_is_pythons_keyboard_interrupt_and_the_jvm_runs_on():
    proc = _run(INTERRUPTED)
    assert (proc.returncode, proc.stdout.splitlines()) == (0, ["KeyboardInterrupt", "42"]), _said(proc)


def test_a_stop_while_the_jvm_starts_waits_for_it_to_have_started():
    proc = _run(DURING_START)
    assert (proc.returncode, proc.stdout) == (0, "['set-up', 'stopped, set up: True']\n"), _said(proc)


def test_a_spark_python_worker_dies_of_its_daemons_sighup():
    proc = _run(HUNG_UP)
    assert (proc.returncode, proc.stdout) == (-signal.SIGHUP, ""), _said(proc)
