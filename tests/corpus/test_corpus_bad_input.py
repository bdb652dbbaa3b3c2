"""Bad input gets a clear error and loses nothing: an unknown id or signature, a
corrupt or truncated file (the others are still read), a file of a newer schema
version (refused), a trace whose step is not enabled, rows that cannot be
decoded (a null or missing trace, configuration, kind, variants: never replayed
as a pass), and files still being written (invisible)."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from sut import Bug

from replicheck_cli.commands import main
from store.decode import decode_counterexample
from store.errors import CorpusWarning, CounterexampleNotFound
from store.part import table_of, write_part
from store.reader import find_by_id, read_counterexamples, shortest_of_signature
from check.replay import TraceNotEnabled, replay
from store.schema import COUNTEREXAMPLES, SCHEMA_VERSION
from store.codec import TraceDecodeError
from check.subject import Subject
from model import Config, ControlledShutdown, Produce, StartBroker

from bad_corpus import BAD_ROW_ID, add_bad
from corpus_support import HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, rows_for, run_pytest, write_corpus


@pytest.fixture
def corpus(tmp_path):
    """A corpus of two good files: the HWM variant counterexample and the SUT bug one."""
    root = tmp_path / "corpus"
    write_corpus(root, rows_for(HWM_TRACE, HWM_CONFIG), run_id="a")
    write_corpus(root, rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})),
                 run_id="b")
    return root


def partition(root):
    (d,) = (root / COUNTEREXAMPLES).iterdir()
    return d


def cli(*args):
    return CliRunner().invoke(main, ["replay", *map(str, args)])


# ------------------------------------------------------------ unknown ids

def test_unknown_id_lists_how_many_ids_exist_and_suggests_signature(corpus):
    rows = read_counterexamples(corpus).rows
    with pytest.raises(CounterexampleNotFound) as info:
        find_by_id(rows, "deadbeef")
    msg = str(info.value)
    assert "'deadbeef'" in msg and "2 counterexample id(s)" in msg and "--signature" in msg
    result = cli(corpus, "--id", "deadbeef")
    assert result.exit_code == 2
    assert "2 counterexample id(s)" in result.output and "--signature SIG" in result.output


def test_id_prefix_and_ambiguity(corpus):
    rows = read_counterexamples(corpus).rows
    full = rows[0]["counterexample_id"]
    assert find_by_id(rows, full[:8])["counterexample_id"] == full
    with pytest.raises(CounterexampleNotFound, match="ambiguous"):
        find_by_id(rows, "")


def test_unknown_signature_lists_the_signatures(corpus):
    rows = read_counterexamples(corpus).rows
    with pytest.raises(CounterexampleNotFound) as info:
        shortest_of_signature(rows, "NoSuchProperty|property|x")
    assert "2 signature(s)" in str(info.value) and "LeaderCandidateCompleteness|property|" in str(info.value)
    assert cli(corpus, "--signature", "nope").exit_code == 2


def test_signature_replays_its_shortest_member(tmp_path):
    root = tmp_path / "corpus"
    # the same failure reached after a detour (the spare broker shut down and restarted first)
    longer = (ControlledShutdown(3), StartBroker(3)) + HWM_TRACE
    long_rows = rows_for(longer, HWM_CONFIG, run_id="long")
    short_rows = rows_for(HWM_TRACE, HWM_CONFIG, run_id="short")
    assert long_rows[0]["signature"] == short_rows[0]["signature"]
    write_corpus(root, long_rows, run_id="long")
    write_corpus(root, short_rows, run_id="short")
    rows = read_counterexamples(root).rows
    best = shortest_of_signature(rows, short_rows[0]["signature"])
    assert best["counterexample_id"] == short_rows[0]["counterexample_id"] and best["step_count"] == 4
    result = cli(root, "--signature", short_rows[0]["signature"])
    assert result.exit_code == 1 and short_rows[0]["counterexample_id"] in result.output


def test_id_or_signature_is_required(corpus):
    result = cli(corpus)
    assert result.exit_code == 2 and "--id ID or --signature SIG" in result.output
    assert cli(corpus.parent / "missing", "--id", "x").exit_code == 2


# ------------------------------------------------------- unreadable files

def test_corrupt_and_truncated_files_are_skipped_with_a_warning_naming_them(corpus):
    d = partition(corpus)
    good = sorted(d.iterdir())[0]
    truncated = d / "part-trunc-main-0000.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    garbage = d / "part-garbage-main-0000.parquet"
    garbage.write_bytes(b"not a parquet file at all")
    with pytest.warns(CorpusWarning) as warned:
        read = read_counterexamples(corpus)
    messages = [str(w.message) for w in warned]
    assert any(truncated.name in m for m in messages) and any(garbage.name in m for m in messages)
    assert len(read.rows) == 2 and len(read.files) == 2 and len(read.problems) == 2   # the others still read
    # the CLI warns too, and still replays
    row = read.rows[0]
    result = cli(corpus, "--id", row["counterexample_id"])
    assert result.exit_code == 1
    assert truncated.name in result.output and garbage.name in result.output


def test_a_newer_schema_version_is_refused_with_a_clear_message(corpus):
    d = partition(corpus)
    rows = read_counterexamples(corpus).rows
    newer = [{k: v for k, v in r.items() if not k.startswith("_") and k != "run_date"} for r in rows[:1]]
    newer[0]["schema_version"] = SCHEMA_VERSION + 1
    newer[0]["counterexample_id"] = "f" * 64
    table = table_of(COUNTEREXAMPLES, newer).replace_schema_metadata({b"replicheck.schema_version": str(SCHEMA_VERSION + 1).encode()})
    table = table.append_column("a_future_column", pa.array(["x"]))
    path = d / "part-future-main-0000.parquet"
    pq.write_table(table, path)
    with pytest.warns(CorpusWarning, match=rf"schema version {SCHEMA_VERSION + 1}, newer than the version {SCHEMA_VERSION}"):
        read = read_counterexamples(corpus)
    assert len(read.rows) == 2 and "f" * 64 not in {r["counterexample_id"] for r in read.rows}
    assert path.name in read.problems[0] and "upgrade replicheck" in read.problems[0]
    # a row claiming a newer version (without file metadata) is refused too
    path.unlink()
    pq.write_table(table_of(COUNTEREXAMPLES, newer).replace_schema_metadata(None), path)
    read = read_counterexamples(corpus, warn=False)
    assert len(read.rows) == 2 and f"schema version {SCHEMA_VERSION + 1}" in read.problems[0]


def test_files_being_written_are_invisible(corpus):
    d = partition(corpus)
    good = sorted(d.iterdir())[0]
    shutil.copy(good, d / ".part-x-gw0-0000.parquet.tmp-123-abc")
    shutil.copy(good, d / ".part-hidden.parquet")
    read = read_counterexamples(corpus, warn=False)
    assert len(read.rows) == 2 and read.problems == []


def test_write_never_overwrites_an_existing_file(tmp_path):
    rows = rows_for(HWM_TRACE, HWM_CONFIG)
    first = write_part(tmp_path, COUNTEREXAMPLES, rows, "run", "gw0", 0)
    second = write_part(tmp_path, COUNTEREXAMPLES, rows, "run", "gw0", 0)
    assert first.name == "part-run-gw0-0000.parquet" and second.name == "part-run-gw0-0001.parquet"
    assert len(read_counterexamples(tmp_path).rows) == 2
    assert sorted(p.name for p in first.parent.iterdir()) == [first.name, second.name]


# ------------------------------------------------------ traces and decoding

def test_a_step_that_is_not_enabled_names_the_step_and_the_reason():
    trace = HWM_TRACE[:1] + (StartBroker(2),) + HWM_TRACE[1:]   # broker 2 is running: cannot start
    with pytest.raises(TraceNotEnabled) as info:
        replay(trace, Subject.at(HWM_CONFIG))
    e = info.value
    assert e.index == 1 and e.action == StartBroker(2) and e.reason
    assert str(e).startswith("step 1 (#2 of 5) StartBroker(broker=2) is not enabled: ")
    assert e.reason in str(e)


def tampered(corpus, **changes):
    """The corpus's HWM row with ``changes``, as a new corpus file."""
    row = next(r for r in read_counterexamples(corpus).rows if r["kind"] == "property")
    row = {k: v for k, v in row.items() if not k.startswith("_") and k != "run_date"}
    row.update(changes, counterexample_id="e" * 64)
    write_corpus(corpus, [row], run_id="tampered")
    return row


def test_cli_and_regression_run_report_bad_traces_and_files_and_run_the_rest(corpus):
    row = next(r for r in read_counterexamples(corpus).rows if r["kind"] == "property")
    steps = list(row["steps"])
    steps.insert(1, {"idx": 1, "family": "lifecycle", "action": "StartBroker", "args_json": '{"broker":2}'})
    steps = [dict(s, idx=i) for i, s in enumerate(steps)]
    tampered(corpus, steps=steps, step_count=len(steps))
    result = cli(corpus, "--id", "e" * 12)
    assert result.exit_code == 2
    assert "cannot be replayed: step 1 (#2 of 5) StartBroker(broker=2) is not enabled" in result.output
    (partition(corpus) / "part-broken-main-0000.parquet").write_bytes(b"PAR1 truncated")
    proc = run_pytest(corpus.parent, "-q", "--replay-corpus", str(corpus))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed, 2 passed" in proc.stdout, proc.stdout                    # the good ones still run
    assert "cannot be replayed any more: step 1 (#2 of 5) StartBroker(broker=2) is not enabled" in proc.stdout
    # the broken file is a failing test of its own, naming it
    assert "unreadable[counterexamples/run_date=" in proc.stdout and "part-broken-main-0000.parquet: " in proc.stdout


@pytest.mark.parametrize("change, message", [
    ({"steps": [{"idx": 0, "family": "client", "action": "Explode", "args_json": "{}"}]},
     "step 0: unknown action 'Explode'"),
    ({"steps": [{"idx": 0, "family": "client", "action": "Produce", "args_json": '{"broker": 1}'}]},
     "step 0 (Produce): args ['broker'] do not match the action's fields ['broker', 'value']"),
    ({"steps": [{"idx": 0, "family": "client", "action": "Produce", "args_json": "{broken"}]},
     "step 0 (Produce): args_json is not valid JSON"),
    ({"steps": [{"idx": 3, "family": "client", "action": "Consume", "args_json": "{}"}]},
     "step indexes must be 0..0 without gaps"),
    ({"variants": ["NO_SUCH_VARIANT"]}, "unknown protocol variant 'NO_SUCH_VARIANT'"),
    ({"sut_bugs": ["NO_SUCH_BUG"]}, "unknown SUT bug 'NO_SUCH_BUG'"),
    ({"config_json": json.dumps({"brokers": [1, 2], "assignment": [1], "min_isr": 1})},
     "config_json does not make a valid model.Config: Config.brokers must hold 3 to 5"),
    ({"config_json": '{"brokers": [1, 2, 3], "racks": 2}'}, "config_json has unknown field(s) ['racks']"),
])
def test_rows_that_cannot_be_decoded_say_why(change, message):
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    row.update(change)
    with pytest.raises(TraceDecodeError) as info:
        decode_counterexample(row)
    assert message in str(info.value)


@pytest.mark.parametrize("change, message", [
    ({"steps": None}, "steps is null: the row has no trace to replay"),
    ({"steps": [None]}, "steps[0] is null"),
    ({"steps": [{"idx": None, "family": "client", "action": "Consume", "args_json": "{}"}]},
     "steps[0] (Consume): idx is null"),
    ({"config_json": None}, "config_json is null"),
    ({"kind": None}, "kind is null"),
    ({"property": None}, "property is null"),
    ({"variants": None}, "variants is null"),
    ({"variants": [None]}, "variants holds a null item"),
    ({"sut_bugs": None}, "sut_bugs is null"),
    ({"counterexample_id": None}, "counterexample_id is null"),
])
def test_a_row_missing_what_decoding_needs_is_never_replayed_as_a_pass(change, message):
    """Null steps replayed as the empty trace, which passes; null variants as
    the correct protocol: both a wrong verdict. Decoding names the column."""
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    row.update(change)
    with pytest.raises(TraceDecodeError) as info:
        decode_counterexample(row)
    assert message in str(info.value)


def test_a_row_without_steps_cannot_be_decoded():
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    del row["steps"]
    with pytest.raises(TraceDecodeError, match="steps is missing: the row has no trace to replay"):
        decode_counterexample(row)


def null_steps_corpus(corpus):
    """A file beside ``corpus``'s two: a copy of its HWM row (id ``BAD_ROW_ID``) with
    null ``steps``, and the HWM row again."""
    first = sorted(partition(corpus).iterdir())[0]
    path, reason = add_bad(corpus, COUNTEREXAMPLES, "null_steps", first)
    return path


def test_replay_of_a_row_with_null_steps_says_it_cannot_be_decoded(corpus):
    path = null_steps_corpus(corpus)
    listed = cli(corpus, "--list")
    assert listed.exit_code == 0 and BAD_ROW_ID[:16] in listed.stdout   # listed: it has an id and a signature
    result = cli(corpus, "--id", BAD_ROW_ID[:16])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"error: counterexample {BAD_ROW_ID} ({path}) cannot be decoded: steps is null: the row "
                             "has no trace to replay; the schema requires a list of steps\n")
    assert "not reproduced" not in result.output
    # the good rows still replay
    for row in read_counterexamples(corpus, warn=False).rows:
        if row["counterexample_id"] != BAD_ROW_ID:
            assert cli(corpus, "--id", row["counterexample_id"]).exit_code == 1


def test_replay_corpus_fails_the_row_with_null_steps_and_runs_the_rest(corpus):
    path = null_steps_corpus(corpus)
    proc = run_pytest(corpus.parent, "-q", "-rf", "--replay-corpus", str(corpus))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 2 passed" in proc.stdout, proc.stdout
    assert f"counterexample {BAD_ROW_ID} ({path}) cannot be decoded: steps is null" in proc.stdout
    assert "INTERNALERROR" not in proc.stdout + proc.stderr


def test_decoding_restores_config_actions_variants_and_bugs():
    (row,) = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    d = decode_counterexample(row)
    config, actions, variants, bugs = d.config, d.actions, d.variants, d.bugs
    assert (config, actions, variants, bugs) == (PRODUCE_CONFIG, PRODUCE_TRACE, frozenset(),
                                                 frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    assert d.expected_to_fail
    config = Config(brokers=(1, 2, 3, 4), assignment=(4, 2, 1), min_isr=1, unclean_recovery="balanced",
                    unclean_leader_election=True)
    from store.codec import config_from_json, config_to_json, decode_steps, encode_steps
    from model import Reassign, UncleanShutdown
    assert config_from_json(config_to_json(config)) == config
    trace = (Reassign((1, 2, 3)), UncleanShutdown(2, lossy=True), Produce(1, 7))
    steps = encode_steps(trace)
    assert steps[0]["args_json"] == '{"target":[1,2,3]}' and steps[1]["args_json"] == '{"broker":2,"lossy":true}'
    assert decode_steps(steps) == trace
