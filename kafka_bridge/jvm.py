"""The JVM holding Apache Kafka's classes, started once per process (JPype).

The jars of the pinned release (``kafka_bridge/pom.xml``, ``model.KAFKA_RELEASE``)
are fetched by ``make kafka-jars`` into ``.kafka/lib`` at the project root, or
read from the folder ``REPLICHECK_KAFKA_LIB`` names. Each pytest-xdist worker is
a process of its own, so each starts its own JVM, once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from model import KAFKA_RELEASE

LIB_ENV = "REPLICHECK_KAFKA_LIB"
SHIM_JAR = "kafka-bridge-shim.jar"
ROOT = Path(__file__).resolve().parents[1]


class KafkaUnavailable(RuntimeError):
    """Kafka's classes cannot be loaded: the message says why and what to run."""


def lib_dir() -> Path:
    """The folder of Kafka's jars: ``$REPLICHECK_KAFKA_LIB``, else ``.kafka/lib``."""
    return Path(os.environ.get(LIB_ENV) or ROOT / ".kafka" / "lib")


def jars() -> list[Path]:
    """The jars of ``lib_dir()``, sorted; raises ``KafkaUnavailable`` when the
    release's ``kafka-metadata`` or core (``kafka_2.13``) jar or the bridge's shim
    is not among them."""
    folder = lib_dir()
    found = sorted(folder.glob("*.jar")) if folder.is_dir() else []
    names = {p.name for p in found}
    for jar in (f"kafka-metadata-{KAFKA_RELEASE}.jar", f"kafka_2.13-{KAFKA_RELEASE}.jar"):
        if jar not in names:
            raise KafkaUnavailable(f"no {jar} in {folder}: run `make kafka-jars` (Maven) or set {LIB_ENV} "
                                   f"to a folder holding Kafka {KAFKA_RELEASE}'s jars")
    if SHIM_JAR not in names:
        raise KafkaUnavailable(f"no {SHIM_JAR} (the bridge's controller shim, kafka_bridge/java) in {folder}: "
                               f"run `make kafka-jars` (Maven)")
    return found


def unavailable() -> Optional[str]:
    """Why Kafka's classes cannot be loaded here (None: they can)."""
    try:
        import jpype  # noqa: F401
    except ImportError:
        return "JPype is not installed: pip install 'replicheck[kafka]'"
    try:
        jars()
    except KafkaUnavailable as e:
        return str(e)
    return None


def start() -> Any:
    """Start the JVM with Kafka's jars (once per process) and return ``jpype``.
    Raises ``KafkaUnavailable`` when JPype or the jars are missing."""
    why = unavailable()
    if why is not None:
        raise KafkaUnavailable(why)
    import jpype
    if not jpype.isJVMStarted():
        # -Xshare:auto and a small heap: the classes in the loop are small, and each
        # xdist worker starts one JVM.
        jpype.startJVM("-Xmx512m", classpath=[str(p) for p in jars()], convertStrings=True)
    return jpype
