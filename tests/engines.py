"""Running a scenario test on both engines: the reference model and, mirrored, the
SUT (the ``engine`` fixture of the root conftest does the mirroring)."""

from __future__ import annotations

import pytest


def parametrize_engines(metafunc: pytest.Metafunc) -> None:
    """Run ``metafunc``'s test once per engine ("model", "sut")."""
    metafunc.fixturenames.append("engine")
    metafunc.parametrize("engine", ["model", "sut"], indirect=True)
