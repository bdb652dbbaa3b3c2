"""``pytest --hypothesis-show-statistics`` on a machine test lists the protocol
coverage events (``check.coverage``) the machine reported with
``hypothesis.event``."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

MACHINE_TEST = '''
from hypothesis import settings
from check.machine import machine_for
from check.subject import Subject

Machine = machine_for(Subject(compare=False), name="EventsMachine")
Machine.TestCase.settings = settings(max_examples=10, stateful_step_count=20, deadline=None, database=None,
                                     derandomize=True)
TestEvents = Machine.TestCase
'''


def test_the_statistics_show_the_protocol_coverage_events(tmp_path: Path):
    (tmp_path / "test_events.py").write_text(textwrap.dedent(MACHINE_TEST))
    done = subprocess.run([sys.executable, "-m", "pytest", "test_events.py", "--hypothesis-show-statistics",
                           "-p", "no:cacheprovider", "-q"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # Derandomized: ten examples of 20 steps always commit and acknowledge a write.
    assert re.search(r"^\s+\* [\d.]+%, write acknowledged$", done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^\s+\* [\d.]+%, True HWM advanced$", done.stdout, re.MULTILINE), done.stdout
