"""Every protocol variant is found by the machine on its own.

A variant switches a historic flaw into the model (the SUT implements the
correct protocol, so a variant run checks the properties on the model). Each
run is derandomized with a fixed example budget, generation only; the failure
must be a property the variant is expected to break (``VARIANT_DOCS``).

Budgets are about three times the examples the derandomized run needed
(measured with the same machine names; runs alone and under pytest-xdist can
need different counts), so a change that makes a flaw much harder to find shows
up here. Flaws that need long interleavings get examples of up to 400 steps,
the rest 100. Variants the search does not reach within the suite's time are
listed in ``NOT_YET_FOUND`` with what they need; their minimal hand-written
scenarios (tests/variants/test_minimal_scenarios.py) keep them reachable.
"""

from __future__ import annotations

import pytest

from campaign_search import search
from harness import PropertyViolated, machine_for
from model import VARIANT_DOCS, Variant

BUDGET: dict[Variant, int] = {
    Variant.TRUNCATE_TO_HWM: 440,
    Variant.NO_MAXIMAL_ISR: 220,
    Variant.NO_ELR: 60,
    Variant.UNCLEAN_REGISTRATION_KEEPS_ELR: 60,
    Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR: 450,
    Variant.HWM_ADVANCES_BELOW_MIN_ISR: 60,
    Variant.LIST_OFFSETS_BEFORE_LESO: 1020,
    Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR: 3440,
    Variant.NO_LAST_FETCHED_EPOCH: 2050,
    Variant.ISR_JOIN_WITHOUT_LESO: 4500,
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: 1960,
    Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH: 260,
    Variant.NO_FETCH_RESPONSE_VALIDATION: 1910,
}
#: Variants whose runs get examples of up to campaign_search.DEEP_STEPS steps.
DEEP = {Variant.NO_LAST_FETCHED_EPOCH, Variant.ISR_JOIN_WITHOUT_LESO, Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH,
        Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH, Variant.NO_FETCH_RESPONSE_VALIDATION}
#: Found, but after minutes of search: outside the default suite (``make test-deep``).
SLOW = {Variant.ISR_JOIN_WITHOUT_LESO}

_DEEP = "the test's derandomized stream does not reach it within 1,500 examples of up to 400 steps"
NOT_YET_FOUND: dict[Variant, str] = {
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: _DEEP + " (earlier versions of the machine found it after "
                                           "151-194 examples): it needs a fetch sent before a remove-then-readd "
                                           "(§6.5.4) and delivered in the new leader epoch",
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: _DEEP + " (run alone, outside pytest, the same machine found "
                                                  "it after 887): it needs the §6.5.4 remove-then-readd applied by "
                                                  "the leader in one metadata batch and by the follower one record "
                                                  "at a time, then an ISR expansion before the follower fetches",
    Variant.BALANCED_RECOVERY_ANY_MEMBER: _DEEP + " (earlier versions found it after about 1,000): it needs "
                                          "balanced recovery with every ISR and ELR member restarted uncleanly, "
                                          "the first in replica order having lost committed data",
}


def test_every_variant_is_budgeted_or_explained():
    assert set(BUDGET) | set(NOT_YET_FOUND) == set(Variant)
    assert not set(BUDGET) & set(NOT_YET_FOUND)


@pytest.mark.usefixtures("reproducible_generation")
@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.deep) if v in SLOW else v
                                     for v in sorted(BUDGET, key=lambda v: v.name)], ids=lambda v: v.name)
def test_machine_finds_the_variant(variant: Variant):
    machine = machine_for(variants=frozenset({variant}), name=f"Find_{variant.name}")
    failure = search(machine, variant in DEEP, PropertyViolated, BUDGET[variant], variant.name)
    expected = VARIANT_DOCS[variant][1]
    assert set(failure.property_names) & set(expected), (
        f"{variant.name} broke {failure.property_names}, expected one of {expected}")
