"""Every protocol variant is found by the machine on its own.

A variant switches a historic flaw into the model (the SUT implements the
correct protocol, so a variant run checks the properties on the model). Each
run is derandomized with a fixed example budget, generation only; the failure
must be a property the variant is expected to break (``VARIANT_DOCS``).

Budgets are about three times the examples the derandomized run needed when
measured under pytest with the same machine names, so a change that makes a flaw
much harder to find shows up here. A run ends at its search limit
(campaign_search.SEARCH_LIMIT valid examples; the examples counted here also
include the ones Hypothesis discards), so for the flaws found near that limit
the budget is capped at a little above it and the limit is what binds. Flaws
that need long interleavings get examples of up to 400 steps, the rest 100.
Variants too rare for that limit get a long search of their own (``LONG_SEARCH``,
run by ``make test-long`` and CI, not by ``make test``); minimal hand-written scenarios
(tests/variants/test_minimal_scenarios.py) keep every variant reachable.
"""

from __future__ import annotations

import pytest

from campaign_search import SEARCH_LIMIT, STEPS, search
from harness import PropertyViolated, machine_for
from model import VARIANT_DOCS, Variant

BUDGET: dict[Variant, int] = {
    Variant.TRUNCATE_TO_HWM: 60,
    Variant.NO_MAXIMAL_ISR: 420,
    Variant.NO_ELR: 60,
    Variant.UNCLEAN_REGISTRATION_KEEPS_ELR: 290,
    Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR: 60,
    Variant.HWM_ADVANCES_BELOW_MIN_ISR: 100,
    Variant.LIST_OFFSETS_BEFORE_LESO: 700,
    Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR: 70,
    Variant.NO_LAST_FETCHED_EPOCH: 1500,
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: 2500,  # capped: see the module docstring
    Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH: 990,
    Variant.NO_FETCH_RESPONSE_VALIDATION: 2240,
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: 170,
}
#: Variants whose runs get examples of up to campaign_search.DEEP_STEPS steps.
DEEP = {Variant.NO_LAST_FETCHED_EPOCH, Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH,
        Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH, Variant.NO_FETCH_RESPONSE_VALIDATION,
        Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH}
#: Flaws too rare for the default suite's search limit, with the limit (valid
#: 100-step examples) and the budget (examples, discarded ones included) of their
#: own search, marked ``long_search``: excluded from ``make test``, run by ``make
#: test-long`` and by CI. ISR_JOIN_WITHOUT_LESO needs a new leader whose HWM is
#: below the committed end (stale: held until every ISR member fetches in the new
#: epoch, or for good while the ISR is below MinISR, §2.6), a follower outside the
#: ISR fetching between that HWM and the LESO, and the controller accepting its
#: expansion; over four streams of 1,500 valid examples the violation followed 3
#: times (one path). Measured: found after 8,167 examples (about 4 minutes on one
#: core); the limit binds.
#: NO_FETCH_LEADER_EPOCH_FENCING and BALANCED_RECOVERY_ANY_MEMBER are found near the
#: default search limit (their budgets are capped just above it): at about 100 s of
#: one core each they run here, with that limit (the same stream), to keep ``make
#: test`` under ten minutes on two cores.
LONG_SEARCH: dict[Variant, tuple[int, int]] = {
    Variant.ISR_JOIN_WITHOUT_LESO: (12_000, 18_000),
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: (SEARCH_LIMIT[STEPS], 4000),
    Variant.BALANCED_RECOVERY_ANY_MEMBER: (SEARCH_LIMIT[STEPS], 4000),
}


def test_every_variant_is_budgeted():
    assert set(BUDGET) | set(LONG_SEARCH) == set(Variant)
    assert not set(BUDGET) & set(LONG_SEARCH)
    assert all(BUDGET[v] > 0 for v in BUDGET)


def _check_found(variant: Variant, failure: BaseException) -> None:
    expected = VARIANT_DOCS[variant][1]
    assert set(failure.property_names) & set(expected), (  # type: ignore[attr-defined]
        f"{variant.name} broke {failure.property_names}, expected one of {expected}")  # type: ignore[attr-defined]


@pytest.mark.usefixtures("reproducible_generation")
@pytest.mark.parametrize("variant", sorted(BUDGET, key=lambda v: v.name), ids=lambda v: v.name)
def test_machine_finds_the_variant(variant: Variant):
    machine = machine_for(variants=frozenset({variant}), name=f"Find_{variant.name}")
    _check_found(variant, search(machine, variant in DEEP, PropertyViolated, BUDGET[variant], variant.name))


@pytest.mark.long_search
@pytest.mark.usefixtures("reproducible_generation")
@pytest.mark.parametrize("variant", sorted(LONG_SEARCH, key=lambda v: v.name), ids=lambda v: v.name)
def test_machine_finds_the_variant_in_a_long_search(variant: Variant):
    limit, budget = LONG_SEARCH[variant]
    machine = machine_for(variants=frozenset({variant}), name=f"Find_{variant.name}")
    _check_found(variant, search(machine, False, PropertyViolated, budget, variant.name, limit=limit))
