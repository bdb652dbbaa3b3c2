"""Small pure updaters: return a new ClusterState with one part replaced."""

from __future__ import annotations

from typing import Callable, Optional

import attrs

from .profile import Rule
from .state import (Broker, BrokerRegistration, ClusterState, FollowerState, History, Message,
                    MetadataRecord, PartitionMetadata, Replica, merge)


def set_broker(state: ClusterState, broker: Broker) -> ClusterState:
    i = state.config.position(broker.id)
    brokers = state.brokers[:i] + (broker,) + state.brokers[i + 1:]
    return attrs.evolve(state, brokers=brokers)


def set_replica(state: ClusterState, broker_id: int, replica: Optional[Replica]) -> ClusterState:
    return set_broker(state, attrs.evolve(state.broker(broker_id), replica=replica))


def set_registration(state: ClusterState, reg: BrokerRegistration) -> ClusterState:
    i = state.config.position(reg.broker)
    regs = state.controller.registrations
    ctrl = attrs.evolve(state.controller, registrations=regs[:i] + (reg,) + regs[i + 1:])
    return attrs.evolve(state, controller=ctrl)


def append_metadata(state: ClusterState, record: MetadataRecord,
                    partition: Optional[PartitionMetadata] = None, index: bool = True) -> ClusterState:
    """Commit one record to the metadata log (and the controller's partition).
    Under Rule.CLEARED_ELR_STAYS_INDEXED a partition change updates Kafka's
    broker-to-ELR index as ``BrokersToElrs.update`` does (one entry added per
    broker joining the ELR, one removed per broker leaving it), unless ``index``
    is False (the ClearElrRecord's replay, which skips it)."""
    ctrl = state.controller
    changes: dict = {"metadata_log": ctrl.metadata_log + (record,)}
    indexed = index and state.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED)
    if partition is not None:
        changes["partition"] = partition
        if indexed:
            changes["elr_index"] = _indexed(ctrl.elr_index, ctrl.partition.elr, partition.elr)
    if ctrl.replayed is not None:
        # a controller that loaded a snapshot: the log's replay goes on beside it
        before, elr_index = ctrl.replayed
        after = merge(before, record)
        assert after is not None
        changes["replayed"] = (after, _indexed(elr_index, before.elr, after.elr) if indexed else elr_index)
    return attrs.evolve(state, controller=attrs.evolve(ctrl, **changes))


def _indexed(index: tuple, before: frozenset[int], after: frozenset[int]) -> tuple:
    counts = dict(index)
    for b in after - before:
        counts[b] = counts.get(b, 0) + 1
    for b in before - after:
        counts[b] = counts.get(b, 0) - 1
    return tuple(sorted((b, n) for b, n in counts.items() if n > 0))


def set_history(state: ClusterState, **changes: object) -> ClusterState:
    return attrs.evolve(state, history=attrs.evolve(state.history, **changes))


def send(state: ClusterState, build: Callable[[int], Message]) -> ClusterState:
    """Put a message built from the next message id in flight."""
    net = state.network
    msg = build(net.next_id)
    return attrs.evolve(state, network=attrs.evolve(net, messages=net.messages + (msg,), next_id=net.next_id + 1))


def remove_message(state: ClusterState, msg_id: int) -> ClusterState:
    net = state.network
    return attrs.evolve(state, network=attrs.evolve(net, messages=tuple(m for m in net.messages if m.id != msg_id)))


def set_follower(replica: Replica, broker: int, fs: FollowerState) -> Replica:
    followers = tuple(sorted([(b, f) for b, f in replica.followers if b != broker] + [(broker, fs)]))
    return attrs.evolve(replica, followers=followers)


def nack_pending(history: History, broker: int) -> History:
    """Negatively acknowledge every pending write on ``broker`` (§2.6: NotLeader or
    NotEnoughReplicasAfterAppend)."""
    gone = [w for w in history.pending if w.broker == broker]
    if not gone:
        return history
    return attrs.evolve(history, pending=tuple(w for w in history.pending if w.broker != broker),
                        nacked=history.nacked + tuple(w.value for w in gone))


def nack(state: ClusterState, broker: int) -> ClusterState:
    """``nack_pending`` applied to the state's history."""
    return attrs.evolve(state, history=nack_pending(state.history, broker))
