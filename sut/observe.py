"""The observable projection: the SUT's mutable objects as a ``model.Observation``.

Read from the SUT's own objects only (the controller's registrations and
partition, each broker's lifecycle, metadata image and replica — its log with
HWM and recovery point, partition state and remote replica states — and the
network); nothing here knows the model's ghost history. A partition
registration (immutable in the SUT) memoizes its value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from model import (BrokerObservation, BrokerRegistration, FollowerState, Observation, PartitionMetadata,
                   ReplicaObservation, Role)

from .metadata import PartitionRegistration
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
            adding=reg.adding, removing=reg.removing, leader_recovery_state=reg.leader_recovery_state)
    return reg._abstract


def replica(p: Optional[Partition]) -> Optional[ReplicaObservation]:
    if p is None:
        return None
    log = p.log
    role = _ROLE[p.role]
    common = dict(role=role, leader=p.leader_id, leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch,
                  log=log.records(), hwm=log.high_watermark, flushed=log.recovery_point)
    if role != Role.LEADER:
        return ReplicaObservation(**common)
    state = p.partition_state
    followers = tuple(
        (b, FollowerState(r.log_end_offset, r.broker_epoch, r.last_fetch_leader_epoch, r.caught_up,
                          r.last_fetch_leader_leo, r.last_fetch_ms, r.last_caught_up_ms))
        for b, r in sorted(p.remote_replicas.items()) if not r.is_empty)
    maximal = state.isr if state.proposed_isr is None else state.isr | state.proposed_isr
    return ReplicaObservation(**common, leso=p.leader_epoch_start_offset, isr=state.isr,
                              pending_isr=state.proposed_isr, maximal_isr=maximal,
                              followers=followers, min_isr=p.min_isr)


def observation(c: "Cluster") -> Observation:
    ctrl = c.controller
    regs = ctrl.cluster.registrations
    order = c.config.brokers
    return Observation(
        registrations=tuple(BrokerRegistration(b, regs[b].epoch, regs[b].fenced, regs[b].in_controlled_shutdown,
                                               regs[b].session, regs[b].controlled_shutdown_offset) for b in order),
        partition=registration(ctrl.replication.partition),  # type: ignore[arg-type]
        metadata_end_offset=len(ctrl.metadata_log),
        brokers=tuple(
            BrokerObservation(id=b, status=s.lifecycle.state, broker_epoch=s.lifecycle.broker_epoch,
                              metadata_offset=s.image.offset, image=registration(s.image.partition),
                              replica=replica(s.replica_manager.partition))
            for b, s in ((b, c.brokers[b]) for b in order)),
        messages=tuple(c.network.in_flight.values()), now_ms=c.time.milliseconds(),
        min_isr=ctrl.replication.min_isr, unclean_leader_election=ctrl.replication.unclean_leader_election_enable,
        elr_enabled=ctrl.replication.elr_enabled)
