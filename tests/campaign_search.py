"""One derandomized search of the machine for a flaw, shared by the campaign
tests (tests/variants/test_campaigns.py, tests/harness/test_bugs_caught.py)."""

from __future__ import annotations

import os
from typing import Optional

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

STEPS = 100
DEEP_STEPS = 400
#: max_examples of a run, by steps per example. Hypothesis's derandomized stream
#: depends on max_examples (its early small examples are a share of it), so runs
#: use the limits the budgets were measured with, and the test checks the examples
#: the run needed against the budget.
SEARCH_LIMIT = {STEPS: 2500, DEEP_STEPS: 1500}
#: When set, every search appends "name<TAB>steps<TAB>examples needed" to this file:
#: how budgets are re-measured after a change to the machine (``make measure-budgets``).
LOG_ENV = "REPLICHECK_SEARCH_LOG"


def search(machine: type, deep: bool, expected: type[BaseException], budget: int, name: str,
           limit: Optional[int] = None) -> BaseException:
    """Run ``machine`` derandomized, generation only, with examples of up to
    DEEP_STEPS (``deep``) or STEPS steps and ``limit`` valid examples at most
    (default SEARCH_LIMIT for those steps); assert it fails with ``expected``
    within ``budget`` examples (discarded ones included) and return the failure.
    Use with the ``reproducible_generation`` fixture."""
    steps = DEEP_STEPS if deep else STEPS
    try:
        with pytest.raises(expected) as failure:
            run_state_machine_as_test(machine, settings=settings(
                max_examples=limit or SEARCH_LIMIT[steps], stateful_step_count=steps,
                derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.generate]))
    finally:
        if os.environ.get(LOG_ENV):
            with open(os.environ[LOG_ENV], "a") as log:
                log.write(f"{name}\t{steps}\t{machine.run_stats.first_failure_examples}\n")
    needed = machine.run_stats.first_failure_examples
    assert needed is not None and needed <= budget, f"{name} needed {needed} examples, over its budget of {budget}"
    return failure.value
