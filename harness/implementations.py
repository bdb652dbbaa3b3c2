"""Implementations under test by name, so a corpus row says which one it was
found with and a replay takes the same one.

A row's ``implementation`` is null for the bundled SUT (``sut.Cluster`` with the
row's bugs; or the model alone, by replay's rule for variants), ``"kafka"`` for
``kafka_bridge.implementation``, and ``"module:qualname"`` for any other factory,
which replay imports.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

KAFKA = "kafka"


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
