"""benchmarks/results.py: ``--write`` rewrites the benchmark's own section of the
results page and nothing else, and refuses, in one line naming the section, when
its markers are missing."""

from __future__ import annotations

import argparse
import re
import sys

import pytest

from docs_support import ROOT, results

r = results()

PAGE = """# Results

Intro, kept.

<!-- BEGIN bench:fake -->
old figures of fake
<!-- END bench:fake -->

Between, kept.

<!-- BEGIN bench:other -->
old figures of other
<!-- END bench:other -->

End, kept.
"""


def test_replace_section_changes_only_its_own_section():
    out = r.replace_section(PAGE, "fake", "| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "old figures of fake" not in out and "| 1 | 2 |" in out
    before, after = PAGE.split("old figures of fake\n")
    assert out.startswith(before) and out.endswith(after)
    assert "old figures of other" in out


def test_a_missing_section_is_refused_in_one_line_naming_it():
    with pytest.raises(r.SectionError) as caught:
        r.replace_section(PAGE, "absent", "x")
    message = str(caught.value)
    assert "bench:absent" in message and "\n" not in message


@pytest.mark.parametrize("page", [
    PAGE.replace("<!-- END bench:fake -->", ""),                                    # no END
    PAGE.replace("<!-- BEGIN bench:fake -->", ""),                                  # no BEGIN
    PAGE + "<!-- BEGIN bench:fake -->\n<!-- END bench:fake -->\n",                  # twice
    PAGE.replace("<!-- BEGIN bench:fake -->", "@@").replace("<!-- END bench:fake -->", "<!-- BEGIN bench:fake -->")
        .replace("@@", "<!-- END bench:fake -->"),                                   # END before BEGIN
], ids=["no-end", "no-begin", "twice", "out-of-order"])
def test_a_broken_section_is_refused(page: str):
    with pytest.raises(r.SectionError, match=r"bench:fake"):
        r.replace_section(page, "fake", "x")


def test_render_keeps_markdown_tables_and_fences_the_rest():
    body = r.render("a title line\n\n| a | b |\n|---|---:|\n| 1 | 2 |\n\nname   value\n----\nx      1\n",
                    "python benchmarks/fake.py --seeds 2", on="a test machine")
    assert body.startswith("Measured ") and "`python benchmarks/fake.py --seeds 2` (a test machine):" in body
    assert "\n| a | b |\n|---|---:|\n| 1 | 2 |\n" in body
    assert "```text\nname   value\n----\nx      1\n```" in body
    assert "```text\na title line\n```" in body


def _benchmark(argv: list[str], monkeypatch: pytest.MonkeyPatch):
    """A benchmark's ``main`` as the scripts write it, run through ``results.run``."""
    monkeypatch.setattr(sys, "argv", ["benchmarks/fake.py", *argv])

    def main() -> None:
        ap = argparse.ArgumentParser()
        ap.add_argument("--seeds", type=int, default=1)
        r.add_write_option(ap, "fake")
        args = ap.parse_args()
        print("| seeds | found |\n|---:|---:|")
        print(f"| {args.seeds} | 36/36 |")

    return r.run(main)


def test_write_rewrites_the_scripts_own_section(tmp_path, monkeypatch: pytest.MonkeyPatch):
    page = tmp_path / "results.md"
    page.write_text(PAGE)
    monkeypatch.setattr(r, "RESULTS", page)
    _benchmark(["--seeds", "3", "--write"], monkeypatch)
    text = page.read_text()
    assert "| 3 | 36/36 |" in text and "old figures of fake" not in text
    assert "`python benchmarks/fake.py --seeds 3`" in text          # the command, without --write
    assert text.split("<!-- BEGIN bench:fake -->")[0] == PAGE.split("<!-- BEGIN bench:fake -->")[0]
    assert text.split("<!-- END bench:fake -->")[1] == PAGE.split("<!-- END bench:fake -->")[1]


def test_write_of_a_suffixed_section(tmp_path, monkeypatch: pytest.MonkeyPatch):
    page = tmp_path / "results.md"
    page.write_text(PAGE.replace("bench:other", "bench:fake.more"))
    monkeypatch.setattr(r, "RESULTS", page)
    _benchmark(["--write", "fake.more"], monkeypatch)
    text = page.read_text()
    assert "old figures of fake\n" in text and "old figures of other" not in text and "| 1 | 36/36 |" in text


def test_write_without_its_section_exits_2_before_running(tmp_path, monkeypatch, capsys):
    page = tmp_path / "results.md"
    page.write_text(PAGE.replace("bench:fake", "bench:renamed"))
    monkeypatch.setattr(r, "RESULTS", page)
    with pytest.raises(SystemExit) as caught:
        _benchmark(["--write"], monkeypatch)
    assert caught.value.code == 2
    err = capsys.readouterr()
    assert "36/36" not in err.out                                   # nothing was measured
    lines = err.err.strip().splitlines()
    assert len(lines) == 1 and "bench:fake" in lines[0] and "results.md" in lines[0]
    assert page.read_text() == PAGE.replace("bench:fake", "bench:renamed")


def test_write_refuses_another_scripts_section(tmp_path, monkeypatch, capsys):
    page = tmp_path / "results.md"
    page.write_text(PAGE)
    monkeypatch.setattr(r, "RESULTS", page)
    with pytest.raises(SystemExit) as caught:
        _benchmark(["--write", "other"], monkeypatch)
    assert caught.value.code == 2 and "not a section of this benchmark" in capsys.readouterr().err
    assert page.read_text() == PAGE


def test_without_write_nothing_is_written(tmp_path, monkeypatch: pytest.MonkeyPatch):
    page = tmp_path / "results.md"
    page.write_text(PAGE)
    monkeypatch.setattr(r, "RESULTS", page)
    _benchmark([], monkeypatch)
    assert page.read_text() == PAGE


def test_every_benchmark_has_its_section_on_the_results_page():
    page = (ROOT / "docs" / "results.md").read_text()
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    names = {}
    for script in scripts:
        found = re.findall(r"add_write_option\(\w+, \"([\w.-]+)\"\)", script.read_text())
        if script.name != "results.py":
            assert found == [script.stem], f"{script.name}: --write through results.add_write_option"
            assert "results.run(main)" in script.read_text(), script.name
        names.update({name: script for name in found})
    for name in names:
        r.replace_section(page, name, "x")          # raises when the markers are not there exactly once
