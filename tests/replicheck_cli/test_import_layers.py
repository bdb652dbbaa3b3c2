"""Imports flow one way (docs: Architecture). Every module of every package is
parsed with ``ast``, function-local imports included, and:

- a package imports, of the project's packages, only those below it
  (``ALLOWED``): the model at the bottom; the properties, the SUT and the Kafka
  bridge on it; the check (``check``) on those; the store (``store``) on the
  check's value types only; the campaign fleet (``campaign``) composing both;
  the front doors (``replicheck_cli``, ``pytest_replicheck``, ``spark_reports``)
  on top, and nothing imports a front door;
- what the store reaches in the check, following imports, is the check's value
  modules only (``STORE_MAY_REACH``): it never runs a check;
- no module imports itself back through others: the module graph has no circle
  (an import under ``if TYPE_CHECKING:`` runs never, and is left out);
- below the front doors, an import inside a function is one of ``LAZY``'s,
  each with its reason: none exists to dodge a circle.

The checkers are tested on snippets that break each rule."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("model", "properties", "sut", "kafka_bridge", "check", "store", "campaign", "reproducers", "spark_reports",
        "replicheck_cli", "pytest_replicheck")

#: Package -> the packages of ours it may import (a dotted name allows that
#: module and those under it).
ALLOWED: dict[str, tuple[str, ...]] = {
    "model": (),
    "properties": ("model",),
    "sut": ("model",),   # state, observation and outcome types and actions only: tests/sut/test_imports.py
    "kafka_bridge": ("model", "sut"),
    "check": ("model", "properties", "sut", "kafka_bridge"),
    "store": ("model", "sut.bugs", "check.subject", "check.finding", "check.verdict", "check.timeline",
              "check.describe", "check.signature"),
    "campaign": ("model", "properties", "sut", "check", "store"),
    "reproducers": ("model", "properties", "kafka_bridge", "check"),
    "spark_reports": ("model", "store.schema", "store.fs", "campaign.spark_checks"),
    "replicheck_cli": ("model", "sut", "check", "store", "campaign", "reproducers", "spark_reports"),
    "pytest_replicheck": ("model", "sut", "check", "store", "campaign"),
}
#: The check loads Kafka's implementation by name, in this module only.
ONLY_IN = {("check", "kafka_bridge"): {"check/implementations.py"}}
#: The check's modules the store may reach, directly or through others: values.
STORE_MAY_REACH = {"check", "check.subject", "check.finding", "check.verdict", "check.timeline", "check.describe",
                   "check.signature"}
#: The front doors load what a command needs when it runs (Spark, pyarrow, the
#: campaign), so that ``replicheck --help`` and a bad argument answer at once.
FRONT_DOORS = ("replicheck_cli", "spark_reports")
#: (file, imported package) -> why a function below the front doors imports it.
LAZY = {
    ("check/implementations.py", "kafka_bridge"): "Kafka's classes start a JVM: loaded only when named",
}


# ------------------------------------------------------------------ reading

def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """(import statement, inside a function?) of ``tree``, those under ``if
    TYPE_CHECKING:`` left out."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
        yield from _imports(node, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.Lambda)))


def module_name(path: str) -> str:
    """``check/lockstep.py`` -> ``check.lockstep``; ``check/__init__.py`` -> ``check``."""
    parts = list(Path(path).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, filename: str = "<src>", modules: frozenset[str] = frozenset()) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function?) of every import of one of our packages
    in ``source`` (the module at ``filename``, relative imports resolved);
    ``from package import name`` names the module ``package.name`` when it is
    one of ``modules``."""
    me = module_name(filename) if filename != "<src>" else ""
    package = me if filename.endswith("__init__.py") else me.rpartition(".")[0]
    out = []
    for node, local in _imports(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        out += [(node.lineno, n, local) for n in dict.fromkeys(names) if n.split(".")[0] in OURS]
    return out


def _allows(allowed: tuple[str, ...], module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


# ------------------------------------------------------------------ the rules

def violations(package: str, source: str, filename: str = "<src>") -> list[str]:
    """Every import of ``source`` (a module of ``package``) against the flow, and
    every function-local import below the front doors that ``LAZY`` does not
    name."""
    out = []
    for line, module, local in imported(source, filename, MODULES):
        top = module.split(".")[0]
        if top != package:
            only = ONLY_IN.get((package, top))
            if not _allows(ALLOWED[package], module):
                out.append(f"{filename}:{line}: {package} imports {module} (allowed: "
                           f"{', '.join(ALLOWED[package]) or 'nothing of ours'})")
            elif only is not None and filename not in only:
                out.append(f"{filename}:{line}: {package} imports {module} outside {', '.join(sorted(only))}")
        if local and package not in FRONT_DOORS and (filename, top) not in LAZY:
            out.append(f"{filename}:{line}: {module} is imported inside a function (a circle dodged? "
                       f"import it at the top, or name the reason in LAZY)")
    return out


def graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (of ``sources``: file -> text),
    ``from package import name`` resolved to the module where there is one."""
    modules = frozenset(module_name(f) for f in sources)
    edges: dict[str, set[str]] = {}
    for filename, source in sources.items():
        me = module_name(filename)
        targets = set()
        for _, module, _ in imported(source, filename, modules):
            while module not in modules and "." in module:   # a name of a module: the module
                module = module.rpartition(".")[0]
            if module in modules and module != me:
                targets.add(module)
        edges[me] = targets
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def reached(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


FILES = [(package, path) for package in OURS for path in sorted((ROOT / package).rglob("*.py"))]
SOURCES = {str(path.relative_to(ROOT)): path.read_text() for _, path in FILES}
MODULES = frozenset(module_name(f) for f in SOURCES)
EDGES = graph(SOURCES)


def test_every_package_has_files():
    assert {package for package, _ in FILES} == set(OURS) == set(ALLOWED)


@pytest.mark.parametrize("package, path", FILES, ids=[str(p.relative_to(ROOT)) for _, p in FILES])
def test_imports_flow_one_way(package: str, path: Path):
    problems = violations(package, path.read_text(), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


def test_no_module_imports_itself_back():
    assert circles(EDGES) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("store")))
def test_the_store_reaches_only_the_checks_values(module: str):
    reach = {m for m in reached(EDGES, module) if m.split(".")[0] == "check"}
    assert reach <= STORE_MAY_REACH, sorted(reach - STORE_MAY_REACH)


# ------------------------------------------------------------ the checkers

@pytest.mark.parametrize("package, snippet, fragment", [
    ("check", "from spark_reports.report import build_report", "check imports spark_reports.report"),
    ("check", "def f():\n    import store.writer\n", "check imports store.writer"),
    ("check", "from replicheck_cli import main", "check imports replicheck_cli"),
    ("check", "import kafka_bridge", "outside check/implementations.py"),
    ("store", "from check.lockstep import LockStep", "store imports check.lockstep"),
    ("store", "from campaign.record import record", "store imports campaign.record"),
    ("campaign", "from pytest_replicheck.plugin import machine_under_test", "campaign imports pytest_replicheck"),
    ("spark_reports", "from store.reader import read_runs", "spark_reports imports store.reader"),
    ("spark_reports", "import check", "spark_reports imports check"),
    ("model", "from properties import ALL", "model imports properties (allowed: nothing of ours)"),
    ("sut", "from check.lockstep import LockStep", "sut imports check.lockstep"),
    ("campaign", "def f():\n    from check.replay import replay\n", "imported inside a function"),
])
def test_the_checker_catches_imports_against_the_flow(package: str, snippet: str, fragment: str):
    problems = violations(package, snippet)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize("package, snippet", [
    ("spark_reports", "from store.schema import SCHEMA_VERSION\ndef f():\n    from store.fs import location\n"),
    ("replicheck_cli", "from campaign.runner import run_campaign\nfrom spark_reports.report import build_report"),
    ("store", "from check.finding import Finding\nfrom model import Config\nfrom sut.bugs import Bug"),
    ("check", "from .lockstep import LockStep\nfrom model import Config\nimport properties\n"
              "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from store.writer import CorpusWriter\n"),
])
def test_the_checker_accepts_imports_along_the_flow(package: str, snippet: str):
    assert violations(package, snippet) == []


def test_a_function_local_import_may_be_lazy_only_for_a_reason():
    source = "def f():\n    import kafka_bridge\n"
    assert violations("check", source, "check/implementations.py") == []
    assert any("inside a function" in p for p in violations("kafka_bridge", "def f():\n    from sut import Cluster\n",
                                                            "kafka_bridge/__init__.py"))


def test_the_circle_finder_sees_circles_through_function_local_imports():
    sources = {"check/a.py": "from . import b\n", "check/b.py": "def f():\n    from .c import x\n",
               "check/c.py": "import check.a\n", "check/d.py": "from .a import y\n",
               "check/e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import z\n"}
    edges = graph(sources)
    assert circles(edges) == [["check.a", "check.b", "check.c"]]
    assert edges["check.e"] == set()              # a typing-only import runs never
    assert reached(edges, "check.d") == {"check.a", "check.b", "check.c"}


def test_a_value_module_that_starts_importing_the_check_is_caught():
    sources = {"store/rows.py": "from check.finding import Finding\n",
               "check/finding.py": "from .subject import Subject\n",
               "check/subject.py": "def f():\n    from .lockstep import LockStep\n",
               "check/lockstep.py": ""}
    assert reached(graph(sources), "store.rows") - STORE_MAY_REACH == {"check.lockstep"}
