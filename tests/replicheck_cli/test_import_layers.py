"""Imports flow one way (README, "Layout"): every module of each package is
parsed with ``ast`` and may import, of the project's packages, only those below
it. ``replicheck_cli`` sits above ``harness`` and ``spark_reports``, and nothing
imports it; ``harness`` never imports ``spark_reports``. The checker is itself
tested on snippets that break the rule."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("model", "properties", "sut", "harness", "spark_reports", "kafka_bridge", "replicheck_cli")

#: Package -> the packages of ours it may import (module names: a dotted name
#: allows that module and those under it).
ALLOWED: dict[str, tuple[str, ...]] = {
    "model": (),
    "properties": ("model",),
    "sut": ("model",),   # state, observation and outcome types and actions only: tests/sut/test_imports.py
    "kafka_bridge": ("sut", "model"),
    "harness": ("model", "properties", "sut", "kafka_bridge"),
    "spark_reports": ("harness.schema", "harness.spark_checks", "harness.corpus_fs"),
    "replicheck_cli": ("harness", "spark_reports", "model", "sut"),
}
#: harness loads Kafka's implementation by name, in this module only.
ONLY_IN = {("harness", "kafka_bridge"): {"harness/implementations.py"}}


def imported(source: str, filename: str = "<src>") -> list[tuple[int, str]]:
    """(line, module) of every absolute import of one of our packages."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out += [(node.lineno, n) for n in names if n.split(".")[0] in OURS]
    return out


def violations(package: str, source: str, filename: str = "<src>") -> list[str]:
    """Every import of ``source`` (a module of ``package``) that breaks the rule."""
    out = []
    for line, module in imported(source, filename):
        top = module.split(".")[0]
        if top == package:
            continue
        allowed = [a for a in ALLOWED[package] if module == a or module.startswith(a + ".")]
        only = ONLY_IN.get((package, top))
        if not allowed:
            out.append(f"{filename}:{line}: {package} imports {module} (allowed: "
                       f"{', '.join(ALLOWED[package]) or 'nothing of ours'})")
        elif only is not None and filename not in only:
            out.append(f"{filename}:{line}: {package} imports {module} outside {', '.join(sorted(only))}")
    return out


FILES = [(package, path) for package in OURS for path in sorted((ROOT / package).rglob("*.py"))]


def test_every_package_has_files():
    assert {package for package, _ in FILES} == set(OURS)


@pytest.mark.parametrize("package, path", FILES, ids=[str(p.relative_to(ROOT)) for _, p in FILES])
def test_imports_flow_one_way(package: str, path: Path):
    problems = violations(package, path.read_text(), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package, snippet, fragment", [
    ("harness", "from spark_reports.report import build_report", "harness imports spark_reports.report"),
    ("harness", "def f():\n    import spark_reports\n", "harness imports spark_reports"),
    ("harness", "from replicheck_cli import main", "harness imports replicheck_cli"),
    ("harness", "import kafka_bridge", "outside harness/implementations.py"),
    ("spark_reports", "from harness.corpus import read_runs", "spark_reports imports harness.corpus"),
    ("spark_reports", "import harness", "spark_reports imports harness"),
    ("model", "from properties import ALL", "model imports properties (allowed: nothing of ours)"),
    ("sut", "from harness.lockstep import LockStep", "sut imports harness.lockstep"),
])
def test_the_checker_catches_imports_against_the_flow(package: str, snippet: str, fragment: str):
    problems = violations(package, snippet)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize("package, snippet", [
    ("spark_reports", "from harness.schema import SCHEMA_VERSION"),
    ("replicheck_cli", "from harness.runner import run_campaign\nfrom spark_reports.report import build_report"),
    ("harness", "from .corpus import CorpusWriter\nfrom model import Config\nimport properties"),
])
def test_the_checker_accepts_imports_along_the_flow(package: str, snippet: str):
    assert violations(package, snippet) == []
