"""Every test here needs Kafka's classes: skipped, saying why, without them (failed
instead under REPLICHECK_REQUIRE_KAFKA, which ``make test`` sets)."""

from __future__ import annotations

import pytest

from engines import require_kafka


@pytest.fixture(autouse=True)
def kafka_classes() -> None:
    require_kafka()
