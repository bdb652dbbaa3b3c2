"""The stateful harness: the Hypothesis state machine pairing the reference
model with the SUT, the explorer that drives the same machine without
Hypothesis's engine, failure reports, protocol coverage, plain random walks and
the counterexample corpus.

Exports are loaded lazily so that ``harness.schema`` (pyarrow only) can be read
without importing the model.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PropertyViolated": "harness.failures",
    "SutDiverged": "harness.failures",
    "ReplicationMachine": "harness.machine",
    "machine_for": "harness.machine",
    "configs": "harness.strategies",
    "Explorer": "harness.explore",
    "replay": "harness.replay",
    "ReplayResult": "harness.replay",
    "TraceNotEnabled": "harness.replay",
    "CorpusWriter": "harness.corpus",
    "read_counterexamples": "harness.corpus",
    "decode_counterexample": "harness.corpus",
    "run_machine": "harness.corpus",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
