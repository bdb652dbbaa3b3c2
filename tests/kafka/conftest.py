"""Apache Kafka's own unit tests, restated on replicheck under the Kafka profile.

Every test runs twice, on the reference model and mirrored on the SUT (the
``engine`` fixture of the root conftest), unless its module sets ``ENGINES = False``
(the searches drive the machine, which compares the SUT itself)."""

from __future__ import annotations

import pytest

from engines import parametrize_engines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if getattr(metafunc.module, "ENGINES", True):
        parametrize_engines(metafunc)
