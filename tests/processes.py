"""The environment of a child Python process a test starts: the project on its
``PYTHONPATH`` (it runs from anywhere), none of this run's pytest or xdist
variables, nor the corpus and profile this run chose."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_env(**extra: str) -> dict[str, str]:
    """``os.environ`` without ``PYTEST_*``, ``REPLICHECK_CORPUS`` and
    ``REPLICHECK_PROFILE``, the project first on ``PYTHONPATH``, then ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k not in ("REPLICHECK_CORPUS", "REPLICHECK_PROFILE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra)
    return env
