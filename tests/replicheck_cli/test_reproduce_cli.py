"""``replicheck reproduce``'s bad arguments: one line naming what is wrong, exit 2,
nothing written, before any JVM or Maven starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from replicheck_cli.commands import main


@pytest.mark.parametrize("args, says", [
    (["--finding", "9"], "finding: 9 has no reproducer; one of 3, 4, 5, 7"),
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
