"""The catalogue of Kafka's unit tests restated here stays complete where the
README shows it: every method a module lists as not expressible is in the README's
list, with its reason there too."""

from __future__ import annotations

import importlib
from pathlib import Path

ENGINES = False

HERE = Path(__file__).resolve().parent


def test_readme_lists_every_kafka_test_that_does_not_fit():
    readme = (HERE.parents[1] / "README.md").read_text()
    missing = []
    for path in sorted(HERE.glob("test_*.py")):
        for name, why in getattr(importlib.import_module(path.stem), "NOT_EXPRESSIBLE", {}).items():
            if f"- `{name}`: {' '.join(why.split())}" not in readme:
                missing.append(f"{path.stem}.{name}")
    assert not missing, f"not in the README (or with another reason): {missing}"
