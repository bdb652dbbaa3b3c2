"""The initial cluster: every broker registered, unfenced and RUNNING with all
metadata applied; the partition created with the first assigned replica as
leader, ISR = all replicas, leader epoch 1, partition epoch 1 (the numbering the
reference chapters use, §3.1, §4.4), and empty logs."""

from __future__ import annotations

from .config import Config
from .profile import Rule
from .state import (Broker, BrokerRegistration, BrokerStatus, ClusterState, ControllerState,
                    FollowerState, History, Network, PartitionMetadata, PartitionRecord,
                    RegisterBrokerRecord, Replica, Role, UnfenceBrokerRecord)

INITIAL_LEADER_EPOCH = 1
INITIAL_PARTITION_EPOCH = 1


def initial_state(config: Config) -> ClusterState:
    """The state every run starts from. Broker epochs are the offsets of the
    brokers' registration records (§8.1): 0..n-1 in ``config.brokers`` order."""
    if not isinstance(config, Config):
        raise TypeError(f"initial_state needs a model.Config, got {type(config).__name__}")
    n = len(config.brokers)
    log: list = [RegisterBrokerRecord(b, i, True) for i, b in enumerate(config.brokers)]
    log += [UnfenceBrokerRecord(b) for b in config.brokers]
    leader = config.assignment[0]
    partition = PartitionMetadata(
        replicas=config.assignment, isr=frozenset(config.assignment), leader=leader,
        leader_epoch=INITIAL_LEADER_EPOCH, partition_epoch=INITIAL_PARTITION_EPOCH)
    log.append(PartitionRecord(partition))
    registrations = tuple(BrokerRegistration(b, i, False) for i, b in enumerate(config.brokers))

    def replica_for(b: int) -> Replica | None:
        if b not in config.assignment:
            return None
        if b == leader:
            # A new leader's ISR members count as caught up (Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS),
            # with the clock as of now, 0 ms (Rule.REPLICA_LAG_TIME).
            if config.follows(Rule.REPLICA_LAG_TIME):
                caught = FollowerState(last_caught_up_ms=0)
            else:
                caught = FollowerState(caught_up=True)
            followers = tuple((f, caught) for f in sorted(partition.isr - {leader})) \
                if config.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS) else ()
            return Replica(role=Role.LEADER, leader=leader, leader_epoch=INITIAL_LEADER_EPOCH,
                           partition_epoch=INITIAL_PARTITION_EPOCH, leso=0, isr=partition.isr,
                           followers=followers)
        return Replica(role=Role.FOLLOWER, leader=leader, leader_epoch=INITIAL_LEADER_EPOCH,
                       partition_epoch=INITIAL_PARTITION_EPOCH)

    brokers = tuple(
        Broker(id=b, status=BrokerStatus.RUNNING, broker_epoch=i, clean_shutdown_epoch=None,
               metadata_offset=len(log), image=partition, replica=replica_for(b))
        for i, b in enumerate(config.brokers))
    assert len(brokers) == n
    return ClusterState(config=config,
                        controller=ControllerState(registrations, partition, tuple(log)),
                        brokers=brokers, network=Network(), history=History())
