"""Loads the documentation's generators (docs/gen_reference.py) and the
benchmarks' results helper (benchmarks/results.py) by path: neither folder is a
package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load(name: str, path: Path) -> ModuleType:
    """The module at ``path``, imported once under ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def gen_reference() -> ModuleType:
    return load("gen_reference", ROOT / "docs" / "gen_reference.py")


def results() -> ModuleType:
    return load("results", ROOT / "benchmarks" / "results.py")
