"""``replicheck replay``: a stored counterexample replayed and judged.

``replicheck replay CORPUS_DIR --id ID`` replays one counterexample of a corpus
(an id or a unique prefix of one) and prints the failure report pytest printed;
``--signature SIG`` replays the shortest counterexample of a signature; ``--list``
lists the corpus.

Exit status: 1 when the replay fails (as the recorded test did), 0 when the
trace now runs without failure, 2 when the request cannot be answered (no such
corpus, id or signature; a trace that cannot be decoded or whose step is not
enabled). ``--list`` exits 0 when every file of the corpus was read and
``PARTIAL_READ`` (3) when some were skipped.

Every file or folder of the corpus that is not read (``store.schema.
table_files``: not ``*.parquet``, empty, truncated, a corrupt data page,
unreadable, of another schema, a stray folder, …) and every row that breaks the
schema's non-null rules (a null ``signature``, …) is named on stderr, one
``skipped: PATH: REASON`` line each (a row's names its index, id and column),
followed by how many were skipped; the rest is still read. A counterexample
whose trace or configuration is null is listed, and cannot be decoded (exit 2,
naming the column).
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from typing import Any, Optional

import attrs
import click

from check.reduce import reduce_counterexample
from check.replay import ReplayResult, TraceNotEnabled, replay as run_replay, reproduces
from check.subject import Subject
from store.codec import TraceDecodeError, state_to_json
from store.decode import DecodedCounterexample, decode_counterexample
from store.errors import CorpusError, CorpusWarning
from store.fs import open_corpus
from store.reader import CorpusRead, find_by_id, read_counterexamples, shortest_of_signature, unique_counterexamples
from store.schema import row_target, skipped_count

#: ``replay --list``'s exit status when files or folders of the corpus were skipped.
PARTIAL_READ = 3


def _err(message: str) -> None:
    click.echo(f"error: {message}", err=True)


def _header(row: dict[str, Any]) -> str:
    variants = ", ".join(row["variants"]) or "none (correct protocol)"
    bugs = ", ".join(row["sut_bugs"]) or "none (correct SUT)"
    lines = [
        f"counterexample {row['counterexample_id']}",
        f"  signature:  {row['signature']}",
        f"  property:   {row['property']} ({row['kind']})",
        f"  test:       {row['test_id']}  (run {row['run_id']}, worker {row['worker']}, found {row['found_at']})",
        f"  config:     {row['config_json']}",
        f"  variants:   {variants}",
        f"  SUT bugs:   {bugs}",
        f"  implementation: {row.get('implementation') or 'the bundled SUT'}",
        f"  steps:      {row['step_count']}"
        + (f"  (found after {row['examples_to_failure']} examples, {row['time_to_failure_s']:.2f}s)"
           if row.get("examples_to_failure") is not None and row.get("time_to_failure_s") is not None else ""),
        f"  file:       {row.get('_file')}",
        "recorded violation:",
        *("  " + line for line in str(row["violation"]).splitlines()),
    ]
    return "\n".join(lines)


def _steps(actions: tuple) -> str:
    return "\n".join(f"  {i + 1:3}. {a!r}" for i, a in enumerate(actions))


def _read(corpus_dir: str) -> CorpusRead:
    """The corpus's counterexamples, every skipped file named on stderr; exits 2
    when there is no corpus there."""
    root, problem = open_corpus(corpus_dir)   # a folder path, or a URI (store.fs)
    if root is None:
        _err(f"{corpus_dir}: " + ("no such corpus directory" if problem == "no such directory" else problem))
        sys.exit(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        read = read_counterexamples(root, warn=False)
    for problem in read.problems:
        click.echo(f"skipped: {problem}", err=True)
    if read.problems:
        click.echo(f"{skipped_count(read.skipped)} of {corpus_dir} skipped (named above); "
                   f"{len(read.files)} file(s) read", err=True)
    return read


def _list(read: CorpusRead, where: str) -> None:
    """Print every counterexample by signature; exit 0, or PARTIAL_READ when files were skipped."""
    unique = unique_counterexamples(read.rows)
    sigs = Counter(r["signature"] for r in unique)
    click.echo(f"{len(unique)} counterexample(s), {len(sigs)} signature(s) in {where}")
    for s in sorted(sigs):
        click.echo(f"\n{sigs[s]:4}  {s}")
        for r in (r for r in unique if r["signature"] == s):
            flaws = row_target(r["variants"], r["sut_bugs"], r["test_id"])
            click.echo(f"      {r['counterexample_id'][:16]}  {r['step_count']:3} steps  {flaws}  {r['test_id']}")
    sys.exit(PARTIAL_READ if read.problems else 0)


def _chosen(read: CorpusRead, ident: Optional[str], sig: Optional[str], where: str) -> dict[str, Any]:
    """The row ``--id`` or ``--signature`` names; exits 2 naming what is wrong."""
    if bool(ident) == bool(sig):
        n = len(unique_counterexamples(read.rows))
        _err(f"give exactly one of --id ID or --signature SIG ({n} counterexample(s) in {where}; --list shows them)")
        sys.exit(2)
    try:
        return find_by_id(read.rows, ident, where) if ident else shortest_of_signature(read.rows, sig, where)
    except CorpusError as e:
        _err(str(e))
        sys.exit(2)


def _replayed(row: dict[str, Any], no_sut: bool) -> tuple[DecodedCounterexample, Subject]:
    """The row decoded, and the subject to replay it with (``--no-sut``: the model
    alone, whose properties are then the check); exits 2 when it cannot be decoded."""
    try:
        decoded = decode_counterexample(row)
    except TraceDecodeError as e:
        _err(f"counterexample {row['counterexample_id']} ({row.get('_file')}) cannot be decoded: {e}")
        sys.exit(2)
    subject = decoded.subject
    if no_sut:
        subject = attrs.evolve(subject, implementation=None, compare=False, check_properties=True)
    return decoded, subject


def _verdict(row: dict[str, Any], decoded: DecodedCounterexample, result: ReplayResult) -> str:
    """The last line: reproduced, fails differently, or not reproduced."""
    if not result.failed:
        return f"not reproduced: {decoded.prop} no longer fails on this trace"
    same = reproduces(result, decoded.prop, decoded.kind)
    verdict = ("reproduced" if same else "fails differently") + \
        f": {', '.join(result.property_names)} after step {result.failed_at} of {len(decoded.actions)}"
    if same and result.failed_at == len(decoded.actions) and state_to_json(result.state) != row["final_state_json"]:
        verdict += " (the final state differs from the recorded one: the model changed since)"
    return verdict


def _reduce(decoded: DecodedCounterexample, subject: Subject, result: ReplayResult, seconds: float) -> None:
    """Print the shortest trace reduction finds within ``seconds`` (``check.reduce``)."""
    reduced = reduce_counterexample(decoded.actions, subject, max_seconds=seconds,
                                    prop=decoded.prop if decoded.kind in ("property", "liveness") else None)
    where = "" if not reduced.changes else \
        f" in a smaller configuration ({', '.join(reduced.changes)}):\n  {reduced.config!r}"
    click.echo(f"\nreduced: {len(reduced.trace)} of {result.failed_at} steps fail the same way{where}\n"
               + _steps(reduced.trace))


@click.command()
@click.argument("corpus_dir", type=click.Path(file_okay=False))
@click.option("--id", "ident", metavar="ID", help="counterexample id (or a unique prefix of one)")
@click.option("--signature", "sig", metavar="SIG", help="replay the shortest counterexample of this signature")
@click.option("--list", "listing", is_flag=True, help="list the corpus's counterexamples and signatures")
@click.option("--no-sut", is_flag=True, help="replay on the model only")
@click.option("--steps/--no-steps", "show_steps", default=False, help="print the whole trace")
@click.option("--reduce", "reduce_seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="when the failure reproduces, also print the shortest trace delta debugging finds "
                   "within SECONDS that fails the same way, in the smallest configuration (fewer brokers, "
                   "fewer replicas, lower MinISR) where it still does (check.reduce)")
def replay(corpus_dir: str, ident: Optional[str], sig: Optional[str], listing: bool, no_sut: bool,
           show_steps: bool, reduce_seconds: Optional[float]) -> None:
    """Replay a counterexample of the corpus at CORPUS_DIR (a folder, or a URI:
    s3://BUCKET/PATH, gs://, hdfs://); print its failure report."""
    read = _read(corpus_dir)
    where = f"{corpus_dir} ({len(read.files)} readable file(s)" + (
        f", {len(read.problems)} skipped" if read.problems else "") + ")"
    if listing:
        _list(read, where)
    row = _chosen(read, ident, sig, where)
    decoded, subject = _replayed(row, no_sut)
    click.echo(_header(row))
    if show_steps:
        click.echo("trace:\n" + _steps(decoded.actions))
    try:
        result = run_replay(decoded.actions, subject)
    except (TraceNotEnabled, ValueError) as e:
        _err(f"counterexample {row['counterexample_id']} cannot be replayed: {e}")
        sys.exit(2)
    click.echo("\nreplay:\n" + result.report())
    verdict = _verdict(row, decoded, result)
    click.echo("\n" + verdict)
    if reduce_seconds is not None and verdict.startswith("reproduced"):
        _reduce(decoded, subject, result, reduce_seconds)
    sys.exit(1 if result.failed else 0)
