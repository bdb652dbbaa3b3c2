"""The ``replicheck`` command group: ``fuzz`` and ``report`` here, ``replay`` from
``replicheck_cli.replay``, ``reproduce`` from ``replicheck_cli.reproduce``. Bad arguments exit with status 2 and one line naming the
option and what it allows."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

import click

from campaign.spark_checks import check_master, check_shared_corpus
from campaign.spark_pool import SparkUnavailable
from check.implementations import ImplementationUnavailable, with_release
from spark_reports.cli import ReportOptions, report as write_report, writable_folder
from store.fs import RemotePath, location

from .replay import replay
from .reproduce import reproduce


@click.group()
@click.version_option(package_name="replicheck", message="%(prog)s %(version)s")
def main() -> None:
    """replicheck: model-based property testing of Kafka's partition replication."""


main.add_command(replay)
main.add_command(reproduce)


def _err(message: str) -> None:
    click.echo(f"error: {message}", err=True)


@main.command()
@click.option("--minutes", type=float, default=5.0, show_default=True,
              help="wall-clock budget of the whole campaign, report included (a finite number > 0)")
@click.option("--workers", type=int, default=None,
              help="worker processes, an integer >= 1 [default: the machine's cores]; with --master, how many "
                   "units run at once as Spark tasks [default: the executors' total cores]")
@click.option("--master", default=None, metavar="URL",
              help="run the units as Spark tasks on this master (spark://HOST:PORT, local[N], ...; checked by "
                   "connecting to it first) instead of local worker processes; --corpus must then be a folder path "
                   "every executor writes, or a URI (README: Campaigns on a Spark cluster)")
@click.option("--variant", "variants", multiple=True, metavar="NAME",
              help="only this protocol variant (repeatable; see model.Variant)")
@click.option("--bug", "bugs", multiple=True, metavar="NAME", help="only this SUT bug (repeatable; see sut.bugs.Bug)")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False), default="corpus",
              show_default=True, help="counterexample corpus: a folder, or a URI (s3://BUCKET/PATH, gs://, hdfs://)")
@click.option("--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("report"),
              show_default=True, help="where the HTML report goes")
@click.option("--no-report", is_flag=True, help="skip the Spark report: the whole budget goes to the search")
@click.option("--no-live", is_flag=True,
              help="no live view (by default live.html in the --report folder shows the campaign as it runs, "
                   "with --no-report too)")
@click.option("--no-correct", is_flag=True,
              help="skip the correct protocol + SUT targets (under the chapters' profile and Kafka's)")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="draw the examples of the campaign that printed this seed again (on the same code) "
                   "[default: a random seed, printed]")
@click.option("--implementation", default=None, metavar="NAME",
              help="run only this implementation under test in lockstep with the model, on every worker for the "
                   "whole budget (check.implementations.NAMES: kafka, Kafka's own code under the Kafka "
                   "profile); not with --variant or --bug")
@click.option("--kafka-version", default=None, metavar="X.Y.Z",
              help="with --implementation kafka: Kafka's own code of this release instead of the pinned one "
                   "(the implementation kafka@X.Y.Z; kafka_bridge.releases.RELEASES; `make kafka-jars "
                   "KAFKA_VERSION=X.Y.Z` fetches it)")
@click.option("--correct-only", is_flag=True,
              help="only the correct protocol + SUT, on every worker for the whole budget: a long search for new "
                   "bugs that fails only on a real counterexample; not with --variant, --bug, --implementation "
                   "or --no-correct")
@click.option("--known", default=None, metavar="FILE",
              help="disagreements the campaign already knows: a file of signatures, one a line as `replicheck "
                   "replay CORPUS --list` prints them, or a corpus folder (its divergences); runs go on past them "
                   "and they fail no target (campaign.known)")
@click.option("--engine", type=click.Choice(["explore", "hypothesis"]), default="explore", show_default=True,
              help="how targets are searched: explore (the machine's policy driven by check.explore, branching "
                   "from the protocol states it reached) or hypothesis (machine runs under Hypothesis)")
def fuzz(**options: Any) -> None:
    """Run the fuzz campaign: the correct protocol + SUT (under the chapters' profile
    and under Kafka's), every protocol variant and every SUT bug (or only those
    named), each as a series of machine runs in
    worker processes; every target gets a first unit of work before any gets a
    second, a flaw's search stops at its first counterexample and its time goes
    to the targets still searching, the correct protocol runs to the end. Every run and every counterexample
    (reduced, the shrunk trace kept beside it) goes to the corpus; then the kill
    matrix, each target's verdict (found / not found / clean / not run / error, with
    why) and the Spark report, all within --minutes. With --implementation NAME,
    only that implementation against the model: every failure is a disagreement.
    With --master URL, the units run as Spark tasks on that master's executors.

    Exit status 0 when the correct protocol + SUT (or the implementation) never
    failed and every selected flaw was found; 1 otherwise; 2 on bad arguments
    (--corpus or --report a folder that cannot be created and written, a --corpus
    URI that cannot be used, an unreachable --master among them) or an implementation that cannot be built here (the reason on one
    line, before any run starts); 130 when interrupted by Ctrl-C, 143 by SIGTERM (the workers
    stopped, what they found on disk, the kill matrix printed with the targets cut short as
    stopped)."""
    from .fuzz import FuzzRequest, fuzz as run_fuzz
    _check_fuzz_options(options)
    request = FuzzRequest(minutes=options["minutes"], workers=options["workers"], variants=options["variants"],
                          bugs=options["bugs"], corpus_dir=options["corpus_dir"],
                          report_dir=None if options["no_report"] else options["report_dir"],
                          include_correct=not options["no_correct"], seed=options["seed"],
                          implementation=_implementation(options), engine=options["engine"],
                          correct_only=options["correct_only"], live=not options["no_live"],
                          live_dir=options["report_dir"], master=options["master"], known=options["known"])
    try:
        code = run_fuzz(request)
    except (ValueError, ImplementationUnavailable, SparkUnavailable) as exc:
        _err(str(exc))
        raise SystemExit(2) from None
    raise SystemExit(code)


def _implementation(options: dict[str, Any]) -> Optional[str]:
    """``--implementation`` with ``--kafka-version`` (exit 2 naming what is wrong)."""
    try:
        return with_release(options["implementation"], options["kafka_version"])
    except ValueError as e:
        _usage(str(e))


def _check_fuzz_options(options: dict[str, Any]) -> None:
    """Exit 2 with one line naming the first bad option of ``fuzz``."""
    minutes, workers, master = options["minutes"], options["workers"], options["master"]
    if not math.isfinite(minutes) or minutes <= 0:
        _usage(f"--minutes must be a finite number > 0, got {minutes}")
    if workers is not None and workers < 1:
        _usage(f"--workers must be an integer >= 1, got {workers}")
    if options["correct_only"] and (options["variants"] or options["bugs"] or options["implementation"]
                                    or options["no_correct"]):
        _usage("--correct-only runs only the correct protocol + SUT: give no --variant, --bug, --implementation "
               "or --no-correct with it")
    # Before the folder checks: a URI given as --corpus is not a folder to create here.
    problem = check_shared_corpus(options["corpus_dir"], "--corpus") or check_master(master)
    if problem is not None:
        _usage(problem)
    local_corpus = location(options["corpus_dir"])   # checked above: a folder path (file:// too), or a URI
    for option, folder in (("--corpus", None if isinstance(local_corpus, RemotePath) else local_corpus),
                           ("--report", None if options["no_report"] else options["report_dir"])):
        problem = None if folder is None else writable_folder(folder, option)
        if problem is not None:
            _usage(problem)


def _usage(message: str) -> None:
    _err(message)
    raise SystemExit(2)


@main.command()
@click.argument("corpus_dir")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="directory for index.html and its plots")
@click.option("--master", default=None, metavar="URL", help="Spark master URL [default: local[*]]")
@click.option("--max-diagrams", type=int, default=20, show_default=True,
              help="space-time diagrams for the N largest signatures (an integer >= 0)")
@click.option("--top", type=int, default=20, show_default=True,
              help="signatures in the printed summary (an integer >= 0)")
def report(corpus_dir: str, out_dir: Path, master: Optional[str], max_diagrams: int, top: int) -> None:
    """Print a summary of a counterexample corpus and write an HTML report with
    Spark (local[*] unless --master names a cluster): the kill matrix, signature
    buckets, action lift, shrunk lengths, time to failure, protocol coverage,
    motifs, and a space-time diagram per signature. Counterexamples are counted
    by id: one found again counts once.

    A file or folder of the corpus that cannot be read is named on stderr with
    why, and skipped; everything else is reported. Exit status 0: written, every
    file read; 1: CORPUS_DIR does not exist (an empty report is written); 2: a
    bad argument (one line naming it; checked before Spark starts, a cluster's
    master by connecting to it) or Spark did not start: nothing written; 3:
    written, but files or folders were skipped (spark_reports.cli)."""
    raise SystemExit(write_report(ReportOptions(corpus_dir=corpus_dir, out=out_dir, master=master,
                                                max_diagrams=max_diagrams, top=top)))


if __name__ == "__main__":  # pragma: no cover
    main()
