"""Running a scenario test on several engines: the reference model and, mirrored,
the SUT, or the SUT with Kafka's own components (the ``engine`` fixture of the
root conftest does the mirroring)."""

from __future__ import annotations

from typing import Optional

import pytest


def parametrize_engines(metafunc: pytest.Metafunc, kafka: bool = False) -> None:
    """Run ``metafunc``'s test once per engine: "model", "sut", and with ``kafka``
    "kafka" (the SUT with Apache Kafka's own components, ``kafka_bridge``). The
    folder's conftest must make its tests use the ``engine`` fixture
    (``use_engine``): a name merely added to ``metafunc.fixturenames`` is
    parametrized but its fixture never runs."""
    metafunc.parametrize("engine", ["model", "sut"] + (["kafka"] if kafka else []), indirect=True)


def require_kafka(release: Optional[str] = None) -> None:
    """Skip the calling test when Kafka's classes (of ``release``; None: the
    pinned one) cannot be loaded, saying why; fail instead under
    ``REPLICHECK_REQUIRE_KAFKA`` (``make test`` sets it and fetches the releases
    the suite runs, so CI never skips the Kafka tests silently)."""
    import os

    from kafka_bridge import unavailable
    why = unavailable(release)
    if why is None:
        return
    if os.environ.get("REPLICHECK_REQUIRE_KAFKA"):
        pytest.fail(f"Kafka's classes are required (REPLICHECK_REQUIRE_KAFKA) but unavailable: {why}")
    pytest.skip(why)


@pytest.fixture(autouse=True)
def use_engine(engine: str) -> str:
    """Imported into a folder's conftest, makes each of its tests use the ``engine``
    fixture (so the mirroring is set up), parametrized or not ("model" then)."""
    return engine
