"""The front doors and the check, store and campaign packages stay small: no
function of ``PACKAGES`` is over ``MAX_LINES`` lines (its ``def`` to its last line,
docstring included; decorators not counted) or takes over ``MAX_PARAMS``
parameters (``self`` and ``cls`` not counted; ``*args`` and ``**kwargs``
count one each). Every module is parsed with ``ast``; the checker is itself
tested on snippets."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("check", "store", "campaign", "replicheck_cli", "pytest_replicheck", "spark_reports")
MAX_LINES = 60
MAX_PARAMS = 8

def too_big(source: str, filename: str = "<src>") -> list[str]:
    """Every function of ``source`` over the limits, as ``file:line: name: why``."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs] + [p.arg for p in (a.vararg, a.kwarg) if p]
        params = [p for p in params if p not in ("self", "cls")]
        lines = node.end_lineno - node.lineno + 1
        if lines > MAX_LINES:
            out.append(f"{filename}:{node.lineno}: {node.name}: {lines} lines (at most {MAX_LINES})")
        if len(params) > MAX_PARAMS:
            out.append(f"{filename}:{node.lineno}: {node.name}: {len(params)} parameters (at most {MAX_PARAMS})")
    return out


FILES = sorted(p.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", FILES)
def test_no_function_is_over_the_limits(path: str):
    problems = too_big((ROOT / path).read_text(encoding="utf-8"), path)
    assert not problems, "\n".join(problems)


def _function(lines: int, params: str) -> str:
    body = "\n".join("    x = 1" for _ in range(lines - 1))
    return f"def f({params}):\n{body}\n"


@pytest.mark.parametrize("source, caught", [
    (_function(MAX_LINES, "a"), False),
    (_function(MAX_LINES + 1, "a"), True),
    (_function(3, ", ".join(f"p{i}" for i in range(MAX_PARAMS))), False),
    (_function(3, ", ".join(f"p{i}" for i in range(MAX_PARAMS + 1))), True),
    (_function(3, "a, b, c, d, e, f, g, *args, **kwargs"), True),
    ("class C:\n" + "\n".join("    " + line for line in
                              _function(3, "self, " + ", ".join(f"p{i}" for i in range(MAX_PARAMS))).splitlines()),
     False),
    ("@decorator\n" * 5 + _function(MAX_LINES, ""), False),
])
def test_the_checker(source: str, caught: bool):
    assert bool(too_big(source)) == caught
