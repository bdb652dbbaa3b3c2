"""The README is the front page: short, and its links into the site resolve."""

from __future__ import annotations

import re

from docs_support import ROOT

README = ROOT / "README.md"
MAX_LINES = 150


def test_readme_has_at_most_150_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; at most {MAX_LINES}: move the rest to docs/"


def test_readme_links_point_at_pages_that_exist():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs site"
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_readme_names_the_set_up_commands():
    text = README.read_text()
    for command in ("make test", "make fuzz", "make test-system", "make docs"):
        assert command in text, command
