"""A campaign goes on past the disagreements it knows (``campaign.known``,
``replicheck fuzz --known FILE``) and past those it has found already: each unit
gets its target's signatures so far, each run those of the runs before it, so a
disagreement is written once per campaign, not once per run."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

import campaign.record
import campaign.unit
from campaign.known import KnownError, load_known, parse_known
from campaign.plan import Campaign
from campaign.scheduler import Scheduler
from campaign.targets import Target
from campaign.unit import HYPOTHESIS, UnitResult, WorkUnit, run_unit
from check.failures import failure_for
from check.finding import findings
from check.replay import replay
from check.subject import Subject
from clocks import JumpingClock
from replicheck_cli.commands import main
from store.reader import read_counterexamples
from store.rows import counterexample_rows
from store.writer import CorpusWriter


KAFKA = Target.parse("implementation:kafka")
A = "SutDiffersFromModel|divergence|outcome.acknowledged"
B = "SutDiffersFromModel|divergence|outcome.appended"


def test_a_known_file_is_read_line_by_line_and_a_bad_line_is_named():
    assert parse_known(f"# classified\n\n{A}\n  {B}  \n") == {A, B}
    with pytest.raises(KnownError, match=r"^--known:3: 'SutDiffersFromModel\|property\|x' is not a "
                                         r"disagreement's signature; allowed: .*divergence, harness_error"):
        parse_known(f"{A}\n\nSutDiffersFromModel|property|x\n")


def test_a_corpus_is_read_as_its_disagreements(tmp_path):
    rows = counterexample_rows(findings(_verdict_of(A), Subject()) + findings(_verdict_of(B), Subject()),
                               run_id="r", worker="main")
    writer = CorpusWriter(tmp_path, run_id="r", worker="main")
    writer.add_counterexamples(rows)
    writer.flush()
    assert load_known(tmp_path) == {A, B}
    with pytest.raises(KnownError, match="--known .*nowhere: cannot be read"):
        load_known(tmp_path / "nowhere")


def test_each_unit_gets_the_campaigns_known_and_what_its_target_found():
    s = Scheduler(Campaign([KAFKA], budget_s=60.0, workers=2, known={A}), 2, search_end=1000.0)
    first = s.next_unit(0.0)
    assert first.known == {A}
    s.progress(first, UnitResult(first.target, runs=1, examples=5, seconds=1.0, found="divergence", signatures=(B,)))
    assert s.next_unit(0.0).known == {A, B}               # a second shard, while the first still runs


def _verdict_of(signature: str):
    """A disagreement of that signature (LateAcks' or an appended write's)."""
    from late_acks import COMMIT_ONE, RF2, LateAcks, LateAcksAndLost
    from model import Produce
    if signature == A:
        return replay(COMMIT_ONE, Subject.at(RF2, implementation=LateAcks)).verdict
    return replay((Produce(1, 1), Produce(1, 2)), Subject.at(RF2, implementation=LateAcksAndLost)).verdict


def test_a_unit_goes_on_past_what_it_found_and_writes_each_signature_once(monkeypatch, tmp_path):
    """Each run finds the first disagreement its machine does not know: A, then B,
    then nothing; the unit writes one row each, and its result names both."""
    verdicts = {A: _verdict_of(A), B: _verdict_of(B)}
    knowns: list[frozenset] = []
    real = Target.machine

    def machine(self, run, seed=None, known=frozenset()):
        knowns.append(frozenset(known))
        return real(self, run, seed, known)

    def one_run(machine_cls, settings):  # stands in for a run: fails with what it does not know yet
        time.sleep(0.01)
        unknown = [v for s, v in verdicts.items() if s not in machine_cls.subject.known]
        if unknown:
            raise failure_for(unknown[0])
        clock.jump()  # the first clean run ends the unit's share, however long the machine took to reach it

    from late_acks import LateAcksAndLost
    monkeypatch.setattr(Target, "subject", property(lambda self: Subject(implementation=LateAcksAndLost)))
    monkeypatch.setattr(Target, "machine", machine)
    monkeypatch.setattr(campaign.record, "run_state_machine_as_test", one_run)   # a run recorded in the corpus
    monkeypatch.setattr(campaign.unit, "reduce_seconds", lambda stop: 1.0)
    clock = JumpingClock(by=3600.0)
    monkeypatch.setattr(campaign.unit, "time", clock)
    result = run_unit(WorkUnit(KAFKA, share_s=600.0, seed=1, corpus_dir=str(tmp_path), run_id="r",
                               deadline=time.time() + 1200, engine=HYPOTHESIS))
    assert result.signatures == (A, B) and result.found == "divergence" and result.runs == 3
    assert knowns[:3] == [frozenset(), {A}, {A, B}]
    rows = read_counterexamples(tmp_path).rows
    assert sorted(r["signature"] for r in rows) == sorted([A, B])


def test_fuzz_names_a_bad_known_file_in_one_line(tmp_path):
    known = tmp_path / "known.txt"
    known.write_text("not a signature\n")
    out = CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--known", str(known), "--no-report", "--no-live",
                                    "--corpus", str(tmp_path / "c")])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        f"error: --known {known}:1: 'not a signature' is not a disagreement's signature; allowed: one signature "
        "a line as `replicheck replay CORPUS --list` prints them, PROPERTY|KIND|TEMPLATE with KIND one of "
        "divergence, harness_error; or a corpus folder"]
