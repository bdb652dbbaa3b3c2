"""Every entry of the SUT bug catalogue is caught by the machine.

Each run is derandomized with a fixed example budget, generation only (finding
the bug is what is asserted; shrinking is exercised elsewhere). The failure
must be the bug's: the buggy SUT's snapshot (or its enablement of an action)
differs from the model. A property failure cannot be the bug's, since the
properties are checked on the model, and any other exception is a harness
crash and fails the test as it is.

Budgets are about three times the examples a derandomized run needed when
measured under pytest (capped a little above the search limit, which binds for
a bug found near it); a change to the harness that makes a bug much harder to
find shows up here. Bugs that need long interleavings get examples of up to 400
steps, the rest 100.
"""

from __future__ import annotations

import pytest

from campaign_search import search
from harness import SutDiverged, machine_for
from sut.bugs import Bug

#: Examples to give each bug's run (derandomized: the run is the same every time).
BUDGET: dict[Bug, int] = {
    Bug.EPOCH_CACHE_NOT_TRUNCATED: 320,
    Bug.END_OFFSET_FOR_EPOCH_OFF_BY_ONE: 60,
    Bug.FOLLOWER_HWM_UPDATED_BEFORE_TRUNCATION: 290,
    Bug.TRUNCATE_TO_LEADER_OFFSET: 810,
    Bug.HWM_FROM_ISR_NOT_MAXIMAL_ISR: 140,
    Bug.STALE_LEADER_EPOCH_ACCEPTED_IN_FETCH: 530,
    Bug.PRODUCE_IGNORES_MIN_ISR: 150,
    Bug.LIST_OFFSETS_IGNORES_LESO: 70,
    Bug.STALE_ALTER_PARTITION_RESPONSE_APPLIED: 510,
    Bug.PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR: 60,
    Bug.OUT_OF_SYNC_FOLLOWER_STATE_NOT_RESET: 220,
    Bug.ISR_EXPANSION_IGNORES_LESO: 540,
    Bug.ELR_NOT_CLEARED_AT_MIN_ISR: 460,
    Bug.UNCLEAN_REGISTRATION_KEEPS_ELR: 290,
    Bug.REASSIGNMENT_COMPLETES_WITHOUT_ADDING_IN_ISR: 100,
    Bug.ALTER_PARTITION_IGNORES_BROKER_EPOCH: 4000,  # capped near the search limit
    Bug.UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE: 1060,
    Bug.METADATA_BATCH_LAST_DELTA_ONLY: 60,
    Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH: 60,
    Bug.PENDING_WRITES_KEPT_ON_STEP_DOWN: 60,
}
#: Bugs whose runs get examples of up to campaign_search.DEEP_STEPS steps.
DEEP = {Bug.TRUNCATE_TO_LEADER_OFFSET, Bug.UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE}
#: Bugs found near the search limit (minutes of one core): their search is marked
#: ``long_search`` (``make test-long``, CI), the same stream, out of ``make test``.
LONG_SEARCH = {Bug.ALTER_PARTITION_IGNORES_BROKER_EPOCH}


def test_every_bug_has_a_budget():
    assert set(BUDGET) == set(Bug)
    assert all(BUDGET[b] > 0 for b in Bug)


def _catch(bug: Bug) -> None:
    machine = machine_for(bugs=frozenset({bug}), compare_sut=True, name=f"Catch_{bug.name}")
    failure = search(machine, bug in DEEP, SutDiverged, BUDGET[bug], bug.name)
    assert failure.differences, "a divergence must say what differs"


@pytest.mark.usefixtures("reproducible_generation")
@pytest.mark.parametrize("bug", [b for b in Bug if b not in LONG_SEARCH], ids=lambda b: b.name)
def test_machine_catches_the_bug(bug: Bug):
    _catch(bug)


@pytest.mark.long_search
@pytest.mark.usefixtures("reproducible_generation")
@pytest.mark.parametrize("bug", sorted(LONG_SEARCH, key=lambda b: b.name), ids=lambda b: b.name)
def test_machine_catches_the_bug_in_a_long_search(bug: Bug):
    _catch(bug)
