"""Each generated reference page follows its table in the code: every member of
the real table is on the page, and a member added to the table (monkeypatched
in) appears there too."""

from __future__ import annotations

import enum
import textwrap

import attrs
import click
import pyarrow as pa
import pytest

import model
import properties
import sut
from docs_support import gen_reference

g = gen_reference()


# ------------------------------------------------------------- the real tables

def test_every_page_renders_from_the_real_tables():
    pages = g.render_all()
    assert set(pages) == set(g.PAGES) == set(g.SOURCES)
    for page, text in pages.items():
        assert text.startswith("# "), page
        assert "Generated at build time" in text, page


def test_the_rules_page_names_every_rule():
    text = g.rules_markdown()
    for rule, doc in model.RULE_DOCS.items():
        assert f"## `{rule.name}`" in text
        assert g.cell(doc.consequence) in text


def test_the_properties_page_names_every_property():
    text = g.properties_markdown()
    for prop in properties.ALL:
        assert f"`{prop.name}`" in text and g.cell(prop.description) in text


def test_the_actions_page_names_every_action_and_family():
    text = g.actions_markdown()
    for kind in model.ACTIONS:
        assert f"`{kind.name}(" in text
        assert f"## {kind.family}" in text


def test_the_variants_page_names_every_variant():
    text = g.variants_markdown()
    for variant in model.Variant:
        assert f"`{variant.name}`" in text and g.cell(model.VARIANT_DOCS[variant][0]) in text


def test_the_bugs_page_names_every_bug():
    text = g.bugs_markdown()
    for bug in sut.Bug:
        assert f"`{bug.name}`" in text and g.cell(sut.DOCS[bug].rule) in text


def test_the_schema_page_names_every_column_of_the_schema_module():
    import importlib
    schema = importlib.import_module(g.SCHEMA_MODULE)
    text = g.schema_markdown()
    assert f"Schema version **{schema.SCHEMA_VERSION}**" in text
    for table, columns in schema.SCHEMAS.items():
        assert f"## `{table}`" in text
        for field in columns:
            assert f"| `{field.name}` |" in text


def test_the_cli_page_has_every_commands_help():
    text = g.cli_markdown()
    group = g._resolve(g.CLI_GROUP)
    assert "## `replicheck`" in text
    for name in group.commands:
        assert f"### `replicheck {name}`" in text
        assert f"Usage: replicheck {name}" in text


# ------------------------------------------------ a table changes, its page does

def test_a_new_rule_appears_on_the_rules_page(monkeypatch: pytest.MonkeyPatch):
    fake = enum.Enum("Rule", {"FAKE_RULE_FOR_THE_DOCS": "FakeBuilder.fakeMethod"})["FAKE_RULE_FOR_THE_DOCS"]
    doc = model.RuleDoc("§9.9", "FakeBuilder.java: fakeMethod", "the chapters do this", "Kafka does that",
                        "a consequence nobody has seen")
    monkeypatch.setattr(model, "RULE_DOCS", {**model.RULE_DOCS, fake: doc})
    text = g.rules_markdown()
    assert "## `FAKE_RULE_FOR_THE_DOCS`" in text
    assert "[`FAKE_RULE_FOR_THE_DOCS`](#fake_rule_for_the_docs) | §9.9 | a consequence nobody has seen |" in text
    assert "FakeBuilder.java: fakeMethod" in text


def test_a_new_property_appears_on_the_properties_page(monkeypatch: pytest.MonkeyPatch):
    fake = properties.Property("FakePropertyForTheDocs", "§9.9", "nothing | ever fails", lambda state: ())
    monkeypatch.setattr(properties, "ALL", properties.ALL + (fake,))
    assert "| `FakePropertyForTheDocs` | §9.9 | nothing \\| ever fails |" in g.properties_markdown()


def test_a_new_action_kind_appears_on_the_actions_page(monkeypatch: pytest.MonkeyPatch):
    @attrs.frozen
    class FakeActionForTheDocs:
        """A fake action, for the docs' test."""
        broker: int

    kind = model.ActionKind(FakeActionForTheDocs, "fakefamily", fault=True, sends="FakeRequest",
                            broker_fields=("broker",), weight=0.25, family_weight=7, swarm=(1, 0))
    monkeypatch.setattr(model, "ACTIONS", model.ACTIONS + (kind,))
    text = g.actions_markdown()
    assert "## fakefamily" in text
    [row] = [line for line in text.splitlines() if line.startswith("| `FakeActionForTheDocs(broker)` |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["yes", "`FakeRequest`", ""]
    for expected in ("`broker`", "0.25", "7", "1, 0", "A fake action, for the docs' test."):
        assert expected in cells, expected


def test_a_new_variant_appears_on_the_variants_page(monkeypatch: pytest.MonkeyPatch):
    variant = enum.Enum("Variant", {**{v.name: v.value for v in model.Variant}, "FAKE_FLAW": "KAFKA-0"})
    docs = {variant[v.name]: d for v, d in model.VARIANT_DOCS.items()}
    docs[variant.FAKE_FLAW] = ("Removes a check nobody wrote.", ("LogMatching",))
    monkeypatch.setattr(model, "Variant", variant)
    monkeypatch.setattr(model, "VARIANT_DOCS", docs)
    assert "| `FAKE_FLAW` | KAFKA-0 | Removes a check nobody wrote. | `LogMatching` |" in g.variants_markdown()


def test_a_new_bug_appears_on_the_bugs_page(monkeypatch: pytest.MonkeyPatch):
    bug = enum.Enum("Bug", {**{b.name: b.value for b in sut.Bug}, "FAKE_SLIP": "fake_slip"})
    docs = {bug[b.name]: d for b, d in sut.DOCS.items()}
    docs[bug.FAKE_SLIP] = sut.BugDoc("A rule the fake slip breaks.", "§9.9", "sut/nowhere.py Fake.slip")
    monkeypatch.setattr(sut, "Bug", bug)
    monkeypatch.setattr(sut, "DOCS", docs)
    assert "| `FAKE_SLIP` | §9.9 | A rule the fake slip breaks. | `sut/nowhere.py Fake.slip` |" in g.bugs_markdown()


def test_a_new_schema_column_appears_on_the_schema_page(monkeypatch: pytest.MonkeyPatch):
    import importlib
    schema = importlib.import_module(g.SCHEMA_MODULE)
    table, columns = next(iter(schema.SCHEMAS.items()))
    extended = columns.append(pa.field("fake_column_for_the_docs", pa.list_(pa.int64()), nullable=True,
                                       metadata={"doc": "what the fake column holds"}))
    monkeypatch.setattr(schema, "SCHEMAS", {**schema.SCHEMAS, table: extended})
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 99)
    text = g.schema_markdown()
    assert "Schema version **99**" in text
    assert "| `fake_column_for_the_docs` | list&lt;int64&gt; | yes | what the fake column holds |" in text


def test_the_schema_module_is_one_constant(monkeypatch: pytest.MonkeyPatch, tmp_path, request):
    (tmp_path / "fake_schema_for_the_docs.py").write_text(textwrap.dedent('''
        """A fake corpus schema."""
        import pyarrow as pa
        SCHEMA_VERSION = 7
        SCHEMAS = {"things": pa.schema([
            pa.field("thing_id", pa.string(), nullable=False),   # the thing's id
        ])}
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(g, "SCHEMA_MODULE", "fake_schema_for_the_docs")
    text = g.schema_markdown()
    assert "Schema version **7**" in text and "## `things`" in text
    assert "| `thing_id` | string | no | the thing's id |" in text


def test_a_new_command_appears_on_the_cli_page(monkeypatch: pytest.MonkeyPatch):
    @click.command("fake-command")
    @click.option("--fake-option", help="what the fake option does")
    def fake_command(fake_option: str) -> None:
        """A fake command, for the docs' test."""

    group = g._resolve(g.CLI_GROUP)
    monkeypatch.setitem(group.commands, "fake-command", fake_command)
    text = g.cli_markdown()
    assert "### `replicheck fake-command`" in text
    assert "Usage: replicheck fake-command [OPTIONS]" in text
    assert "A fake command, for the docs' test." in text and "what the fake option does" in text


def test_a_new_not_expressible_kafka_test_appears(tmp_path):
    (tmp_path / "test_fake_kafka_class.py").write_text(textwrap.dedent('''
        _WHY = "a reason shared by two"
        NOT_EXPRESSIBLE = {
            "testOne": _WHY,
            "testTwo": "its own " "reason",
        }

        def test_FakeKafkaTest_testThree():
            pass
    '''))
    text = g.not_expressible_markdown(tmp_path)
    assert "## `test_fake_kafka_class.py`" in text and "FakeKafkaTest: 2 test methods" in text
    assert "- `testOne`: a reason shared by two\n" in text and "- `testTwo`: its own reason\n" in text


def test_the_spark_reports_page_is_the_packages_readme_without_its_figures(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# spark_reports — a title\n\nIntro.\n\n## Analyses\n\nkill_matrix and more.\n\n"
                      "## Performance\n\n| analysis | 10k s |\n|---|---:|\n| kill_matrix | 3.97 |\n")
    text = g.spark_reports_markdown(readme)
    assert text.startswith("# spark_reports — a title\n") and "kill_matrix and more." in text
    assert "3.97" not in text and "(../results.md#spark-report-scale)" in text


def test_the_reproducer_pages_have_every_finding_and_its_releases():
    from reproducers.findings import FINDINGS
    from reproducers.matrix import affected, recorded
    reference, upstream = g.reproducers_markdown(), g.upstream_markdown()
    for f in FINDINGS:
        holds = ", ".join(affected(recorded(), f.number))
        assert f"| {f.title} | `{f.name}` |" in reference and holds in reference, f.number
        assert f"## Finding {f.number}: {f.upstream.summary}" in upstream, f.number
        assert f"(the reproducer passes): {holds}." in upstream, f.number
        assert all(f"`{path}`, `{method}`, line {line}" in upstream for path, method, line in f.upstream.sources)


def test_a_new_finding_appears_on_the_reproducer_pages():
    from reproducers.findings import FINDINGS
    new = attrs.evolve(FINDINGS[0], number=99, title="A new finding",
                       upstream=attrs.evolve(FINDINGS[0].upstream, summary="KRaft controller: something new"))
    record = {"4.4.0": {"99": "holds"}, "4.3.1": {"99": "does not hold: ISR ==> expected"}}
    reference = g.reproducers_markdown([new], record)
    assert "| A new finding | `ReplicheckFinding99Test` |" in reference and "| 4.4.0 |" in reference
    assert "| 4.3.1 | does not hold: ISR ==> expected |" in reference
    upstream = g.upstream_markdown([new], record)
    assert "## Finding 99: KRaft controller: something new" in upstream
    assert "(the reproducer passes): 4.4.0. It does not hold on 4.3.1" in upstream
