"""Tolerant readers of decoded JSON (a corpus row's ``final_state_json``,
``config_json``, ``args_json``, ``outcome_json``): each answers None (or
empty) for what it cannot read, never raises."""

from __future__ import annotations

import re
from typing import Any, Optional


def lookup(d: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` that ``d`` (a dict) holds, not None; else ``default``."""
    if not isinstance(d, dict):
        return default
    for n in names:
        if n in d and d[n] is not None:
            return d[n]
    return default


def as_int(v: Any) -> Optional[int]:
    """``v`` as an int (an int, an integral float, or digits), else None (bools too)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


def as_ints(v: Any) -> list[int]:
    """The ints of a list (or a set encoded as ``{"items": [...]}``), sorted."""
    if isinstance(v, dict):  # {"items": [...]} or a set encoded as a dict
        v = lookup(v, "items", "values", default=list(v))
    if not isinstance(v, (list, tuple)):
        return []
    return sorted(x for x in (as_int(e) for e in v) if x is not None)


def enum_name(v: Any) -> Optional[str]:
    """An enum member's name, given as a name, ``Class.NAME`` or ``{"value": …}``."""
    if v is None:
        return None
    if isinstance(v, dict):
        v = lookup(v, "value", "name")
    s = str(v)
    return s.split(".")[-1]
