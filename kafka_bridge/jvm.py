"""The JVM holding Apache Kafka's classes, started once per process (JPype).

The jars of the pinned release (``kafka_bridge/pom.xml``, ``model.KAFKA_RELEASE``),
or of another chosen before the JVM starts (``use``, one of ``releases.RELEASES``:
the implementation "kafka@X"), are fetched by ``make kafka-jars [KAFKA_VERSION=X]``
into ``.kafka/X/lib`` at the project root, or read from the folder
``REPLICHECK_KAFKA_LIB`` names. One process runs one release's classes. Each
pytest-xdist worker is a process of its own, so each starts its own JVM, once.

At exit JPype destroys the JVM (``atexit``: ``DestroyJavaVM``, which runs Java's
shutdown hooks). The JVM needs its own SIGSEGV handler then, and Python's
``faulthandler`` may have replaced it meanwhile: ``start`` keeps the handlers the
JVM installed and puts them back at exit, before JPype destroys the JVM, so the
process exits with the status of what it ran, not of SIGSEGV.

The process's other signals stay Python's (``-Xrs``, ``interrupt=False``): a
unit asked to stop by SIGTERM (``campaign.workers``, ``campaign.spark_pool``)
gets its Python handler's ``Stopped`` and Ctrl-C its ``KeyboardInterrupt``, where
HotSpot's handlers would begin the JVM's shutdown, leave the process running with
a JVM that cannot be started again (``OSError: JVM cannot be restarted``) and
lose the unit's work; a Spark Python worker dies of the SIGHUP its daemon sends
at shutdown, as PySpark means it to.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import threading
from pathlib import Path
from typing import Any, Iterator, Optional

from model import KAFKA_RELEASE

from . import releases

LIB_ENV = "REPLICHECK_KAFKA_LIB"
_started: list[str] = []   # the release the JVM started with, once it has
_chosen: list[str] = []    # the release ``use`` chose, until the JVM starts
SHIM_JAR = "kafka-bridge-shim.jar"
ROOT = Path(__file__).resolve().parents[1]


class KafkaUnavailable(RuntimeError):
    """Kafka's classes cannot be loaded: the message says why and what to run."""


def version() -> str:
    """The Kafka release whose classes this process runs: the one the JVM started
    with, else the one ``use`` chose, else the pinned ``model.KAFKA_RELEASE``."""
    return (_started or _chosen or [KAFKA_RELEASE])[-1]


def started() -> Optional[str]:
    """The release whose classes this process's JVM runs, None before it starts."""
    return _started[0] if _started else None


def use(release: str) -> None:
    """Run Kafka ``release``'s classes in this process (before the JVM starts).
    Raises ``releases.UnknownRelease`` for a release the bridge is not built for,
    ValueError when the JVM already runs another release's classes (a release
    needs a process of its own)."""
    releases.check(release)
    if _started and _started[0] != release:
        raise ValueError(f"this process runs Kafka {_started[0]}'s classes: Kafka {release}'s need a process "
                         f"of their own")
    _chosen[:] = [release]


def lib_dir(release: Optional[str] = None) -> Path:
    """The folder of Kafka ``release``'s jars (None: ``version()``):
    ``$REPLICHECK_KAFKA_LIB``, else ``.kafka/X/lib`` at the project root."""
    return Path(os.environ.get(LIB_ENV) or ROOT / ".kafka" / (release or version()) / "lib")


def _make(release: str) -> str:
    return "make kafka-jars" + ("" if release == KAFKA_RELEASE else f" KAFKA_VERSION={release}")


def jars(release: Optional[str] = None) -> list[Path]:
    """The jars of ``lib_dir(release)`` (None: ``version()``), sorted; raises
    ``KafkaUnavailable`` when the release's ``kafka-metadata`` or core
    (``kafka_2.13``) jar or the bridge's shim is not among them."""
    release = release or version()
    folder = lib_dir(release)
    found = sorted(folder.glob("*.jar")) if folder.is_dir() else []
    names = {p.name for p in found}
    for jar in (f"kafka-metadata-{release}.jar", f"kafka_2.13-{release}.jar"):
        if jar not in names:
            raise KafkaUnavailable(f"no {jar} in {folder}: run `{_make(release)}` (Maven) or set {LIB_ENV} "
                                   f"to a folder holding Kafka {release}'s jars")
    if SHIM_JAR not in names:
        raise KafkaUnavailable(f"no {SHIM_JAR} (the bridge's controller shim, kafka_bridge/java) in {folder}: "
                               f"run `{_make(release)}` (Maven)")
    return found


def unavailable(release: Optional[str] = None) -> Optional[str]:
    """Why Kafka ``release``'s classes (None: ``version()``'s) cannot be loaded
    here (None: they can)."""
    try:
        import jpype  # noqa: F401
    except ImportError:
        return "JPype is not installed: pip install 'replicheck[kafka]'"
    try:
        jars(releases.check(release) if release else None)
    except (KafkaUnavailable, releases.UnknownRelease) as e:
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
        # A small heap: the classes in the loop are small, and each xdist worker
        # starts one JVM. -Xrs, interrupt=False: SIGHUP, SIGINT, SIGTERM stay Python's (module doc).
        release = version()
        with _stops_held():
            jpype.startJVM("-Xmx512m", "-Xrs", classpath=[str(p) for p in jars()], convertStrings=True,
                           interrupt=False)
        _started.append(release)
        handlers = _fault_handlers()
        if handlers:
            # Registered after jpype's own exit hook (``jpype._core._JTerminate``,
            # registered when jpype is imported), so it runs before it: atexit is LIFO.
            atexit.register(_reinstate, jpype, handlers)
    return jpype


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """Within, SIGINT and SIGTERM are noted, not handled; once out, each one
    noted is raised again for the handler the process had: a unit stopped
    while its JVM starts is stopped once it has started, not halfway through
    JPype's set-up, which would leave a JVM this process can neither use nor
    start again. (Python's handlers, not the signal mask: ``import jpype``
    starts a thread of its own, which a blocked signal would reach.) Only in
    the main thread, where Python runs its handlers; elsewhere it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    held = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    held = {signum: handler for signum, handler in held.items() if handler is not None}  # None: not Python's
    for signum in held:
        signal.signal(signum, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for signum, handler in held.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)


# HotSpot services safepoint polls and implicit null checks in compiled code
# through its own SIGSEGV (SIGBUS, SIGILL, SIGFPE) handler. faulthandler.disable()
# puts back the handlers faulthandler saved at enable(): when it was enabled before
# the JVM started and is disabled after (pytest's faulthandler plugin does both, in
# every pytest and xdist worker process), the handler left is SIG_DFL, and the first
# such fault in the JVM's shutdown at exit kills the process with SIGSEGV (139)
# after a run that succeeded. JPype <= 1.7.1 does not guard against it (its fix,
# jpype-project/jpype 64023929, snapshots and restores the handlers the same way).
_FAULT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")
                       if hasattr(signal, name))
# Room for any libc's struct sigaction (glibc: 152 bytes, macOS: 16), kept opaque.
_SIGACTION_SIZE = 1024


def _sigaction() -> Any:
    """libc's ``sigaction`` through ctypes, or None where there is none (Windows)."""
    if os.name != "posix":
        return None
    try:
        sigaction = ctypes.CDLL(None, use_errno=True).sigaction
    except (OSError, AttributeError):
        return None
    sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    sigaction.restype = ctypes.c_int
    return sigaction


def _fault_handlers() -> dict[int, Any]:
    """The process's current actions for the fault signals (just after the JVM
    started: the JVM's), as opaque ``struct sigaction`` buffers; {} where they
    cannot be read."""
    sigaction = _sigaction()
    if sigaction is None:
        return {}
    handlers = {}
    for signum in _FAULT_SIGNALS:
        action = ctypes.create_string_buffer(_SIGACTION_SIZE)
        if sigaction(signum, None, action) == 0:
            handlers[signum] = action
    return handlers


def _reinstate(jpype: Any, handlers: dict[int, Any]) -> None:
    """At exit, while the JVM still runs: put the JVM's fault handlers back, for
    the shutdown JPype's exit hook runs next. Nothing else changes: the exit
    status stays that of what ran."""
    if not jpype.isJVMStarted():  # shut down already: the handlers belong to no one now
        return
    sigaction = _sigaction()
    if sigaction is None:
        return
    for signum, action in handlers.items():
        sigaction(signum, action, None)
