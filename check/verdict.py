"""What one lockstep step found wrong, as a value: ``Verdict``, and the
constructors of each kind's report (the text a Kafka engineer reads, the
signature template the corpus dedups on, the model state and the trace)."""

from __future__ import annotations

from typing import Optional

import attrs

from model import Action, ClusterState, Config, Observation
from properties import Violation

from .describe import describe, first_difference_path
from .signature import signature

#: Pseudo-property names of the failures that are not property violations.
SUT_DIFFERS = "SutDiffersFromModel"
HARNESS_ERROR = "HarnessError"

#: What a verdict can say: a property failed on the model; the implementation's
#: observable state differs from the model's (or it refused an action the model
#: took); an action's outcome differs; it disagrees on whether an action is
#: enabled; an exception in the model or the implementation.
KINDS = ("property", "liveness", "divergence", "outcome", "enablement", "harness_error")


def trace_tail(trace: tuple, n: int = 12) -> str:
    """The last ``n`` steps, numbered from 1."""
    start = max(0, len(trace) - n)
    return "\n".join(f"  {i + 1:3}. {a!r}" for i, a in enumerate(trace[start:], start))


@attrs.frozen
class Verdict:
    """What one lockstep step found wrong.

    kind: one of ``KINDS``. properties: the failing properties, in order (for the
    other kinds ``SutDiffersFromModel`` or ``HarnessError``). text: the report.
    template: what the corpus signature is made of (the first violation's message,
    the first differing field path, the refusal or the error); template_is_path:
    whether it is a field path. state: the model state at the failure (its config
    the run's). trace: every action taken, the failing one last. violations,
    differences: the details; observed: the implementation's observation when
    one was compared."""

    kind: str
    properties: tuple[str, ...]
    text: str
    template: str
    state: ClusterState
    trace: tuple
    template_is_path: bool = False
    violations: tuple[Violation, ...] = ()
    differences: tuple[str, ...] = ()
    observed: Optional[Observation] = None

    @property
    def config(self) -> Config:
        return self.state.config

    @property
    def finding_kind(self) -> str:
        """What a finding of it is (``check.finding.FINDING_KINDS``): a differing
        outcome and an enablement disagreement are divergences."""
        return "divergence" if self.kind in ("enablement", "outcome") else self.kind

    @property
    def signature(self) -> str:
        """Its signature (``check.signature``), of its first failing property."""
        return signature(self.properties[0], self.finding_kind, self.template, path=self.template_is_path)

    def for_property(self, prop: str) -> "Verdict":
        """This verdict narrowed to one failing property (the corpus keeps a row per
        property)."""
        vs = tuple(v for v in self.violations if v.property == prop)
        return attrs.evolve(self, properties=(prop,), violations=vs, template=vs[0].message if vs else self.template)


def property_verdict(violations: tuple[Violation, ...], state: ClusterState, trace: tuple) -> Verdict:
    text = ("property violated after step " + str(len(trace)) + ":\n  " + "\n  ".join(str(v) for v in violations)
            + "\n\n" + describe(state) + "\n\nlast steps:\n" + trace_tail(trace))
    return Verdict("property", tuple(dict.fromkeys(v.property for v in violations)), text, violations[0].message,
                   state, trace, violations=violations)


def liveness_verdict(violations: tuple[Violation, ...], state: ClusterState, trace: tuple,
                     healing: tuple[tuple[int, Action], ...]) -> Verdict:
    """A liveness goal (``properties.liveness``) failed at the end of the healing
    phase the last step of ``trace`` ran; ``healing``: its schedule, (round,
    action) in order, reported by round."""
    rounds: dict[int, list[str]] = {}
    for number, action in healing:
        rounds.setdefault(number, []).append(repr(action))
    schedule = "\n".join(f"  round {n}: {'; '.join(actions)}" for n, actions in rounds.items()) or "  (nothing to do)"
    text = ("liveness goal failed after healing (step " + str(len(trace)) + "):\n  "
            + "\n  ".join(str(v) for v in violations) + "\n\n" + describe(state)
            + "\n\nhealing schedule:\n" + schedule + "\n\nlast steps before healing:\n" + trace_tail(trace[:-1]))
    return Verdict("liveness", tuple(dict.fromkeys(v.property for v in violations)), text, violations[0].message,
                   state, trace, violations=violations)


def divergence_verdict(state: ClusterState, observed: Optional[Observation], trace: tuple,
                        differences: tuple[str, ...], kind: str = "divergence") -> Verdict:
    last = f" ({trace[-1]!r})" if trace else ""
    what = "the outcome of the last step" if kind == "outcome" else "the observed state"
    text = (f"SUT differs from model after step {len(trace)}{last} in {what}:\n  " + "\n  ".join(differences)
            + "\n\nmodel:\n" + describe(state) + "\n\nlast steps:\n" + trace_tail(trace))
    first = differences[0] if differences else ""
    path = first_difference_path(list(differences)) if kind != "enablement" else None
    return Verdict(kind, (SUT_DIFFERS,), text, path or first, state, trace, template_is_path=path is not None,
                   differences=differences, observed=observed)


def refusal_verdict(state: ClusterState, trace: tuple, action: Action, reason: str) -> Verdict:
    """The implementation refused ``action``, which the model took (the last of ``trace``)."""
    refused = f"the SUT refuses {action!r}, which the model takes: {reason}"
    text = (f"SUT differs from model after step {len(trace)}: {refused}\n\nmodel:\n" + describe(state)
            + "\n\nlast steps:\n" + trace_tail(trace))
    return Verdict("divergence", (SUT_DIFFERS,), text, f"the SUT refuses {type(action).__name__}: {reason}",
                   state, trace, differences=(refused,))


def error_verdict(state: ClusterState, trace: tuple, error: BaseException, where: str = "") -> Verdict:
    """An exception in the model, the implementation (``where``: " from the SUT")
    or the harness, after ``trace``."""
    message = f"{type(error).__name__}{where}: {error}"
    text = (f"harness error after step {len(trace)}: {message}\n\nmodel:\n" + describe(state)
            + "\n\nlast steps:\n" + trace_tail(trace))
    return Verdict("harness_error", (HARNESS_ERROR,), text, message, state, trace)
