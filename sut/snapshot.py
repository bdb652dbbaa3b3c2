"""The abstraction function: the SUT's mutable objects as a ``model.ClusterState``.

Complete by design: every field of the model state is read from the SUT's own
objects (registrations, metadata log and images, logs with HWM and recovery
point, partition state, remote replica states, network, client history), so
any difference in behaviour is a difference in the snapshot. Immutable SUT
values (metadata records, registrations) memoize their abstraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from model import FenceBrokerRecord as FenceBrokerRecordValue
from model import PartitionChangeRecord as PartitionChangeRecordValue
from model import PartitionRecord as PartitionRecordValue
from model import RegisterBrokerRecord as RegisterBrokerRecordValue
from model import UnfenceBrokerRecord as UnfenceBrokerRecordValue
from model import (Broker, BrokerRegistration, ClusterState, ControllerState, FollowerState,
                   History, Network, PartitionMetadata, Replica, Role)

from .metadata import (FenceBrokerRecord, PartitionChangeRecord, PartitionRecord, PartitionRegistration,
                       RegisterBrokerRecord, UnfenceBrokerRecord)
from .partition import Partition, ReplicaRole

if TYPE_CHECKING:
    from .cluster import Cluster

_ROLE = {ReplicaRole.LEADER: Role.LEADER, ReplicaRole.FOLLOWER: Role.FOLLOWER, ReplicaRole.OFFLINE: Role.NONE}


def registration(reg: Optional[PartitionRegistration]) -> Optional[PartitionMetadata]:
    if reg is None:
        return None
    if reg._abstract is None:
        reg._abstract = PartitionMetadata(
            replicas=reg.replicas, isr=reg.isr, leader=reg.leader, leader_epoch=reg.leader_epoch,
            partition_epoch=reg.partition_epoch, elr=reg.elr, last_known_elr=reg.last_known_elr,
            adding=reg.adding, removing=reg.removing)
    return reg._abstract


def record(rec: object) -> object:
    cached = rec._abstract  # type: ignore[attr-defined]
    if cached is not None:
        return cached
    if isinstance(rec, RegisterBrokerRecord):
        out: object = RegisterBrokerRecordValue(rec.broker_id, rec.broker_epoch, rec.clean)
    elif isinstance(rec, FenceBrokerRecord):
        out = FenceBrokerRecordValue(rec.broker_id)
    elif isinstance(rec, UnfenceBrokerRecord):
        out = UnfenceBrokerRecordValue(rec.broker_id)
    elif isinstance(rec, PartitionRecord):
        out = PartitionRecordValue(registration(rec.registration))
    elif isinstance(rec, PartitionChangeRecord):
        out = PartitionChangeRecordValue(leader=rec.leader, isr=rec.isr, elr=rec.elr,
                                          last_known_elr=rec.last_known_elr, replicas=rec.replicas,
                                          adding=rec.adding, removing=rec.removing)
    else:
        raise TypeError(f"unknown metadata record {rec!r}")
    rec._abstract = out  # type: ignore[attr-defined]
    return out


def replica(p: Optional[Partition]) -> Optional[Replica]:
    if p is None:
        return None
    log = p.log
    state = p.partition_state
    leading = p.role is ReplicaRole.LEADER
    followers: tuple = ()
    if leading:
        followers = tuple(
            (b, FollowerState(r.log_end_offset, r.broker_epoch, r.last_fetch_leader_epoch, r.caught_up,
                              r.last_fetch_leader_leo))
            for b, r in sorted(p.remote_replicas.items()) if not r.is_empty)
    return Replica(
        log=log.records(), flushed=log.recovery_point, hwm=log.high_watermark, role=_ROLE[p.role],
        leader=p.leader_id,
        leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch,
        leso=p.leader_epoch_start_offset, isr=state.isr, pending_isr=state.proposed_isr,
        pending_request=p.in_flight_request, followers=followers)


def cluster_state(c: "Cluster") -> ClusterState:
    ctrl = c.controller
    regs = ctrl.cluster.registrations
    brokers_order = c.config.brokers
    log_cache = c._abstract_metadata_log
    mlog = ctrl.metadata_log
    if len(log_cache) != len(mlog):
        log_cache.extend(record(r) for r in mlog[len(log_cache):])
    controller = ControllerState(
        registrations=tuple(BrokerRegistration(b, regs[b].epoch, regs[b].fenced) for b in brokers_order),
        partition=registration(ctrl.replication.partition),  # type: ignore[arg-type]
        metadata_log=tuple(log_cache))
    brokers = tuple(
        Broker(id=b, status=s.lifecycle.state, broker_epoch=s.lifecycle.broker_epoch,
               clean_shutdown_epoch=s.clean_shutdown_marker, metadata_offset=s.image.offset,
               image=registration(s.image.partition), replica=replica(s.replica_manager.partition))
        for b, s in ((b, c.brokers[b]) for b in brokers_order))
    net = c.network
    h = c.history
    history = History(
        committed=tuple(h.committed), acked=tuple(h.acked), nacked=tuple(h.nacked), pending=tuple(h.pending),
        consumed=tuple(h.consumed), list_offsets=tuple(h.list_offsets), lossy_shutdowns=h.lossy_shutdowns,
        unclean_elections=tuple(h.unclean_elections), unclean=frozenset(h.unclean), next_value=h.next_value)
    return ClusterState(config=c.config, controller=controller, brokers=brokers,
                        network=Network(tuple(net.in_flight.values()), net.next_id), history=history)
