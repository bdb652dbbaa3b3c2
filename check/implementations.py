"""Implementations under test, from a ``Subject``: what the lockstep builds and
compares with the model.

A subject's implementation is None for the bundled SUT (``sut.Cluster`` with the
subject's bugs), ``"kafka"`` for Apache Kafka's own classes of the pinned release
(``kafka_bridge.implementation``), ``"kafka@X"`` for those of release X (one of
``model.KAFKA_RELEASES``: a process runs one release's classes),
``"module:qualname"`` of any other factory
``Config -> implementation`` (imported here, so a corpus row names the one it was
found with and a replay takes the same one), or such a factory itself.

The campaign (``replicheck fuzz --implementation NAME``) and the pytest option
``--implementation NAME`` put NAME under test as ``subject_for(NAME)``: the
profile it follows and whether the properties are checked.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from model import CHAPTERS
from model import KAFKA as KAFKA_PROFILE
from model import KAFKA_RELEASES, Config, kafka_release_error
from sut import Cluster

from .subject import KAFKA, Subject, kafka_name, kafka_release

#: The implementations known by a short name: a campaign target
#: ``implementation:NAME`` may name these (a ``module:qualname`` has no target):
#: Kafka's own classes of the pinned release, and of every other release the
#: bridge is built for.
NAMES = (KAFKA,) + tuple(kafka_name(r) for r in KAFKA_RELEASES if kafka_name(r) != KAFKA)

_ALLOWED = (f"null (the bundled SUT), {KAFKA!r}, '{KAFKA}@X' (X one of {', '.join(KAFKA_RELEASES)}), "
            f"or 'module:qualname' of an importable factory")


class ImplementationUnavailable(RuntimeError):
    """An implementation cannot be built here: the one-line message says why and
    what to run."""


def _kafka(release: str) -> Callable[..., Any]:
    """The factory of Kafka ``release``'s own classes (``kafka_bridge.implementation_of``:
    it runs them in this process, ValueError when the process runs another
    release's). ValueError at once when the bridge is not built for the release."""
    why = kafka_release_error(release)
    if why is not None:
        raise ValueError(f"implementation {kafka_name(release)!r}: {why}")
    # Loaded only when named: kafka_bridge starts a JVM (JPype) on first use.
    import kafka_bridge
    return kafka_bridge.implementation_of(release)


def with_release(name: Optional[str], kafka_version: Optional[str]) -> Optional[str]:
    """The implementation a front door's ``--implementation NAME --kafka-version X``
    name together: NAME, or, with X, Kafka's own classes of release X
    (``kafka_name``). ValueError when X comes with another implementation than
    kafka, or is not a release the bridge is built for."""
    if kafka_version is None:
        return name
    if name != KAFKA:
        raise ValueError(f"--kafka-version {kafka_version} runs Kafka's own classes: give it with "
                         f"--implementation {KAFKA}, got {name!r}")
    why = kafka_release_error(kafka_version)
    if why is not None:
        raise ValueError(f"--kafka-version: {why}")
    return kafka_name(kafka_version)


def named(name: Optional[str]) -> Optional[Callable[..., Any]]:
    """The factory a row's ``implementation`` names (None: the bundled SUT).
    Raises ValueError naming the value and what is allowed when it names nothing
    importable."""
    if name is None:
        return None
    if (release := kafka_release(name)) is not None:
        return _kafka(release)
    module, _, qualname = name.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as e:
        raise ValueError(f"implementation {name!r} cannot be loaded ({type(e).__name__}: {e}); "
                         f"allowed: {_ALLOWED}") from None
    if not callable(found) or not qualname:
        raise ValueError(f"implementation {name!r} is not a callable factory; allowed: {_ALLOWED}")
    return found


def bundled_sut(bugs: frozenset) -> Callable[[Config], Any]:
    """Builds the bundled SUT (``sut.Cluster``) with ``bugs`` for a config."""
    def build(config: Config) -> Any:
        return Cluster(config, bugs=bugs)
    return build


def factory(subject: Subject) -> Optional[Callable[[Config], Any]]:
    """What builds the implementation ``subject`` compares with the model from a
    config: None when it compares none (``Subject.compares``), the bundled SUT
    with its bugs, the named factory (``named``: ValueError when it cannot be
    loaded) or the factory given."""
    if not subject.compares:
        return None
    implementation = subject.implementation
    if implementation is None:
        return bundled_sut(subject.bugs)
    if isinstance(implementation, str):
        return named(implementation)
    return implementation


def unavailable(name: str) -> Optional[str]:
    """Why the implementation ``name`` cannot be built here (None: it can). For
    "kafka" and "kafka@X", ``kafka_bridge.unavailable(release)`` (JPype or the
    release's jars missing, a release the bridge is not built for); any other
    name needs nothing beyond ``named``."""
    release = kafka_release(name)
    if release is None:
        return None
    try:
        import kafka_bridge
    except ImportError as e:
        return f"kafka_bridge cannot be imported ({type(e).__name__}: {e})"
    return kafka_bridge.unavailable(release)


def runs_elsewhere(name: Optional[str]) -> Optional[str]:
    """The Kafka release the implementation ``name`` runs when this process cannot
    run it: its JVM already runs another release's classes (one release a
    process, ``kafka_bridge.use``). None for any other name, and when this process
    can (no JVM started yet, or the same release's)."""
    release = kafka_release(name)
    if release is None:
        return None
    jvm = sys.modules.get("kafka_bridge.jvm")   # not imported: no JVM has started here
    running = None if jvm is None else jvm.started()
    return None if running is None or running == release else release


def executor_folders(name: str) -> dict[str, Path]:
    """The folders another process (a Spark executor's Python worker) needs to
    build the implementation ``name`` as this one does, each by the environment
    variable that names it there: for "kafka" and "kafka@X", ``kafka_bridge.jvm.
    LIB_ENV`` and this process's folder of the release's jars (absolute) when it
    exists; nothing otherwise. ``campaign.spark_pool`` ships them with Spark."""
    release = kafka_release(name)
    if release is None:
        return {}
    try:
        from kafka_bridge.jvm import LIB_ENV, lib_dir
    except ImportError:
        return {}
    folder = lib_dir(release)
    return {LIB_ENV: folder.resolve()} if folder.is_dir() else {}


def subject_for(name: str) -> Subject:
    """The subject that puts the implementation ``name`` under test.

    "kafka" runs under the Kafka profile, detached at findings: its code follows
    every rule of that profile, whose known findings are property violations of
    the profile itself (docs: Findings under the Kafka profile). A property
    failing is no failure of the run: it detaches Kafka's code and the model goes
    on alone (``check.lockstep.LockStep``), since what follows a finding is its
    consequence (Kafka's controller throws electing a last known leader outside the
    replicas, tests/kafka_bridge/test_kafka_findings.py), not a new disagreement.
    What the run checks is agreement with the model up to there. Any other factory
    runs under the chapters' profile with every property checked. Raises
    ValueError as ``named`` does."""
    named(name)
    if kafka_release(name) is not None:
        return Subject(implementation=name, profile=KAFKA_PROFILE, detach_at_findings=True)
    return Subject(implementation=name, profile=CHAPTERS)
