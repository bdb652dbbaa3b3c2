"""The space-time diagram's step tags come from the action registry
(``model.ACTIONS`` through ``spark_reports.tags``): every action has an entry,
a tag formats the step's arguments (or, for a read, its recorded answer), and
a new action class is drawn from its registry entry alone."""

from __future__ import annotations

import attrs
import pytest

from model import ACTIONS, ActionKind
from spark_reports.tags import CONTROLLER, TAGS, step_tag


def test_every_registered_action_has_an_entry():
    assert list(TAGS) == [k.name for k in ACTIONS]


@pytest.mark.parametrize("action, args, lane, label, kind", [
    ("StartBroker", {"broker": 2}, 2, "start", "lifecycle"),
    ("FenceBroker", {"broker": 1}, 1, "FENCED", "fault"),
    ("UncleanShutdown", {"broker": 3, "lossy": True}, 3, "CRASH lossy", "fault"),
    ("UncleanShutdown", {"broker": 3, "lossy": False}, 3, "crash", "fault"),
    ("ReplicateMetadata", {"broker": 1, "count": 2}, 1, "md+2", "metadata"),
    ("ProposeIsrShrink", {"leader": 1, "follower": 3}, 1, "ISR−3", "isr"),
    ("ProposeIsrShrinkMany", {"leader": 1, "followers": [2, 3]}, 1, "ISR−2,3", "isr"),
    ("ProposeIsrExpand", {"leader": 2, "follower": 3}, 2, "ISR+3", "isr"),
    ("Reassign", {"target": [3, 1]}, CONTROLLER, "reassign→[3, 1]", "controller"),
    ("CancelReassignment", {}, CONTROLLER, "cancel reassignment", "controller"),
    ("UncleanLeaderElection", {}, CONTROLLER, "UNCLEAN LEADER ELECTION", "unclean"),
])
def test_a_step_is_tagged_on_its_lane(action, args, lane, label, kind):
    tag = TAGS[action]
    assert (tag.lane(args), tag.label(args), tag.kind) == (lane, label, kind)
    assert tag.unclean == (kind == "unclean") and not tag.from_outcome


def test_a_read_is_tagged_with_its_recorded_answer():
    consume, list_offsets = TAGS["Consume"], TAGS["ListOffsets"]
    assert consume.from_outcome and list_offsets.from_outcome
    assert consume.lane({}) == CONTROLLER
    assert consume.label({}, {"consumed": [{"value": 4}, {"value": 5}]}) == "consume → [4, 5]"
    assert list_offsets.label({}, {"list_offsets": {"hwm": 3}}) == "ListOffsets → 3"
    assert list_offsets.label({}, {"list_offsets": {"hwm": None}}) == "ListOffsets → unknown"


def test_messages_and_writes_are_drawn_not_tagged():
    assert [name for name, t in TAGS.items() if t.drops] == ["DropMessage"]
    assert [name for name, t in TAGS.items() if t.writes] == ["Produce"]
    untagged = {name for name, t in TAGS.items() if t.template is None}
    assert untagged == {"SendFetch", "ReceiveFetchRequest", "ReceiveFetchResponse", "AdvanceTime",
                        "ReceiveAlterPartition", "ReceiveAlterPartitionResponse", "DropMessage", "Produce"}


def test_a_missing_argument_reads_as_unknown():
    assert TAGS["ReplicateMetadata"].label({"broker": 1}) == "md+?"
    assert TAGS["ProposeIsrShrinkMany"].label({"leader": 1, "followers": 7}) == "ISR−?"
    assert TAGS["StartBroker"].lane({}) is None and TAGS["StartBroker"].lane({"broker": "x"}) is None


def test_a_new_action_is_drawn_from_its_registry_entry():
    @attrs.frozen
    class Teleport:
        broker: int
        far: bool

    tag = step_tag(ActionKind(Teleport, "lifecycle", fault=True, broker_fields=("broker",),
                              tag="{far:FAR|near} teleport"))
    assert (tag.lane({"broker": 4, "far": True}), tag.label({"broker": 4, "far": True}), tag.kind) == \
        (4, "FAR teleport", "fault")
    assert tag.label({"broker": 4, "far": False}) == "near teleport"
