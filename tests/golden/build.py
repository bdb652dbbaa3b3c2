"""Builds the golden corpus: each flaw's shortest counterexample, a regression
test of ``--replay-corpus`` in the default suite (``make test``).

One row per protocol variant (its minimal scenario, ``check.scenarios``)
and per SUT bug (its scenario in ``tests/sut/test_bugs.py``), each reduced by
``check.refine.refine`` (ddmin over the trace and smaller
configurations). Under the regression rule a row recorded with a variant or a bug
must still fail the same way, so a change that stops the checker catching a flaw,
or makes a step of its trace impossible, fails ``make test`` by name.

Run ``make golden`` (``python tests/golden/build.py``) after a change that
alters the traces (a new action, a renumbered message); the files are rewritten
whole, with a fixed run id and date, so an unchanged corpus rebuilds to the same
rows. Usage: build.py [--out DIR] [--reduce-seconds S]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for path in (ROOT, HERE.parent, HERE.parent / "sut"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import attrs  # noqa: E402

from check.finding import Finding, Search, findings  # noqa: E402
from check.refine import refine  # noqa: E402
from check.replay import replay  # noqa: E402
from check.scenarios import MINIMAL  # noqa: E402
from check.subject import Subject  # noqa: E402
from check.verdict import SUT_DIFFERS  # noqa: E402
from model import VARIANT_DOCS  # noqa: E402
from store.rows import counterexample_rows  # noqa: E402
from store.writer import CorpusWriter  # noqa: E402

#: Where the golden corpus lives (a corpus root: ``counterexamples/run_date=…/``).
GOLDEN = HERE / "corpus"
RUN_ID = "golden"
RUN_DATE = dt.date(2026, 1, 1)
FOUND_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _only(failures: tuple[Finding, ...], expected: tuple[str, ...], name: str) -> Finding:
    for f in failures:
        if f.prop in expected:
            return f
    raise SystemExit(f"{name}: its scenario no longer fails with one of {expected} "
                     f"(got {[f.prop for f in failures]})")


def flaw_failures() -> Iterator[tuple[str, Finding]]:
    """(flaw name, the first failure of its scenario), variants first, then bugs: a
    property the variant is expected to break (``VARIANT_DOCS``), a divergence of
    the buggy SUT."""
    from sut import Bug
    from test_bugs import SCENARIOS, Trio

    for variant, scenario in MINIMAL.items():
        config = attrs.evolve(scenario.config, variants=frozenset({variant}))
        result = replay(scenario.actions, Subject.at(config))
        found = findings(result.verdict, result.subject, Search(f"golden::{variant.name}")) if result.verdict else ()
        yield variant.name, _only(found, VARIANT_DOCS[variant][1], variant.name)
    for bug in Bug:
        config, story = SCENARIOS[bug]
        trio = Trio(config, bug)
        story(trio)
        result = replay(trio.trace, Subject.at(config, bugs={bug}))
        found = findings(result.verdict, result.subject, Search(f"golden::{bug.name}")) if result.verdict else ()
        yield bug.name, _only(found, (SUT_DIFFERS,), bug.name)


def build(out: Path, reduce_seconds: float) -> list[dict[str, Any]]:
    """Reduce every flaw's scenario and write the rows under ``out`` (replaced whole)."""
    rows = []
    for name, failure in flaw_failures():
        reduced = refine(failure, reduce_seconds)
        rows += counterexample_rows([reduced], run_id=RUN_ID, worker="main", found_at=FOUND_AT)
        changes = reduced.shrunk.changes if reduced.shrunk is not None else ()
        print(f"{name:48} {len(failure.trace):3} -> {len(reduced.trace):3} steps  {', '.join(changes)}", flush=True)
    if out.exists():
        shutil.rmtree(out)
    writer = CorpusWriter(out, run_id=RUN_ID, worker="main", run_date=RUN_DATE)
    writer.add_counterexamples(rows)
    writer.flush()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=GOLDEN)
    ap.add_argument("--reduce-seconds", type=float, default=120.0,
                    help="time limit of each reduction (default 120; the reductions end well before)")
    args = ap.parse_args()
    rows = build(args.out, args.reduce_seconds)
    print(f"{len(rows)} counterexamples written to {args.out}")


if __name__ == "__main__":
    main()
