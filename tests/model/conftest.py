"""Every worked example runs twice: on the reference model, and mirrored on the
SUT (same actions, same numbers; the SUT's outcomes and observation must equal the
model's after every step, and it must refuse exactly what the model refuses)."""

from __future__ import annotations

import pytest

from engines import parametrize_engines, use_engine  # noqa: F401 (an autouse fixture)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.split(".")[-1].startswith("test_examples"):
        parametrize_engines(metafunc)
