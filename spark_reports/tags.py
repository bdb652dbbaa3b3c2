"""How the space-time diagram marks each action's steps, derived from the
action registry (``model.ActionKind``, read through ``store.schema``, the
readers' window on the model): a new action class is drawn from its registry
entry, with no name of it here.

Per action: its tag (``ActionKind.tag``: a template over the step's arguments,
or over its recorded outcome for a client's read), the lane it is drawn on (the
one broker its first broker field names; an action naming no single broker, on
the controller's lane), its colour (its family's; a broker's lifecycle faults
red), whether it is an unclean election (the recovery family: a red line
across the lanes), whether it loses the message it takes (a fault that takes a
message: dropped), and whether it writes a value (a ``value`` field: Produce).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, Callable, Optional

import attrs

from model import ACTIONS, DIRECTIVE_FAMILIES

from .lenient import as_int, lookup

#: Family -> the kind of mark its tags are drawn as (``diagram._KIND_COLORS``).
_FAMILY_KINDS = {"lifecycle": "lifecycle", "metadata": "metadata", "isr": "isr", "reassignment": "controller",
                 "recovery": "unclean", "network": "fault", "client": "client", "healing": "healing"}

CONTROLLER = "controller"


def _record_values(outcome: dict) -> list:
    return [lookup(r, "value") for r in outcome.get("consumed") or []]


def _listed_hwm(outcome: dict) -> Any:
    answer = outcome.get("list_offsets") or {}
    hwm = answer.get("hwm") if isinstance(answer, dict) else None
    return "unknown" if hwm is None else hwm


#: The outcome fields (``model.Outcome``, a timeline entry's ``outcome_json``) a
#: tag may name -> what it shows of the outcome.
OUTCOME_VALUES: dict[str, Callable[[dict], Any]] = {"consumed": _record_values, "list_offsets": _listed_hwm}


class _TagFormatter(string.Formatter):
    """``str.format`` with the tags' format specs (``model.ActionKind.tag``):
    ``A|B`` picks A for a true value, else B; any other spec joins a list's
    items with it. A missing value reads ``?``."""

    def get_value(self, key: Any, args: Any, kwargs: dict) -> Any:
        return kwargs.get(key)

    def format_field(self, value: Any, format_spec: str) -> str:
        if "|" in format_spec:
            yes, _, no = format_spec.partition("|")
            return yes if value else no
        if format_spec:
            return format_spec.join(str(x) for x in value) if isinstance(value, list) else "?"
        return "?" if value is None else str(value)


_FORMATTER = _TagFormatter()


@dataclass(frozen=True)
class StepTag:
    """How the diagram draws the steps of one action class.

    template: ``ActionKind.tag`` (None: no tag). lane_field: the argument naming
    its broker lane (None: the controller's lane). kind: the mark's kind (its
    colour). from_outcome: the tag shows the recorded outcome (drawn only from a
    timeline). unclean: an unclean election. drops: it loses the message it
    takes. writes: it writes its ``value`` on its broker. heals: a healing phase
    (a directive family's step, ``model.DIRECTIVE_FAMILIES``: faults stop, the
    cluster recovers, the liveness goals are judged), drawn as a band across the lanes.
    """

    template: Optional[str]
    lane_field: Optional[str]
    kind: str
    from_outcome: bool = False
    unclean: bool = False
    drops: bool = False
    writes: bool = False
    heals: bool = False

    def lane(self, args: dict) -> Any:
        """The lane of a step with ``args``: a broker id, ``CONTROLLER``, or
        None (the step's broker argument is missing or not a broker id)."""
        if self.lane_field is None:
            return CONTROLLER
        value = args.get(self.lane_field)
        if isinstance(value, list):   # several brokers (Reassign's target): the controller acts
            return CONTROLLER
        return as_int(value)

    def label(self, args: dict, outcome: Optional[dict] = None) -> str:
        """The tag of a step with ``args`` (and, for ``from_outcome``, its
        recorded ``outcome``)."""
        values = dict(args)
        if outcome is not None:
            values.update({name: shown(outcome) for name, shown in OUTCOME_VALUES.items()})
        return _FORMATTER.format(self.template or "", **values)


def step_tag(kind: Any) -> StepTag:
    """How the steps of the action ``kind`` (a ``model.ActionKind``) are drawn."""
    template = kind.tag
    named = {field for _, field, _, _ in string.Formatter().parse(template or "") if field}
    mark = _FAMILY_KINDS.get(kind.family, CONTROLLER)
    if kind.fault and mark == "lifecycle":   # fenced, shut down, crashed: red on the broker's lane
        mark = "fault"
    return StepTag(template, kind.broker_fields[0] if kind.broker_fields else None, mark,
                   from_outcome=bool(named & OUTCOME_VALUES.keys()), unclean=mark == "unclean",
                   drops=kind.fault and kind.receives is not None,
                   writes="value" in attrs.fields_dict(kind.cls), heals=kind.family in DIRECTIVE_FAMILIES)


#: Action class name -> how its steps are drawn (``model.ACTIONS``, in its order).
TAGS: dict[str, StepTag] = {k.name: step_tag(k) for k in ACTIONS}
