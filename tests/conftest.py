"""Shared pytest set-up.

pytest's default ``prepend`` import mode puts this directory on ``sys.path``
because of this conftest; the project root goes first so that ``import model``
always finds the real ``model`` package, never a namespace package made of
``tests/model/`` (which sits in this directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
_TESTS = str(Path(__file__).resolve().parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
if _TESTS not in sys.path:  # shared test helpers (difftools) import from any folder
    sys.path.insert(1, _TESTS)


import pytest  # noqa: E402


@pytest.fixture
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a scenario test written against the model (``scenario``'s steps) on the
    reference model ("model"), or mirrored on the SUT ("sut": same actions, the
    SUT's outcomes and observation must equal the model's after every step and it must refuse
    exactly what the model refuses), or mirrored on the SUT with Kafka's own
    components ("kafka", ``kafka_bridge``). Folders opt in with ``pytest_generate_tests``
    and ``engines.parametrize_engines``."""
    param = getattr(request, "param", "model")   # a test left unparametrized runs on the model
    if param in ("sut", "kafka"):
        import scenario
        from difftools import MirroredStep

        mirror = MirroredStep()
        if param == "kafka":
            from engines import require_kafka
            require_kafka()
            import kafka_bridge
            mirror = MirroredStep(kafka_bridge.implementation, kafka_bridge.not_applicable)
        monkeypatch.setattr(scenario, "step", mirror)
        if hasattr(request.module, "why_not_enabled"):
            monkeypatch.setattr(request.module, "why_not_enabled", mirror.why_not_enabled)
    return param


#: Test files whose tests run the longest (the tiny end-to-end campaign and its
#: report, the differential walks, the fault injection, the live view in a browser,
#: a campaign on a Spark cluster), by file name.
_LONGEST = ("test_end_to_end.py", "test_report_job.py", "test_differential_walks.py", "test_fault_injection.py",
            "test_live_view.py", "test_spark_cluster.py", "test_kafka_exit_status.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: under pytest-xdist a long test collected last runs
    alone on one worker at the end while the others sit idle. (``--dist load``
    hands each worker a run of consecutive tests, so use ``--dist worksteal``,
    as ``make test`` does, to spread them.)"""
    items.sort(key=lambda item: item.path.name not in _LONGEST)
