"""load_corpus: schemas, views, the long steps table and key arguments, the
clear errors for missing, empty and runs-only corpora, and unreadable or
newer-schema files skipped, named, while the others are read."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.testing import assertDataFrameEqual

from corpus_factory import counterexample, make_corpus, run, steps, write
from store.schema import COUNTEREXAMPLE_SCHEMA, RUN_SCHEMA, SCHEMA_VERSION
from spark_reports import ACTION_FAMILIES, KNOWN_EVENTS, STEP_COLUMNS, CorpusError, load_corpus
from spark_reports.corpus import spark_schema


#: One JVM is enough: with ``pytest -n N --dist loadgroup`` these tests share one worker.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_views_schema_and_long_steps(spark, toy):
    assert toy.counterexamples.schema == spark_schema(COUNTEREXAMPLE_SCHEMA)
    assert toy.runs.schema == spark_schema(RUN_SCHEMA)
    assert tuple(toy.steps.columns) == STEP_COLUMNS
    assert toy.notes == () and toy.newest_schema_version == SCHEMA_VERSION
    toy.register_views()  # another test may have loaded (and registered) another corpus since
    got = spark.sql("SELECT counterexample_id, step_idx, family, action, key_arg FROM steps "
                    "WHERE counterexample_id IN ('c1', 'c4', 'c5')")
    assertDataFrameEqual(got, [
        ("c1", 0, "lifecycle", "FenceBroker", "FenceBroker(broker=1)"),
        ("c1", 1, "client", "Produce", "Produce(broker=2)"),
        ("c1", 2, "lifecycle", "UncleanShutdown", "UncleanShutdown(broker=2,lossy=true)"),
        ("c4", 0, "fetch", "SendFetch", "SendFetch(follower=2)"),
        ("c4", 1, "fetch", "ReceiveFetchRequest", "ReceiveFetchRequest"),
        ("c4", 2, "fetch", "SendFetch", "SendFetch(follower=2)"),
        ("c4", 3, "fetch", "ReceiveFetchRequest", "ReceiveFetchRequest"),
        ("c5", 0, "recovery", "UncleanRecovery", "UncleanRecovery"),
        ("c5", 1, "client", "Consume", "Consume"),
    ])
    assert spark.sql("SELECT count(*) FROM counterexamples").collect()[0][0] == 5
    assert spark.sql("SELECT count(*) FROM runs").collect()[0][0] == 4
    dates = {r[0].isoformat() for r in spark.sql("SELECT DISTINCT run_date FROM counterexamples").collect()}
    assert dates == {"2026-01-05"}


def test_key_arg_rule(spark):
    from spark_reports import key_arg
    df = spark.createDataFrame([
        ("ProposeIsrShrink", '{"leader": 1, "follower": 3}'), ("Reassign", '{"target": [1, 2, 4]}'),
        ("ReplicateMetadata", '{"broker": 2, "count": 3}'), ("ReceiveFetchResponse", '{"msg": 7}'),
        ("Produce", '{"broker": 1, "value": 9}'), ("Consume", "{}"), ("FenceBroker", "not json"),
    ], "action string, args_json string")
    got = [r[0] for r in df.select(key_arg(df.action, df.args_json)).collect()]
    assert got == ["ProposeIsrShrink(leader=1,follower=3)", "Reassign(target=[1,2,4])",
                   "ReplicateMetadata(broker=2,count=3)", "ReceiveFetchResponse", "Produce(broker=1)", "Consume",
                   "FenceBroker"]


def test_missing_path(spark, tmp_path):
    with pytest.raises(CorpusError, match="does not exist") as info:
        load_corpus(spark, tmp_path / "nope")
    assert info.value.path.endswith("nope")


def test_empty_corpus(spark, tmp_path):
    (tmp_path / "counterexamples").mkdir()
    (tmp_path / "counterexamples" / ".part-0.parquet.tmp").write_bytes(b"half-written")
    with pytest.raises(CorpusError, match="empty corpus: no data files under counterexamples/ or runs/"):
        load_corpus(spark, tmp_path)


def test_runs_only_gives_empty_counterexamples_with_schema(spark, tmp_path):
    make_corpus(tmp_path, runs=[run("r1", actions={"Produce": 5}), run("r2", variants=["NO_ELR"])])
    c = load_corpus(spark, tmp_path)
    assert c.counterexamples.schema == spark_schema(COUNTEREXAMPLE_SCHEMA)
    assert c.counterexamples.count() == 0 and c.steps.count() == 0 and c.runs.count() == 2
    assert any("every recorded run passed" in n for n in c.notes)


def test_temp_and_underscore_files_ignored(spark, tmp_path):
    make_corpus(tmp_path, [counterexample("a")], [run("r")])
    d = tmp_path / "counterexamples" / "run_date=2026-01-05"
    (d / ".part-1.parquet").write_bytes(b"not parquet at all")
    (d / "_SUCCESS").write_bytes(b"")
    c = load_corpus(spark, tmp_path)
    assert c.counterexamples.count() == 1
    assert c.counterexample_files == 1


def test_an_unreadable_file_is_skipped_and_the_others_read(spark, tmp_path):
    make_corpus(tmp_path, [counterexample("a")])
    bad = tmp_path / "counterexamples" / "run_date=2026-01-05" / "part-9.parquet"
    bad.write_bytes(b"garbage")
    c = load_corpus(spark, tmp_path)
    assert c.counterexamples.count() == 1 and c.counterexample_files == 1
    (skipped,) = c.skipped
    assert skipped.path == bad and "not a readable Parquet file" in skipped.reason
    # nothing readable at all: CorpusError, naming what was skipped
    (tmp_path / "counterexamples" / "run_date=2026-01-05" / "part-0.parquet").write_bytes(b"")
    with pytest.raises(CorpusError, match=r"no readable data files .*\(2 file\(s\) or folder\(s\) skipped\)") as info:
        load_corpus(spark, tmp_path)
    assert [s.path.name for s in info.value.skipped] == ["part-0.parquet", "part-9.parquet"]


def test_a_file_of_a_newer_schema_version_is_skipped_naming_it(spark, tmp_path):
    newer = SCHEMA_VERSION + 1
    extra = COUNTEREXAMPLE_SCHEMA.append(pa.field("new_column", pa.string()))
    row = dict(counterexample("a", version=newer), new_column="x")
    make_corpus(tmp_path, [counterexample("b")], [run("r")])
    path = write(tmp_path, "counterexamples", [row], run_date="2026-02-01", name="part-new.parquet", schema=extra)
    c = load_corpus(spark, tmp_path)
    assert [r.counterexample_id for r in c.counterexamples.select("counterexample_id").collect()] == ["b"]
    (skipped,) = c.skipped
    assert skipped.path == path
    assert f"corpus schema version {newer}, newer than the version {SCHEMA_VERSION}" in skipped.reason
    assert "upgrade replicheck" in skipped.reason


def test_a_file_lacking_a_column_every_row_needs_is_skipped_naming_it(spark, tmp_path):
    """Every column the schema requires a value in has been there since version
    1, so a file lacking one is no older file (those lack newer, nullable
    columns only, read as nulls: the next test) but a foreign one: each of its
    rows would break the schema, so the file is named once and skipped."""
    lacking = pa.schema([f for f in RUN_SCHEMA if f.name != "event_counts"])
    row = run("old")
    del row["event_counts"]
    path = write(tmp_path, "runs", [row], schema=lacking)
    write(tmp_path, "runs", [run("good")], name="part-1.parquet")
    c = load_corpus(spark, tmp_path)
    assert [r.run_id for r in c.runs.select("run_id").collect()] == ["good"]
    assert [str(s) for s in c.skipped] == [f"{path}: not a replicheck runs file (missing columns event_counts)"]


def test_older_counterexample_files_read_beside_the_newest_with_null_columns(spark, tmp_path):
    v3 = pa.schema(list(COUNTEREXAMPLE_SCHEMA))
    v2 = pa.schema([f for f in v3][:v3.get_field_index("timeline")])
    v1 = pa.schema([f for f in v3][:v3.get_field_index("shrunk_steps")])
    old = counterexample("old", version=1, trace=steps("Produce", "Consume", "ListOffsets", "Consume"))
    write(tmp_path, "counterexamples", [old], schema=v1, name="part-old.parquet")
    mid = counterexample("mid", version=2, step_count=2, trace=old["steps"][:2])
    mid.update(shrunk_steps=old["steps"], shrunk_step_count=len(old["steps"]), shrunk_config_json=old["config_json"],
               reduction=["without broker 3"])
    write(tmp_path, "counterexamples", [mid], schema=v2, name="part-mid.parquet")
    write(tmp_path, "runs", [run("run1")])
    # a version-3 row as the harness writes it, with its timeline
    import datetime as dt
    from model_rows import scenario_row
    new, _, _ = scenario_row("TRUNCATE_TO_HWM", dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc), cid="new")
    write(tmp_path, "counterexamples", [new], name="part-new.parquet")
    c = load_corpus(spark, tmp_path)
    got = {r.counterexample_id: r for r in c.counterexamples.select(
        "counterexample_id", "schema_version", "step_count", "shrunk_step_count", "reduction", "timeline").collect()}
    assert (got["old"].schema_version, got["old"].shrunk_step_count, got["old"].reduction) == (1, None, None)
    assert (got["mid"].step_count, got["mid"].shrunk_step_count, got["mid"].reduction) == (2, 4, ["without broker 3"])
    assert got["old"].timeline is None and got["mid"].timeline is None
    timeline = got["new"].timeline
    assert len(timeline) == new["step_count"] == 9
    # step 2: the leader served fetch request 1 with fetch response 2
    assert (timeline[2].received, [(m.id, m.type, m.src, m.dst) for m in timeline[2].sent]) == \
        (1, [(2, "FetchResponse", 1, 2)])
    assert [(b.broker, b.leo, b.hwm) for b in timeline[5].brokers] == [(1, 1, 1), (2, 1, 0), (3, None, None)]
    assert c.newest_schema_version == SCHEMA_VERSION
    # the diagram reads the Spark Row as it reads the harness's dict
    from spark_reports.diagram import build_timeline, decode_config, decode_state, parse_steps, parse_timeline
    row = c.counterexamples.where("counterexample_id = 'new'").collect()[0]
    arcs = [(a.lane, a.start, a.served, a.end, a.outcome) for a in build_timeline(
        parse_steps(row.steps), parse_timeline(row.timeline), decode_state(row.final_state_json),
        decode_config(row.config_json)).arcs]
    assert arcs == [(2, 1, 2, 3, "delivered"), (2, 4, 5, None, "in flight")]


def test_the_action_vocabulary_comes_from_the_action_registry():
    from model.actions import ACTIONS, FAMILIES
    assert ACTION_FAMILIES == {t.__name__: fam for fam, ts in FAMILIES.items() for t in ts}
    assert len(ACTION_FAMILIES) == len(ACTIONS)


def test_known_events_are_the_checks_coverage_events():
    text = (Path(__file__).resolve().parents[2] / "check" / "coverage.py").read_text()
    parametrised = {"unclean election: balanced", "unclean election: proactive",
                    "unclean election: unclean_leader_election"}
    assert 'f"unclean election: {' in text
    assert [e for e in KNOWN_EVENTS if e not in parametrised and f'"{e}"' not in text] == []
