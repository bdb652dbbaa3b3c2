"""Security: the report JVM's log4j2 configuration (``spark_reports._session``)
is written in a private folder of this process, never read from a name in
the shared temp folder that another local user could plant first (a log4j2
file there made the JVM append chosen lines to a chosen file)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import spark_reports._session as _session

ROOT = Path(__file__).resolve().parents[2]
#: The name the configuration used to be read from, in the shared temp folder.
PLANTED_NAME = "replicheck-spark-log4j2.properties"


def _planted(shared: Path, target: Path) -> Path:
    """A log4j2 configuration appending every log line to ``target``, planted
    in ``shared`` where another local user could write it."""
    shared.mkdir(exist_ok=True)
    planted = shared / PLANTED_NAME
    planted.write_text(f"""\
rootLogger.level = info
rootLogger.appenderRef.f.ref = f
appender.f.type = File
appender.f.name = f
appender.f.fileName = {target}
appender.f.append = true
appender.f.layout.type = PatternLayout
appender.f.layout.pattern = PLANTED %m%n
""")
    return planted


def test_the_log4j_file_is_ours_in_a_private_folder(tmp_path, monkeypatch):
    shared = tmp_path / "shared-tmp"
    planted = _planted(shared, tmp_path / "chosen.log")
    before = planted.read_text()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    monkeypatch.setattr(_session, "_LOG4J_FOLDER", None)
    path = Path(_session._log4j_file())
    assert path != planted and path.parent.parent == shared
    assert path.read_text() == _session._LOG4J2
    info = path.parent.stat()
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    assert Path(_session._log4j_file()) == path          # once per process
    assert planted.read_text() == before                 # neither used nor touched
    _session._remove(str(path.parent), os.getpid())
    assert not path.parent.exists()


_REPORT_SESSION = """
from spark_reports._session import session
spark = session("local[1]", spark_driver_memory="1g")
assert spark.range(3).count() == 3
spark.stop()
"""


@pytest.mark.system  # a report JVM of its own
def test_a_planted_log4j_file_is_not_used_by_the_report_jvm(tmp_path):
    """A real report session, its temp folder (``TMPDIR``) holding a planted
    configuration: the JVM never writes the planted file's target, and the
    private folder is gone once the process has exited."""
    pytest.importorskip("pyspark")
    shared, chosen = tmp_path / "shared-tmp", tmp_path / "chosen.log"
    _planted(shared, chosen)
    driver = subprocess.run([sys.executable, "-c", _REPORT_SESSION], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "TMPDIR": str(shared), "SPARK_LOCAL_IP": "127.0.0.1"})
    assert driver.returncode == 0, driver.stderr[-3000:]
    assert not chosen.exists(), chosen.read_text()[:500]
    assert [p.name for p in shared.iterdir()] == [PLANTED_NAME]
