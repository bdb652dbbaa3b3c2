"""What the symbolic-link tests share: a folder outside the corpus or report
folder that a planted link aims at, and whether it was left untouched."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the corpus, holding one file a link could aim at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_text("untouched")
    return folder


def unchanged(outside: Path) -> bool:
    """Whether ``outside`` holds its one file, untouched, and nothing else."""
    return sorted(p.name for p in outside.iterdir()) == ["victim.txt"] and \
        (outside / "victim.txt").read_text() == "untouched"
