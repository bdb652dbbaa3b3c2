"""The closed family of actions (the TLA+ ``Next`` relation, one class per action).

Each action is a frozen attrs value whose repr reads as a scenario step, e.g.
``FenceBroker(broker=2)``. ``FAMILIES`` groups them as the harness drives them.
"""

from __future__ import annotations

from typing import Union

import attrs


# broker lifecycle and faults (ch8, §5.1)
@attrs.frozen
class StartBroker:
    """BrokerRegistration of an offline broker whose previous epoch is fenced (§6.5.1)."""
    broker: int


@attrs.frozen
class UnfenceBroker:
    """Heartbeat with wantFence=false (§8.1); may elect an ELR member (§2.8)."""
    broker: int


@attrs.frozen
class FenceBroker:
    """The controller fences a broker (missed heartbeats), with §2.8 election rules."""
    broker: int


@attrs.frozen
class ControlledShutdown:
    """Leadership moved away and fenced, log flushed, marker written (§5.2, §8.3)."""
    broker: int


@attrs.frozen
class UncleanShutdown:
    """Abrupt termination (§5.1.1); ``lossy`` discards the unflushed log suffix."""
    broker: int
    lossy: bool


@attrs.frozen
class Flush:
    """The broker flushes its replica's log to disk."""
    broker: int


# metadata propagation (§2.3.2)
@attrs.frozen
class ReplicateMetadata:
    """The broker applies its next ``count`` metadata records as ONE materialized batch."""
    broker: int
    count: int


# replication (§2.2, ch3)
@attrs.frozen
class SendFetch:
    follower: int


@attrs.frozen
class ReceiveFetchRequest:
    msg: int


@attrs.frozen
class ReceiveFetchResponse:
    msg: int


# ISR changes (§2.9, §6.5)
@attrs.frozen
class ProposeIsrShrink:
    leader: int
    follower: int


@attrs.frozen
class ProposeIsrExpand:
    leader: int
    follower: int


@attrs.frozen
class ReceiveAlterPartition:
    msg: int


@attrs.frozen
class ReceiveAlterPartitionResponse:
    msg: int


# reassignment (ch4)
@attrs.frozen
class Reassign:
    """AlterPartitionReassignments to ``target`` (ordered broker ids)."""
    target: tuple[int, ...] = attrs.field(converter=tuple)


@attrs.frozen
class CancelReassignment:
    pass


# unclean recovery (§5.3) and legacy unclean leader election (ch7)
@attrs.frozen
class UncleanRecovery:
    pass


@attrs.frozen
class UncleanLeaderElection:
    pass


# network faults
@attrs.frozen
class DropMessage:
    msg: int


# clients (§2.5–§2.7, §6.4.2)
@attrs.frozen
class Produce:
    """acks=all produce of ``value`` to a broker whose replica presumes leadership."""
    broker: int
    value: int


@attrs.frozen
class Consume:
    """A consumer reads up to the HWM from the current leader."""
    pass


@attrs.frozen
class ListOffsets:
    """A client asks the current leader for the HWM."""
    pass


Action = Union[
    StartBroker, UnfenceBroker, FenceBroker, ControlledShutdown, UncleanShutdown, Flush,
    ReplicateMetadata, SendFetch, ReceiveFetchRequest, ReceiveFetchResponse,
    ProposeIsrShrink, ProposeIsrExpand, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
    Reassign, CancelReassignment, UncleanRecovery, UncleanLeaderElection, DropMessage,
    Produce, Consume, ListOffsets,
]

FAMILIES: dict[str, tuple[type, ...]] = {
    "lifecycle": (StartBroker, UnfenceBroker, FenceBroker, ControlledShutdown, UncleanShutdown, Flush),
    "metadata": (ReplicateMetadata,),
    "fetch": (SendFetch, ReceiveFetchRequest, ReceiveFetchResponse),
    "isr": (ProposeIsrShrink, ProposeIsrExpand, ReceiveAlterPartition, ReceiveAlterPartitionResponse),
    "reassignment": (Reassign, CancelReassignment),
    "recovery": (UncleanRecovery, UncleanLeaderElection),
    "network": (DropMessage,),
    "client": (Produce, Consume, ListOffsets),
}

ACTION_TYPES: tuple[type, ...] = tuple(t for ts in FAMILIES.values() for t in ts)


def family_of(action: object) -> str:
    """The family name of an action; raises ValueError for a non-action."""
    for name, types in FAMILIES.items():
        if isinstance(action, types):
            return name
    raise ValueError(f"not a replicheck action: {action!r}; allowed: {[t.__name__ for t in ACTION_TYPES]}")
