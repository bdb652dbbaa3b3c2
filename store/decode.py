"""A corpus row decoded for replay: the ``Subject`` it was found with (its
configuration, variants, SUT bugs, implementation by name, whether its replay
checks the properties), its trace and what failed.

Decoding loads nothing: a row's implementation stays a name
(``check.subject.Implementation``), built when the subject is replayed
(``check.implementations.factory``).
"""

from __future__ import annotations

from typing import Any

import attrs

from check.subject import KAFKA, Subject, kafka_release, reports_properties

from .codec import TraceDecodeError, bugs_from_names, config_from_json, decode_steps, variants_from_names
from .schema import SCHEMA_VERSION


@attrs.frozen
class DecodedCounterexample:
    """A corpus row decoded for replay: ``subject`` (its config the row's, its
    variants included), ``actions`` (the trace), and the row's property, kind, id
    and signature."""

    subject: Subject
    actions: tuple
    prop: str
    kind: str
    counterexample_id: str
    signature: str

    @property
    def config(self) -> Any:
        return self.subject.config

    @property
    def variants(self) -> frozenset:
        return self.subject.variants

    @property
    def bugs(self) -> frozenset:
        return self.subject.bugs

    @property
    def expected_to_fail(self) -> bool:
        """Whether a replay must still show this failure (the regression rule of
        ``campaign.regression``): a property violation recorded with a protocol
        variant on, or a divergence recorded with a SUT bug (or variant) on — the
        flaw was put there on purpose and must stay detected. Everything else (the
        correct protocol and the correct SUT failing, or any harness error) was a
        real bug, and must now be fixed."""
        if self.kind in ("property", "liveness"):
            return bool(self.variants)
        if self.kind == "divergence":
            return bool(self.bugs or self.variants)
        return False


def _implementation(value: Any) -> Any:
    """The row's ``implementation``: null, ``"kafka"``, ``"kafka@X.Y.Z"`` or
    ``"module:qualname"``; TraceDecodeError naming the value and what is allowed
    otherwise."""
    if value is None or kafka_release(value) is not None:
        return value
    module, sep, qualname = str(value).partition(":") if isinstance(value, str) else ("", "", "")
    if not (sep and module and qualname):
        raise TraceDecodeError(f"implementation {value!r} is not a name; allowed: null (the bundled SUT), "
                               f"{KAFKA!r}, '{KAFKA}@X.Y.Z' (a Kafka release), or 'module:qualname' of an "
                               f"importable factory")
    return value


#: The columns decoding needs a value in: what failed, the id, the flaws.
_NEEDED = ("counterexample_id", "signature", "property", "kind", "variants", "sut_bugs", "config_json")


def _needed(row: dict[str, Any]) -> None:
    """TraceDecodeError naming the first of ``_NEEDED`` the row lacks or holds
    null in (a row from elsewhere than ``store.reader``, which skips most such
    rows), or a list of names holding a null."""
    for name in _NEEDED:
        value = row.get(name)
        if value is None:
            raise TraceDecodeError(f"{name} is {'null' if name in row else 'missing'}: the schema requires a value")
        if name in ("variants", "sut_bugs") and any(v is None for v in value):
            raise TraceDecodeError(f"{name} holds a null item: the schema requires names")


def _trace(row: dict[str, Any]) -> tuple:
    """The row's trace (``steps``); TraceDecodeError naming the column when it
    is missing or null (never the empty trace: that would replay as a pass), or
    a step that is null or lacks its index."""
    steps = row.get("steps")
    if steps is None:
        raise TraceDecodeError(f"steps is {'null' if 'steps' in row else 'missing'}: the row has no trace to "
                               "replay; the schema requires a list of steps")
    if isinstance(steps, (str, bytes)) or not hasattr(steps, "__iter__"):
        raise TraceDecodeError(f"steps must be a list of steps, got {type(steps).__name__}")
    steps = list(steps)
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise TraceDecodeError(f"steps[{i}] is {'null' if step is None else type(step).__name__}: "
                                   "a step is {idx, family, action, args_json}")
        if step.get("idx") is None:
            raise TraceDecodeError(f"steps[{i}] ({step.get('action')}): idx is null")
    return decode_steps(steps)


def decode_counterexample(row: dict[str, Any]) -> DecodedCounterexample:
    """The subject and trace of a ``counterexamples`` row; raises
    ``store.codec.TraceDecodeError`` naming what cannot be decoded: a column
    decoding needs that is missing or null (``steps``, ``config_json``,
    ``kind``, …: never replayed as the empty trace or the correct protocol),
    a step, a name, the configuration."""
    version = row.get("schema_version")
    if version is not None and version > SCHEMA_VERSION:
        raise TraceDecodeError(f"counterexample {row.get('counterexample_id')} has schema version {version}, "
                               f"newer than {SCHEMA_VERSION}; upgrade replicheck")
    _needed(row)
    config = config_from_json(row["config_json"])
    implementation = _implementation(row.get("implementation"))
    # A disagreement of an implementation whose runs report no property replays
    # with them off, as it may have been found; one found with them on has no
    # property failing before it, so it replays the same way.
    check = row["kind"] in ("property", "liveness") or reports_properties(implementation)
    subject = Subject.at(config, variants=variants_from_names(row["variants"]),
                         bugs=bugs_from_names(row["sut_bugs"]), implementation=implementation,
                         check_properties=check)
    return DecodedCounterexample(subject, _trace(row), row["property"], row["kind"],
                                 row["counterexample_id"], row["signature"])
