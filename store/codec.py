"""Encoding traces, configurations and states for the counterexample corpus, and
decoding them back for replay.

Everything here is deterministic and canonical (sorted keys, sorted sets), so
that the same failure always yields the same ``counterexample_id``.

- A step is ``{"idx", "family", "action", "args_json"}``: the action class name
  and its attrs fields as JSON, e.g. ``UncleanShutdown`` ``{"broker": 2, "lossy": true}``;
  tuples become lists (``Reassign`` ``{"target": [1, 2, 4]}``).
- A config is the full ``model.Config`` as JSON, variants and rules by name (the
  profile and its rules only when they are not the defaults).
- A state is ``attrs``-style JSON: enums by name, frozensets as sorted lists,
  tuples as lists, and the members of the metadata-record and message unions
  tagged with ``"_type"``.

The **signature** (the corpus dedup key) is ``check.signature.signature``'s.
"""

from __future__ import annotations

import enum
import hashlib
import json
from typing import Any, Iterable, Sequence

import attrs

import model
from model import ACTION_TYPES, CHAPTERS, PROFILES, Config, Rule, Variant, family_of
from sut.bugs import Bug

#: Classes tagged with "_type" in state JSON: the members of the union-typed
#: fields (the metadata log and the network).
_TAGGED: frozenset[type] = frozenset({
    model.RegisterBrokerRecord, model.FenceBrokerRecord, model.UnfenceBrokerRecord, model.ControlledShutdownRecord,
    model.PartitionRecord,
    model.PartitionChangeRecord, model.FetchRequest, model.FetchResponse, model.AlterPartitionRequest,
    model.AlterPartitionResponse,
})

ACTIONS_BY_NAME: dict[str, type] = {t.__name__: t for t in ACTION_TYPES}


class TraceDecodeError(ValueError):
    """A corpus row (config, step, variant or bug name) cannot be decoded."""


# --------------------------------------------------------------------- JSON

def _sort_key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def to_jsonable(obj: Any) -> Any:
    """A JSON-friendly, canonical form of a model value (see module doc)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return obj.name
    cls = type(obj)
    if attrs.has(cls):
        out = {f.name: to_jsonable(getattr(obj, f.name)) for f in attrs.fields(cls)}
        if cls in _TAGGED:
            out = {"_type": cls.__name__, **out}
        return out
    if isinstance(obj, (frozenset, set)):
        return sorted((to_jsonable(x) for x in obj), key=_sort_key)
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in obj.items()}
    return repr(obj)


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no whitespace."""
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_to_json(state: Any) -> str:
    return dumps(state)


# ------------------------------------------------------------------ config

def config_to_json(config: Config) -> str:
    """The config as canonical JSON. The profile is left out when it is the
    default and the rules when they are the profile's, so a config keeps the JSON
    (and counterexample ids) it had before profiles existed."""
    d = to_jsonable(config)
    if config.rules == PROFILES[config.profile]:
        del d["rules"]
    if config.profile == CHAPTERS:
        del d["profile"]
    return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _members(enum: Any, names: Iterable[str], what: str) -> frozenset:
    out = set()
    for n in names:
        try:
            out.add(enum[n])
        except KeyError:
            raise TraceDecodeError(
                f"unknown {what} {n!r}; this replicheck knows {sorted(m.name for m in enum)}") from None
    return frozenset(out)


def variants_from_names(names: Iterable[str]) -> frozenset[Variant]:
    return _members(Variant, names, "protocol variant")


def bugs_from_names(names: Iterable[str]) -> frozenset:
    return _members(Bug, names, "SUT bug")


def names(values: Iterable[Any]) -> list[str]:
    """Sorted enum member names (variants, bugs)."""
    return sorted(v.name if isinstance(v, enum.Enum) else str(v) for v in values)


def config_from_json(text: str) -> Config:
    try:
        d = json.loads(text)
    except (TypeError, ValueError) as e:
        raise TraceDecodeError(f"config_json is not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise TraceDecodeError(f"config_json must be a JSON object, got {text[:80]!r}")
    known = {f.name for f in attrs.fields(Config)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise TraceDecodeError(f"config_json has unknown field(s) {unknown}; model.Config has {sorted(known)}")
    d = dict(d)
    d["variants"] = variants_from_names(d.get("variants", ()))
    if "rules" in d:
        d["rules"] = _members(Rule, d["rules"], "profile rule")
    for key in ("brokers", "assignment"):
        if key in d and isinstance(d[key], list):
            d[key] = tuple(d[key])
    try:
        return Config(**d)
    except (TypeError, ValueError) as e:
        raise TraceDecodeError(f"config_json does not make a valid model.Config: {e}") from None


# ------------------------------------------------------------------- steps

def action_args(action: Any) -> dict[str, Any]:
    return {f.name: to_jsonable(getattr(action, f.name)) for f in attrs.fields(type(action))}


def encode_step(idx: int, action: Any) -> dict[str, Any]:
    return {"idx": idx, "family": family_of(action), "action": type(action).__name__,
            "args_json": json.dumps(action_args(action), sort_keys=True, separators=(",", ":"))}


def encode_steps(trace: Sequence[Any]) -> list[dict[str, Any]]:
    return [encode_step(i, a) for i, a in enumerate(trace)]


def decode_step(step: dict[str, Any]) -> Any:
    """The action of one encoded step; TraceDecodeError naming the step otherwise."""
    idx = step.get("idx")
    name = step.get("action")
    cls = ACTIONS_BY_NAME.get(name)  # type: ignore[arg-type]
    if cls is None:
        raise TraceDecodeError(f"step {idx}: unknown action {name!r}; allowed: {sorted(ACTIONS_BY_NAME)}")
    try:
        args = json.loads(step.get("args_json") or "{}")
    except ValueError as e:
        raise TraceDecodeError(f"step {idx} ({name}): args_json is not valid JSON: {e}") from None
    if not isinstance(args, dict):
        raise TraceDecodeError(f"step {idx} ({name}): args_json must be a JSON object, got {args!r}")
    fields = {f.name for f in attrs.fields(cls)}
    if set(args) != fields:
        raise TraceDecodeError(f"step {idx} ({name}): args {sorted(args)} do not match the action's fields "
                               f"{sorted(fields)}")
    try:
        return cls(**args)
    except (TypeError, ValueError) as e:
        raise TraceDecodeError(f"step {idx} ({name}): {e}") from None


def encode_timeline(moments: Sequence[Any]) -> list[dict[str, Any]]:
    """``timeline`` column entries (``store.schema.TIMELINE_STEP``) of
    ``check.timeline.Moment`` values."""
    return [{"idx": m.idx, "received": m.received,
             "sent": [attrs.asdict(s) for s in m.sent],
             "outcome_json": dumps({k: v for k, v in to_jsonable(m.outcome).items() if k != "sent"}),
             "leader": m.leader, "leader_epoch": m.leader_epoch, "partition_epoch": m.partition_epoch,
             "isr": list(m.isr), "elr": list(m.elr),
             "brokers": [attrs.asdict(b) for b in m.brokers]} for m in moments]


def decode_steps(steps: Sequence[dict[str, Any]]) -> tuple[Any, ...]:
    ordered = sorted(steps, key=lambda s: s.get("idx", 0))
    idxs = [s.get("idx") for s in ordered]
    if idxs != list(range(len(ordered))):
        raise TraceDecodeError(f"step indexes must be 0..{len(ordered) - 1} without gaps, got {idxs}")
    return tuple(decode_step(s) for s in ordered)


# -------------------------------------------------------- ids and signatures

def counterexample_id(config_json: str, steps: Sequence[dict[str, Any]], prop: str,
                      bugs: Sequence[str] = ()) -> str:
    """sha256 (hex) of the configuration (config, SUT bugs), the trace and the
    property: the same failure of the same trace always has the same id."""
    payload = json.dumps({"config": json.loads(config_json), "bugs": sorted(bugs),
                          "steps": [[s["action"], json.loads(s["args_json"])] for s in steps],
                          "property": prop}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()
