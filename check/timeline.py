"""The timeline of a replayed trace: what each step visibly did.

One ``Moment`` per applied step: the message the action took off the network
(delivered or dropped), the messages it sent (id, type, endpoints, error code),
its outcome (``model.Outcome``: produce appended / acknowledged / failed,
records consumed, the ListOffsets answer) and the partition and brokers as
observed after it. Replay records it (``replay(..., timeline=True)``) from the
implementation under test when one is compared, from the model otherwise; the
trace codec writes it to the corpus (``timeline``, schema version 3) and the
Spark report's space-time diagram draws it, so nothing there re-derives message
ids or record movements from action names.
"""

from __future__ import annotations

from typing import Any, Optional

import attrs

from model import Observation, Outcome, initial_state, kind_of, observe, outcome
from model.healing import apply

#: The endpoint value meaning "the controller" (messages carry broker ids otherwise).
CONTROLLER = None


@attrs.frozen
class SentMessage:
    """One message a step sent: its id (the network's numbering), its type
    (``FetchRequest``, ``FetchResponse``, ``AlterPartitionRequest``,
    ``AlterPartitionResponse``), source and destination broker (None: the
    controller) and error code (None: no error, or a request)."""

    id: int
    type: str
    src: Optional[int]
    dst: Optional[int]
    error: Optional[str] = None


@attrs.frozen
class BrokerMoment:
    """One broker after a step: status (``model.BrokerStatus`` name), whether the
    controller has it fenced, and its replica's role (None: no replica), leader
    epoch, LEO, HWM and flushed offset (offsets exclusive ends)."""

    broker: int
    status: str
    fenced: bool
    role: Optional[str] = None
    leader_epoch: Optional[int] = None
    leo: Optional[int] = None
    hwm: Optional[int] = None
    flushed: Optional[int] = None


@attrs.frozen
class Moment:
    """One applied step: ``idx`` (0-based), ``received`` (the id of the message it
    delivered or dropped, None: none), ``sent``, ``outcome`` (without its
    messages, which ``sent`` describes), the partition registration's leader
    (-1: none), leader epoch, partition epoch, ISR and ELR, and ``brokers`` in
    ``Config.brokers`` order."""

    idx: int
    received: Optional[int]
    sent: tuple[SentMessage, ...]
    outcome: Outcome
    leader: int
    leader_epoch: int
    partition_epoch: int
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    brokers: tuple[BrokerMoment, ...]


def sent_message(message: Any) -> SentMessage:
    """The ``SentMessage`` of a model message (``model.FetchRequest``, …): a message
    without ``src`` comes from the controller, one without ``dst`` goes to it."""
    return SentMessage(message.id, type(message).__name__, getattr(message, "src", CONTROLLER),
                       getattr(message, "dst", CONTROLLER), getattr(message, "error", None))


def moment(idx: int, action: Any, result: Outcome, observed: Observation) -> Moment:
    """The ``Moment`` of step ``idx``: ``action`` gave ``result`` and left ``observed``."""
    received = getattr(action, "msg", None) if kind_of(action).receives else None
    regs = {r.broker: r.fenced for r in observed.registrations}
    brokers = []
    for b in observed.brokers:
        r = b.replica
        brokers.append(BrokerMoment(b.id, b.status.name, regs.get(b.id, False)) if r is None else
                       BrokerMoment(b.id, b.status.name, regs.get(b.id, False), r.role.name, r.leader_epoch,
                                    r.leo, r.hwm, r.flushed))
    p = observed.partition
    return Moment(idx, received, tuple(sent_message(m) for m in result.sent), attrs.evolve(result, sent=()),
                  p.leader, p.leader_epoch, p.partition_epoch, tuple(sorted(p.isr)), tuple(sorted(p.elr)),
                  tuple(brokers))


def model_moment(idx: int, action: Any, before: Any, after: Any) -> Moment:
    """The model's ``Moment`` of step ``idx``: ``action`` taken in state ``before``
    reached ``after``."""
    return moment(idx, action, outcome(before, after, action), observe(after))


def model_timeline(config: Any, trace: Any) -> tuple[Moment, ...]:
    """The model's ``Moment`` of every step of ``trace`` from ``initial_state(config)``
    (a healing phase as one step), properties unchecked (a story that goes on past its first violation, say).
    Raises ``model.ActionNotEnabled`` at a step the model does not enable."""
    state, out = initial_state(config), []
    for i, action in enumerate(trace):
        after = apply(state, action)
        out.append(model_moment(i, action, state, after))
        state = after
    return tuple(out)
