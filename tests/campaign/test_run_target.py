"""A campaign target's runs, shrinking included, stay within its share of the budget."""

from __future__ import annotations

import time

import hypothesis.stateful
from hypothesis.internal.conjecture import engine

from harness.campaign import MIN_SHRINK_S, Target, run_target


def test_the_share_bounds_shrinking_and_the_default_comes_back(monkeypatch):
    default = engine.MAX_SHRINKING_SECONDS
    limits: list[float] = []

    def one_run(machine, settings):  # stands in for a machine run: records the shrink limit it gets
        limits.append(engine.MAX_SHRINKING_SECONDS)
        time.sleep(0.01)

    monkeypatch.setattr(hypothesis.stateful, "run_state_machine_as_test", one_run)
    result = run_target(Target.parse("variant:NO_ELR"), share_s=0.2, deadline=time.time() + 60, corpus_dir=None)
    assert result.runs == len(limits) >= 1 and result.found is None
    assert all(limit == MIN_SHRINK_S for limit in limits)  # a share of 0.2 s: the floor

    limits.clear()
    run_target(Target.parse("variant:NO_ELR"), share_s=40, deadline=time.time() + 0.05, corpus_dir=None)
    assert limits and all(limit == MIN_SHRINK_S for limit in limits)  # the campaign deadline binds too
    assert engine.MAX_SHRINKING_SECONDS == default


def test_a_long_share_lets_shrinking_run_to_the_share(monkeypatch):
    default = engine.MAX_SHRINKING_SECONDS
    limits: list[float] = []

    def one_run(machine, settings):
        limits.append(engine.MAX_SHRINKING_SECONDS)
        raise KeyboardInterrupt  # stop after the first run

    monkeypatch.setattr(hypothesis.stateful, "run_state_machine_as_test", one_run)
    try:
        run_target(Target.parse("variant:NO_ELR"), share_s=120, deadline=time.time() + 600, corpus_dir=None)
    except KeyboardInterrupt:
        pass
    assert 100 < limits[0] <= 120
    assert engine.MAX_SHRINKING_SECONDS == default
