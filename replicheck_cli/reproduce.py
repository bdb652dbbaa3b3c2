"""``replicheck reproduce``: findings about Kafka's code as standalone JUnit 5 tests.

``replicheck reproduce`` writes the reproducer of every finding that has one
(``reproducers.findings``); ``--finding N`` of those named; ``CORPUS_DIR --id ID``
(or ``--signature SIG``) of one corpus row replayable with the implementation
"kafka". The Maven project goes to ``--out`` (pom.xml pinning Kafka's release,
the fixture, a test class per reproducer); ``--run`` then runs ``mvn test`` and
prints each test's result beside the one expected: a finding's reproducer passes
while the defect is there, a disagreement's fails at the row's step.

``--matrix`` runs every finding's reproducer on every Kafka release from 4.0.0 on
(``reproducers.matrix``) and compares the table with the one recorded
(``--write`` records it).

Exit status: 0 when every reproducer was written (and, with ``--run``, did as
expected); 1 when one ran otherwise (a release fixed the finding, say) or Maven
could not run them; 2 when the request cannot be answered (an unknown finding,
a row that does not show in Kafka's controller, Kafka's jars missing).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Optional

import click

from .replay import _chosen, _read, _replayed


def _err(message: str) -> None:
    click.echo(f"error: {message}", err=True)


def _from_row(corpus_dir: str, ident: Optional[str], sig: Optional[str], kafka_version: str) -> list[Any]:
    from reproducers.generate import generate
    from reproducers.project import replicas_writable
    read = _read(corpus_dir)
    row = _chosen(read, ident, sig, corpus_dir)
    decoded, _ = _replayed(row, no_sut=False)
    name = "ReplicheckRow" + re.sub(r"[^0-9A-Za-z]", "", row["counterexample_id"])[:12] + "Test"
    title = f"replicheck counterexample {row['counterexample_id']}: {row['signature']}"
    about = f"{row['property']} ({row['kind']}), found by {row['test_id']}"
    # the brokers' replicas too where their fixture compiles; else Kafka's controller alone
    return [generate(decoded.config, decoded.actions, name, title, about, kafka_version,
                     replicas_writable(kafka_version))]


def _from_findings(numbers: tuple[int, ...], kafka_version: str) -> list[Any]:
    """The chosen findings' reproducers for ``kafka_version``, those that cannot be
    written for it left out, each named; exits 2 when none is left."""
    from reproducers.findings import FINDINGS, finding
    from reproducers.generate import generate
    from reproducers.project import replicas_since, replicas_writable
    chosen = [finding(n) for n in numbers] if numbers else list(FINDINGS)
    if not replicas_writable(kafka_version):
        for f in (f for f in chosen if f.replicas):
            click.echo(f"left out: {f.name}: it drives Kafka's Partition, whose fixture is written for "
                       f"{replicas_since()} on", err=True)
        chosen = [f for f in chosen if not f.replicas]
    if not chosen:
        _err(f"--kafka-version: nothing can be written for {kafka_version}")
        sys.exit(2)
    return [generate(f.config, f.trace, f.name, f"Finding {f.number}: {f.title}", f.shows, kafka_version, f.replicas)
            for f in chosen]


def _run(out: Path, reproducers: list[Any]) -> int:
    from reproducers.project import MavenFailed, run_project
    try:
        results = {r.name: r for r in run_project(out)}
    except MavenFailed as e:
        _err(str(e))
        return 1
    status = 0
    click.echo(f"\n{'test':32} {'expected':9} {'result':8} message")
    for r in reproducers:
        got = results.get(r.name)
        result = got.result if got else "not run"
        as_expected = (result == "passed") == (r.expected == "pass")
        status |= 0 if as_expected else 1
        click.echo(f"{r.name:32} {r.expected:9} {result:8} {got.message[:100] if got else ''}"
                   + ("" if as_expected else "   <- not as expected"))
    return status


def _matrix(out: Path, write: bool) -> int:
    """Every finding's reproducer on every release (``reproducers.matrix``), the
    table printed, compared with the recorded one (or recorded, ``write``)."""
    from reproducers.matrix import differences, recorded, run_matrix, table, write_recorded
    from reproducers.project import MavenFailed
    try:
        matrix = run_matrix(out, progress=lambda r: click.echo(f"Kafka {r} ...", err=True))
    except MavenFailed as e:
        _err(str(e))
        return 1
    click.echo(table(matrix))
    if write:
        write_recorded(matrix)
        click.echo("recorded in reproducers/releases.json")
        return 0
    changed = differences(matrix, recorded())
    for line in changed:
        click.echo(f"changed: {line}")
    click.echo("the matrix is as recorded" if not changed else f"{len(changed)} difference(s) from the recorded matrix")
    return 1 if changed else 0


@click.command()
@click.argument("corpus_dir", required=False, type=click.Path(file_okay=False))
@click.option("--id", "ident", metavar="ID", help="with CORPUS_DIR: the counterexample (an id or a unique prefix)")
@click.option("--signature", "sig", metavar="SIG", help="with CORPUS_DIR: the shortest counterexample of this signature")
@click.option("--finding", "numbers", type=int, multiple=True, metavar="N",
              help="the reproducer of finding N (repeatable) [default: every finding that has one]")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("build/reproducers"),
              show_default=True, help="the Maven project's folder (its earlier tests are replaced)")
@click.option("--run", "run_tests", is_flag=True, help="compile and run the reproducers (mvn test) and check each "
                                                        "did as expected")
@click.option("--matrix", is_flag=True,
              help="run every finding's reproducer on every Kafka release from 4.0.0 on and compare the table with "
                   "the recorded one (reproducers/releases.json); exit 1 on a difference")
@click.option("--write", is_flag=True, help="with --matrix: record the table instead of comparing")
@click.option("--kafka-version", default=None, metavar="X.Y.Z",
              help="the Kafka release the project is written for and runs against [default: the pinned one, "
                   "model.KAFKA_RELEASE]; the trace is replayed on the pinned release's classes")
def reproduce(corpus_dir: Optional[str], **options: Any) -> None:
    """Write JUnit 5 reproducers of findings about Kafka's code: every finding's, or
    the row of CORPUS_DIR that --id or --signature names."""
    from model import KAFKA_RELEASE
    from reproducers.generate import NotReproducible, ReproducerUnavailable, release
    from reproducers.project import write_project
    ident, sig, numbers, out = options["ident"], options["sig"], options["numbers"], options["out"]
    matrix, write, kafka_version = options["matrix"], options["write"], options["kafka_version"]
    if corpus_dir is not None and numbers:
        _err("give CORPUS_DIR with --id/--signature, or --finding N, not both")
        sys.exit(2)
    if write and not matrix:
        _err("--write records the release matrix: give it with --matrix")
        sys.exit(2)
    if matrix:
        if corpus_dir is not None or numbers or kafka_version:
            _err("--matrix runs every finding on every release: no CORPUS_DIR, --finding or --kafka-version with it")
            sys.exit(2)
        sys.exit(_matrix(out, write))
    version = kafka_version or KAFKA_RELEASE
    try:
        release(version)
        reproducers = (_from_row(corpus_dir, ident, sig, version) if corpus_dir is not None
                       else _from_findings(numbers, version))
    except (NotReproducible, ReproducerUnavailable, ValueError) as e:
        _err(str(e))
        sys.exit(2)
    for path in write_project(out, reproducers, version):
        click.echo(f"wrote {path}")
    sys.exit(_run(out, reproducers) if options["run_tests"] else 0)
