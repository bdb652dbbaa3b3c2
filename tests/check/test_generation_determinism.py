"""A derandomized run draws the same examples whatever the process imported
before it (``check.strategies.draw_nothing_from_local_source``): Hypothesis
would otherwise mix in integers from the source of local modules imported so
far, and pytest-xdist's workers import different ones."""

from __future__ import annotations

import importlib
import sys

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import check.strategies  # noqa: F401  (the pin is made when it is imported)


def _derandomized_stream() -> list[int]:
    seen: list[int] = []

    @settings(derandomize=True, database=None, max_examples=300, phases=[Phase.generate], deadline=None)
    @given(st.integers(0, 10**6))
    def draw(n: int) -> None:
        seen.append(n)

    draw()
    return seen


def test_a_local_module_imported_between_two_runs_changes_nothing(tmp_path, monkeypatch):
    before = _derandomized_stream()
    constants = ", ".join(str(100_003 + 7_919 * i) for i in range(200))
    (tmp_path / "local_constants_module.py").write_text(f"VALUES = ({constants})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("local_constants_module")
    try:
        assert _derandomized_stream() == before
    finally:
        sys.modules.pop("local_constants_module", None)
