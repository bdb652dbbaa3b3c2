"""Apache Kafka's own unit tests, restated on replicheck under the Kafka profile.

Every test runs three times, on the reference model, mirrored on the SUT, and
mirrored on the SUT with Apache Kafka's own components (``kafka_bridge``: Kafka's
``PartitionChangeBuilder`` deciding the controller's changes) — the ``engine``
fixture of the root conftest — unless its module sets ``ENGINES = False``
(the searches drive the machine, which compares the SUT itself)."""

from __future__ import annotations

import pytest

from engines import parametrize_engines, use_engine  # noqa: F401 (an autouse fixture)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if getattr(metafunc.module, "ENGINES", True):
        parametrize_engines(metafunc, kafka=True)
