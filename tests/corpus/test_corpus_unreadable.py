"""Nothing good is lost to a bad file: every kind of bad entry in a corpus table
(``bad_corpus.KINDS``: an empty, truncated, foreign, wrong-typed, newer or
unreadable file, a README.md, a symbolic link loop, a stray, misnamed, nested
or unreadable folder, a file outside the partitions, a data page corrupt behind
a sound footer; a row with a null signature, counterexample_id, step_count or
variants, beside a good row in its file) is skipped by each reader with one line
naming it (a row: its file, index, id and column) and why, and everything else
is read: the harness's
reader, ``replicheck replay`` (``--list`` exits ``PARTIAL_READ``) and ``pytest
--replay-corpus`` (one failing test per bad entry), which works from any
folder as a plugin of the installed package."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from sut import Bug

from replicheck_cli.commands import main
from replicheck_cli.replay import PARTIAL_READ
from store.reader import read_counterexamples, read_runs
from store.schema import (COUNTEREXAMPLE_SCHEMA, COUNTEREXAMPLES, RUN_SCHEMA, RUNS, SCHEMA_VERSION, VERSION_KEY,
                            _same_type, partition_date, table_files)

from bad_corpus import BAD_ROW_ID, KINDS, ROW_KINDS, UNREADABLE, add_bad, add_every_bad, denied, restore
from corpus_support import (HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, ROOT, clean_env, rows_for,
                            run_pytest, write_corpus)

#: A ``runs`` row: one passing machine run.
RUN = {"schema_version": SCHEMA_VERSION, "run_id": "a", "test_id": "t", "worker": "main", "profile": "dev",
       "variants": [], "sut_bugs": [], "started_at": dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc),
       "duration_s": 1.0, "examples": 3, "steps": 30, "failed": False, "rule_counts": [("client", 30)],
       "action_counts": [("Produce", 30)], "event_counts": []}


@pytest.fixture
def good(tmp_path):
    """A corpus of good files: the HWM variant counterexample and the SUT bug one,
    the HWM one found a second time, and a runs file; returns (root, ids, a good
    counterexamples file, the runs file)."""
    root = tmp_path / "corpus"
    hwm = rows_for(HWM_TRACE, HWM_CONFIG)
    produce = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    first = write_corpus(root, hwm, run_id="a")
    write_corpus(root, produce, run_id="b")
    write_corpus(root, hwm, run_id="again")
    runs_file = root / RUNS / "run_date=2026-01-05" / "part-a-main-0000.parquet"
    runs_file.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([RUN], schema=RUN_SCHEMA)
                   .replace_schema_metadata({VERSION_KEY: str(SCHEMA_VERSION).encode()}), runs_file)
    yield root, {r["counterexample_id"] for r in hwm + produce}, first, runs_file
    restore(root)


def kinds_here(kinds=KINDS):
    """The kinds, those needing chmod marked to skip where it does not deny (root)."""
    return [pytest.param(k, marks=pytest.mark.skipif(os.geteuid() == 0 and k in UNREADABLE and not _dac_denies(),
                                                     reason="chmod does not deny reading to root"))
            for k in kinds]


def _dac_denies() -> bool:
    """Whether this root process lacks the capability to read past permissions."""
    import tempfile
    with tempfile.NamedTemporaryFile() as f:
        os.chmod(f.name, 0)
        return not os.access(f.name, os.R_OK)


# ------------------------------------------------------------------ the reader

@pytest.mark.parametrize("kind", kinds_here())
def test_each_bad_entry_is_skipped_with_one_line_and_every_good_row_is_read(good, kind):
    root, ids, first, _ = good
    path, reason = add_bad(root, COUNTEREXAMPLES, kind, first)
    assert kind not in UNREADABLE or denied(path)
    read = read_counterexamples(root, warn=False)
    # a bad row's file is read: its good row too (the first counterexample found once more)
    extra = 1 if kind in ROW_KINDS else 0
    assert {r["counterexample_id"] for r in read.rows} == ids
    assert len(read.rows) == 3 + extra and len(read.files) == 3 + extra
    (line,) = read.problems                               # one line, naming it and why
    assert line.startswith(f"{path}: ") and reason in line and "\n" not in line
    assert [s.path for s in read.skipped] == [path]
    assert [s.row for s in read.skipped] == [0 if kind in ROW_KINDS else None]


@pytest.mark.parametrize("kind", ROW_KINDS)
def test_a_bad_row_of_runs_is_skipped_and_the_other_rows_are_read(good, kind):
    root, _, _, runs_file = good
    path, reason = add_bad(root, RUNS, kind, runs_file)
    runs = read_runs(root, warn=False)
    (line,) = runs.problems
    assert line.startswith(f"{path}: ") and reason.replace("counterexamples", "runs") in line
    assert [r["run_id"] for r in runs.rows] == ["a", "a"] and len(runs.files) == 2


def test_a_file_lacking_a_column_every_row_needs_is_one_line(good):
    root, ids, first, _ = good
    path = first.parent / "part-no-signature.parquet"
    pq.write_table(pq.read_table(first).drop_columns(["signature", "step_count"]), path)
    read = read_counterexamples(root, warn=False)
    assert read.problems == [f"{path}: not a replicheck counterexamples file (missing columns signature, "
                             "step_count)"]
    assert {r["counterexample_id"] for r in read.rows} == ids


def test_every_bad_entry_at_once_in_both_tables(good):
    root, ids, first, runs_file = good
    bad = add_every_bad(root, COUNTEREXAMPLES, first)
    bad_runs = add_every_bad(root, RUNS, runs_file)
    with pytest.warns(Warning) as warned:
        read = read_counterexamples(root)
    assert {r["counterexample_id"] for r in read.rows} == ids
    assert sorted(str(s.path) for s in read.skipped) == sorted(str(p) for p, _ in bad.values())
    assert len(warned) == len(bad)                        # one warning per entry
    runs = read_runs(root, warn=False)   # each bad row's file holds a good one: the run found again
    assert len(runs.rows) == 1 + len(ROW_KINDS) and len(runs.skipped) == len(bad_runs)
    for path, reason in bad_runs.values():
        (line,) = [p for p in runs.problems if p.startswith(f"{path}: ")]
        assert reason.replace("counterexamples", "runs") in line


@pytest.mark.parametrize("name, date", [
    ("run_date=2026-01-05", "2026-01-05"), ("run_date=notadate", None), ("run_date=2026-1-5", None),
    ("run_date=20260105", None), ("run_date=2026-02-30", None), ("date=2026-01-05", None), ("run_date", None),
])
def test_partition_folders_are_run_date_and_an_iso_date(name, date):
    got = partition_date(name)
    assert (got.isoformat() if got else None) == date


@pytest.mark.parametrize("found, expected, same", [
    (pa.large_string(), pa.string(), True),
    (pa.list_(pa.field("element", pa.string())), pa.list_(pa.string()), True),    # as Spark writes lists
    (pa.timestamp("ms", tz="UTC"), pa.timestamp("us", tz="UTC"), True),
    (pa.timestamp("us"), pa.timestamp("us", tz="UTC"), False),                     # no time zone
    (pa.int64(), pa.int32(), False),
    (pa.string(), pa.int32(), False),
    (COUNTEREXAMPLE_SCHEMA.field("steps").type, COUNTEREXAMPLE_SCHEMA.field("steps").type, True),
    (pa.list_(pa.struct([("idx", pa.string())])), COUNTEREXAMPLE_SCHEMA.field("steps").type, False),
    (pa.map_(pa.string(), pa.int32()), pa.map_(pa.string(), pa.int64()), False),
])
def test_a_column_reads_only_as_its_own_type(found, expected, same):
    assert _same_type(found, expected) is same


def test_a_table_that_is_a_file_is_skipped(tmp_path):
    (tmp_path / COUNTEREXAMPLES).write_text("not a folder")
    listing = table_files(tmp_path, COUNTEREXAMPLES)
    assert listing.files == () and [str(s) for s in listing.skipped] == \
        [f"{tmp_path / COUNTEREXAMPLES}: not a folder: a corpus table is a folder of run_date=YYYY-MM-DD folders"]


# ------------------------------------------------------------------ replay

def _replay(*args):
    return CliRunner().invoke(main, ["replay", *map(str, args)])


def test_replay_list_names_each_bad_entry_once_and_exits_partial(good):
    root, ids, first, _ = good
    clean = _replay(root, "--list")
    assert clean.exit_code == 0 and clean.stderr == ""
    assert clean.stdout.startswith(f"2 counterexample(s), 2 signature(s) in {root} (3 readable file(s))")
    bad = add_every_bad(root, COUNTEREXAMPLES, first)
    rows = sum(k in ROW_KINDS for k in bad)              # files read, with a bad row skipped
    result = _replay(root, "--list")
    assert result.exit_code == PARTIAL_READ == 3, result.output
    assert result.stdout.startswith(f"2 counterexample(s), 2 signature(s) in {root} ({3 + rows} readable file(s), "
                                    f"{len(bad)} skipped)")
    assert all(i[:16] in result.stdout for i in ids) and BAD_ROW_ID[:16] not in result.stdout
    lines = result.stderr.splitlines()
    for path, reason in bad.values():
        (line,) = [x for x in lines if x.startswith(f"skipped: {path}: ")]
        assert reason in line
    assert lines[-1] == (f"{len(bad) - rows} file(s) or folder(s) and {rows} row(s) of {root} skipped "
                         f"(named above); {3 + rows} file(s) read")
    assert len(lines) == len(bad) + 1
    # a replay by id still gives the replay's own status (the row was found)
    assert _replay(root, "--id", sorted(ids)[0]).exit_code == 1


@pytest.mark.parametrize("kind", ("corrupt_page",) + ROW_KINDS)
def test_replay_by_id_names_a_corrupt_page_or_a_bad_row_and_replays_the_good_rows(good, kind):
    """A data page corrupt behind a sound footer; a null signature,
    counterexample_id, step_count or variants in one row: ``replay --id`` of a
    good row still replays it (1: it fails as recorded), naming the bad entry
    on stderr; of the bad row's id, it is not there (2)."""
    root, ids, first, _ = good
    path, reason = add_bad(root, COUNTEREXAMPLES, kind, first)
    for ident in ids:
        result = _replay(root, "--id", ident[:16])
        assert result.exit_code == 1, result.output
        assert [x for x in result.stderr.splitlines() if x.startswith("skipped: ")] == \
            [x for x in result.stderr.splitlines() if x.startswith(f"skipped: {path}: ") and reason in x]
        assert f"counterexample {ident}" in result.stdout
    if kind in ROW_KINDS:
        result = _replay(root, "--id", BAD_ROW_ID[:16])
        assert result.exit_code == 2 and "no counterexample with id" in result.stderr
        assert f"skipped: {path}: {reason}" in result.stderr


def test_replay_names_a_partition_folder_it_cannot_list(good, monkeypatch):
    """8 → 6 counterexamples, exit 0, was the symptom: a folder that cannot be
    listed is named and the listing exits PARTIAL_READ. Permissions are stood in
    for (root reads anything): listing that folder raises PermissionError."""
    root, ids, first, _ = good
    other = root / COUNTEREXAMPLES / "run_date=2001-01-01"
    other.mkdir()
    write_corpus(root, rows_for(HWM_TRACE, HWM_CONFIG, run_id="old"), run_id="old")   # today's partition
    (first.parent / "part-old-main-0000.parquet").rename(other / "part-old-main-0000.parquet")
    assert _replay(root, "--list").exit_code == 0
    scandir = os.scandir

    def denying(path):
        if Path(path) == other:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)
    monkeypatch.setattr(os, "scandir", denying)
    result = _replay(root, "--list")
    assert result.exit_code == PARTIAL_READ
    assert f"skipped: {other}: folder cannot be read (PermissionError: Permission denied)\n" in result.stderr
    assert result.stdout.startswith("2 counterexample(s)")


# ------------------------------------------------------- pytest --replay-corpus

def test_replay_corpus_makes_each_bad_entry_one_failing_test_and_runs_the_rest(good):
    root, ids, first, _ = good
    bad = add_every_bad(root, COUNTEREXAMPLES, first)
    proc = run_pytest(root.parent, "-q", "-rf", "--replay-corpus", str(root))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{len(bad)} failed, 2 passed" in proc.stdout, proc.stdout   # the good row of a bad row's file: again
    for kind, (path, reason) in bad.items():
        name = f"corpus::unreadable[{path.relative_to(root)}{'#row0' if kind in ROW_KINDS else ''}]"
        assert proc.stdout.count(f"FAILED {name}") == 1, (name, proc.stdout)
        assert f"{path}: " in proc.stdout and reason in proc.stdout


def test_replay_corpus_space_form_works_from_any_folder_as_an_installed_plugin(good, tmp_path):
    """No ``-p``: the plugin comes from the package's ``pytest11`` entry point; the
    folder pytest runs in (with a test file and a conftest that would break
    collection) is not collected."""
    root, ids, first, _ = good
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "conftest.py").write_text("raise RuntimeError('this folder must not be collected')\n")
    (elsewhere / "test_other.py").write_text("def test_other():\n    assert False\n")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--replay-corpus", str(root)]
    proc = subprocess.run(cmd, cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout and "deselected" not in proc.stdout, proc.stdout
    golden = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--replay-corpus",
                             str(ROOT / "tests" / "golden" / "corpus")], cwd=elsewhere.parent, env=clean_env(),
                            capture_output=True, text=True, timeout=400)
    assert golden.returncode == 0 and " passed" in golden.stdout, golden.stdout + golden.stderr


def test_the_plugin_is_an_entry_point_of_the_package_and_not_registered_by_the_root_conftest():
    (ep,) = entry_points(group="pytest11").select(name="pytest_replicheck.plugin")
    assert ep.value == "pytest_replicheck.plugin"
    assert "pytest_plugins =" not in (ROOT / "conftest.py").read_text()
