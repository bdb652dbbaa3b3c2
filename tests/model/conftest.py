"""Every worked example runs twice: on the reference model, and mirrored on the
SUT (same actions, same numbers; the SUT's snapshot must equal the model state
after every step and refuse exactly what the model refuses)."""

from __future__ import annotations

import pytest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.split(".")[-1].startswith("test_examples"):
        metafunc.fixturenames.append("engine")
        metafunc.parametrize("engine", ["model", "sut"], indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "sut":
        import scenario
        from difftools import MirroredStep

        mirror = MirroredStep()
        monkeypatch.setattr(scenario, "step", mirror)
        if hasattr(request.module, "why_not_enabled"):
            monkeypatch.setattr(request.module, "why_not_enabled", mirror.why_not_enabled)
    return request.param
