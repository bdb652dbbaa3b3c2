"""Implementations under test by name, so a corpus row says which one it was
found with and a replay takes the same one.

A row's ``implementation`` is null for the bundled SUT (``sut.Cluster`` with the
row's bugs; or the model alone, by replay's rule for variants), ``"kafka"`` for
``kafka_bridge.implementation``, and ``"module:qualname"`` for any other factory,
which replay imports.

The campaign (``replicheck fuzz --implementation NAME``) and the pytest option
``--implementation NAME`` build their machine from ``machine_options(NAME)``:
the factory, the profile it follows and whether the properties are checked.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable, Optional

KAFKA = "kafka"

#: The implementations known by a short name: a campaign target
#: ``implementation:NAME`` may name these (a ``module:qualname`` has no target).
NAMES = (KAFKA,)


class ImplementationUnavailable(RuntimeError):
    """An implementation cannot be built here: the one-line message says why and
    what to run."""


def _kafka() -> Callable:
    import kafka_bridge
    return kafka_bridge.implementation


def name_of(implementation: Optional[Callable]) -> Optional[str]:
    """The name a row records for ``implementation`` (None: the bundled SUT)."""
    if implementation is None:
        return None
    try:
        if implementation is _kafka():
            return KAFKA
    except ImportError:
        pass
    return f"{implementation.__module__}:{implementation.__qualname__}"


def named(name: Optional[str]) -> Optional[Callable[..., Any]]:
    """The factory a row's ``implementation`` names (None: the bundled SUT).
    Raises ValueError naming the value and what is allowed when it names nothing
    importable."""
    if name is None:
        return None
    if name == KAFKA:
        return _kafka()
    module, _, qualname = name.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as e:
        raise ValueError(f"implementation {name!r} cannot be loaded ({type(e).__name__}: {e}); allowed: null (the "
                         f"bundled SUT), {KAFKA!r}, or 'module:qualname' of an importable factory") from None
    if not callable(found) or not qualname:
        raise ValueError(f"implementation {name!r} is not a callable factory; allowed: null (the bundled SUT), "
                         f"{KAFKA!r}, or 'module:qualname' of an importable factory")
    return found


def unavailable(name: str) -> Optional[str]:
    """Why the implementation ``name`` cannot be built here (None: it can). For
    "kafka", ``kafka_bridge.unavailable()`` (JPype or Kafka's jars missing); any
    other name needs nothing beyond ``named``."""
    if name != KAFKA:
        return None
    try:
        import kafka_bridge
    except ImportError as e:
        return f"kafka_bridge cannot be imported ({type(e).__name__}: {e})"
    return kafka_bridge.unavailable()


def executor_folders(name: str) -> dict[str, Path]:
    """The folders another process (a Spark executor's Python worker) needs to
    build the implementation ``name`` as this one does, each by the environment
    variable that names it there: for "kafka", ``kafka_bridge.jvm.LIB_ENV`` and
    this process's folder of Kafka's jars (absolute) when it exists; nothing
    otherwise. ``harness.spark_pool`` ships them with Spark."""
    if name != KAFKA:
        return {}
    try:
        from kafka_bridge.jvm import LIB_ENV, lib_dir
    except ImportError:
        return {}
    folder = lib_dir()
    return {LIB_ENV: folder.resolve()} if folder.is_dir() else {}


def reports_properties(name: Optional[str]) -> bool:
    """Whether a property violation is a failure of the implementation ``name``'s
    runs (None, the bundled SUT: yes). Not for "kafka" (``machine_options``): only a
    disagreement with the model is, so a replay of one of its disagreements checks
    no property, as a run with the properties off found it (a property the Kafka
    profile's findings break on the way would stop the replay before it)."""
    return name != KAFKA


def machine_options(name: str) -> dict[str, Any]:
    """The ``harness.machine.machine_for`` arguments that put the implementation
    ``name`` under test: ``implementation`` (its factory), ``profile``,
    ``check_properties`` and ``detach_at_findings``.

    "kafka" runs under the Kafka profile, detached at findings: its code follows
    every rule of that profile, whose known findings are property violations of
    the profile itself (README, "Findings under the Kafka profile"). A property
    failing is no failure of the run: it detaches Kafka's code and the model goes
    on alone (``harness.lockstep.LockStep``), since what follows a finding is its
    consequence (Kafka's controller throws electing a last known leader outside the
    replicas, tests/kafka_bridge/test_kafka_findings.py), not a new disagreement.
    What the run checks is agreement with the model up to there. Any other factory
    runs under the chapters' profile with every property checked (the defaults of
    ``machine_for``). Raises ValueError as ``named`` does."""
    from model import CHAPTERS
    from model import KAFKA as KAFKA_PROFILE
    factory = named(name)
    if name == KAFKA:
        return {"implementation": factory, "profile": KAFKA_PROFILE, "check_properties": True,
                "detach_at_findings": True}
    return {"implementation": factory, "profile": CHAPTERS, "check_properties": True, "detach_at_findings": False}
