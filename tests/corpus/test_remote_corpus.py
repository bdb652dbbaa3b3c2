"""A corpus at a URI (``store.fs``), on a real S3-compatible server on
loopback (moto): parts written once under their final names and read back by
every reader, a bad object skipped with one line, and a URI that cannot be
used refused in one line before anything runs."""

from __future__ import annotations

import datetime as dt
import socket
import threading

import pytest
from click.testing import CliRunner

from bad_corpus import BAD_ROW_ID, add_bad
from corpus_support import HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, clean_env, rows_for, run_pytest
from store.part import write_part
from store.reader import read_counterexamples, read_runs
from store.writer import CorpusWriter
from store.fs import RemotePath, location, probe_failure
from store.schema import COUNTEREXAMPLES, SCHEMA_VERSION
from campaign.spark_checks import check_shared_corpus
from remote_store import free_port, keys, put, s3_bucket, s3_endpoint  # noqa: F401 (fixtures)
from sut import Bug

DAY = dt.date(2026, 1, 5)


def run_row(run_id: str = "r1") -> dict:
    return {"schema_version": SCHEMA_VERSION, "run_id": run_id, "test_id": "t", "worker": "w0", "profile": "p",
            "variants": [], "sut_bugs": [], "started_at": dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc),
            "duration_s": 1.5, "examples": 3, "steps": 40, "failed": True, "rule_counts": [("client", 4)],
            "action_counts": [("Produce", 4)], "event_counts": [("hwm.advance", 2)]}


class Recording:
    """A file system proxy naming the calls made through it."""

    def __init__(self, fs):
        self.fs, self.calls = fs, []

    def __getattr__(self, name):
        value = getattr(self.fs, name)
        if callable(value):
            def call(*args, **kw):
                self.calls.append((name, args[0] if args else None))
                return value(*args, **kw)
            return call
        return value


def test_parts_are_uploaded_once_under_their_final_names_and_read_back(s3_bucket, s3_endpoint):
    uri = f"s3://{s3_bucket}/corpus"
    rows = rows_for(HWM_TRACE, HWM_CONFIG, run_id="r1", worker="w0")
    writer = CorpusWriter(uri, run_id="r1", worker="w0", run_date=DAY)
    writer.add_counterexamples(rows)
    writer.add_run(run_row())
    written = writer.flush()
    assert all(isinstance(p, RemotePath) and str(p).startswith(f"{uri}/") for p in written)
    # Only the final parts, each once: no temp object was ever left behind or renamed.
    assert keys(s3_endpoint, s3_bucket) == sorted(str(p)[len(f"s3://{s3_bucket}/"):] for p in written)
    assert all(k.split("/")[-1].startswith("part-r1-w0-0000-") for k in keys(s3_endpoint, s3_bucket))

    ces, runs = read_counterexamples(uri), read_runs(uri)
    assert not ces.skipped and not runs.skipped
    assert [r["counterexample_id"] for r in ces.rows] == [r["counterexample_id"] for r in rows]
    assert ces.rows[0]["run_date"] == DAY.isoformat() and ces.rows[0]["_file"] == str(written[0])
    assert ces.rows[0]["steps"] == rows[0]["steps"] and ces.rows[0]["timeline"] == rows[0]["timeline"]
    (run,) = runs.rows
    assert (run["run_id"], run["steps"], run["event_counts"]) == ("r1", 40, {"hwm.advance": 2})
    # Another write of the same worker and seq never replaces the first.
    again = write_part(uri, COUNTEREXAMPLES, rows, "r1", "w0", 0, DAY)
    assert again not in written and len(read_counterexamples(uri).files) == 2


def test_an_object_store_part_is_one_upload_to_its_final_name(s3_bucket):
    where = location(f"s3://{s3_bucket}/corpus")
    recording = Recording(where.fs)
    path = write_part(RemotePath(where.prefix, where.path, recording), COUNTEREXAMPLES,
                      rows_for(HWM_TRACE, HWM_CONFIG), "r1", "w0", 0, DAY)
    # No temp name and no rename: on S3 a rename is a copy, and the upload is atomic already.
    assert recording.calls == [("open_output_stream", path.path)]


def test_a_bad_object_is_skipped_with_one_line_and_the_others_are_read(s3_bucket, s3_endpoint):
    from replicheck_cli.commands import main
    uri = f"s3://{s3_bucket}/corpus"
    good = rows_for(HWM_TRACE, HWM_CONFIG)
    write_part(uri, COUNTEREXAMPLES, good, "r1", "w0", 0, DAY)
    write_part(uri, COUNTEREXAMPLES, rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})),
               "r1", "w1", 0, DAY)
    folder = f"corpus/{COUNTEREXAMPLES}/run_date={DAY.isoformat()}"
    put(s3_endpoint, s3_bucket, f"{folder}/part-corrupt.parquet", b"PAR1 this is not parquet")
    put(s3_endpoint, s3_bucket, f"{folder}/part-empty.parquet", b"")
    put(s3_endpoint, s3_bucket, f"{folder}/README.md", b"notes")
    put(s3_endpoint, s3_bucket, f"{folder}/.part-being-written.parquet.tmp-1-x", b"half")

    read = read_counterexamples(uri, warn=False)
    assert len(read.files) == 2 and len(read.rows) == 2
    base = f"{uri}/{COUNTEREXAMPLES}/run_date={DAY.isoformat()}"
    assert read.problems == [
        f"{base}/README.md: not a .parquet file",
        f"{base}/part-corrupt.parquet: not a readable Parquet file, or a truncated one "
        + read.problems[1].split("truncated one ", 1)[1],
        f"{base}/part-empty.parquet: empty file (0 bytes): not a Parquet file",
    ]
    assert "\n" not in "".join(read.problems)

    listed = CliRunner().invoke(main, ["replay", uri, "--list"])
    assert listed.exit_code == 3, listed.output
    assert [line for line in listed.stderr.splitlines() if line.startswith("skipped: ")] == \
        [f"skipped: {p}" for p in read.problems]
    assert "2 counterexample(s)" in listed.stdout
    ident = next(r["counterexample_id"] for r in read.rows if r["variants"])
    replayed = CliRunner().invoke(main, ["replay", uri, "--id", ident[:12]])
    assert replayed.exit_code == 1, replayed.output   # it fails as recorded
    assert f"file:       {base}/part-r1-w0-0000-" in replayed.stdout


def test_a_corrupt_page_and_bad_rows_on_s3_are_named_by_every_reader_and_the_rest_is_read(s3_bucket, s3_endpoint,
                                                                                            tmp_path):
    """A data page corrupt behind a sound footer (a file), a null signature (a
    row, skipped) and null steps (a row that cannot be decoded) in objects on
    S3: ``replay --list`` and ``--id``, and ``pytest --replay-corpus``, name
    each once and read everything else."""
    from replicheck_cli.commands import main
    uri = f"s3://{s3_bucket}/corpus"
    hwm = rows_for(HWM_TRACE, HWM_CONFIG)
    produce = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    write_part(uri, COUNTEREXAMPLES, produce, "r1", "w1", 0, DAY)
    good = write_part(tmp_path / "local", COUNTEREXAMPLES, hwm, "r1", "w0", 0, DAY)   # built here, then put
    folder = f"corpus/{COUNTEREXAMPLES}/run_date={DAY.isoformat()}"
    base = f"{uri}/{COUNTEREXAMPLES}/run_date={DAY.isoformat()}"
    for kind in ("corrupt_page", "null_signature", "null_steps"):
        path, _ = add_bad(tmp_path / "local", COUNTEREXAMPLES, kind, good)
        put(s3_endpoint, s3_bucket, f"{folder}/{path.name}", path.read_bytes())
    put(s3_endpoint, s3_bucket, f"{folder}/{good.name}", good.read_bytes())

    read = read_counterexamples(uri, warn=False)
    assert read.problems[0].startswith(f"{base}/part-corrupt-page.parquet: cannot be read (OSError: ")
    assert read.problems[1:] == [f"{base}/part-null-signature.parquet: row 0 (counterexample_id {BAD_ROW_ID[:16]}…): "
                                 "signature is null, which the schema does not allow; the row is skipped, the "
                                 "file's other rows are read"]
    ids = {r["counterexample_id"] for r in hwm + produce}
    assert {r["counterexample_id"] for r in read.rows} == ids | {BAD_ROW_ID}   # the null-steps row is read

    listed = CliRunner().invoke(main, ["replay", uri, "--list"])
    assert listed.exit_code == 3, listed.output
    assert [line for line in listed.stderr.splitlines() if line.startswith("skipped: ")] == \
        [f"skipped: {p}" for p in read.problems]
    assert listed.stdout.startswith("3 counterexample(s)")
    for ident in ids:
        assert CliRunner().invoke(main, ["replay", uri, "--id", ident[:12]]).exit_code == 1
    undecodable = CliRunner().invoke(main, ["replay", uri, "--id", BAD_ROW_ID[:12]])
    assert undecodable.exit_code == 2
    assert "cannot be decoded: steps is null: the row has no trace to replay" in undecodable.stderr

    proc = run_pytest(tmp_path, "-q", "-rf", "--replay-corpus", uri, env=clean_env())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "3 failed, 2 passed" in proc.stdout, proc.stdout   # the corrupt file, the null row, the null steps
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert "corpus::unreadable[counterexamples/run_date=2026-01-05/part-null-signature.parquet#row0]" \
        in proc.stdout
    assert f"counterexample {BAD_ROW_ID} ({base}/part-null-steps.parquet) cannot be decoded: steps is null" \
        in proc.stdout


def test_a_uri_that_cannot_be_used_is_one_line(s3_bucket, s3_endpoint, monkeypatch):
    assert check_shared_corpus(f"s3://{s3_bucket}/corpus") is None
    assert check_shared_corpus("/some/folder") is None and check_shared_corpus("file:///some/folder") is None
    cases = {
        "foo://host/corpus": "--corpus foo://host/corpus: unknown scheme foo://; give a folder path or a URI of "
                             "s3://, gs://, hdfs://, file://",
        "s3a://b/corpus": "--corpus s3a://b/corpus: s3a:// is Hadoop's name; give s3:// (pyarrow's file systems: "
                          "s3://, gs://, hdfs://, file://)",
        "s3://no-such-bucket/corpus": "--corpus s3://no-such-bucket/corpus: the bucket no-such-bucket does not exist "
                                      "(or is not visible with these credentials)",
    }
    for uri, line in cases.items():
        assert check_shared_corpus(uri) == line
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    line = check_shared_corpus(f"s3://{s3_bucket}/corpus")
    assert line.startswith(f"--corpus s3://{s3_bucket}/corpus: cannot reach its endpoint (OSError: ")
    assert "\n" not in line


def test_an_endpoint_that_does_not_answer_is_tried_once(s3_bucket, monkeypatch):
    """The probe makes one attempt (pyarrow's default S3 retry strategy makes
    three, with back-off between them): an endpoint that accepts a connection
    and closes it without a reply is connected to once, and named in one line."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(0.1)   # so that the thread sees the test end
        accepted, done = [], threading.Event()

        def hang_up() -> None:
            while not done.is_set():
                try:
                    connection, _ = server.accept()
                except socket.timeout:
                    continue
                accepted.append(connection)
                connection.close()

        thread = threading.Thread(target=hang_up, daemon=True)
        thread.start()
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.getsockname()[1]}")
        try:
            line = check_shared_corpus(f"s3://{s3_bucket}/corpus")
        finally:
            done.set()
            thread.join()
    assert line.startswith(f"--corpus s3://{s3_bucket}/corpus: cannot reach its endpoint (OSError: ")
    assert "\n" not in line and len(accepted) == 1


def test_fuzz_refuses_a_bad_corpus_uri_in_one_line_and_makes_nothing(s3_bucket, tmp_path, monkeypatch):
    from replicheck_cli.commands import main
    monkeypatch.chdir(tmp_path)
    for uri in ("foo://host/corpus", "s3://no-such-bucket/corpus"):
        result = CliRunner().invoke(main, ["fuzz", "--minutes", "1", "--corpus", uri, "--no-report"])
        assert result.exit_code == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith(f"error: --corpus {uri}: ")
    assert list(tmp_path.iterdir()) == []


def test_a_probe_error_is_classified_by_what_it_says_not_by_a_port():
    """A refused connection to an endpoint whose port holds the digits 403 is an
    unreachable endpoint (the port once read as HTTP status 403: access denied); an
    AWS 403 answer is access denied."""
    refused = ("When getting information for key 'corpus' in bucket 'b': AWS Error NETWORK_CONNECTION during "
               "HeadObject operation: curlCode: 7, Could not connect to server; Details: Failed to connect to "
               "127.0.0.1:40319 after 0 ms: Could not connect to server")
    assert probe_failure(refused).startswith("cannot reach its endpoint (")
    denied = "When getting information for bucket 'b': AWS Error UNKNOWN (HTTP status 403) during HeadBucket operation"
    assert probe_failure(denied).startswith("access denied: missing or wrong credentials? (")
    assert probe_failure("AWS Error ACCESS_DENIED during HeadObject operation").startswith("access denied")
    assert probe_failure("some other failure").startswith("cannot be read (")
