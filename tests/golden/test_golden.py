"""The golden corpus (``tests/golden/corpus``, built by ``build.py``): each
protocol variant's and each SUT bug's shortest counterexample, replayed under the
regression rule of ``--replay-corpus`` — the flaw's trace must still fail the
same way. This replaces example budgets of derandomized searches: a replay does
not depend on Hypothesis's stream, so a change to the machine cannot move it;
how fast the machine finds each flaw is measured by
``benchmarks/time_to_find.py``.

``pytest --replay-corpus tests/golden/corpus`` runs the same replays as
collected corpus items.
"""

from __future__ import annotations

import pytest

from store.reader import read_counterexamples
from check.scenarios import MINIMAL
from campaign.regression import check_regression
from model import LIVENESS_VARIANTS, VARIANT_DOCS, Variant
from sut import Bug

from build import GOLDEN

ROWS = read_counterexamples(GOLDEN, warn=False)
#: "variant:NAME" / "bug:NAME" (a variant and a bug may share a name) -> its row.
BY_FLAW = {"+".join([f"variant:{v}" for v in r["variants"]] + [f"bug:{b}" for b in r["sut_bugs"]]): r
           for r in ROWS.rows}


def test_the_golden_corpus_reads_cleanly_and_holds_one_row_per_flaw():
    assert not ROWS.problems
    assert len(ROWS.rows) == len(BY_FLAW) == len(Variant) + len(Bug)
    assert set(BY_FLAW) == {f"variant:{v.name}" for v in Variant} | {f"bug:{b.name}" for b in Bug}


@pytest.mark.parametrize("flaw", sorted(BY_FLAW))
def test_the_flaw_still_fails_the_same_way(flaw: str):
    check_regression(BY_FLAW[flaw])


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.name)
def test_each_variant_row_is_its_minimal_scenario_reduced(variant: Variant):
    """A variant's row comes from its hand-written minimal scenario (up to the step
    the replay first fails at), reduced: never longer, and a property the variant
    is expected to break."""
    row = BY_FLAW[f"variant:{variant.name}"]
    assert row["kind"] == ("liveness" if variant in LIVENESS_VARIANTS else "property")
    assert row["property"] in VARIANT_DOCS[variant][1]
    assert row["step_count"] <= (row["shrunk_step_count"] or row["step_count"]) <= len(MINIMAL[variant].actions)


@pytest.mark.parametrize("bug", list(Bug), ids=lambda b: b.name)
def test_each_bug_row_is_a_divergence_of_that_bug_alone(bug: Bug):
    row = BY_FLAW[f"bug:{bug.name}"]
    assert row["kind"] == "divergence" and row["sut_bugs"] == [bug.name] and not row["variants"]
