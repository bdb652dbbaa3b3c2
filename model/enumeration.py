"""``enabled_actions``: every action enabled in a state, in a deterministic order.

Candidates are enumerated and kept when their guard (``model.step``) passes, so
enumeration and the guards can never disagree. The enumeration is a sequence of
segments, each yielding the candidates of a fixed set of action classes: a
caller asking for some classes (one action family, say: the explorer draws a
family first, ``check.machine``) runs only the segments that can yield them, so
neither their guards nor their enumeration cost anything.
"""

from __future__ import annotations

import itertools
from typing import AbstractSet, Callable, Iterator, Optional

from . import clock
from . import replica as rep
from .actions import (Action, AdvanceTime, AlterClusterMinIsr, AlterMinIsr, AlterUncleanLeaderElection, UpdateElrFeature,
                      BeginControlledShutdown, CancelReassignment, Consume, ControlledShutdown, DropMessage,
                      ElectPreferredLeader, FailOverController, FailOverFromSnapshot, FenceBroker, Flush, WriteEpochCheckpoint, ListOffsets, Produce,
                      ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, Reassign, ReceiveAlterPartition,
                      ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                      ResendRegistration, SendFetch, StartBroker, UncleanLeaderElection, UncleanRecovery,
                      UncleanShutdown, UnfenceBroker)
from .profile import Rule
from .state import AlterPartitionRequest, AlterPartitionResponse, ClusterState, FetchRequest, FetchResponse
from .step import ACTIVE, HANDLERS, OFFLINE


def _reassign_targets(state: ClusterState) -> Iterator[tuple[int, ...]]:
    current = state.partition.replicas
    if state.config.follows(Rule.REASSIGNMENT_REPLICA_ORDER):
        for k in range(1, len(current)):  # reorderings: the rotations
            yield current[k:] + current[:k]
    brokers = sorted(state.config.brokers)
    for size in range(state.min_isr, len(brokers) + 1):
        for subset in itertools.combinations(brokers, size):
            chosen = set(subset)
            if chosen == set(current):
                continue
            yield tuple(b for b in current if b in chosen) + tuple(b for b in subset if b not in current)


# A cheap pre-filter on broker status and roles; the guards stay the only authority.

def _lifecycle(state: ClusterState) -> Iterator[Action]:
    for b in state.brokers:
        if b.status in OFFLINE:
            yield StartBroker(b.id)
            yield FenceBroker(b.id)
        else:
            yield UnfenceBroker(b.id)
            yield ResendRegistration(b.id)
            yield FenceBroker(b.id)
            yield BeginControlledShutdown(b.id)
            yield ControlledShutdown(b.id)
            yield UncleanShutdown(b.id, False)
            yield UncleanShutdown(b.id, True)
            yield Flush(b.id)
            yield WriteEpochCheckpoint(b.id)


def _metadata(state: ClusterState) -> Iterator[Action]:
    for b in state.brokers:
        if b.status in ACTIVE:
            for count in range(1, state.pending_metadata(b.id) + 1):
                yield ReplicateMetadata(b.id, count)


def _fetch(state: ClusterState) -> Iterator[Action]:
    for b in state.brokers:
        if b.status in ACTIVE:
            yield SendFetch(b.id)
    for m in state.network.messages:
        if isinstance(m, FetchRequest):
            yield ReceiveFetchRequest(m.id)
        elif isinstance(m, FetchResponse):
            yield ReceiveFetchResponse(m.id)


def _isr_proposals(state: ClusterState, many: bool) -> Iterator[Action]:
    for b in state.config.brokers:
        if not rep.is_leader(state, b):
            continue
        r = state.replica(b)
        image = state.broker(b).image
        in_sync = sorted(r.isr - {b})  # type: ignore[union-attr]
        for f in in_sync:
            yield ProposeIsrShrink(b, f)
        if many and state.config.follows(Rule.SHRINK_ALL_OUT_OF_SYNC):
            for size in range(2, len(in_sync) + 1):
                for followers in itertools.combinations(in_sync, size):
                    yield ProposeIsrShrinkMany(b, followers)
        if image is not None and not state.config.follows(Rule.EXPAND_ISR_ON_FETCH):
            for f in image.replicas:
                if f not in r.isr:  # type: ignore[union-attr]
                    yield ProposeIsrExpand(b, f)


def _isr_rest(state: ClusterState) -> Iterator[Action]:
    if state.config.follows(Rule.REPLICA_LAG_TIME):
        for ms in clock.expiry_delays(state):
            yield AdvanceTime(ms)
    for m in state.network.messages:
        if isinstance(m, AlterPartitionRequest):
            yield ReceiveAlterPartition(m.id)
        elif isinstance(m, AlterPartitionResponse):
            yield ReceiveAlterPartitionResponse(m.id)


def _reassign(state: ClusterState) -> Iterator[Action]:
    if not state.partition.reassigning:
        for t in _reassign_targets(state):
            yield Reassign(t)


def _controller(state: ClusterState) -> Iterator[Action]:
    yield CancelReassignment()
    yield ElectPreferredLeader()
    yield FailOverController()
    yield FailOverFromSnapshot()
    yield UncleanRecovery()
    yield UncleanLeaderElection()


def _configs(state: ClusterState) -> Iterator[Action]:
    for m in range(1, len(state.partition.target_replicas) + 1):
        yield AlterMinIsr(m)
    for m in range(1, len(state.partition.target_replicas) + 1):
        yield AlterClusterMinIsr(m)
    yield AlterUncleanLeaderElection(not state.unclean_leader_election)
    yield UpdateElrFeature(not state.elr_enabled)


def _drops(state: ClusterState) -> Iterator[Action]:
    for m in state.network.messages:
        if isinstance(m, (FetchRequest, FetchResponse)):
            yield DropMessage(m.id)


def _clients(state: ClusterState) -> Iterator[Action]:
    for b in state.config.brokers:
        if rep.is_leader(state, b):
            yield Produce(b, state.history.next_value)
    yield Consume()
    yield ListOffsets()


Segment = Callable[[ClusterState, bool], Iterator[Action]]

#: The enumeration, in order: (the classes a segment yields, the segment; its
#: flag: whether the costly ``ProposeIsrShrinkMany`` candidates are wanted).
_SEGMENTS: tuple[tuple[frozenset, Segment], ...] = (
    (frozenset({StartBroker, FenceBroker, UnfenceBroker, ResendRegistration, BeginControlledShutdown,
                ControlledShutdown, UncleanShutdown, Flush, WriteEpochCheckpoint}), lambda s, many: _lifecycle(s)),
    (frozenset({ReplicateMetadata}), lambda s, many: _metadata(s)),
    (frozenset({SendFetch, ReceiveFetchRequest, ReceiveFetchResponse}), lambda s, many: _fetch(s)),
    (frozenset({ProposeIsrShrink, ProposeIsrShrinkMany, ProposeIsrExpand}), _isr_proposals),
    (frozenset({AdvanceTime, ReceiveAlterPartition, ReceiveAlterPartitionResponse}), lambda s, many: _isr_rest(s)),
    (frozenset({Reassign}), lambda s, many: _reassign(s)),
    (frozenset({CancelReassignment, ElectPreferredLeader, FailOverController, FailOverFromSnapshot, UncleanRecovery,
                UncleanLeaderElection}), lambda s, many: _controller(s)),
    (frozenset({AlterMinIsr, AlterClusterMinIsr, AlterUncleanLeaderElection, UpdateElrFeature}),
     lambda s, many: _configs(s)),
    (frozenset({DropMessage}), lambda s, many: _drops(s)),
    (frozenset({Produce, Consume, ListOffsets}), lambda s, many: _clients(s)),
)


def enabled_actions(state: ClusterState, classes: Optional[AbstractSet[type]] = None) -> tuple[Action, ...]:
    """Every action enabled in ``state``, in a deterministic order (lifecycle,
    metadata, fetch, ISR, reassignment, the controller's elections and
    recoveries, topic configs, network, clients).

    ``classes``: only actions of these classes, in the same order — for a caller
    that would drop the others (one family, a swarm, a fault spacing): the
    segments that cannot yield them are not run, their guards (most of the cost)
    never asked."""
    out: list[Action] = []
    many = classes is None or ProposeIsrShrinkMany in classes
    for yields, segment in _SEGMENTS:
        if classes is not None and yields.isdisjoint(classes):
            continue
        out += (a for a in segment(state, many)
                if (classes is None or type(a) in classes) and HANDLERS[type(a)][0](state, a) is None)
    return tuple(out)
