"""The SUT is an independent implementation: from ``model`` it may import only the
state types and constants, the observation and outcome types it answers with, the
action classes it accepts, ``Config``/``Variant``/``Rule`` and ``ActionNotEnabled``
— never model logic (``step``, ``enabled_actions``, ``observe``, ``outcome``,
``merge``, ``materialize``, ``initial_state``, the
``controller``/``replica``/``log``/``update`` helpers, ...).

Every file of ``sut/`` is parsed with ``ast``; the checker is itself tested on
snippets that break the rule.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import model
import model.actions
import model.observation
import model.state

SUT_DIR = Path(__file__).resolve().parents[2] / "sut"


def _classes_of(module: object) -> set[str]:
    return {name for name, value in vars(module).items()
            if inspect.isclass(value) and value.__module__ == module.__name__}  # type: ignore[attr-defined]


STATE_NAMES = _classes_of(model.state) | {"NO_LEADER", "NO_LEADER_CHANGE", "RECOVERED", "RECOVERING", "MetadataRecord",
                                         "Message"}
ACTION_NAMES = _classes_of(model.actions) | {"Action"}
OBSERVATION_NAMES = _classes_of(model.observation)
OTHER_NAMES = {"Config", "Variant", "Rule", "ActionNotEnabled"}
ALLOWED = STATE_NAMES | ACTION_NAMES | OBSERVATION_NAMES | OTHER_NAMES
ALLOWED_BY_MODULE = {
    "model": ALLOWED,
    "model.state": STATE_NAMES,
    "model.observation": OBSERVATION_NAMES,
    "model.actions": ACTION_NAMES,
    "model.config": {"Config", "Variant"},
    "model.profile": {"Rule"},
    "model.errors": {"ActionNotEnabled"},
}


def violations(source: str, filename: str = "<src>") -> list[str]:
    """Every import from ``model`` in ``source`` that breaks the rule."""
    tree = ast.parse(source, filename)
    out: list[str] = []
    aliases: dict[str, str] = {}  # local name -> imported model module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and (node.module == "model" or node.module.startswith("model.")):
            allowed = ALLOWED_BY_MODULE.get(node.module)
            for alias in node.names:
                if allowed is None:
                    out.append(f"{filename}:{node.lineno}: from {node.module} import {alias.name} "
                               f"(module {node.module} is model logic)")
                elif alias.name not in allowed:
                    out.append(f"{filename}:{node.lineno}: from {node.module} import {alias.name} "
                               f"(not a state type, action class, Config/Variant or ActionNotEnabled)")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "model" or alias.name.startswith("model."):
                    if alias.name not in ALLOWED_BY_MODULE:
                        out.append(f"{filename}:{node.lineno}: import {alias.name} (model logic)")
                    local = alias.asname or alias.name.split(".")[0]
                    aliases[local] = alias.name if alias.asname else "model"
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name in ("__import__", "import_module"):
                out.append(f"{filename}:{node.lineno}: dynamic import ({name})")
    if aliases:
        # Every use of an imported model module must be `alias.AllowedName`.
        allowed_uses: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                allowed_uses.add(id(node.value))
                module = aliases[node.value.id]
                if node.attr not in ALLOWED_BY_MODULE.get(module, set()):
                    out.append(f"{filename}:{node.lineno}: {node.value.id}.{node.attr} (model logic)")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in aliases and id(node) not in allowed_uses \
                    and isinstance(node.ctx, ast.Load):
                out.append(f"{filename}:{node.lineno}: bare use of module {node.id}")
    return out


SUT_FILES = sorted(SUT_DIR.rglob("*.py"))


def test_the_sut_has_files():
    assert len(SUT_FILES) >= 8, SUT_FILES


@pytest.mark.parametrize("path", SUT_FILES, ids=[p.name for p in SUT_FILES])
def test_sut_imports_only_state_types_and_actions_from_model(path: Path):
    problems = violations(path.read_text(), str(path.relative_to(SUT_DIR.parent)))
    assert not problems, "\n".join(problems)


def test_the_allowed_names_exclude_model_logic():
    for logic in ("step", "enabled_actions", "why_not_enabled", "initial_state", "merge", "materialize",
                  "end_offset_for_epoch", "epoch_entries", "truncation_offset", "family_of", "observe",
                  "outcome", "observe_replica", "list_offsets_result"):
        assert logic not in ALLOWED
    for kind in ("ClusterState", "Replica", "FetchRequest", "PartitionChangeRecord", "NO_LEADER"):
        assert kind in STATE_NAMES
    assert {"Produce", "Reassign", "UncleanRecovery"} <= ACTION_NAMES
    assert {"Observation", "Outcome", "ReplicaObservation"} <= OBSERVATION_NAMES


@pytest.mark.parametrize("snippet, fragment", [
    ("from model import step", "import step"),
    ("from model import enabled_actions as ea", "import enabled_actions"),
    ("from model import merge", "import merge"),
    ("from model import initial_state", "import initial_state"),
    ("from model import observe", "import observe"),
    ("from model.observation import outcome", "import outcome"),
    ("from model.controller import elect", "model logic"),
    ("from model.log import end_offset_for_epoch", "model logic"),
    ("from model.state import materialize", "import materialize"),
    ("import model.replica", "import model.replica"),
    ("import model\nmodel.step(s, a)", "model.step"),
    ("import model as m\nm.materialize(r, 3)", "m.materialize"),
    ("import model\nf = model", "bare use"),
    ("import importlib\nimportlib.import_module('model.step')", "dynamic import"),
    ("__import__('model').step", "dynamic import"),
])
def test_the_checker_catches_forbidden_imports(snippet: str, fragment: str):
    problems = violations(snippet)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize("snippet", [
    "from model import ClusterState, Replica, NO_LEADER, Produce, Config, ActionNotEnabled",
    "from model.state import FollowerState\nfrom model.actions import Reassign",
    "from model import PartitionRecord as PartitionRecordValue",
    "import model\nx = model.ClusterState",
    "from .log import UnifiedLog",
])
def test_the_checker_accepts_allowed_imports(snippet: str):
    assert violations(snippet) == []
