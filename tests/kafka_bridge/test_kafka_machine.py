"""The machine with Kafka's own code in lockstep with the model, as a machine test
of the suite (the session's Hypothesis profile; ``dev``: 40 examples of up to 60
steps, a few seconds), recorded in the corpus as any machine test, its rows named
"kafka"; and ``pytest --implementation NAME`` (``pytest_replicheck.plugin``), which
puts NAME in the suite's implementation machine test instead of the bundled SUT."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from check.implementations import KAFKA, subject_for
from check.machine import machine_for
from engines import require_kafka
from processes import child_env

#: Under the Kafka profile, detached at its findings: what is checked is agreement with the model.
KafkaMachine = machine_for(subject_for(KAFKA), name="KafkaMachine")
TestKafkaMachine = KafkaMachine.TestCase


#: A test module built with ``machine_under_test``, checking what the option made of it.
PROBE = textwrap.dedent('''
    from pytest_replicheck.plugin import machine_under_test

    Machine = machine_under_test("ProbeMachine")

    def test_the_machine_is_the_one_the_option_names():
        from model import KAFKA
        assert Machine.__name__ == "ProbeMachine"
        assert Machine.subject.implementation == EXPECTED
        assert Machine.subject.profile == KAFKA and Machine.subject.detach_at_findings is True
''')


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """A nested ``pytest -p pytest_replicheck.plugin`` in ``cwd`` (outside the project:
    neither its conftest nor its corpus is involved)."""
    env = child_env()
    cmd = [sys.executable, "-m", "pytest", "-p", "pytest_replicheck.plugin", "-p", "no:cacheprovider", "--no-corpus",
           "-q", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_option_puts_the_named_implementation_in_the_machine_under_its_profile(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE.replace("EXPECTED", repr("kafka")))
    proc = _pytest(tmp_path, "--implementation", "kafka", "test_probe.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Without the option the same module builds the bundled SUT's machine: the probe fails.
    assert _pytest(tmp_path, "test_probe.py").returncode == 1


@pytest.mark.system   # release 4.3.0's jars: `make test-system` fetches them
def test_the_kafka_version_option_names_another_release_s_classes(tmp_path):
    require_kafka("4.3.0")
    (tmp_path / "test_probe.py").write_text(PROBE.replace("EXPECTED", repr("kafka@4.3.0")))
    proc = _pytest(tmp_path, "--implementation", "kafka", "--kafka-version", "4.3.0", "test_probe.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_kafka_version_option_needs_the_kafka_implementation(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE.replace("EXPECTED", repr("kafka")))
    proc = _pytest(tmp_path, "--kafka-version", "4.3.1", "test_probe.py")
    assert (proc.returncode, proc.stderr.strip()) == (4, "ERROR: --kafka-version 4.3.1 runs Kafka's own classes: "
                                                         "give it with --implementation kafka, got None")


def test_the_option_rejects_a_name_it_cannot_load_in_one_line(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE)
    proc = _pytest(tmp_path, "--implementation", "nope", "test_probe.py")
    assert proc.returncode == 4   # pytest's usage error
    assert proc.stderr.strip() == (
        "ERROR: --implementation: implementation 'nope' cannot be loaded (ModuleNotFoundError: No module named "
        "'nope'); allowed: null (the bundled SUT), 'kafka', 'kafka@X' (X one of 4.0.0, 4.0.1, 4.0.2, 4.1.0, 4.1.1, "
        "4.1.2, 4.2.0, 4.2.1, 4.2.2, 4.3.0, 4.3.1, 4.4.0), or 'module:qualname' of an importable factory")
