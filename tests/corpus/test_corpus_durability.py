"""Nothing found is ever lost (issue 24): ``CorpusWriter`` writes a counterexample
before anything reports it, a ``runs`` row within ``flush_every_s`` seconds; a
write that fails prints every counterexample it could not write, replayable, and
the run goes on; a reduction cut short by an interruption still writes the
counterexample as shrunk; without hard links a part is published under a name
of its own; a campaign unit names only the counterexamples on disk and hands
back, replayable, those it could not write. (The faults themselves — signals,
killed processes, concurrent writers — are in test_fault_injection.py.)"""

from __future__ import annotations

import errno
import io
import os
import re
import subprocess
import sys
import time
import warnings

import pytest
from hypothesis import HealthCheck, Phase, settings

import campaign.record
import store.part
from campaign.plan import Campaign
from campaign.record import record, run_machine
from check.failures import CheckFailed
from check.finding import Finding, RunRecord
from check.machine import machine_for
from check.refine import refine_all
from check.replay import replay
from check.subject import Subject
from model import Variant
from store.decode import decode_counterexample
from store.errors import CorpusWarning
from store.part import write_part
from store.reader import read_counterexamples, read_runs
from store.rows import utcnow
from store.writer import UNWRITTEN_MARK, CorpusWriter, replayable_text, row_from_text

from corpus_support import HWM_CONFIG, HWM_TRACE, ROOT, findings_for, rows_for

#: Derandomized, no shrinking: the failure is found in well under a second.
QUICK = settings(max_examples=1000, stateful_step_count=20, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False,
                 phases=(Phase.explicit, Phase.reuse, Phase.generate))


def stub_run(found: tuple[Finding, ...] = ()) -> RunRecord:
    """A run's record: ``found`` its findings (none: a passing run)."""
    return RunRecord("stub", Subject(), "p", None, utcnow(), 0.1, 1, 1, {}, {}, {}, bool(found), tuple(found))


class StubObserver:
    """What ``campaign.record.record`` reads of a ``RunObserver``."""

    def __init__(self, found: tuple[Finding, ...]) -> None:
        self.found = found

    def record(self) -> RunRecord:
        return stub_run(self.found)


@pytest.fixture(scope="module")
def hwm_findings() -> tuple[Finding, ...]:
    return refine_all(findings_for(HWM_TRACE, HWM_CONFIG))


@pytest.fixture(scope="module")
def hwm_rows() -> list[dict]:
    return rows_for(HWM_TRACE, HWM_CONFIG)


@pytest.fixture
def disk_full(monkeypatch):
    """Every Parquet write fails as on a full disk (ENOSPC)."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(store.part.pq, "write_table", full)
    return monkeypatch


def test_a_counterexample_is_on_disk_before_record_returns(tmp_path, hwm_findings):
    writer = CorpusWriter(tmp_path, run_id="r", worker="main")
    ces = writer.record(stub_run(hwm_findings))
    on_disk = [r["counterexample_id"] for r in read_counterexamples(tmp_path).rows]
    assert on_disk == [r["counterexample_id"] for r in ces] == writer.written_ids
    assert len(read_runs(tmp_path).rows) == 1        # the run's row went with it
    assert writer.flush() == []                      # nothing left buffered


def test_runs_rows_are_written_within_flush_every_s(tmp_path):
    # 5 s: time enough, on a loaded machine, for the record and the read below before it is due
    writer = CorpusWriter(tmp_path, run_id="r", worker="main", flush_every_s=5.0)
    writer.record(stub_run())
    assert read_runs(tmp_path).rows == []            # buffered: the writer wrote (was made) just now
    end = time.monotonic() + 60
    while not read_runs(tmp_path).rows and time.monotonic() < end:
        time.sleep(0.05)
    assert len(read_runs(tmp_path).rows) == 1        # the timer wrote it, without another record
    writer.flush_every_s = 0.5
    time.sleep(0.6)
    writer.record(stub_run())                       # due: written by the record itself
    assert len(read_runs(tmp_path).rows) == 2
    writer.close()


def test_the_flush_interval_starts_once_the_writer_is_ready(tmp_path, monkeypatch):
    """The writer's first import of the Parquet conversions can take a second cold:
    the interval starts after it, so a run recorded at once is buffered, not written
    as if the interval had passed during the import."""
    import store.writer
    from store.schema import RUNS
    monkeypatch.setattr(store.writer, "load_conversions", lambda: time.sleep(3.0))
    writer = CorpusWriter(tmp_path, run_id="r", worker="main", flush_every_s=2.5)
    writer.record(stub_run())
    assert len(writer.rows[RUNS]) == 1                # buffered: not due yet
    writer.close()


#: A fresh interpreter: a writer's timer writes a buffered ``runs`` row; every
#: module imported on a thread other than the main one is printed.
TIMER_IMPORTS = """
import sys, threading, time
imported = []
sys.addaudithook(lambda event, args: imported.append(args[0]) if event == "import"
                 and threading.current_thread() is not threading.main_thread() else None)
from check.finding import RunRecord
from check.subject import Subject
from store.part import utcnow
from store.reader import read_runs
from store.writer import CorpusWriter
writer = CorpusWriter(sys.argv[1], run_id="r", worker="main", flush_every_s=0.05)
writer.record(RunRecord("stub", Subject(), "p", None, utcnow(), 0.1, 1, 1, {}, {}, {}, False, ()))
end = time.monotonic() + 30
while not writer.written and time.monotonic() < end:
    time.sleep(0.02)
print(len(writer.written), sorted(set(imported)))
"""


def test_the_timer_thread_imports_nothing(tmp_path):
    """A module imported on the writer's timer thread may parse source while the
    main thread parses too (pandas, imported by pyarrow on the first timestamp
    it converts, calls ``ast.parse``), which CPython 3.11 can fail with
    SystemError in the other thread (gh-106905): a machine test's failure lost
    its counterexample so under load. The writer loads them when it is made."""
    done = subprocess.run([sys.executable, "-c", TIMER_IMPORTS, str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1) == ["1", "[]\n"], done.stdout


def test_a_failed_write_prints_each_counterexample_once_replayable_and_the_run_goes_on(tmp_path, hwm_findings,
                                                                                       disk_full):
    err = io.StringIO()
    writer = CorpusWriter(tmp_path, run_id="r", worker="main", err=err, flush_every_s=0.0)  # every record writes
    with pytest.warns(CorpusWarning) as warned:
        ces = writer.record(stub_run(hwm_findings))  # does not raise
    assert [str(w.message).split(" to the corpus")[0] for w in warned] == [
        "could not write 1 counterexamples row(s)", "could not write 1 runs row(s)"]
    assert all("No space left" in str(w.message) for w in warned)
    assert writer.written_ids == [] and read_counterexamples(tmp_path).rows == []
    assert writer.last_error is not None and "No space left" in writer.last_error
    lines = [x for x in err.getvalue().splitlines() if x.startswith(UNWRITTEN_MARK)]
    assert len(lines) == 1
    assert f"could not write counterexample {ces[0]['counterexample_id'][:16]}" in err.getvalue()
    # The printed line is the counterexample: it replays to the same failure.
    decoded = decode_counterexample(row_from_text(lines[0]))
    assert (decoded.config, decoded.actions) == (HWM_CONFIG, HWM_TRACE)
    assert decoded.prop in replay(decoded.actions, Subject.at(decoded.config)).property_names
    with pytest.warns(CorpusWarning) as warned:
        writer.record(stub_run())                   # the next write tries again, fails again ...
    assert [str(w.message).split(" to the corpus")[0] for w in warned] == [
        "could not write 1 counterexamples row(s)", "could not write 2 runs row(s)"]
    assert len([x for x in err.getvalue().splitlines() if x.startswith(UNWRITTEN_MARK)]) == 1  # ... printed once
    disk_full.undo()                                 # space again: the next write has it all
    writer.flush()
    assert [r["counterexample_id"] for r in read_counterexamples(tmp_path).rows] == writer.written_ids
    assert len(writer.written_ids) == 1 and len(read_runs(tmp_path).rows) == 2


def test_flush_raises_the_write_error_after_printing(tmp_path, hwm_rows, disk_full):
    err = io.StringIO()
    writer = CorpusWriter(tmp_path, run_id="r", worker="main", err=err)
    writer.add_counterexamples(hwm_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        with pytest.raises(OSError, match="No space left"):
            writer.flush()
    assert err.getvalue().count(UNWRITTEN_MARK) == 1
    assert writer.rows["counterexamples"]            # kept for the next write


def test_an_interrupted_reduction_writes_the_counterexample_as_shrunk(tmp_path, hwm_rows, monkeypatch):
    def interrupted(found, reduce_s=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(campaign.record, "refine_all", interrupted)
    writer = CorpusWriter(tmp_path, run_id="r", worker="main")
    with pytest.raises(KeyboardInterrupt):
        record(writer, StubObserver(tuple(findings_for(HWM_TRACE, HWM_CONFIG))), reduce_s=30.0)
    assert [r["counterexample_id"] for r in read_counterexamples(tmp_path).rows] == \
        [r["counterexample_id"] for r in hwm_rows]


def test_run_machine_raises_the_failure_not_the_write_error(tmp_path, capsys):
    """An unwritable corpus (here a file where the directory should be): the
    machine's failure is raised, its counterexample printed."""
    corpus = tmp_path / "corpus"
    corpus.write_text("not a directory")
    machine = machine_for(Subject(variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})), name="UnwritableCorpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        with pytest.raises(CheckFailed):
            run_machine(machine, QUICK, corpus_dir=corpus, test_id="unwritable")
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith(UNWRITTEN_MARK)]
    assert row_from_text(line)["property"] == "LeaderCandidateCompleteness"


def test_without_hard_links_a_part_gets_a_name_of_its_own(tmp_path, monkeypatch, hwm_rows):
    def no_link(*args, **kwargs):
        raise PermissionError(errno.EPERM, "hard links not supported")
    monkeypatch.setattr(os, "link", no_link)
    paths = [write_part(tmp_path, "counterexamples", hwm_rows, "r", "w", seq=0) for _ in range(3)]
    assert len(set(paths)) == 3
    assert all(re.fullmatch(rf"part-r-w-0000-{os.getpid()}-\d+-[0-9a-f]{{32}}\.parquet", p.name) for p in paths)
    assert len(read_counterexamples(tmp_path).rows) == 3
    assert not [p for p in paths[0].parent.iterdir() if p.name.startswith(".")]   # no temp file left


def test_a_failed_write_leaves_nothing_behind(tmp_path, hwm_rows, disk_full):
    with pytest.raises(OSError):
        write_part(tmp_path, "counterexamples", hwm_rows, "r", "w")
    (directory,) = (tmp_path / "counterexamples").iterdir()
    assert list(directory.iterdir()) == []


@pytest.fixture
def quick_reduction(monkeypatch):
    """A campaign unit reduces its counterexample for a second at most."""
    import campaign.unit
    monkeypatch.setattr(campaign.unit, "reduce_seconds", lambda stop: 1.0)


def test_a_campaign_unit_names_only_what_is_on_disk_and_hands_back_the_rest(tmp_path, disk_full, capsys,
                                                                            quick_reduction):
    """A unit whose corpus is full: its flaw is still found, no id is named
    (none is on disk), its counterexamples come back replayable, and the runner
    prints them to stderr."""
    from campaign.targets import Target
    from campaign.unit import WorkUnit, run_unit
    from campaign.runner import _apply
    from campaign.scheduler import Scheduler
    target = Target.parse("variant:NO_ELR")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        result = run_unit(WorkUnit(target, share_s=30.0, seed=1, corpus_dir=str(tmp_path), run_id="r",
                                   deadline=time.time() + 60))
    assert result.found is not None and result.counterexample_ids == ()
    assert result.error is not None and "could not write the corpus" in result.error
    assert result.unwritten and all(row_from_text(x)["counterexample_id"] for x in result.unwritten)
    assert read_counterexamples(tmp_path).rows == []
    scheduler = Scheduler(Campaign([target], budget_s=60.0, workers=1), 1, search_end=time.time() + 60)
    unit = scheduler.next_unit(time.time())
    capsys.readouterr()
    _apply(scheduler, "done", unit, result)
    err = capsys.readouterr().err
    assert "could not be written to the corpus" in err
    assert [x for x in err.splitlines() if x.startswith(UNWRITTEN_MARK)] == list(result.unwritten)


def test_a_campaign_unit_names_the_counterexamples_it_wrote(tmp_path, quick_reduction):
    from campaign.targets import Target
    from campaign.unit import WorkUnit, run_unit
    result = run_unit(WorkUnit(Target.parse("variant:NO_ELR"), share_s=30.0, seed=1, corpus_dir=str(tmp_path),
                               run_id="r", deadline=time.time() + 60))
    assert result.found is not None and result.error is None and result.unwritten == ()
    on_disk = {r["counterexample_id"] for r in read_counterexamples(tmp_path).rows}
    assert result.counterexample_ids and set(result.counterexample_ids) == on_disk


def test_replayable_text_is_one_line_and_row_from_text_refuses_anything_else(hwm_rows):
    text = replayable_text(hwm_rows[0])
    assert "\n" not in text and text.startswith(UNWRITTEN_MARK + " {")
    assert row_from_text(text)["steps"] == hwm_rows[0]["steps"]
    with pytest.raises(ValueError, match="not a replicheck counterexample line"):
        row_from_text('{"counterexample_id": "x"}')
