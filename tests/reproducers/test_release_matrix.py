"""The release matrix of the findings' reproducers (``reproducers.matrix``): the
recorded table covers every finding on every release, its comparison names each
change, and the releases a finding holds on are read from it (the findings page's
"affected releases")."""

from __future__ import annotations

from reproducers.findings import FINDINGS, finding
from reproducers.matrix import RELEASES, Cell, affected, differences, recorded, table


def test_the_recorded_matrix_covers_every_finding_on_every_release():
    record = recorded()
    assert sorted(record) == sorted(RELEASES)
    for release in RELEASES:
        assert sorted(record[release]) == sorted(str(f.number) for f in FINDINGS), release
        for number, cell in record[release].items():
            assert cell == "holds" or cell.startswith(("does not hold: ", "not run: ")), (release, number, cell)


def test_every_finding_holds_on_the_pinned_release():
    from model import KAFKA_RELEASE
    assert all(cell == "holds" for cell in recorded()[KAFKA_RELEASE].values())


def test_a_release_that_fixes_a_finding_is_a_difference():
    record = {"4.4.0": {"5": "holds", "7": "does not hold: ISR ==> expected"}}
    same = {"4.4.0": {5: Cell(True), 7: Cell(False, "another message")}}
    assert differences(same, record) == []        # the verdict counts, not JUnit's wording
    fixed = {"4.4.0": {5: Cell(False, "nothing was thrown"), 7: Cell(False, "x")}}
    assert differences(fixed, record) == ["finding 5 on Kafka 4.4.0: does not hold: nothing was thrown "
                                          "(recorded: holds)"]
    new = {"4.4.0": {5: Cell(True), 7: Cell(False, "x")}, "4.5.0": {5: Cell(True)}}
    assert differences(new, record) == ["finding 5 on Kafka 4.5.0: holds (recorded: not recorded)"]


def test_the_affected_releases_are_those_where_the_reproducer_passes():
    record = {"4.0.0": {"5": "does not hold: x"}, "4.1.1": {"5": "holds"}, "4.4.0": {"5": "holds"}}
    assert affected(record, 5) == ["4.1.1", "4.4.0"]
    assert finding(5).name == "ReplicheckFinding5Test"


def test_the_table_has_a_row_per_release_and_a_column_per_finding():
    text = table({"4.3.1": {3: Cell(True), 5: Cell(False, "x")}})
    assert text.splitlines() == ["release    finding 3    finding 5  ", "4.3.1      holds        no         "]


def test_the_findings_page_states_the_releases_the_matrix_recorded():
    """Each finding's paragraph on the findings page names the first and last release
    its reproducer holds on, as recorded."""
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "findings" / "kafka.md").read_text()
    for f in FINDINGS:
        holds = affected(recorded(), f.number)
        paragraph = next(p for p in page.split("\n\n") if f"`{f.name}`" in p)
        said = " ".join(paragraph.split())
        if holds == list(RELEASES):
            assert f"every release from {RELEASES[0]} to {RELEASES[-1]}" in said, f.number
        elif len(holds) == 1:
            assert f"on {holds[0]}, the only release its fixture is written for" in said, (f.number, said)
        else:
            assert f"{holds[0]} to {holds[-1]}" in said, (f.number, holds[0], holds[-1], said)
