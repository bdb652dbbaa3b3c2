"""The two ways a run fails, each with a report a Kafka engineer reads."""

from __future__ import annotations

from model import Action, ClusterState
from properties import Violation

from .report import describe, diff


def _trace_tail(trace: tuple[Action, ...], n: int = 12) -> str:
    start = max(0, len(trace) - n)
    return "\n".join(f"  {i + 1:3}. {a!r}" for i, a in enumerate(trace[start:], start))


class PropertyViolated(AssertionError):
    """A protocol property failed on the model state."""

    kind = "property"

    def __init__(self, violations: tuple[Violation, ...], state: ClusterState, trace: tuple[Action, ...]) -> None:
        self.violations, self.state, self.trace = violations, state, trace
        lines = [f"{v}" for v in violations]
        super().__init__(
            "property violated after step " + str(len(trace)) + ":\n  " + "\n  ".join(lines)
            + "\n\n" + describe(state) + "\n\nlast steps:\n" + _trace_tail(trace))

    @property
    def property_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.property for v in self.violations))


class SutDiverged(AssertionError):
    """The SUT's snapshot differs from the model state after the same actions."""

    kind = "divergence"

    def __init__(self, model_state: ClusterState, sut_state: ClusterState, trace: tuple[Action, ...],
                 enablement: tuple[str, ...] = ()) -> None:
        self.model_state, self.sut_state, self.trace = model_state, sut_state, trace
        self.differences = list(enablement) or diff(model_state, sut_state)
        last = f" ({trace[-1]!r})" if trace else ""
        super().__init__(
            f"SUT differs from model after step {len(trace)}{last}:\n  "
            + "\n  ".join(self.differences) + "\n\nmodel:\n" + describe(model_state)
            + "\n\nlast steps:\n" + _trace_tail(trace))
