"""``replicheck`` command line.

``replicheck replay CORPUS_DIR --id ID`` replays one counterexample of a corpus
(an id or a unique prefix of one) and prints the failure report pytest printed;
``--signature SIG`` replays the shortest counterexample of a signature; ``--list``
lists the corpus.

Exit status: 1 when the replay fails (as the recorded test did), 0 when the
trace now runs without failure, 2 when the request cannot be answered (no such
corpus, id or signature; a trace that cannot be decoded or whose step is not
enabled).
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import click


@click.group()
@click.version_option(package_name="replicheck", message="%(prog)s %(version)s")
def main() -> None:
    """replicheck: model-based property testing of Kafka's partition replication."""


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


@main.command()
@click.argument("corpus_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--id", "ident", metavar="ID", help="counterexample id (or a unique prefix of one)")
@click.option("--signature", "sig", metavar="SIG", help="replay the shortest counterexample of this signature")
@click.option("--list", "listing", is_flag=True, help="list the corpus's counterexamples and signatures")
@click.option("--no-sut", is_flag=True, help="replay on the model only")
@click.option("--steps/--no-steps", "show_steps", default=False, help="print the whole trace")
@click.option("--reduce", "reduce_seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="when the failure reproduces, also print the shortest trace delta debugging finds "
                   "within SECONDS that fails the same way, in the smallest configuration (fewer brokers, "
                   "fewer replicas, lower MinISR) where it still does (harness.reduce)")
def replay(corpus_dir: Path, ident: Optional[str], sig: Optional[str], listing: bool, no_sut: bool,
           show_steps: bool, reduce_seconds: Optional[float]) -> None:
    """Replay a counterexample of the corpus at CORPUS_DIR; print its failure report."""
    from .corpus import CorpusError, CorpusWarning, read_counterexamples, find_by_id, shortest_of_signature, \
        unique_counterexamples, decode_counterexample
    from .replay import TraceNotEnabled, reproduces, replay as run_replay
    from .trace_codec import TraceDecodeError, state_to_json

    if not corpus_dir.is_dir():
        _err(f"{corpus_dir}: no such corpus directory")
        sys.exit(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        read = read_counterexamples(corpus_dir, warn=False)
    for problem in read.problems:
        click.echo(f"warning: {problem}", err=True)
    where = f"{corpus_dir} ({len(read.files)} readable file(s)" + (
        f", {len(read.problems)} skipped" if read.problems else "") + ")"

    if listing:
        unique = unique_counterexamples(read.rows)
        sigs = Counter(r["signature"] for r in unique)
        click.echo(f"{len(unique)} counterexample(s), {len(sigs)} signature(s) in {where}")
        for s in sorted(sigs):
            click.echo(f"\n{sigs[s]:4}  {s}")
            for r in (r for r in unique if r["signature"] == s):
                flaws = "+".join(r["variants"] + r["sut_bugs"]) or "correct"
                click.echo(f"      {r['counterexample_id'][:16]}  {r['step_count']:3} steps  {flaws}  {r['test_id']}")
        return
    if bool(ident) == bool(sig):
        n = len(unique_counterexamples(read.rows))
        _err(f"give exactly one of --id ID or --signature SIG ({n} counterexample(s) in {where}; --list shows them)")
        sys.exit(2)
    try:
        row = find_by_id(read.rows, ident, where) if ident else shortest_of_signature(read.rows, sig, where)
    except CorpusError as e:
        _err(str(e))
        sys.exit(2)
    try:
        decoded = decode_counterexample(row)
    except TraceDecodeError as e:
        _err(f"counterexample {row['counterexample_id']} ({row.get('_file')}) cannot be decoded: {e}")
        sys.exit(2)

    click.echo(_header(row))
    if show_steps:
        click.echo("trace:\n" + _steps(decoded.actions))
    try:
        implementation = None if no_sut else decoded.implementation
        check_properties = no_sut or decoded.check_properties  # the model alone: its properties are the check
        result = run_replay(decoded.actions, decoded.config, decoded.variants, decoded.bugs,
                            compare_sut=False if no_sut else None, implementation=implementation,
                            check_properties=check_properties)
    except TraceNotEnabled as e:
        _err(f"counterexample {row['counterexample_id']} cannot be replayed: {e}")
        sys.exit(2)
    click.echo("\nreplay:")
    click.echo(result.report())
    if result.failed:
        same = reproduces(result, decoded.prop, decoded.kind)
        verdict = ("reproduced" if same else "fails differently") + \
            f": {', '.join(result.property_names)} after step {result.failed_at} of {len(decoded.actions)}"
        if same and result.failed_at == len(decoded.actions) and \
                state_to_json(result.state) != row["final_state_json"]:
            verdict += " (the final state differs from the recorded one: the model changed since)"
    else:
        verdict = f"not reproduced: {decoded.prop} no longer fails on this trace"
    click.echo("\n" + verdict)
    if reduce_seconds is not None and result.failed and same:
        from .reduce import reduce_counterexample
        reduced = reduce_counterexample(decoded.actions, decoded.config, decoded.variants, decoded.bugs,
                                        compare_sut=False if no_sut else None, max_seconds=reduce_seconds,
                                        prop=decoded.prop if decoded.kind == "property" else None,
                                        implementation=implementation, check_properties=check_properties)
        where = "" if not reduced.changes else \
            f" in a smaller configuration ({', '.join(reduced.changes)}):\n  {reduced.config!r}"
        click.echo(f"\nreduced: {len(reduced.trace)} of {result.failed_at} steps fail the same way{where}\n"
                   + _steps(reduced.trace))
    sys.exit(1 if result.failed else 0)


if __name__ == "__main__":  # pragma: no cover
    main()


@main.command()
@click.option("--minutes", type=float, default=5.0, show_default=True,
              help="wall-clock budget of the whole campaign, report included")
@click.option("--workers", type=int, default=None, help="pytest-xdist workers [default: the machine's cores]")
@click.option("--variant", "variants", multiple=True, metavar="NAME",
              help="only this protocol variant (repeatable; see model.Variant)")
@click.option("--bug", "bugs", multiple=True, metavar="NAME", help="only this SUT bug (repeatable; see sut.bugs.Bug)")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("corpus"),
              show_default=True, help="counterexample corpus directory")
@click.option("--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("report"),
              show_default=True, help="where the HTML report goes")
@click.option("--no-report", is_flag=True, help="skip the Spark report")
@click.option("--no-correct", is_flag=True, help="skip the correct protocol + SUT run")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="draw the examples of the campaign that printed this seed again (on the same code) "
                   "[default: a random seed, printed]")
@click.option("--implementation", default=None, metavar="NAME",
              help="run only this implementation under test in lockstep with the model, one series of runs "
                   "per worker for the whole budget (harness.implementations.NAMES: kafka, Kafka's own code "
                   "under the Kafka profile); not with --variant or --bug")
def fuzz(minutes: float, workers: Optional[int], variants: tuple[str, ...], bugs: tuple[str, ...],
         corpus_dir: Path, report_dir: Path, no_report: bool, no_correct: bool, seed: Optional[int],
         implementation: Optional[str]) -> None:
    """Run the fuzz campaign: the correct protocol + SUT, every protocol variant and
    every SUT bug (or only those named), each as its own series of machine runs
    under pytest-xdist with the fuzz profile; export every run and every shrunk
    counterexample, reduced (the shrunk trace kept beside it), to the corpus;
    build the Spark report; print the kill matrix. With --implementation NAME, only
    that implementation against the model: every failure is a disagreement.

    Exit status 0 when the correct protocol + SUT (or the implementation) never
    failed and every selected flaw was found; 1 otherwise; 2 on bad arguments or
    an implementation that cannot be built here (the reason on one line, before
    any run starts)."""
    from .fuzz import fuzz as run_campaign
    from .implementations import ImplementationUnavailable
    try:
        code = run_campaign(minutes=minutes, workers=workers, variants=list(variants) or None,
                            bugs=list(bugs) or None, corpus_dir=corpus_dir,
                            report_dir=None if no_report else report_dir, include_correct=not no_correct,
                            seed=seed, implementation=implementation)
    except (ValueError, ImplementationUnavailable) as exc:
        _err(str(exc))
        raise SystemExit(2) from None
    raise SystemExit(code)


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("corpus_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="directory for index.html and its plots")
@click.option("--master", default=None, metavar="URL", help="Spark master URL [default: local[*]]")
@click.option("--max-diagrams", type=int, default=20, show_default=True,
              help="space-time diagrams for the N largest signatures")
@click.option("--top", type=int, default=20, show_default=True, help="signatures in the printed summary")
def report(corpus_dir: Path, out_dir: Path, master: Optional[str], max_diagrams: int, top: int) -> None:
    """Print a summary of a counterexample corpus and write an HTML report with
    Spark (local[*] unless --master names a cluster): the kill matrix, signature
    buckets, action lift, shrunk lengths, time to failure, protocol coverage,
    motifs, and a space-time diagram per signature."""
    from spark_reports.cli import main as report_main
    argv = [str(corpus_dir), "--out", str(out_dir), "--max-diagrams", str(max_diagrams), "--top", str(top)]
    if master:
        argv += ["--master", master]
    raise SystemExit(report_main(argv))
