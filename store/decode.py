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

from check.subject import KAFKA, Subject, reports_properties

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
        if self.kind == "property":
            return bool(self.variants)
        if self.kind == "divergence":
            return bool(self.bugs or self.variants)
        return False


def _implementation(value: Any) -> Any:
    """The row's ``implementation``: null, ``"kafka"`` or ``"module:qualname"``;
    TraceDecodeError naming the value and what is allowed otherwise."""
    if value is None or value == KAFKA:
        return value
    module, sep, qualname = str(value).partition(":") if isinstance(value, str) else ("", "", "")
    if not (sep and module and qualname):
        raise TraceDecodeError(f"implementation {value!r} is not a name; allowed: null (the bundled SUT), "
                               f"{KAFKA!r}, or 'module:qualname' of an importable factory")
    return value


def decode_counterexample(row: dict[str, Any]) -> DecodedCounterexample:
    """The subject and trace of a ``counterexamples`` row; raises
    ``store.codec.TraceDecodeError`` naming what cannot be decoded."""
    version = row.get("schema_version")
    if version is not None and version > SCHEMA_VERSION:
        raise TraceDecodeError(f"counterexample {row.get('counterexample_id')} has schema version {version}, "
                               f"newer than {SCHEMA_VERSION}; upgrade replicheck")
    config = config_from_json(row["config_json"])
    implementation = _implementation(row.get("implementation"))
    # A disagreement of an implementation whose runs report no property replays
    # with them off, as it may have been found; one found with them on has no
    # property failing before it, so it replays the same way.
    check = row["kind"] == "property" or reports_properties(implementation)
    subject = Subject.at(config, variants=variants_from_names(row.get("variants") or ()),
                         bugs=bugs_from_names(row.get("sut_bugs") or ()), implementation=implementation,
                         check_properties=check)
    return DecodedCounterexample(subject, decode_steps(row.get("steps") or []), row["property"], row["kind"],
                                 row["counterexample_id"], row["signature"])
