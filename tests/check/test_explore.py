"""The explorer (``check.explore``): the machine's policy without Hypothesis's
engine, branching from the protocol states it reached. What it finds must be a
real counterexample (it replays to the same failure), it must not find what is
not there, and a branch must never disturb the state it branched from."""

from __future__ import annotations

import random


from check.machine import machine_for
from store.reader import read_counterexamples, read_runs
from campaign.record import EXPLORE_PROFILE, run_explorer
from check.explore import Explorer, Snapshot, cell_of
from check.replay import replay
from check.strategies import RandomDraws
from check.subject import Subject
from model import Config, Produce, UncleanShutdown, Variant, initial_state, step
from sut.bugs import Bug

NO_ELR = machine_for(Subject(variants=frozenset({Variant.NO_ELR})))


def _started(cls: type, seed: int = 0):
    machine = cls()
    draws = RandomDraws(random.Random(seed))
    machine.begin(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2), draws)
    return machine


def test_a_found_variant_replays_to_the_same_property_failure():
    result = Explorer(NO_ELR, seed=3).run(60)
    assert result.verdict is not None and result.first_failure_s is not None
    v = result.verdict
    again = replay(v.trace, Subject.at(v.config))
    assert again.failed and set(again.property_names) & set(v.properties)
    assert again.failed_at == len(v.trace)


def test_a_found_sut_bug_replays_to_a_divergence_with_the_bug_only():
    cls = machine_for(Subject(bugs=frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}), compare=True))
    v = Explorer(cls, seed=1).run(60).verdict
    assert v is not None and v.kind in ("divergence", "outcome", "enablement")
    assert replay(v.trace, Subject.at(v.config, bugs=frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))).failed
    assert not replay(v.trace, Subject.at(v.config)).failed   # the correct SUT takes the same trace


def test_the_correct_protocol_gives_nothing_in_a_few_seconds_of_guided_search():
    result = Explorer(machine_for(Subject(compare=True)), seed=5).run(3)
    assert result.verdict is None and result.steps > 100 and result.cells > 10 and result.bursts > 2


def test_a_seed_decides_the_search():
    runs = [Explorer(NO_ELR, seed=11).run(60) for _ in range(2)]
    assert runs[0].verdict.trace == runs[1].verdict.trace and runs[0].steps == runs[1].steps


def _steps(machine, n: int, seed: int) -> None:
    draws = RandomDraws(random.Random(seed))
    for _ in range(n):
        machine.act(next(f for f in ("client", "fetch", "isr", "metadata") if machine.enabled(f)), draws)


def test_a_restored_snapshot_is_where_the_machine_was_and_independent_of_it():
    machine = _started(machine_for(Subject(compare=True)))
    _steps(machine, 10, 1)
    snap = Snapshot.of(machine)
    trace, state, seen = list(machine.trace), machine.state, machine.lockstep.implementation.observe()
    _steps(machine, 10, 2)                          # the machine goes on: the snapshot does not move
    other = snap.restore()
    assert other.trace == trace and other.state is state
    assert other.lockstep.implementation.observe() == seen   # the SUT rebuilt and replayed to the same place
    _steps(other, 30, 3)                            # and the branch goes on by itself
    assert len(other.trace) > len(trace) and snap.restore().trace == trace


def test_the_archive_keeps_the_shortest_example_of_each_cell():
    explorer = Explorer(machine_for(Subject(compare=True)), seed=4)
    explorer.run(2)
    assert explorer.archive
    for key, entry in explorer.archive.items():
        assert cell_of(entry.snapshot.state) == key and entry.steps == len(entry.snapshot.trace)
    # A shorter way to a cell replaces the longer one (and keeps its visit count).
    key, entry = next((k, e) for k, e in explorer.archive.items() if e.steps > 0)
    entry.chosen = 3
    shorter = entry.snapshot.restore()
    del shorter.lockstep.trace[-1]
    explorer._note(shorter)
    assert explorer.archive[key].steps == entry.steps - 1 and explorer.archive[key].chosen == 3


def test_cells_forget_broker_names_and_offsets_but_not_the_isr_shape():
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)
    s = initial_state(config)
    one = step(s, Produce(1, s.history.next_value))
    two = step(one, Produce(1, one.history.next_value))
    assert cell_of(one) == cell_of(two)                 # the leader's LEO moved; nobody's shape did
    down = step(s, UncleanShutdown(2, False))
    assert cell_of(down) != cell_of(s)
    assert cell_of(down) == cell_of(step(s, UncleanShutdown(3, False)))  # which follower: the same shape


def test_without_guidance_every_burst_is_a_fresh_example():
    explorer = Explorer(machine_for(Subject(compare=True)), seed=4, guided=False)
    result = explorer.run(1)
    assert not explorer.archive and result.cells == 0 and result.examples == result.bursts >= 1


def test_an_unguided_share_splits_the_steps_and_keeps_its_examples_out_of_the_archive():
    # Bounded by steps, not seconds: the split is the seed's on any machine.
    explorer = Explorer(machine_for(Subject(compare=True)), seed=4, unguided_share=0.5)
    result = explorer.run(600, stop=lambda: sum(explorer._steps.values()) >= 1500)
    guided, unguided = explorer._steps[True], explorer._steps[False]
    assert result.verdict is None and guided > 100 and unguided > 100
    assert 0.3 < unguided / (guided + unguided) < 0.7
    # An unguided example's states stay out: with every step after the first burst
    # unguided, the archive holds only that burst's cells.
    alone = Explorer(machine_for(Subject(compare=True)), seed=4, unguided_share=1.0)
    alone.run(600, stop=lambda: sum(alone._steps.values()) >= 1200)
    assert alone._steps[False] > 1000 and max(e.steps for e in alone.archive.values()) <= alone._steps[True] < 200
    # Counted in steps, so the seed still decides the search.
    runs = [Explorer(NO_ELR, seed=11, unguided_share=0.5).run(60) for _ in range(2)]
    assert runs[0].verdict.trace == runs[1].verdict.trace and runs[0].steps == runs[1].steps


def test_an_explorer_run_is_recorded_as_a_machine_run_is(tmp_path):
    from store.writer import CorpusWriter
    writer = CorpusWriter(tmp_path, run_id="r1", worker="w")
    cls = machine_for(Subject(variants=frozenset({Variant.NO_ELR})), name="Explore_NO_ELR")
    assert run_explorer(cls, 60, seed=3, writer=writer, test_id="t", reduce_s=5).verdict is not None
    writer.flush()
    (run,) = read_runs(tmp_path).rows
    assert (run["profile"], run["test_id"], run["failed"]) == (EXPLORE_PROFILE, "t", True)
    assert run["examples"] >= 1 and run["steps"] > 0
    rows = read_counterexamples(tmp_path).rows
    assert rows and {r["seed"] for r in rows} == {"3"} and {r["variants"][0] for r in rows} == {"NO_ELR"}
    # Reduced from the explorer's trace, which is kept beside it.
    assert all(r["step_count"] <= r["shrunk_step_count"] for r in rows)


def test_shortening_returns_a_shorter_failure_found_after_the_first():
    first = Explorer(NO_ELR, seed=11).run(60)
    # The same first failure (the seed decides it: 82 steps), then search for shorter ones,
    # bounded by bursts rather than seconds so that a loaded machine finds the same: 28 steps
    # at 60 bursts.
    explorer = Explorer(NO_ELR, seed=11)
    shortened = explorer.run(600, stop=lambda: explorer.bursts >= 60, shorten_s=600)
    assert shortened.first_failure_s is not None and len(first.verdict.trace) >= 40
    assert len(shortened.verdict.trace) < len(first.verdict.trace) / 2
    again = replay(shortened.verdict.trace, Subject.at(shortened.verdict.config))
    assert again.failed and again.failed_at == len(shortened.verdict.trace)


def test_bounded_shortening_lasts_no_longer_than_the_search_took():
    # NO_ELR's first failure on this seed comes within a second on an idle machine: bounded,
    # its shortening lasts about as long (MIN_SHORTEN_S at least), not the 30 s it would
    # otherwise take; the bound is read against the find's own time, so a slow machine holds it.
    from check.explore import MIN_SHORTEN_S
    result = Explorer(NO_ELR, seed=5).run(120, shorten_s=30.0, shorten_bounded=True)
    assert result.first_failure_s is not None
    assert result.seconds < 3 * max(MIN_SHORTEN_S, result.first_failure_s) + 5


def test_a_family_is_drawn_uniformly_among_those_with_an_enabled_action():
    """``Explorer._family`` looks at families in a random order and takes the
    first with an enabled action: each such family as likely as the others, an
    empty one never, None when all are empty."""
    import collections
    import random
    from check.explore import FAMILIES

    class Stub:
        def __init__(self, live):
            self.live = live

        def enabled(self, family):
            return [family] if family in self.live else []

    explorer = Explorer(NO_ELR, seed=0)
    explorer.rng = random.Random(7)
    live = {"fetch", "client", "lifecycle"}
    counts = collections.Counter(explorer._family(Stub(live)) for _ in range(3000))
    assert set(counts) == live
    assert all(900 < n < 1100 for n in counts.values()), counts
    assert explorer._family(Stub(set())) is None
    assert explorer._family(Stub({FAMILIES[-1]})) == FAMILIES[-1]
