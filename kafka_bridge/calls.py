"""The call log: every request the bridge makes of Kafka's controller managers while
an implementation "kafka" runs, with the Kafka request it built, what Kafka answered
or threw, and the offsets at which the records it returned were replayed; and every
call that changes a broker's replica (``partition.KafkaPartition``: Kafka's
``Partition`` and ``UnifiedLog``), with its arguments and what it threw.

A reproducer (``reproducers``) is this log written out as a JUnit test: the same
requests to the same managers, the same replays, nothing of replicheck's on the
class path. Only what changes the controller's state is logged: the enablement
probes' questions (would Kafka accept a cancel now?) generate records that are
never replayed, and are left out.

``recording(log)`` hands ``log`` to the next ``KafkaQuorumController`` built (its
copies, a standby's catch-up, record nothing) and to every ``KafkaPartition`` built
within it. Kafka's objects in the log live in the JVM: render the log (``render``)
in the process that recorded it.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Iterator, Optional

import attrs


@attrs.define
class Call:
    """One request to Kafka's controller (``broker`` None): the shim's method
    (``ReplicheckControllerShim``) and its arguments, the Kafka request it built
    (None: it builds none), and either the ``ControllerResult`` Kafka returned or the
    Java exception it threw; ``offsets``: the metadata-log offset each returned
    record was replayed at, in order (empty: none replayed). Or one call on
    ``broker``'s replica: the ``KafkaPartition`` method and its Python arguments,
    and the Java exception Kafka threw (None: none)."""

    method: str
    args: tuple
    request: Any = None
    result: Any = None
    thrown: Any = None
    offsets: list[int] = attrs.Factory(list)
    broker: Optional[int] = None


@attrs.define
class Step:
    """The calls one replicheck step made (``label`` None: the cluster's start)."""

    label: Optional[str]
    calls: list[Call] = attrs.Factory(list)


@attrs.define
class CallLog:
    """The calls of one run, step by step. ``step(label)`` opens the next step;
    the controller adds each call (``request``) and each replay (``replayed``)."""

    steps: list[Step] = attrs.Factory(lambda: [Step(None)])
    claimed: bool = False

    def step(self, label: str) -> None:
        self.steps.append(Step(label))

    def request(self, call: Call) -> None:
        self.steps[-1].calls.append(call)

    def replayed(self, offset: int) -> None:
        """The last controller request's next record was replayed at ``offset``."""
        next(c for c in reversed(self.steps[-1].calls) if c.broker is None).offsets.append(offset)

    @property
    def calls(self) -> list[Call]:
        return [c for s in self.steps for c in s.calls]


_RECORDING: ContextVar[Optional[CallLog]] = ContextVar("replicheck_kafka_call_log", default=None)


@contextlib.contextmanager
def recording(log: CallLog) -> Iterator[CallLog]:
    """Within it, the first ``KafkaQuorumController`` built, and every ``KafkaPartition``,
    log their calls in ``log``."""
    token = _RECORDING.set(log)
    try:
        yield log
    finally:
        _RECORDING.reset(token)


def active() -> Optional[CallLog]:
    """The log of the recording under way (None: not recording)."""
    return _RECORDING.get()


def claim() -> Optional[CallLog]:
    """The log a new controller records into, once per log (None: not recording)."""
    log = _RECORDING.get()
    if log is None or log.claimed:
        return None
    log.claimed = True
    return log
