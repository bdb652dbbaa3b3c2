"""A process that ran Kafka's code exits with the status of what it did, never by
a signal (``kafka_bridge.jvm``): a script that ends normally exits 0, one that
calls ``sys.exit(3)`` exits 3, and a pytest run of a passing Kafka test exits 0.

Each runs in a fresh process under the condition that crashed them: Python's
``faulthandler`` enabled before the bridge starts the JVM and disabled after,
with the JVM running, as pytest's own ``faulthandler`` plugin does. The disabling
puts back the handlers saved before the JVM existed (SIG_DFL) over HotSpot's, and
the JVM's shutdown at exit then died of a SIGSEGV (status 139) as soon as compiled
code faulted on purpose (an implicit null check, a safepoint poll). Which code is
compiled by then depends on how long the process ran; ``JAVA_TOOL_OPTIONS``
compiles ``java.util`` up front (``-Xcomp``), so a few steps meet the crash as a
long session does, every time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from processes import child_env

#: Each test is a fresh Python process starting its own JVM (up to half a minute on a loaded machine).
pytestmark = pytest.mark.system

#: HotSpot flags compiling ``java.util`` (what the JVM's shutdown runs) on first use.
COMPILED = "-Xcomp -XX:CompileCommand=quiet -XX:CompileCommand=compileonly,java/util/*.*"

#: Enables faulthandler before the bridge starts the JVM, drives a few steps of
#: Kafka's code in lockstep with the model, disables faulthandler; then exits
#: with the status in argv[1] (none: by reaching the end).
SCRIPT = textwrap.dedent('''
    import faulthandler
    import sys

    faulthandler.enable()

    from check.random_walk import random_walk
    from check.replay import replay
    from check.subject import Subject
    from model import KAFKA, Config

    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    trace = [action for action, _ in random_walk(config, 20, seed=1, policy="weighted")]
    result = replay(trace, Subject.at(config, implementation="kafka"))
    assert result.verdict is None, result.verdict
    print(f"drove {len(trace)} steps of Kafka's code", flush=True)
    faulthandler.disable()
    if len(sys.argv) > 1:
        sys.exit(int(sys.argv[1]))
''')

#: A passing test driving Kafka's code, for a nested pytest (whose faulthandler
#: plugin does what SCRIPT does by hand).
TEST_MODULE = textwrap.dedent('''
    from check.random_walk import random_walk
    from check.replay import replay
    from check.subject import Subject
    from model import KAFKA, Config


    def test_kafkas_code_agrees():
        config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
        trace = [action for action, _ in random_walk(config, 20, seed=1, policy="weighted")]
        assert replay(trace, Subject.at(config, implementation="kafka")).verdict is None
''')


def _env() -> dict[str, str]:
    return child_env(JAVA_TOOL_OPTIONS=" ".join(filter(None, [os.environ.get("JAVA_TOOL_OPTIONS"), COMPILED])))


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)


def _status(proc: subprocess.CompletedProcess) -> str:
    code = proc.returncode
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    return f"{how}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("status", [None, 3], ids=["ends", "sys.exit(3)"])
def test_a_script_that_drove_kafkas_code_exits_with_its_own_status(tmp_path, status: Optional[int]):
    (tmp_path / "drive.py").write_text(SCRIPT)
    proc = _run(tmp_path, "drive.py", *([] if status is None else [str(status)]))
    assert proc.returncode == (status or 0), _status(proc)
    assert "drove 20 steps of Kafka's code" in proc.stdout, _status(proc)


def test_a_pytest_run_of_a_passing_kafka_test_exits_0(tmp_path):
    (tmp_path / "test_drive.py").write_text(TEST_MODULE)
    proc = _run(tmp_path, "-m", "pytest", "-p", "no:cacheprovider", "--no-corpus", "-q", "test_drive.py")
    assert proc.returncode == 0, _status(proc)
    assert "1 passed" in proc.stdout, _status(proc)
