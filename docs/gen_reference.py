"""The reference pages of the documentation site, generated from the code's own
tables at build time (``docs/gen_pages.py`` writes them through mkdocs-gen-files).

Each ``*_markdown`` function reads its table when it is called (so a test can
monkeypatch the table, or pass one in) and returns a whole Markdown page:

- ``rules_markdown``: the Kafka profile's rules, ``model.RULE_DOCS``;
- ``properties_markdown``: the properties, ``properties.ALL``;
- ``liveness_markdown``: the liveness goals, ``properties.liveness.LIVENESS``, and the healing bound;
- ``actions_markdown``: the action registry, ``model.ACTIONS``;
- ``variants_markdown``: the protocol variants, ``model.Variant`` and ``model.VARIANT_DOCS``;
- ``bugs_markdown``: the SUT bug catalogue, ``sut.Bug`` and ``sut.DOCS``;
- ``schema_markdown``: the corpus schema, the module named by ``SCHEMA_MODULE``;
- ``cli_markdown``: the ``--help`` of every ``replicheck`` command, the click group
  named by ``CLI_GROUP``;
- ``not_expressible_markdown``: the Kafka unit tests that do not fit one partition,
  each ``tests/kafka`` module's ``NOT_EXPRESSIBLE``;
- ``reproducers_markdown``: the findings with a JUnit reproducer
  (``reproducers.findings.FINDINGS``), the release matrix as recorded
  (``reproducers.matrix``) and how a reproducer is adapted to a release
  (``kafka_bridge.releases.API_CHANGES``, ``reproducers.project.RELEASE_CHANGES``);
- ``upstream_markdown``: each of those findings as an issue ready to file upstream
  (``reproducers.findings.KafkaFinding.upstream``).

Nothing here is retyped from the code: a page changes when its table does.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import sys
import tokenize
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The module that holds the corpus schema (``SCHEMA_VERSION``, ``SCHEMAS``, the
#: struct types of nested columns, and the per-column documentation).
SCHEMA_MODULE = "store.schema"

#: The ``replicheck`` click group, as ``module:attribute``.
CLI_GROUP = "replicheck_cli:main"

#: The command's name in the pages (``replicheck fuzz ...``).
CLI_NAME = "replicheck"

#: Where the restated Kafka unit tests live (their ``NOT_EXPRESSIBLE`` tables).
KAFKA_TESTS = ROOT / "tests" / "kafka"

#: Width of the generated ``--help`` texts, fixed so that the pages do not depend
#: on the terminal the site was built in.
HELP_WIDTH = 100

GENERATED = ("<!-- Generated at build time by docs/gen_pages.py from {source}; "
             "edit the code, not this page. -->\n\n")


# ------------------------------------------------------------------ helpers

def cell(value: Any) -> str:
    """One Markdown table cell: on one line, pipes escaped, empty for None."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return text.replace("|", "\\|")


def code(value: Any) -> str:
    """Inline code, or empty for an empty value."""
    text = cell(value)
    return f"`{text}`" if text else ""


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: Optional[Sequence[str]] = None) -> str:
    """A Markdown table; ``align`` per column: ``"l"`` (default) or ``"r"``."""
    align = align or ["l"] * len(header)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _doc_first_paragraph(obj: Any) -> str:
    """The first paragraph of an object's own docstring (not inherited), or ''."""
    doc = obj.__dict__.get("__doc__") if hasattr(obj, "__dict__") else None
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


# ------------------------------------------------------------ Kafka rules

def rules_markdown(rule_docs: Optional[dict] = None, profiles: Optional[dict] = None,
                   release: Optional[str] = None) -> str:
    """The Kafka profile's rules: one summary table, then each rule in full."""
    import model
    rule_docs = model.RULE_DOCS if rule_docs is None else rule_docs
    profiles = model.PROFILES if profiles is None else profiles
    release = model.KAFKA_RELEASE if release is None else release

    def in_profiles(rule: Any) -> str:
        return ", ".join(f"`{name}`" for name, rules in profiles.items() if rule in rules)

    out = ["# Kafka profile rules\n\n", GENERATED.format(source="`model.RULE_DOCS` (model/profile.py)"),
           f"Each rule is one place where Apache Kafka {release}'s code departs from the chapters' rules. "
           "The Kafka profile has every rule in force; `Config(profile=KAFKA, rules=...)` switches single "
           "rules off (the chapters' rule takes the place of each one left out). "
           "See [The Kafka profile](../model/kafka-profile.md) for how the rules were found and checked.\n\n",
           table(["rule", "section", "consequence"],
                 ([f"[`{rule.name}`](#{rule.name.lower()})", cell(doc.section), cell(doc.consequence)]
                  for rule, doc in rule_docs.items())),
           "\n"]
    for rule, doc in rule_docs.items():
        name = getattr(rule, "name", str(rule))
        value = getattr(rule, "value", "")
        out.append(f"## `{name}`\n\n")
        out.append(f"- **Section departed from:** {cell(doc.section)}\n")
        out.append(f"- **Kafka source** (at {release}): {code(doc.source or value)}\n")
        out.append(f"- **The chapters:** {cell(doc.chapters)}\n")
        out.append(f"- **Kafka {release}:** {cell(doc.kafka)}\n")
        out.append(f"- **Consequence:** {cell(doc.consequence)}\n")
        requires = getattr(doc, "requires", ())
        if requires:
            out.append("- **Requires:** " + ", ".join(f"[`{r.name}`](#{r.name.lower()})" for r in requires) + "\n")
        profs = in_profiles(rule)
        out.append(f"- **In force in the profiles:** {profs or 'none'}\n\n")
    return "".join(out)


# ------------------------------------------------------------- properties

def properties_markdown(props: Optional[Sequence[Any]] = None) -> str:
    """Every property of ``properties.ALL``, in its stable order."""
    import properties
    props = properties.ALL if props is None else props
    return "".join([
        "# Properties\n\n", GENERATED.format(source="`properties.ALL` (properties/)"),
        "Each property is a pure predicate over the model's state, checked after every step: "
        "`check(state)` returns its violations (empty: it holds). `properties.check_all(state)` runs "
        "them all in this order. See [Properties](../model/properties.md) for the fault budget and "
        "how each reads under the Kafka profile.\n\n",
        table(["property", "section", "meaning"],
              ([f"`{cell(p.name)}`", cell(p.section), cell(p.description)] for p in props)),
    ])


def liveness_markdown(goals: Optional[Sequence[Any]] = None, bound: Any = None) -> str:
    """Every liveness goal of ``properties.liveness.LIVENESS``, and the healing
    bound (``model.healing.rounds``), and the liveness-only variants
    (``model.LIVENESS_VARIANTS``)."""
    import model
    from model import Config
    from model.healing import rounds
    from properties.liveness import LIVENESS
    goals = LIVENESS if goals is None else goals
    bound = rounds if bound is None else bound
    sizes = table(["brokers", "rounds"], ([n, bound(Config(brokers=tuple(range(1, n + 1)), assignment=(1,), min_isr=1))]
                                            for n in range(3, 6)))
    return "".join([
        "# Liveness goals\n\n", GENERATED.format(source="`properties.liveness.LIVENESS` and `model.healing.rounds`"),
        "Each goal is checked at the end of a healing phase (the directive `Heal`, `model.healing`): "
        "`check(state)` returns its violations (empty: it holds). See [Liveness](../model/liveness.md) for "
        "the healing schedule, why its bound is enough, and when a goal is not judged.\n\n",
        table(["goal", "section", "meaning"], ([f"`{cell(g.name)}`", cell(g.section), cell(g.description)]
                                              for g in goals)),
        "\n\nThe bound: rounds of a healing phase by the configuration's size.\n\n", sizes,
        "\n\nThe planted flaws that break only liveness (`model.LIVENESS_VARIANTS`): no safety property can "
        "fail under them, a healed partition stays stuck. Their minimal scenarios end in `Heal()` "
        "(`check.scenarios`), and each has a row in the golden corpus.\n\n",
        table(["variant", "what it removes", "goals expected to fail"],
              ([f"`{v.name}`", cell(model.VARIANT_DOCS[v][0]), ", ".join(f"`{g}`" for g in model.VARIANT_DOCS[v][1])]
               for v in model.Variant if v in model.LIVENESS_VARIANTS)),
    ])


# ---------------------------------------------------------------- actions

def _fields(cls: type) -> str:
    try:
        import attrs
        names = [f.name for f in attrs.fields(cls)]
    except Exception:  # not an attrs class
        names = []
    return f"{cls.__name__}({', '.join(names)})"


#: Headers of the registry's fields (``model.ActionKind``); a field not named here
#: shows under its own name.
ACTION_HEADERS = {"fault": "fault", "sends": "sends", "receives": "receives", "may_send": "may send first",
                  "broker_fields": "broker fields", "weight": "walk weight", "family_weight": "family weight",
                  "swarm": "swarm levels", "tag": "diagram tag"}


def _kind_value(value: Any) -> str:
    if value is None or value is False or value == ():
        return ""
    if value is True:
        return "yes"
    if isinstance(value, (int, float)):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ", ".join(f"{v:g}" if isinstance(v, (int, float)) else f"`{cell(v)}`" for v in value)
    return code(value)


def actions_markdown(actions: Optional[Sequence[Any]] = None) -> str:
    """The action registry: per family, each action class and every field of its
    ``ActionKind`` (fault, messages, broker fields, weights, swarm levels, …)."""
    import attrs
    import model
    actions = model.ACTIONS if actions is None else actions
    families: dict[str, list[Any]] = {}
    for kind in actions:
        families.setdefault(kind.family, []).append(kind)
    try:
        names = [f.name for f in attrs.fields(type(actions[0])) if f.name not in ("cls", "family")]
    except (IndexError, TypeError, attrs.exceptions.NotAnAttrsClassError):
        names = list(ACTION_HEADERS)
    numeric = [n for n in names if all(isinstance(getattr(k, n, None), (int, float))
                                       and not isinstance(getattr(k, n, None), bool) for k in actions)]
    out = ["# Action registry\n\n", GENERATED.format(source="`model.ACTIONS` (model/actions.py)"),
           "One `ActionKind` per action class: its family (one machine rule per family), whether it is "
           "a fault (the machine spaces faults apart), the message it sends or delivers, the fields that "
           "name brokers, its weight in the random walk's weighted policy, its weight among the enabled "
           "actions of its family in the machine, its swarm-testing levels (1: as is, where shrinking "
           "goes; 0: left out of an example), and how a space-time diagram labels it. The families, the "
           "machine's weights, the random walk, reduction's broker renaming, the trace codec and the "
           "reports' action vocabulary are derived from this table.\n\n",
           "Families: " + ", ".join(f"[{name}](#{name}) ({len(kinds)})" for name, kinds in families.items())
           + ".\n\n"]
    for family, kinds in families.items():
        out.append(f"## {family}\n\n")
        out.append(table(
            ["action", *(ACTION_HEADERS.get(n, n.replace("_", " ")) for n in names), "what it is"],
            ([f"`{cell(_fields(k.cls))}`", *(_kind_value(getattr(k, n, None)) for n in names),
              cell(_doc_first_paragraph(k.cls))] for k in kinds),
            ["l", *("r" if n in numeric else "l" for n in names), "l"]))
        out.append("\n")
    return "".join(out)


# --------------------------------------------------------------- variants

def variants_markdown(variants: Optional[Iterable[Any]] = None, docs: Optional[dict] = None) -> str:
    """The protocol variants (historic flaws switched into the model)."""
    import model
    variants = list(model.Variant) if variants is None else list(variants)
    docs = model.VARIANT_DOCS if docs is None else docs
    rows = []
    for v in variants:
        removes, expected = docs.get(v, ("", ()))
        rows.append([f"`{v.name}`", cell(v.value), cell(removes), ", ".join(f"`{p}`" for p in expected)])
    return "".join([
        "# Protocol variants\n\n",
        GENERATED.format(source="`model.Variant` and `model.VARIANT_DOCS` (model/config.py)"),
        "Each variant switches one historic (or plausible) flaw into the model: "
        "`Config(variants=frozenset({Variant.X}))`, `replicheck fuzz --variant X`. The correct protocol "
        "uses none. A variant run checks the properties on the model; the properties expected to fail "
        "are the ones a counterexample must break. See [What the framework finds](../findings/framework.md) "
        "for each variant's minimal scenario and golden counterexample.\n\n",
        table(["variant", "source", "what it removes", "expected to fail"], rows),
    ])


# ------------------------------------------------------------------- bugs

def bugs_markdown(bugs: Optional[Iterable[Any]] = None, docs: Optional[dict] = None) -> str:
    """The SUT's catalogue of realistic implementation mistakes."""
    import sut
    bugs = list(sut.Bug) if bugs is None else list(bugs)
    docs = sut.DOCS if docs is None else docs
    rows = []
    for b in bugs:
        doc = docs.get(b)
        needs = sorted(r.name for r in getattr(doc, "needs", ()))
        rows.append([f"`{b.name}`", cell(getattr(doc, "section", "")), cell(getattr(doc, "rule", "")),
                     code(getattr(doc, "where", "")),
                     ", ".join(f"[`{n}`](kafka-rules.md#{n.lower()})" for n in needs) or "every profile"])
    return "".join([
        "# SUT bugs\n\n", GENERATED.format(source="`sut.Bug` and `sut.DOCS` (sut/bugs.py)"),
        "Each bug is a realistic slip in one code path of the SUT, guarded there by "
        "`if Bug.X in self.bugs`: `sut.Cluster(config, bugs=frozenset({Bug.X}))`, "
        "`replicheck fuzz --bug X`. A bug run compares the buggy SUT with the model: a counterexample is a "
        "divergence. The correct implementation runs with `bugs=frozenset()`. A code path that runs only "
        "under some of the Kafka profile's rules (`sut.BugDoc.needs`) is searched with those rules on "
        "(the campaign's `bug:X` target).\n\n",
        table(["bug", "section", "the rule it breaks", "code path", "runs under"], rows),
    ])


# ------------------------------------------------------------ corpus schema

def _source_comments(source: str) -> tuple[dict[str, str], dict[str, str]]:
    """From a schema module's source: the trailing comment of each ``pa.field("NAME", ...)``
    line (column -> comment; the first one wins), and the ``#:`` comment block above
    each module-level assignment (name -> text)."""
    fields: dict[str, str] = {}
    blocks: dict[str, str] = {}
    pending: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        m = re.match(r"([A-Z_][A-Z0-9_]*)\s*(?::[^=]*)?=", line)
        if m and pending:
            blocks[m.group(1)] = " ".join(pending)
        if not stripped.startswith("#"):
            pending = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return fields, blocks
    line_comment = {t.start[0]: t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT}
    for lineno, line in enumerate(source.splitlines(), 1):
        m = re.search(r"pa\.field\(\s*\"([A-Za-z0-9_]+)\"", line)
        if m and lineno in line_comment and not line.strip().startswith("#"):
            fields.setdefault(m.group(1), line_comment[lineno])
    return fields, blocks


def _column_doc(module: Any, table_name: str, field: Any, comments: dict[str, str]) -> str:
    """A column's documentation: the field's own metadata (``doc`` or
    ``description``), else the module's ``COLUMN_DOCS`` (per table, or flat), else
    the comment beside the field in the module's source."""
    meta = field.metadata or {}
    for key in (b"doc", b"description"):
        if key in meta:
            return meta[key].decode()
    docs = getattr(module, "COLUMN_DOCS", None)
    if isinstance(docs, dict):
        per_table = docs.get(table_name)
        if isinstance(per_table, dict) and field.name in per_table:
            return str(per_table[field.name])
        if isinstance(docs.get(field.name), str):
            return docs[field.name]
    return comments.get(field.name, "")


def schema_markdown(module_name: Optional[str] = None) -> str:
    """The corpus schema: the module's own description, its version, and a table of
    columns per table (type, nullable, meaning), with the fields of each struct type."""
    import pyarrow as pa
    module = importlib.import_module(module_name or SCHEMA_MODULE)
    try:
        source = Path(module.__file__).read_text()
    except (OSError, TypeError):
        source = ""
    comments, blocks = _source_comments(source)
    structs = {name: value for name, value in vars(module).items()
               if name.isupper() and isinstance(value, pa.StructType)}

    def type_name(t: Any) -> str:
        for name, value in structs.items():
            if t == value:
                return f"[{name}](#{name.lower()})"
        if pa.types.is_list(t):
            return f"list&lt;{type_name(t.value_type)}&gt;"
        if pa.types.is_map(t):
            return f"map&lt;{type_name(t.key_type)}, {type_name(t.item_type)}&gt;"
        return cell(t).replace("<", "&lt;").replace(">", "&gt;")

    doc = (module.__doc__ or "").strip()
    out = ["# Corpus schema\n\n", GENERATED.format(source=f"`{module.__name__}` ({module.__name__.replace('.', '/')}.py)"),
           f"Schema version **{getattr(module, 'SCHEMA_VERSION', '?')}**. "
           "See [Counterexample corpus](../check/corpus.md) for how it is written and read.\n\n"]
    if doc:
        out.append("```text\n" + doc + "\n```\n\n")
    for table_name, schema in getattr(module, "SCHEMAS", {}).items():
        out.append(f"## `{table_name}`\n\n")
        rows = [[f"`{f.name}`", type_name(f.type), "yes" if f.nullable else "no",
                 cell(_column_doc(module, table_name, f, comments))] for f in schema]
        out.append(table(["column", "type", "nullable", "meaning"], rows))
        out.append("\n")
    for name, struct in structs.items():
        out.append(f"## `{name}`\n\n")
        if blocks.get(name):
            out.append(cell(blocks[name]) + "\n\n")
        out.append(table(["field", "type", "nullable"],
                         ([f"`{f.name}`", type_name(f.type), "yes" if f.nullable else "no"] for f in struct)))
        out.append("\n")
    return "".join(out)


# -------------------------------------------------------------------- CLI

def _resolve(path: str) -> Any:
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def cli_markdown(group: Any = None, name: Optional[str] = None) -> str:
    """The ``--help`` of the command group and of every command under it (depth
    first, in the order ``--help`` lists them), as click renders it."""
    import click
    group = _resolve(CLI_GROUP) if group is None else group
    name = name or CLI_NAME
    out = ["# Command line\n\n", GENERATED.format(source=f"the click group `{CLI_GROUP.replace(':', '.')}`"),
           f"Every `{name}` command's `--help`, as the command prints it. Bad arguments exit with status 2 "
           "and one line naming the option.\n\n"]

    def walk(cmd: Any, info_name: str, parent: Optional[Any], depth: int) -> None:
        ctx = click.Context(cmd, info_name=info_name, parent=parent, terminal_width=HELP_WIDTH,
                            max_content_width=HELP_WIDTH)
        path = ctx.command_path
        out.append(f"{'#' * min(depth + 2, 6)} `{path}`\n\n```text\n{cmd.get_help(ctx).rstrip()}\n```\n\n")
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                child = cmd.get_command(ctx, sub)
                if child is not None and not getattr(child, "hidden", False):
                    walk(child, sub, ctx, depth + 1)

    walk(group, name, None, 0)
    return "".join(out)


# ------------------------------------------- Kafka tests that do not fit

def _not_expressible(path: Path) -> Optional[dict[str, str]]:
    """A test module's ``NOT_EXPRESSIBLE`` dict, read from its source without
    importing it (its module-level string constants resolved), or None."""
    tree = ast.parse(path.read_text(), str(path))
    consts: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            try:
                value = eval(compile(ast.Expression(node.value), str(path), "eval"),  # noqa: S307 (our own source)
                             {"__builtins__": {}}, dict(consts))
            except Exception:
                continue
            if target == "NOT_EXPRESSIBLE":
                return {str(k): " ".join(str(v).split()) for k, v in value.items()}
            if isinstance(value, str):
                consts[target] = value
    return None


def not_expressible_markdown(test_dir: Optional[Path] = None) -> str:
    """Per restated Kafka test class, the methods that do not fit one partition, with why."""
    test_dir = KAFKA_TESTS if test_dir is None else Path(test_dir)
    out = ["# Kafka unit tests that do not fit\n\n",
           GENERATED.format(source="each `tests/kafka` module's `NOT_EXPRESSIBLE`"),
           "Every test method of the Kafka test classes restated in `tests/kafka` was read; each one whose "
           "scenario fits one partition is a test named `test_<KafkaClass>_<method>`. The others are listed "
           "here with the reason. See [Kafka's own unit tests](../model/kafka-profile.md#kafkas-own-unit-tests).\n\n"]
    for path in sorted(test_dir.glob("test_*.py")):
        table_ = _not_expressible(path)
        if table_ is None:
            continue
        classes = sorted(set(re.findall(r"^def test_([A-Za-z0-9]+Test)_", path.read_text(), re.M)))
        label = " and ".join(classes) if classes else path.stem
        out.append(f"## `{path.name}`\n\n{label}: {len(table_)} test methods that do not fit one partition.\n\n")
        out.extend(f"- `{name}`: {why}\n" for name, why in table_.items())
        out.append("\n")
    return "".join(out)


# ---------------------------------------------------------------- the pages

def spark_reports_markdown(readme: Optional[Path] = None) -> str:
    """The ``spark_reports`` package's own README, as the analyses' reference; its
    measured figures (a section ``## Performance``) are replaced by a link to the
    results page, where they are kept."""
    readme = ROOT / "spark_reports" / "README.md" if readme is None else readme
    text = readme.read_text()
    first, _, rest = text.partition("\n")
    sections = re.split(r"(?m)^(?=## )", rest.lstrip("\n"))
    kept = [s if not s.startswith("## Performance") else
            "## Performance\n\nHow the report scales (10k to 1M counterexamples): "
            "[Results](../results.md#spark-report-scale).\n\n" for s in sections]
    return first + "\n\n" + GENERATED.format(source="spark_reports/README.md") + "".join(kept)


def reproducers_markdown(findings: Optional[Sequence[Any]] = None, record: Optional[dict] = None) -> str:
    """The findings with a reproducer, the release matrix as recorded, and the
    per-release adaptations of the generated Java."""
    from kafka_bridge.releases import API_CHANGES, SOURCE_CHANGES
    from reproducers.findings import FINDINGS
    from reproducers.matrix import RELEASES, affected, recorded
    findings = FINDINGS if findings is None else findings
    record = recorded() if record is None else record
    out = ["# JUnit reproducers of the findings\n\n",
           GENERATED.format(source="reproducers/findings.py and reproducers/releases.json"),
           "How they are made and run: [JUnit reproducers](../guide/reproducers.md).\n\n## The findings\n\n"]
    rows = []
    for f in findings:
        holds = affected(record, f.number)
        rows.append((f"[{f.number}](../findings/kafka.md)", f.title, code(f.name), f.component, len(f.trace),
                     ", ".join(holds) if holds else "none recorded"))
    out.append(table(("finding", "title", "JUnit test", "component", "steps", "holds on"), rows))
    releases = [r for r in RELEASES if r in record]
    out.append("\n## The release matrix\n\nEach finding's reproducer run on each release (`make reproducers`); "
               "where it does not hold, what JUnit said.\n\n")
    out.append(table(("release",) + tuple(f"finding {f.number}" for f in findings),
                     [(r,) + tuple(record[r].get(str(f.number), "not run") for f in findings) for r in releases]))
    out.append("\n## Written per release\n\nThe trace runs on the pinned release's classes; the Java is written "
               "for the release it runs on.\n\n")
    changes = [(".".join(map(str, since)), why) for since, why in API_CHANGES.values()]
    changes += [(".".join(map(str, since)), f"the shims' source: {code(new.strip()) or 'nothing'} (before: "
                 f"{code(old.strip()) or 'nothing'}; [Kafka releases](kafka-releases.md))")
                for since, new, old in SOURCE_CHANGES]
    out.append(table(("since", "change"), sorted(changes)))
    return "".join(out)


def releases_markdown() -> str:
    """The Kafka releases whose classes run in the loop, the shims built for each,
    and the changes the shims' source is adapted by (``kafka_bridge.releases``)."""
    from check.subject import kafka_name
    from kafka_bridge import releases
    from kafka_bridge.changes import CHANGES
    out = ["# Kafka releases in the loop\n\n", GENERATED.format(source="kafka_bridge/releases.py"),
           "How to run them: [other Kafka releases](../guide/kafka-in-the-loop.md#other-kafka-releases).\n\n"
           "## The releases\n\n"]
    out.append(table(("release", "implementation", "Kafka's shims built",
                      "Kafka's `Partition` and fetcher in the brokers"),
                     [(r, code(kafka_name(r)) + (" (the pinned release)" if r == releases.PINNED else ""),
                       ", ".join(code(p.stem) for p in releases.shims(r)), "yes" if releases.has_partition(r) else
                       "no: the SUT's replicas under Kafka's controller") for r in releases.RELEASES]))
    out.append("\n## The shims' source, adapted per release\n\nWritten against the pinned release; before the "
               "release named, the text on the left reads as on the right (`make kafka-jars KAFKA_VERSION=X` "
               "writes release X's into `.kafka/X/src` and compiles them).\n\n")
    out.append(table(("since", "the shims' text", "before"),
                     [(".".join(map(str, since)), code(new.strip()), code(old.strip()) or "(nothing)")
                      for since, new, old in releases.SOURCE_CHANGES]))
    out.append("\n## Kafka's changes between releases\n\nWhat a campaign on an older release meets "
               "(`kafka_bridge.changes`): the model follows the pinned release, so before each change Kafka's "
               "code disagrees with it. Each trace disagrees on the last release without the change and agrees "
               "from its first (`tests/kafka_bridge/test_releases.py`); a campaign on a release goes on past "
               "the changes after it (`--known`).\n\n")
    out.append(table(("issue", "since", "kind", "what changed", "shows as", "trace", "source"),
                     [(c.issue, c.since, c.kind, c.title, "<br>".join(code(sig) for sig in c.signatures),
                       "<br>".join(code(repr(a)) for a in c.trace), code(c.source)) for c in CHANGES]))
    return "".join(out)


def _upstream_section(f: Any, record: dict) -> str:
    from model import KAFKA_RELEASE
    from reproducers.matrix import RELEASES, affected
    from reproducers.template import describe_config
    up = f.upstream
    holds = affected(record, f.number)
    not_holding = [r for r in RELEASES if r in record and r not in holds]
    lines = [f"## Finding {f.number}: {up.summary}\n",
             f"*{f.title}* ([the finding](kafka.md)).\n",
             f"- **Component:** {f.component}.",
             f"- **Affected releases** (the reproducer passes): {', '.join(holds) or 'none recorded'}."
             + (f" It does not hold on {', '.join(not_holding)} (the [release matrix]"
                "(../reference/kafka-reproducers.md#the-release-matrix) says what JUnit said)." if not_holding else ""),
             f"- **Confirmed** by a JUnit 5 reproducer on Kafka's classes alone, `{f.name}`: "
             f"`replicheck reproduce --finding {f.number} --run` writes it with its Maven project (Kafka "
             f"{KAFKA_RELEASE}'s jars and JUnit only; `--kafka-version X` for another release).",
             f"- **What it shows:** {f.shows}.",
             f"- **Configuration:** {describe_config(f.config)}.",
             "", "**The trace** (replicheck's actions, in the order the reproducer's requests follow them):", ""]
    lines += [f"{i}. `{a!r}`" for i, a in enumerate(f.trace, 1)]
    lines += ["", "**Kafka's code** (line numbers in the 4.3.1 sources, whose classes 4.4.0's equal):", ""]
    lines += [f"- `{path}`, `{method}`, line {line}" for path, method, line in up.sources]
    lines += ["", f"**Impact.** {up.impact}", "", "**Suggested fixes.**", ""]
    lines += [f"- {fix}" for fix in up.fixes]
    if up.related:
        lines += ["", "**Related issues.**", ""]
        lines += [f"- {jira}: {why}" for jira, why in up.related]
    return "\n".join(lines) + "\n\n"


def upstream_markdown(findings: Optional[Sequence[Any]] = None, record: Optional[dict] = None) -> str:
    """Each finding with a reproducer as an issue ready to file upstream."""
    from reproducers.findings import FINDINGS
    from reproducers.matrix import recorded
    findings = FINDINGS if findings is None else findings
    record = recorded() if record is None else record
    head = ["# Ready to file upstream\n\n", GENERATED.format(source="reproducers/findings.py"),
            "Each finding about Kafka's code that a JUnit reproducer confirms, as the issue a Kafka committer "
            "would read: what to search for, where, on which releases, and the test that shows it "
            "([status of every finding](kafka.md)).\n\n"]
    return "".join(head) + "".join(_upstream_section(f, record) for f in findings)


#: Virtual page (under docs/) -> the function that writes it.
PAGES = {
    "reference/kafka-rules.md": rules_markdown,
    "reference/properties.md": properties_markdown,
    "reference/liveness.md": liveness_markdown,
    "reference/actions.md": actions_markdown,
    "reference/variants.md": variants_markdown,
    "reference/sut-bugs.md": bugs_markdown,
    "reference/corpus-schema.md": schema_markdown,
    "reference/cli.md": cli_markdown,
    "reference/kafka-tests-not-expressible.md": not_expressible_markdown,
    "reference/spark-reports.md": spark_reports_markdown,
    "reference/kafka-reproducers.md": reproducers_markdown,
    "reference/kafka-releases.md": releases_markdown,
    "findings/upstream.md": upstream_markdown,
}

#: Virtual page -> the file it is generated from (the "edit" link).
SOURCES = {
    "reference/kafka-rules.md": "model/profile.py",
    "reference/properties.md": "properties/__init__.py",
    "reference/liveness.md": "properties/liveness.py",
    "reference/actions.md": "model/actions.py",
    "reference/variants.md": "model/config.py",
    "reference/sut-bugs.md": "sut/bugs.py",
    "reference/corpus-schema.md": SCHEMA_MODULE.replace(".", "/") + ".py",
    "reference/cli.md": "replicheck_cli/commands.py",
    "reference/kafka-tests-not-expressible.md": "tests/kafka",
    "reference/spark-reports.md": "spark_reports/README.md",
    "reference/kafka-reproducers.md": "reproducers/findings.py",
    "reference/kafka-releases.md": "kafka_bridge/releases.py",
    "findings/upstream.md": "reproducers/findings.py",
}


def render_all() -> dict[str, str]:
    """Every generated page: path under docs/ -> Markdown."""
    return {path: make() for path, make in PAGES.items()}


if __name__ == "__main__":  # print one page: python docs/gen_reference.py reference/properties.md
    for page in sys.argv[1:] or list(PAGES):
        print(PAGES[page]())
