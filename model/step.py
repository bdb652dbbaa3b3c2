"""``step`` and ``why_not_enabled``: each action has a guard (why it is not
enabled, or None) and an effect. ``model.enumeration.enabled_actions``
enumerates candidates and keeps those whose guard passes, so the two can never
disagree."""

from __future__ import annotations

from typing import Callable, Optional

import attrs

from . import controller as ctl
from . import epoch_checkpoint as ec
from . import replica as rep
from .actions import (Action, AdvanceTime, AlterClusterMinIsr, AlterMinIsr, AlterUncleanLeaderElection, UpdateElrFeature,
                      CancelReassignment,
                      ElectPreferredLeader,
                      BeginControlledShutdown, Consume, ControlledShutdown, DropMessage,
                      FailOverController, FailOverFromSnapshot, FenceBroker, Flush, WriteEpochCheckpoint, ResendRegistration, ListOffsets, ProposeIsrExpand, ProposeIsrShrink,
                      ProposeIsrShrinkMany, Produce,
                      Reassign, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                      ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch,
                      StartBroker, UncleanLeaderElection, UncleanRecovery, UncleanShutdown,
                      UnfenceBroker, Heal)
from .config import Variant
from .errors import ActionNotEnabled, ControllerFault
from .profile import Rule
from .state import (MIN_INSYNC_REPLICAS, NO_LEADER, AlterPartitionRequest, AlterPartitionResponse, BrokerStatus,
                    ClusterState, ConfigRecord, FetchRequest, FetchResponse, ListOffsetsAnswer, PendingWrite,
                    Record, Role, merge)
from .observation import list_offsets_result
from .update import remove_message, send, set_broker, set_history, set_replica

ACTIVE = (BrokerStatus.STARTING, BrokerStatus.RUNNING)
OFFLINE = (BrokerStatus.OFFLINE_CLEAN, BrokerStatus.OFFLINE_DIRTY)

Guard = Callable[[ClusterState, Action], Optional[str]]
Effect = Callable[[ClusterState, Action], ClusterState]


def _unknown_broker(state: ClusterState, broker: object) -> Optional[str]:
    if broker not in state.config.brokers:
        return f"unknown broker {broker!r}; brokers are {state.config.brokers}"
    return None


# ------------------------------------------------------------ broker lifecycle

def _g_start(s: ClusterState, a: StartBroker) -> Optional[str]:
    if (e := _unknown_broker(s, a.broker)):
        return e
    b = s.broker(a.broker)
    if b.status not in OFFLINE:
        return f"broker {a.broker} is {b.status.value}, not offline"
    if not s.registration(a.broker).fenced:
        return f"broker {a.broker}'s previous broker epoch is not fenced yet (§6.5.1)"
    return None


def _e_start(s: ClusterState, a: StartBroker) -> ClusterState:
    if s.registration(a.broker).session and s.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES):
        # a new incarnation's registration waits for the previous session to expire (hasValidSession)
        s = ctl.expire_session(s, a.broker)
    b = s.broker(a.broker)
    clean = b.clean_shutdown_epoch is not None and b.clean_shutdown_epoch == s.registration(a.broker).broker_epoch
    try:
        s = ctl.register_broker(s, a.broker, clean)
    except ControllerFault as fault:   # not registered: the broker is as it was (the expiry before stays)
        return ctl.renounce(s, fault)
    if not clean:
        s = set_history(s, unclean=s.history.unclean | {a.broker})
    return set_broker(s, attrs.evolve(b, status=BrokerStatus.STARTING, clean_shutdown_epoch=None,
                                      broker_epoch=s.registration(a.broker).broker_epoch))


def _g_unfence(s: ClusterState, a: UnfenceBroker) -> Optional[str]:
    if (e := _unknown_broker(s, a.broker)):
        return e
    b, reg = s.broker(a.broker), s.registration(a.broker)
    if b.status not in ACTIVE:
        return f"broker {a.broker} is {b.status.value}"
    if not reg.fenced:
        return f"broker {a.broker} is not fenced"
    if b.shutting_down:
        return f"broker {a.broker} is shutting down: its heartbeats ask for shutdown, not unfencing (§8.3)"
    at = ctl.registration_offset(s, a.broker) if s.config.follows(Rule.METADATA_RECORD_ORDER) else reg.broker_epoch
    if at is None or b.metadata_offset <= at:
        return (f"broker {a.broker} has not replicated its own registration record "
                f"(metadata offset {b.metadata_offset}, registration at {at}, §8.1)")
    if s.config.has(Variant.REREGISTERED_BROKER_STAYS_FENCED) and ctl.registrations(s, a.broker) > 1:
        return f"broker {a.broker} registered again: its heartbeats are ignored (Variant.REREGISTERED_BROKER_STAYS_FENCED)"
    return None


def _e_unfence(s: ClusterState, a: UnfenceBroker) -> ClusterState:
    s = ctl.unfence_broker(s, a.broker)
    b = s.broker(a.broker)
    if b.status == BrokerStatus.STARTING:
        s = set_broker(s, attrs.evolve(b, status=BrokerStatus.RUNNING))
        s = rep.reconcile(s, a.broker)
    return s


def _g_fence(s: ClusterState, a: FenceBroker) -> Optional[str]:
    if (e := _unknown_broker(s, a.broker)):
        return e
    reg = s.registration(a.broker)
    if reg.fenced and not (reg.session and s.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES)):
        return f"broker {a.broker} is already fenced"
    return None


def _e_fence(s: ClusterState, a: FenceBroker) -> ClusterState:
    return ctl.expire_session(s, a.broker)


def _g_resend_registration(s: ClusterState, a: ResendRegistration) -> Optional[str]:
    if not s.config.follows(Rule.REGISTRATION_AMENDED):
        return "the chapters' broker registers once per broker epoch (Rule.REGISTRATION_AMENDED)"
    return _g_active(s, a.broker)


def _g_fail_over(s: ClusterState, a: FailOverController) -> Optional[str]:
    if not s.config.follows(Rule.CONTROLLER_FAILOVER):
        return "the chapters' controller never fails over (Rule.CONTROLLER_FAILOVER)"
    return None


def _g_fail_over_from_snapshot(s: ClusterState, a: FailOverFromSnapshot) -> Optional[str]:
    if not s.config.follows(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED):
        return ("a controller loads no snapshot that differs from the log it replaces "
                "(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED)")
    return None


def _g_active(s: ClusterState, broker: int) -> Optional[str]:
    if (e := _unknown_broker(s, broker)):
        return e
    status = s.broker(broker).status
    return None if status in ACTIVE else f"broker {broker} is {status.value}"


def _e_controlled_shutdown(s: ClusterState, a: ControlledShutdown) -> ClusterState:
    # §8.3 to its end, as Kafka's heartbeats with wantShutDown go: the first puts a leader
    # in controlled shutdown (or fences a broker leading nothing), the next fences it.
    s = ctl.renew_session(s, a.broker)
    try:   # each heartbeat's event on its own: a fault keeps the events before it, and the broker running
        if s.registration(a.broker).fenced and s.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES):
            # a fenced broker's heartbeat with wantShutDown: SHUTDOWN_NOW runs its fencing's change again
            s = ctl.refence(s, a.broker)
        if not s.registration(a.broker).fenced:
            s = ctl.begin_controlled_shutdown(s, a.broker)
        if not s.registration(a.broker).fenced:
            s = ctl.fence_broker(s, a.broker)
    except ControllerFault as fault:
        return ctl.renounce(s, fault)
    memory = ec.memory_cache(s.config, s.replica(a.broker))
    s = rep.deactivate(s, a.broker)
    b = s.broker(a.broker)
    r = b.replica if b.replica is None else attrs.evolve(b.replica, flushed=b.replica.leo)
    if memory is not None and r is not None:
        # the scheduler's shutdown runs a scheduled checkpoint write; the load reads the cache back
        r = ec.loaded(r, memory, lost_write=False)
    return set_broker(s, attrs.evolve(b, status=BrokerStatus.OFFLINE_CLEAN, replica=r,
                                      clean_shutdown_epoch=b.broker_epoch, shutting_down=False))


def _g_controlled_shutdown(s: ClusterState, a: ControlledShutdown) -> Optional[str]:
    if (e := _g_active(s, a.broker)):
        return e
    if not s.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS):
        return None
    wait = ctl.next_heartbeat_shutdown_wait(s, a.broker)
    if wait is None:
        return None
    other, reported, awaited = wait
    return (f"broker {a.broker}'s controlled shutdown waits for broker {other} to report metadata offset "
            f"{awaited} (it reported {reported}; Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)")


def _g_begin_controlled_shutdown(s: ClusterState, a: BeginControlledShutdown) -> Optional[str]:
    if (e := _unknown_broker(s, a.broker)):
        return e
    b = s.broker(a.broker)
    if b.status != BrokerStatus.RUNNING:
        return f"broker {a.broker} is {b.status.value}, not running"
    if b.shutting_down:
        return f"broker {a.broker} is already shutting down"
    if s.registration(a.broker).fenced:
        return f"broker {a.broker} is fenced: it would be let go at once (ControlledShutdown)"
    return None


def _e_begin_controlled_shutdown(s: ClusterState, a: BeginControlledShutdown) -> ClusterState:
    s = ctl.begin_controlled_shutdown(s, a.broker)
    return set_broker(s, attrs.evolve(s.broker(a.broker), shutting_down=True))


def _e_unclean_shutdown(s: ClusterState, a: UncleanShutdown) -> ClusterState:
    memory = ec.memory_cache(s.config, s.replica(a.broker))
    s = rep.deactivate(s, a.broker)
    b = s.broker(a.broker)
    r = b.replica
    if a.lossy:
        if r is not None:
            r = attrs.evolve(r, log=r.log[:r.flushed], hwm=min(r.hwm, r.flushed))
        s = set_history(s, lossy_shutdowns=s.history.lossy_shutdowns + 1)
    if memory is not None and r is not None:
        # a scheduled checkpoint write dies with the process; the load reads back the file
        r = ec.loaded(r, memory, lost_write=True)
    return set_broker(s, attrs.evolve(b, status=BrokerStatus.OFFLINE_DIRTY, replica=r, clean_shutdown_epoch=None,
                                      shutting_down=False))


def _g_unclean_shutdown(s: ClusterState, a: UncleanShutdown) -> Optional[str]:
    if not isinstance(a.lossy, bool):
        return f"lossy must be True or False, got {a.lossy!r}"
    return _g_active(s, a.broker)


def _g_flush(s: ClusterState, a: Flush) -> Optional[str]:
    if (e := _g_active(s, a.broker)):
        return e
    r = s.replica(a.broker)
    if r is None or r.flushed >= r.leo:
        return f"broker {a.broker} has nothing unflushed"
    return None


def _e_flush(s: ClusterState, a: Flush) -> ClusterState:
    r = s.replica(a.broker)
    assert r is not None
    return set_replica(s, a.broker, attrs.evolve(r, flushed=r.leo))


def _g_write_epoch_checkpoint(s: ClusterState, a: WriteEpochCheckpoint) -> Optional[str]:
    if (e := _g_active(s, a.broker)):
        return e
    if not s.config.follows(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER):
        return "the chapters' epoch cache is written with every change (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER)"
    r = s.replica(a.broker)
    if r is None or r.epoch_checkpoint is None:
        return f"broker {a.broker} has no epoch checkpoint write scheduled"
    return None


# -------------------------------------------------------------------- metadata

def _g_replicate(s: ClusterState, a: ReplicateMetadata) -> Optional[str]:
    if (e := _g_active(s, a.broker)):
        return e
    pending = s.pending_metadata(a.broker)
    if not isinstance(a.count, int) or not 1 <= a.count <= pending:
        return f"count must be in 1..{pending} (records broker {a.broker} has not applied), got {a.count!r}"
    return None


def _e_replicate(s: ClusterState, a: ReplicateMetadata) -> ClusterState:
    b = s.broker(a.broker)
    image = b.image
    end = b.metadata_offset + a.count
    min_isr = b.min_isr
    for rec in s.controller.metadata_log[b.metadata_offset:end]:
        image = merge(image, rec)
        if isinstance(rec, ConfigRecord) and rec.name == MIN_INSYNC_REPLICAS and not rec.cluster_default:
            min_isr = rec.value  # type: ignore[assignment]
    # The batch is one image, its MinISR included; under Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES
    # the replica acts on the batch's partition changes before the MinISR reaches its log.
    config_last = s.config.follows(Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES)
    s = set_broker(s, attrs.evolve(b, metadata_offset=end, image=image,
                                   min_isr=b.min_isr if config_last else min_isr))
    if b.status == BrokerStatus.RUNNING:
        added = frozenset() if image is None else frozenset(image.replicas) - frozenset(
            () if b.image is None else b.image.replicas)
        s = rep.reconcile(s, a.broker, changed=image != b.image, added=added)
    if not config_last or min_isr == b.min_isr:
        return s
    return set_broker(s, attrs.evolve(s.broker(a.broker), min_isr=min_isr))


# ------------------------------------------------------------------------ fetch

def _fetch_in_flight(s: ClusterState, follower: int) -> bool:
    b = s.broker(follower)
    r = b.replica
    assert r is not None
    for m in s.network.messages:
        if isinstance(m, FetchRequest) and m.src == follower and m.broker_epoch == b.broker_epoch \
                and m.leader_epoch == r.leader_epoch:
            return True
        if isinstance(m, FetchResponse) and m.dst == follower and m.broker_epoch == b.broker_epoch \
                and m.request_leader_epoch == r.leader_epoch:
            return True
    return False


def _g_send_fetch(s: ClusterState, a: SendFetch) -> Optional[str]:
    if (e := _unknown_broker(s, a.follower)):
        return e
    b = s.broker(a.follower)
    r = b.replica
    if b.status != BrokerStatus.RUNNING or r is None or r.role != Role.FOLLOWER:
        return f"broker {a.follower} hosts no running follower"
    if r.leader == NO_LEADER:
        return f"follower {a.follower} knows no leader"
    if r.stopped_in_epoch is not None and r.stopped_in_epoch == r.leader_epoch:
        if s.config.follows(Rule.FENCED_FETCH_AWAITS_NEW_EPOCH) and not s.config.has(
                Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE):
            return (f"follower {a.follower} was answered FENCED_LEADER_EPOCH in leader epoch {r.leader_epoch}: "
                    f"it awaits a new leader epoch (Rule.FENCED_FETCH_AWAITS_NEW_EPOCH)")
        return (f"follower {a.follower} stopped fetching in leader epoch {r.leader_epoch} after a diverging epoch "
                f"(Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE)")
    if _fetch_in_flight(s, a.follower):
        return f"follower {a.follower} already has a fetch in flight"
    return None


def _e_send_fetch(s: ClusterState, a: SendFetch) -> ClusterState:
    return send(s, lambda i: rep.fetch_request_for(s, a.follower, i))


def _message(s: ClusterState, msg_id: int, kind: type | tuple[type, ...]) -> tuple[Optional[object], Optional[str]]:
    m = s.network.get(msg_id)
    if m is None or not isinstance(m, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        return None, f"no {names} with id {msg_id!r} in flight"
    return m, None


def _g_receive_to(s: ClusterState, msg_id: int, kind: type) -> Optional[str]:
    m, e = _message(s, msg_id, kind)
    if e:
        return e
    dst = m.dst  # type: ignore[union-attr]
    if s.broker(dst).status != BrokerStatus.RUNNING:
        return f"recipient broker {dst} is not running"
    return None


def _e_receive_fetch_request(s: ClusterState, a: ReceiveFetchRequest) -> ClusterState:
    req = s.network.get(a.msg)
    return rep.handle_fetch_request(remove_message(s, a.msg), req)  # type: ignore[arg-type]


def _e_receive_fetch_response(s: ClusterState, a: ReceiveFetchResponse) -> ClusterState:
    resp = s.network.get(a.msg)
    return rep.handle_fetch_response(remove_message(s, a.msg), resp)  # type: ignore[arg-type]


# -------------------------------------------------------------------------- ISR

def _g_leader_idle(s: ClusterState, leader: int) -> Optional[str]:
    if (e := _unknown_broker(s, leader)):
        return e
    if not rep.is_leader(s, leader):
        return f"broker {leader} does not host a running leader"
    return rep.alter_partition_in_flight(s, leader)


def _g_shrink(s: ClusterState, a: ProposeIsrShrink) -> Optional[str]:
    if (e := _g_leader_idle(s, a.leader)):
        return e
    r = s.replica(a.leader)
    if a.follower == a.leader or a.follower not in r.isr:  # type: ignore[union-attr]
        return f"{a.follower} is not a follower in leader {a.leader}'s ISR"
    if (e := rep.can_leave_isr(s, a.leader, a.follower)):
        return e
    return _g_check_finds(s, a.leader, {a.follower})


def _g_check_finds(s: ClusterState, leader: int, followers: set[int]) -> Optional[str]:
    """Rule.REPLICA_LAG_TIME: the ISR check removes exactly the followers out of
    sync now (Partition.getOutOfSyncReplicas), not a part of them."""
    if not s.config.follows(Rule.REPLICA_LAG_TIME):
        return None
    found = rep.out_of_sync(s, leader)
    if found != followers:
        return f"leader {leader}'s ISR check finds {sorted(found)} out of sync now, not {sorted(followers)}"
    return None


def _e_shrink(s: ClusterState, a: ProposeIsrShrink) -> ClusterState:
    r = s.replica(a.leader)
    return rep.propose_isr(s, a.leader, r.isr - {a.follower})  # type: ignore[union-attr]


def _g_shrink_many(s: ClusterState, a: ProposeIsrShrinkMany) -> Optional[str]:
    """Rule.SHRINK_ALL_OUT_OF_SYNC: one AlterPartition without every follower the
    leader's ISR check found out of sync (Partition.maybeShrinkIsr); the chapters'
    proposal removes one."""
    if not s.config.follows(Rule.SHRINK_ALL_OUT_OF_SYNC):
        return "a shrink proposal removes one follower (Rule.SHRINK_ALL_OUT_OF_SYNC is off)"
    if (e := _g_leader_idle(s, a.leader)):
        return e
    r = s.replica(a.leader)
    if len(a.followers) < 2 or len(set(a.followers)) != len(a.followers):
        return f"followers must be two or more distinct brokers, got {a.followers!r}"
    for f in a.followers:
        if f == a.leader or f not in r.isr:  # type: ignore[union-attr]
            return f"{f} is not a follower in leader {a.leader}'s ISR"
        if (e := rep.can_leave_isr(s, a.leader, f)):
            return e
    return _g_check_finds(s, a.leader, set(a.followers))


def _e_shrink_many(s: ClusterState, a: ProposeIsrShrinkMany) -> ClusterState:
    r = s.replica(a.leader)
    return rep.propose_isr(s, a.leader, r.isr - set(a.followers))  # type: ignore[union-attr]


def _g_expand(s: ClusterState, a: ProposeIsrExpand) -> Optional[str]:
    if s.config.follows(Rule.EXPAND_ISR_ON_FETCH):
        return "the leader proposes an expansion only while serving the follower's fetch (Rule.EXPAND_ISR_ON_FETCH)"
    if (e := _unknown_broker(s, a.leader)):
        return e
    if not rep.is_leader(s, a.leader):
        return f"broker {a.leader} does not host a running leader"
    return rep.why_not_expand(s, a.leader, a.follower)


def _e_expand(s: ClusterState, a: ProposeIsrExpand) -> ClusterState:
    r = s.replica(a.leader)
    return rep.propose_isr(s, a.leader, r.isr | {a.follower})  # type: ignore[union-attr]


def _g_advance_time(s: ClusterState, a: AdvanceTime) -> Optional[str]:
    if not s.config.follows(Rule.REPLICA_LAG_TIME):
        return "the brokers' clock does not move (Rule.REPLICA_LAG_TIME is off)"
    if not isinstance(a.ms, int) or a.ms < 1:
        return f"ms must be a positive number of milliseconds, got {a.ms!r}"
    return None


def _e_advance_time(s: ClusterState, a: AdvanceTime) -> ClusterState:
    return attrs.evolve(s, now_ms=s.now_ms + a.ms)


def _g_receive_alter(s: ClusterState, a: ReceiveAlterPartition) -> Optional[str]:
    return _message(s, a.msg, AlterPartitionRequest)[1]


def _e_receive_alter(s: ClusterState, a: ReceiveAlterPartition) -> ClusterState:
    req = s.network.get(a.msg)
    s, resp = ctl.alter_partition(remove_message(s, a.msg), req)  # type: ignore[arg-type]
    return send(s, lambda i: attrs.evolve(resp, id=i))


def _e_receive_alter_response(s: ClusterState, a: ReceiveAlterPartitionResponse) -> ClusterState:
    resp = s.network.get(a.msg)
    return rep.handle_alter_partition_response(remove_message(s, a.msg), resp.dst, resp)  # type: ignore[union-attr,arg-type]


# ---------------------------------------------------------------- reassignment

def _g_reassign(s: ClusterState, a: Reassign) -> Optional[str]:
    p = s.partition
    if p.reassigning:
        return "a reassignment is already in progress"
    t = a.target
    if not t or len(set(t)) != len(t) or any(b not in s.config.brokers for b in t):
        return f"target must be distinct brokers from {s.config.brokers}, got {t!r}"
    if len(t) < s.min_isr:
        return f"target {t!r} is smaller than MinISR {s.min_isr}"
    if tuple(t) == p.replicas if s.config.follows(Rule.REASSIGNMENT_REPLICA_ORDER) else set(t) == set(p.replicas):
        # Kafka moves to a reordering of the current replicas at once (the chapters have no such move).
        return f"target {t!r} is the current replica set"
    return None


def _g_cancel(s: ClusterState, a: CancelReassignment) -> Optional[str]:
    if not s.partition.reassigning:
        return "no reassignment is in progress"
    if not ctl.can_cancel_reassignment(s):
        if s.config.follows(Rule.CANCEL_WITH_ANY_ISR):
            return "reverting would leave the ISR empty and unclean leader election is disabled"
        return "reverting would leave the ISR below MinISR (§4.5)"
    return None


# ----------------------------------------------------------------- recovery

def _g_unclean_recovery(s: ClusterState, a: UncleanRecovery) -> Optional[str]:
    if not ctl.recovery_candidates(s):
        return f"unclean recovery ({s.config.unclean_recovery}) cannot run in this state (§5.3.1)"
    return None


def _g_preferred_election(s: ClusterState, a: ElectPreferredLeader) -> Optional[str]:
    return ctl.preferred_election_refused(s)


def _g_unclean_election(s: ClusterState, a: UncleanLeaderElection) -> Optional[str]:
    if ctl.unclean_election_candidate(s) is None:
        return "legacy unclean leader election is disabled or not possible (ch7)"
    return None


# -------------------------------------------------------------- configuration

def _min_isr_out_of_range(s: ClusterState, min_isr: object) -> Optional[str]:
    # a MinISR above the target replica set is an operator's mistake the model does not draw
    size = len(s.partition.target_replicas)
    if isinstance(min_isr, bool) or not isinstance(min_isr, int) or not 1 <= min_isr <= size:
        return f"min_isr must be an int in 1..{size} (the target replica set's size), got {min_isr!r}"
    return None


def _g_alter_min_isr(s: ClusterState, a: AlterMinIsr) -> Optional[str]:
    # Kafka writes no record for an unchanged topic config (incrementalAlterConfigResource).
    if (e := _min_isr_out_of_range(s, a.min_isr)):
        return e
    if a.min_isr == s.min_isr:
        return f"min.insync.replicas is already {a.min_isr}"
    return None


def _g_alter_cluster_min_isr(s: ClusterState, a: AlterClusterMinIsr) -> Optional[str]:
    # Kafka writes a BROKER resource's ConfigRecord even for the value in force
    # (incrementalAlterConfigResource), so every value in range is a change worth drawing.
    if not s.config.follows(Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR):
        return "the chapters know one MinISR, the topic's: no cluster-level default (Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR)"
    return _min_isr_out_of_range(s, a.min_isr)


def _g_alter_unclean(s: ClusterState, a: AlterUncleanLeaderElection) -> Optional[str]:
    if not isinstance(a.enable, bool):
        return f"enable must be True or False, got {a.enable!r}"
    if a.enable == s.unclean_leader_election:
        return f"unclean.leader.election.enable is already {str(a.enable).lower()}"
    return None


def _g_update_elr_feature(s: ClusterState, a: UpdateElrFeature) -> Optional[str]:
    # Kafka accepts an update to the level in force and writes its record again; the model
    # does not draw it, as it does not draw an unchanged topic config.
    if not s.config.follows(Rule.ELR_FEATURE_LEVEL):
        return "the chapters' controller always keeps an ELR: no feature level (Rule.ELR_FEATURE_LEVEL)"
    if not isinstance(a.enabled, bool):
        return f"enabled must be True or False, got {a.enabled!r}"
    if a.enabled == s.elr_enabled:
        return f"eligible.leader.replicas.version is already {int(a.enabled)}"
    return None


def _g_drop(s: ClusterState, a: DropMessage) -> Optional[str]:
    # AlterPartition is retried by the leader until answered, so its loss is only a
    # delay, which delivery in any order already covers.
    return _message(s, a.msg, (FetchRequest, FetchResponse))[1]


# ------------------------------------------------------------------- clients

def _g_produce(s: ClusterState, a: Produce) -> Optional[str]:
    if (e := _unknown_broker(s, a.broker)):
        return e
    if not rep.is_leader(s, a.broker):
        return f"broker {a.broker} does not host a running leader"
    if a.value != s.history.next_value:
        return f"value must be the next unique value {s.history.next_value}, got {a.value!r}"
    return None


def _e_produce(s: ClusterState, a: Produce) -> ClusterState:
    r = s.replica(a.broker)
    assert r is not None
    h = s.history
    if len(r.isr) < s.leader_min_isr(a.broker) and not s.config.has(Variant.HWM_ADVANCES_BELOW_MIN_ISR):  # NotEnoughReplicas (§2.6)
        return set_history(s, nacked=h.nacked + (a.value,), next_value=h.next_value + 1)
    s = set_replica(s, a.broker, attrs.evolve(r, log=r.log + (Record(r.leader_epoch, a.value),)))
    s = set_history(s, pending=h.pending + (PendingWrite(a.value, a.broker, r.leo),), next_value=h.next_value + 1)
    return rep.maybe_advance_hwm(s, a.broker)


def _current_leader(s: ClusterState) -> tuple[Optional[int], Optional[str]]:
    """The controller's leader, if it runs and acts in the controller's leader epoch."""
    p = s.partition
    if p.leader == NO_LEADER:
        return None, "the partition has no leader"
    r = s.replica(p.leader)
    if not rep.is_leader(s, p.leader) or r is None or r.leader_epoch != p.leader_epoch:
        return None, f"leader {p.leader} is not yet acting in leader epoch {p.leader_epoch}"
    return p.leader, None


def _g_consume(s: ClusterState, a: Consume) -> Optional[str]:
    leader, e = _current_leader(s)
    if e:
        return e
    r = s.replica(leader)  # type: ignore[arg-type]
    if r.hwm <= len(s.history.consumed):  # type: ignore[union-attr]
        return "nothing new below the HWM"
    return None


def _e_consume(s: ClusterState, a: Consume) -> ClusterState:
    leader, _ = _current_leader(s)
    r = s.replica(leader)  # type: ignore[arg-type]
    consumed = s.history.consumed
    return set_history(s, consumed=consumed + r.log[len(consumed):r.hwm])  # type: ignore[union-attr]


def _g_list_offsets(s: ClusterState, a: ListOffsets) -> Optional[str]:
    return _current_leader(s)[1]


def _e_list_offsets(s: ClusterState, a: ListOffsets) -> ClusterState:
    leader, _ = _current_leader(s)
    result = list_offsets_result(s, leader, before_leso=s.config.has(Variant.LIST_OFFSETS_BEFORE_LESO))  # type: ignore[arg-type]
    answer = ListOffsetsAnswer(result.broker, result.leader_epoch, result.hwm, s.history.true_hwm)
    answers = s.history.list_offsets
    if answers and attrs.evolve(answers[-1], true_hwm=answer.true_hwm) == answer:
        return s
    return set_history(s, list_offsets=answers + (answer,))


# --------------------------------------------------------------------- table

HANDLERS: dict[type, tuple[Guard, Effect]] = {
    StartBroker: (_g_start, _e_start),
    UnfenceBroker: (_g_unfence, _e_unfence),
    FenceBroker: (_g_fence, _e_fence),
    BeginControlledShutdown: (_g_begin_controlled_shutdown, _e_begin_controlled_shutdown),
    ControlledShutdown: (_g_controlled_shutdown, _e_controlled_shutdown),
    UncleanShutdown: (_g_unclean_shutdown, _e_unclean_shutdown),
    Flush: (_g_flush, _e_flush),
    WriteEpochCheckpoint: (_g_write_epoch_checkpoint,
                           lambda s, a: set_replica(s, a.broker, ec.written(s.replica(a.broker)))),
    ReplicateMetadata: (_g_replicate, _e_replicate),
    SendFetch: (_g_send_fetch, _e_send_fetch),
    ReceiveFetchRequest: (lambda s, a: _g_receive_to(s, a.msg, FetchRequest), _e_receive_fetch_request),
    ReceiveFetchResponse: (lambda s, a: _g_receive_to(s, a.msg, FetchResponse), _e_receive_fetch_response),
    ProposeIsrShrink: (_g_shrink, _e_shrink),
    ProposeIsrShrinkMany: (_g_shrink_many, _e_shrink_many),
    ProposeIsrExpand: (_g_expand, _e_expand),
    AdvanceTime: (_g_advance_time, _e_advance_time),
    ReceiveAlterPartition: (_g_receive_alter, _e_receive_alter),
    ReceiveAlterPartitionResponse: (lambda s, a: _g_receive_to(s, a.msg, AlterPartitionResponse),
                                    _e_receive_alter_response),
    Reassign: (_g_reassign, lambda s, a: ctl.reassign(s, a.target)),
    CancelReassignment: (_g_cancel, lambda s, a: ctl.cancel_reassignment(s)),
    UncleanRecovery: (_g_unclean_recovery, lambda s, a: ctl.unclean_recovery(s)),
    UncleanLeaderElection: (_g_unclean_election, lambda s, a: ctl.unclean_leader_election(s)),
    ElectPreferredLeader: (_g_preferred_election, lambda s, a: ctl.elect_preferred_leader(s)),
    FailOverController: (_g_fail_over, lambda s, a: ctl.fail_over(s)),
    FailOverFromSnapshot: (_g_fail_over_from_snapshot, lambda s, a: ctl.fail_over_from_snapshot(s)),
    ResendRegistration: (_g_resend_registration, lambda s, a: ctl.amend_registration(s, a.broker)),
    AlterMinIsr: (_g_alter_min_isr, lambda s, a: ctl.alter_min_isr(s, a.min_isr)),
    AlterClusterMinIsr: (_g_alter_cluster_min_isr, lambda s, a: ctl.alter_cluster_min_isr(s, a.min_isr)),
    AlterUncleanLeaderElection: (_g_alter_unclean, lambda s, a: ctl.alter_unclean_leader_election(s, a.enable)),
    UpdateElrFeature: (_g_update_elr_feature, lambda s, a: ctl.update_elr_feature(s, a.enabled)),
    DropMessage: (_g_drop, lambda s, a: remove_message(s, a.msg)),
    Produce: (_g_produce, _e_produce),
    Consume: (_g_consume, _e_consume),
    ListOffsets: (_g_list_offsets, _e_list_offsets),
    Heal: (lambda s, a: "Heal is a directive: model.healing.apply expands it into the healing schedule",
           lambda s, a: s),
}


def why_not_enabled(state: ClusterState, action: Action) -> Optional[str]:
    """The reason ``action`` is not enabled in ``state``, or None when it is. A
    guard whose dry run of the controller's change faults (ControllerFault) lets the
    action in: its event runs and faults the same way. Raises TypeError for an
    object that is not an action."""
    handler = HANDLERS.get(type(action))
    if handler is None:
        raise TypeError(f"not a replicheck action: {action!r}")
    try:
        return handler[0](state, action)
    except ControllerFault:
        return None


def step(state: ClusterState, action: Action) -> ClusterState:
    """Apply ``action`` to ``state`` and return the next state. Pure.

    Raises ActionNotEnabled (with the reason) when the action is not enabled, and
    TypeError for an object that is not an action.
    """
    reason = why_not_enabled(state, action)
    if reason is not None:
        raise ActionNotEnabled(action, reason)
    try:
        return HANDLERS[type(action)][1](state, action)
    except ControllerFault as fault:   # the action's controller event faulted: it wrote nothing
        return ctl.renounce(state, fault)
