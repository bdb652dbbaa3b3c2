"""The catalogue of Kafka's unit tests restated here stays complete where the
docs show it: every method a module lists as not expressible (its
``NOT_EXPRESSIBLE`` table, as the module holds it) is on the generated page
(docs: Reference, Kafka unit tests that do not fit), with its reason there too."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

ENGINES = False

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _gen_reference():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_reference", module)
    spec.loader.exec_module(module)
    return module


def test_the_docs_list_every_kafka_test_that_does_not_fit():
    page = _gen_reference().not_expressible_markdown(HERE)
    missing = []
    for path in sorted(HERE.glob("test_*.py")):
        for name, why in getattr(importlib.import_module(path.stem), "NOT_EXPRESSIBLE", {}).items():
            if f"- `{name}`: {' '.join(why.split())}" not in page:
                missing.append(f"{path.stem}.{name}")
    assert not missing, f"not on the page (or with another reason): {missing}"
