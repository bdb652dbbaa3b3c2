"""The release matrix: every finding's reproducer run against every Kafka release
from 4.0.0 on, and in which releases the finding holds.

Each release gets its own Maven project (``project.write_project``: the fixture
and the calls written for that release's API), built from the same recorded run
on the pinned release's classes. A finding *holds* on a release when its
reproducer passes there: the same requests meet the same answer (the exception,
or the state the finding is). ``RECORDED`` (``releases.json`` beside this
module) is the matrix as last run (``replicheck reproduce --matrix --write``);
``make reproducers`` runs it again and fails on any difference: a release that
fixed a finding, or a reproducer that no longer holds where it did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import attrs

# every Kafka release from 4.0.0 to the pinned one (all resolve from Maven Central)
from kafka_bridge.releases import RELEASES

from .findings import FINDINGS, KafkaFinding
from .generate import Recorded, Reproducer, record, render
from .project import TestResult, replicas_since, replicas_writable, run_project, write_project

#: The matrix as last recorded: release -> finding number (as a string) -> "holds", or
#: "does not hold: " and the first line of what JUnit said.
RECORDED_FILE = Path(__file__).with_name("releases.json")


@attrs.frozen
class Cell:
    """One finding on one release: ``holds`` (its reproducer passed) and, when it
    does not, the first line of what JUnit said; ``ran`` False when its reproducer
    cannot be written for that release (``message`` says why)."""

    holds: bool
    message: str = ""
    ran: bool = True

    @property
    def recorded(self) -> str:
        if not self.ran:
            return f"not run: {self.message}"
        return "holds" if self.holds else f"does not hold: {self.message}"


def _writable(finding: KafkaFinding, release: str) -> bool:
    """Whether ``finding``'s reproducer can be written for ``release``."""
    return not finding.replicas or replicas_writable(release)


def reproducers_for(release: str, findings: Sequence[KafkaFinding], runs: dict[int, Recorded]) -> list[Reproducer]:
    """The reproducers (each recorded once, in ``runs``) written for ``release``, of
    the ``findings`` that can be (``_writable``)."""
    out = []
    for f in (f for f in findings if _writable(f, release)):
        if f.number not in runs:
            runs[f.number] = record(f.config, f.trace)
        out.append(render(runs[f.number], f.name, f"Finding {f.number}: {f.title}", f.shows, release, f.replicas))
    return out


def run_matrix(folder: Path, releases: Sequence[str] = RELEASES, findings: Sequence[KafkaFinding] = FINDINGS,
               progress: Callable[[str], None] = lambda _: None) -> dict[str, dict[int, Cell]]:
    """release -> finding number -> Cell, each release's project in ``folder/kafka-X``.
    Raises ``project.MavenFailed`` when a release's project does not build."""
    out: dict[str, dict[int, Cell]] = {}
    runs: dict[int, Recorded] = {}
    for release in releases:
        progress(release)
        project = folder / f"kafka-{release}"
        write_project(project, reproducers_for(release, findings, runs), release)
        results: dict[str, TestResult] = {r.name: r for r in run_project(project)}
        out[release] = {f.number: _cell(results.get(f.name)) if _writable(f, release) else _NOT_WRITABLE
                        for f in findings}
    return out


_NOT_WRITABLE = Cell(False, f"the replicas' fixture (Kafka's Partition) is written for {replicas_since()} on",
                     ran=False)


def _cell(result: "TestResult | None") -> Cell:
    if result is None:
        return Cell(False, "no result from JUnit", ran=False)
    return Cell(result.result == "passed", result.message)


def as_recorded(matrix: dict[str, dict[int, Cell]]) -> dict[str, dict[str, str]]:
    return {release: {str(n): cell.recorded for n, cell in row.items()} for release, row in matrix.items()}


def _holds(recorded_cell: str) -> bool:
    return recorded_cell == "holds"


def recorded() -> dict[str, dict[str, str]]:
    """The recorded matrix (``RECORDED_FILE``); empty when none was recorded."""
    if not RECORDED_FILE.exists():
        return {}
    return json.loads(RECORDED_FILE.read_text())


def write_recorded(matrix: dict[str, dict[int, Cell]]) -> None:
    RECORDED_FILE.write_text(json.dumps(as_recorded(matrix), indent=2, sort_keys=True) + "\n")


def differences(matrix: dict[str, dict[int, Cell]], record: dict[str, dict[str, str]]) -> list[str]:
    """Where ``matrix`` differs from ``record``, one line each."""
    out = []
    for release, row in as_recorded(matrix).items():
        for number, now in row.items():
            was = record.get(release, {}).get(number, "not recorded")
            if _holds(now) != _holds(was) or was == "not recorded":
                out.append(f"finding {number} on Kafka {release}: {now} (recorded: {was})")
    return out


def affected(record: dict[str, dict[str, str]], number: int) -> list[str]:
    """The releases of ``record`` where finding ``number`` holds, in release order."""
    return [r for r in RELEASES if _holds(record.get(r, {}).get(str(number), ""))]


def table(matrix: dict[str, dict[int, Cell]]) -> str:
    """The matrix as text: a row per release, a column per finding."""
    numbers = sorted({n for row in matrix.values() for n in row})
    lines = [f"{'release':9}" + "".join(f"  finding {n:<3}" for n in numbers)]
    for release, row in matrix.items():
        lines.append(f"{release:9}" + "".join(
            f"  {('holds' if row[n].holds else 'no' if row[n].ran else 'not run'):11}" for n in numbers))
    return "\n".join(lines)
