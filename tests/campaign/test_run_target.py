"""A campaign target's runs, shrinking included, stay within its share of the budget."""

from __future__ import annotations

import time

import hypothesis.stateful
import pytest
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


def _import_everything_a_run_may_load() -> None:
    """Hypothesis mixes constants from the source of the loaded local modules into
    some draws: a module first imported during the first run (the corpus writer,
    reduction) would make the second run draw differently. Loading them all first
    keeps the comparison to what the seed decides."""
    import importlib
    import pkgutil

    import harness
    import model
    import properties
    import sut
    for package in (harness, model, properties, sut):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)


def test_a_seeded_campaign_draws_the_same_examples_each_time(monkeypatch, tmp_path):
    from harness.corpus import read_counterexamples
    from harness.campaign import SEED_ENV, run_seed, seed_from_env
    _import_everything_a_run_may_load()
    # Every (target, run) gets its own seed, the same each time.
    assert run_seed(7, "variant:NO_ELR", 0) == run_seed(7, "variant:NO_ELR", 0)
    assert len({run_seed(7, "variant:NO_ELR", 0), run_seed(7, "variant:NO_ELR", 1),
                run_seed(7, "bug:PRODUCE_IGNORES_MIN_ISR", 0), run_seed(8, "variant:NO_ELR", 0)}) == 4
    target = Target.parse("variant:HWM_ADVANCES_BELOW_MIN_ISR")
    first, again = (run_target(target, share_s=60, deadline=time.time() + 60, corpus_dir=corpus, seed=7)
                    for corpus in (str(tmp_path), None))
    assert first.found and (first.runs, first.examples, first.found, first.shrunk_steps) == \
        (again.runs, again.examples, again.found, again.shrunk_steps)
    # The corpus records each run's own seed (not the worker's forced one).
    (row,) = read_counterexamples(tmp_path).rows
    assert row["seed"] == str(run_seed(7, target.label, first.runs - 1))
    # The seed reaches the campaign's tests through the environment; bad values are named.
    monkeypatch.delenv(SEED_ENV, raising=False)
    assert seed_from_env() is None
    monkeypatch.setenv(SEED_ENV, "12")
    assert seed_from_env() == 12
    for bad in ("-1", "x", "1.5"):
        monkeypatch.setenv(SEED_ENV, bad)
        with pytest.raises(ValueError, match=f"REPLICHECK_CAMPAIGN_SEED must be an integer >= 0, got '{bad}'"):
            seed_from_env()


def test_each_run_draws_new_examples_even_under_a_workers_forced_seed(monkeypatch):
    import hypothesis.core
    from hypothesis import Phase, settings
    # What conftest.py does under pytest -n: one forced seed for every test in the worker.
    monkeypatch.setattr(hypothesis.core, "global_force_seed", 12345)
    target = Target.parse("variant:NO_LAST_FETCHED_EPOCH")
    traces: list[list[tuple]] = []
    for run in range(2):
        cls = target.machine(run)
        seen: list[tuple] = []
        traces.append(seen)

        def teardown(self, seen=seen, base=cls.teardown):
            seen.append(tuple(self.trace))
            base(self)
        cls.teardown = teardown
        hypothesis.stateful.run_state_machine_as_test(cls, settings=settings(
            max_examples=5, stateful_step_count=20, database=None, deadline=None, phases=[Phase.generate]))
    assert traces[0] and traces[0] != traces[1]
