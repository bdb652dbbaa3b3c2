"""Every entry of the SUT bug catalogue is caught by the machine.

Each run is derandomized with a fixed example budget, generation only (finding
the bug is what is asserted; shrinking is exercised elsewhere). The failure
must be the bug's: the buggy SUT's snapshot (or its enablement of an action)
differs from the model. A property failure cannot be the bug's, since the
properties are checked on the model, and any other exception is a harness
crash and fails the test as it is.

Budgets are about three times the examples a derandomized run needed when
measured (runs under pytest-xdist and alone can need different counts, so the
margin is wide); a change to the harness that makes a bug much harder to find
shows up here. Bugs that need long interleavings get examples of up to 400
steps, the rest 100.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from harness import SutDiverged, machine_for
from sut.bugs import Bug

STEPS = 100
DEEP_STEPS = 400
#: Examples to give each bug's run (derandomized: the run is the same every time).
BUDGET: dict[Bug, int] = {
    Bug.EPOCH_CACHE_NOT_TRUNCATED: 1350,
    Bug.END_OFFSET_FOR_EPOCH_OFF_BY_ONE: 60,
    Bug.FOLLOWER_HWM_UPDATED_BEFORE_TRUNCATION: 800,
    Bug.TRUNCATE_TO_LEADER_OFFSET: 0,
    Bug.HWM_FROM_ISR_NOT_MAXIMAL_ISR: 180,
    Bug.STALE_LEADER_EPOCH_ACCEPTED_IN_FETCH: 210,
    Bug.PRODUCE_IGNORES_MIN_ISR: 60,
    Bug.LIST_OFFSETS_IGNORES_LESO: 60,
    Bug.STALE_ALTER_PARTITION_RESPONSE_APPLIED: 700,
    Bug.PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR: 60,
    Bug.OUT_OF_SYNC_FOLLOWER_STATE_NOT_RESET: 480,
    Bug.ISR_EXPANSION_IGNORES_LESO: 1130,
    Bug.ELR_NOT_CLEARED_AT_MIN_ISR: 60,
    Bug.UNCLEAN_REGISTRATION_KEEPS_ELR: 260,
    Bug.REASSIGNMENT_COMPLETES_WITHOUT_ADDING_IN_ISR: 60,
    Bug.ALTER_PARTITION_IGNORES_BROKER_EPOCH: 1640,
    Bug.UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE: 0,
    Bug.METADATA_BATCH_LAST_DELTA_ONLY: 60,
    Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH: 60,
    Bug.PENDING_WRITES_KEPT_ON_STEP_DOWN: 220,
}
#: Bugs whose runs get examples of up to DEEP_STEPS steps.
DEEP: set[Bug] = set()

NOT_YET_FOUND: dict[Bug, str] = {}


def test_every_bug_has_a_budget_or_is_explained():
    assert set(BUDGET) == set(Bug)
    assert all(BUDGET[b] > 0 for b in Bug if b not in NOT_YET_FOUND)


@pytest.mark.parametrize("bug", [b for b in Bug if b not in NOT_YET_FOUND], ids=lambda b: b.name)
def test_machine_catches_the_bug(bug: Bug):
    machine = machine_for(bugs=frozenset({bug}), compare_sut=True, name=f"Catch_{bug.name}")
    with pytest.raises(SutDiverged) as caught:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=BUDGET[bug], stateful_step_count=DEEP_STEPS if bug in DEEP else STEPS,
            derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate]))
    assert caught.value.differences, "a divergence must say what differs"
