"""A campaign's unit of work (``campaign.unit.run_unit``): its runs, shrinking
included, stay within its share of the budget and its deadline; a seeded unit
continues its shard's runs where the last unit stopped; and what a run finds or
breaks comes back as data, never as an exception."""

from __future__ import annotations

import time

import pytest
from hypothesis.internal.conjecture import engine

import campaign.unit
from campaign.targets import Target, run_seed
from campaign.unit import HYPOTHESIS, MIN_SHRINK_S, UNGUIDED_SHARE, WorkUnit, preload, run_target, run_unit
from check.statistics import RunStats


def test_the_share_bounds_shrinking_and_the_default_comes_back(monkeypatch):
    default = engine.MAX_SHRINKING_SECONDS
    limits: list[float] = []

    def one_run(machine, settings):  # stands in for a machine run: records the shrink limit it gets
        limits.append(engine.MAX_SHRINKING_SECONDS)
        time.sleep(0.01)

    monkeypatch.setattr(campaign.unit, "run_state_machine_as_test", one_run)
    result = run_target(Target.parse("variant:NO_ELR"), share_s=0.2, deadline=time.time() + 60, corpus_dir=None,
                        engine=HYPOTHESIS)
    assert result.runs == len(limits) >= 1 and result.found is None and result.error is None
    assert all(limit == MIN_SHRINK_S for limit in limits)  # a share of 0.2 s: the floor

    limits.clear()
    run_target(Target.parse("variant:NO_ELR"), share_s=40, deadline=time.time() + 1.2, corpus_dir=None,
               engine=HYPOTHESIS)
    assert limits and all(1.0 <= limit <= 1.2 for limit in limits)  # the deadline binds the floor too
    assert engine.MAX_SHRINKING_SECONDS == default


def test_a_long_share_lets_shrinking_run_to_the_share(monkeypatch):
    default = engine.MAX_SHRINKING_SECONDS
    limits: list[float] = []

    def one_run(machine, settings):
        limits.append(engine.MAX_SHRINKING_SECONDS)
        raise KeyboardInterrupt  # stop after the first run

    monkeypatch.setattr(campaign.unit, "run_state_machine_as_test", one_run)
    with pytest.raises(KeyboardInterrupt):
        run_target(Target.parse("variant:NO_ELR"), share_s=120, deadline=time.time() + 600, corpus_dir=None,
                   engine=HYPOTHESIS)
    assert 100 < limits[0] <= 120
    assert engine.MAX_SHRINKING_SECONDS == default


def test_a_unit_continues_its_shards_runs(monkeypatch):
    """Unit boundaries do not change what a seeded shard draws: a unit starting
    at run k runs the k-th run's seed."""
    seeds: list[int] = []

    def one_run(machine, settings):
        seeds.append(machine._hypothesis_internal_use_seed)
        time.sleep(0.02)

    monkeypatch.setattr(campaign.unit, "run_state_machine_as_test", one_run)
    target = Target("variant", "NO_ELR", shard=1)
    result = run_unit(WorkUnit(target, share_s=0.05, first_run=3, seed=7, engine=HYPOTHESIS))
    assert seeds[:2] == [run_seed(7, "variant:NO_ELR#1", 3), run_seed(7, "variant:NO_ELR#1", 4)][:len(seeds[:2])]
    assert result.runs == len(seeds)


def test_a_seeded_unit_draws_the_same_examples_each_time(tmp_path):
    from store.reader import read_counterexamples
    preload()
    # Every (target, run) gets its own seed, the same each time.
    assert run_seed(7, "variant:NO_ELR", 0) == run_seed(7, "variant:NO_ELR", 0)
    assert len({run_seed(7, "variant:NO_ELR", 0), run_seed(7, "variant:NO_ELR", 1),
                run_seed(7, "bug:PRODUCE_IGNORES_MIN_ISR", 0), run_seed(8, "variant:NO_ELR", 0)}) == 4
    target = Target.parse("variant:HWM_ADVANCES_BELOW_MIN_ISR")
    first, again = (run_target(target, share_s=15, deadline=time.time() + 60, corpus_dir=corpus, seed=7)
                    for corpus in (str(tmp_path), None))
    # What the seed decides: the runs and the examples up to the first failure. How
    # far shrinking gets is the clock's (it stops at the share on a slow machine).
    assert first.found and (first.runs, first.first_failure_examples, first.found) == \
        (again.runs, again.first_failure_examples, again.found)
    # The corpus records each run's own seed (not the worker's forced one), and the unit the rows' ids.
    (row,) = read_counterexamples(tmp_path).rows
    assert row["seed"] == str(run_seed(7, target.label, first.runs - 1))
    assert first.counterexample_ids == (row["counterexample_id"],) and row["test_id"] == target.test_id


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


def test_what_breaks_a_run_comes_back_as_the_units_error(monkeypatch):
    def broken(machine, settings):
        raise OSError("disk on fire")

    monkeypatch.setattr(campaign.unit, "run_state_machine_as_test", broken)
    result = run_unit(WorkUnit(Target.parse("correct"), share_s=5.0, first_run=2, seed=1, engine=HYPOTHESIS))
    assert (result.runs, result.found, result.ok) == (1, None, False)
    assert result.error == "run 2 of correct raised OSError: disk on fire"


def test_an_explore_unit_finds_the_flaw_records_it_and_keeps_to_its_share(tmp_path):
    from store.reader import read_counterexamples, read_runs
    from campaign.record import EXPLORE_PROFILE
    target = Target.parse("variant:NO_ELR")
    result = run_target(target, share_s=30, deadline=time.time() + 60, corpus_dir=str(tmp_path), seed=3)
    assert result.ok and result.found == "UncleanExclusion" and result.runs == 1 and result.error is None
    (run,) = read_runs(tmp_path).rows
    assert (run["profile"], run["failed"], run["test_id"]) == (EXPLORE_PROFILE, True, target.test_id)
    rows = read_counterexamples(tmp_path).rows
    assert {r["counterexample_id"] for r in rows} == set(result.counterexample_ids)
    assert {r["seed"] for r in rows} == {str(run_seed(3, target.label, 0))}
    # The shortest failure the explorer found, reduced: NO_ELR's minimal scenario is 3 steps.
    assert result.reduced_steps == min(r["step_count"] for r in rows) <= 4


def test_an_explore_unit_of_the_correct_protocol_searches_its_whole_share():
    start = time.monotonic()
    result = run_target(Target.parse("correct"), share_s=2.5, deadline=time.time() + 60, corpus_dir=None, seed=1)
    took = time.monotonic() - start
    # The whole share, as one run; after it, only the run's last example (a hang guard above).
    assert result.ok and result.found is None and result.runs == 1 and result.steps > 0
    assert 2.5 <= took < 60


def test_a_unit_names_an_unknown_engine():
    with pytest.raises(ValueError, match="engine"):
        WorkUnit(Target.parse("correct"), 1.0, engine="bfs")


def test_explore_runs_split_their_steps_and_an_implementations_never_branch(monkeypatch):
    """Each explorer run of a flaw searches both ways (guided, with the campaign's
    unguided share); an implementation's runs never branch from an archive."""
    from check.explore import ExploreResult
    calls: list[tuple[str, bool, float]] = []

    def one_run(machine, seconds, seed, **kw):
        calls.append((machine.__name__, kw["how"].guided, kw["how"].unguided_share))
        time.sleep(0.02)
        return ExploreResult(None, 1, 1, 1, 1, 0.02)

    monkeypatch.setattr(campaign.unit, "run_explorer", one_run)
    run_unit(WorkUnit(Target.parse("variant:NO_LAST_FETCHED_EPOCH"), share_s=0.05, seed=7))
    assert calls and all(c[1:] == (True, UNGUIDED_SHARE) for c in calls) and 0 < UNGUIDED_SHARE < 1
    calls.clear()
    monkeypatch.setattr(Target, "machine",
                        lambda self, run, seed=None, known=frozenset(): type("Kafka", (), {"run_stats": RunStats()}))
    run_unit(WorkUnit(Target.parse("implementation:kafka"), share_s=0.05, seed=7))
    assert calls and not any(c[1] for c in calls)
