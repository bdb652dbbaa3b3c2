"""``replicheck reproduce``'s bad arguments: one line naming what is wrong, exit 2,
nothing written, before any JVM or Maven starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from replicheck_cli.commands import main


@pytest.mark.parametrize("args, says", [
    (["--finding", "13"], "finding: 13 has no reproducer; one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"),
    (["--write"], "--write records the release matrix: give it with --matrix"),
    (["--matrix", "--finding", "5"], "--matrix runs every finding on every release"),
    (["--kafka-version", "4.x"], "--kafka-version: '4.x' is not a release number like 4.3.1"),
    (["some-corpus", "--finding", "5"], "give CORPUS_DIR with --id/--signature, or --finding N, not both"),
])
def test_a_bad_request_is_one_line_and_writes_nothing(args, says, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["reproduce", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines == [f"error: {says}"] or (len(lines) == 1 and says in lines[0]), result.output
    assert not out.exists()


def test_without_maven_running_them_is_one_line(tmp_path, monkeypatch):
    """The project is written; running it without Maven says so in one line, exit 1."""
    from reproducers.generate import Reproducer
    from reproducers.project import MavenFailed, run_project, write_project
    write_project(tmp_path, [Reproducer("ReplicheckFinding0Test", "class ReplicheckFinding0Test {}", 0, "pass")])
    assert (tmp_path / "pom.xml").exists()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(MavenFailed, match="^mvn: Maven is not installed"):
        run_project(tmp_path)


def test_a_replica_finding_is_left_out_of_an_older_release_before_anything_runs(tmp_path):
    """Finding 2 drives Kafka's Partition, whose fixture is written for 4.2.0 on: for
    4.1.2 it is named and left out before any replay (no JVM), and with nothing
    left the request is refused."""
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["reproduce", "--finding", "2", "--kafka-version", "4.1.2", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "left out: ReplicheckFinding2Test: it drives Kafka's Partition, whose fixture is written for 4.2.0 on",
        "error: --kafka-version: nothing can be written for 4.1.2"]
    assert not out.exists()
