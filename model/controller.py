"""The active controller: registrations, fencing, elections, ISR/ELR changes,
AlterPartition validation, reassignment and unclean recovery (§2.8, §2.9, ch4,
§5.2, §5.3, ch8). Every change is committed as a metadata record.

Controller choices are deterministic: the first eligible replica in replica
(assignment) order, as Kafka's PartitionChangeBuilder chooses.
"""

from __future__ import annotations

from typing import Optional

import attrs

from .config import Variant
from .errors import ControllerFault
from .log import epoch_entries
from .profile import Rule
from .state import (ELR_FEATURE, MIN_INSYNC_REPLICAS, NO_LEADER, NO_LEADER_CHANGE, RECOVERED, RECOVERING,
                    STATIC_MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE, FeatureLevelRecord,
                    AlterPartitionRequest, AlterPartitionResponse,
                    BrokerStatus, ClearElrRecord, ClusterState, ConfigRecord, ControlledShutdownRecord, FenceBrokerRecord,
                    PartitionChangeRecord, PartitionMetadata, RegisterBrokerRecord, UncleanElectionReport,
                    UnfenceBrokerRecord, merge)
from .update import append_metadata, set_history, set_registration

# AlterPartition error codes (Kafka's names)
STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
INVALID_REQUEST = "INVALID_REQUEST"
NEW_LEADER_ELECTED = "NEW_LEADER_ELECTED"
NOT_CONTROLLER = "NOT_CONTROLLER"

# How a leader was elected, when not cleanly (reported as potential data loss, §5.3.2)
LAST_KNOWN_LEADER = "last_known_leader"
UNCLEAN_LEADER_ELECTION = "unclean_leader_election"


# ------------------------------------------------------------------ change builder

def commit_partition(state: ClusterState, draft: PartitionMetadata, bump_leader_epoch: bool = False) -> ClusterState:
    """Commit ``draft`` as one PartitionChangeRecord holding only the changed fields.

    The record bumps the partition epoch, and the leader epoch when the leader
    changes or ``bump_leader_epoch`` (completed reassignment, §2.3.1). Nothing is
    written when nothing changed.

    Under Rule.LEADER_EPOCH_BUMP_ON_REMOVAL the leader epoch is bumped (besides a
    leader change) exactly when the replica set loses a member, whatever
    ``bump_leader_epoch`` says (PartitionChangeBuilder.
    triggerLeaderEpochBumpForReplicaReassignmentIfNeeded). Under
    Rule.LAST_KNOWN_LEADER the LastKnownELR is the last leader: recorded when the
    partition first becomes leaderless, cleared when a leader is set, kept while
    there is none (PartitionChangeBuilder.maybeUpdateRecordElr,
    maybeUpdateLastKnownLeader).

    With the ELR feature off (Rule.ELR_FEATURE_LEVEL) the ISR is never written
    empty (its members stay) and the last known leader is not written
    (``build``, ``maybeUpdateLastKnownLeader``).
    """
    p = state.partition
    cfg = state.config
    if cfg.follows(Rule.LEADER_EPOCH_BUMP_ON_REMOVAL):
        bump_leader_epoch = not set(p.replicas) <= set(draft.replicas)
    if not state.elr_enabled and not draft.isr:
        draft = attrs.evolve(draft, isr=p.isr)
    if cfg.follows(Rule.LAST_KNOWN_LEADER) and state.elr_enabled:
        leader_set = draft.leader != p.leader or bump_leader_epoch
        lke = p.last_known_elr
        if leader_set and draft.leader == NO_LEADER and not p.last_known_elr:
            lke = frozenset({p.leader})
        elif leader_set and draft.leader != NO_LEADER and p.last_known_elr:
            lke = frozenset()
        draft = attrs.evolve(draft, last_known_elr=lke)
    rec = PartitionChangeRecord(
        leader=draft.leader if (draft.leader != p.leader or bump_leader_epoch) else NO_LEADER_CHANGE,
        isr=draft.isr if draft.isr != p.isr else None,
        elr=draft.elr if draft.elr != p.elr else None,
        last_known_elr=draft.last_known_elr if draft.last_known_elr != p.last_known_elr else None,
        replicas=draft.replicas if draft.replicas != p.replicas else None,
        adding=draft.adding if draft.adding != p.adding else None,
        removing=draft.removing if draft.removing != p.removing else None,
        leader_recovery_state=(draft.leader_recovery_state if draft.leader_recovery_state != p.leader_recovery_state
                               else None),
    )
    if rec == PartitionChangeRecord():
        return state
    return append_metadata(state, rec, merge(p, rec))


def _acceptable(state: ClusterState, broker: int) -> bool:
    """Whether the election may pick ``broker`` (Kafka's ``ReplicationControlManager.
    LeaderAcceptor.test``): ``_unfenced``. Under Rule.LEADER_ACCEPTOR_READS_DIRECTORY
    an unfenced broker's log directory is then looked up in the partition's
    registration (``PartitionRegistration.directory``), which raises ControllerFault,
    with Kafka's message, for a broker outside its replicas."""
    if not _unfenced(state, broker):
        return False
    if state.config.follows(Rule.LEADER_ACCEPTOR_READS_DIRECTORY) and broker not in state.partition.replicas:
        raise ControllerFault(f"Replica {broker} is not assigned to this partition.")
    return True


def _unfenced(state: ClusterState, broker: int) -> bool:
    """Whether ``broker`` is a registered, unfenced broker not in controlled shutdown
    (Kafka's isAcceptableLeader, ``ClusterControlManager.isActive``: false for an
    id no broker has, such as the NoLeader a LastKnownELR can hold under
    Rule.LAST_KNOWN_LEADER)."""
    if broker not in state.config.brokers:
        return False
    reg = state.registration(broker)
    return not reg.fenced and not reg.in_controlled_shutdown


def effective_min_isr(state: ClusterState) -> int:
    """The MinISR a partition change of the controller reads: the topic's, under
    Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS capped at the replica count of the
    registration the change starts from (``ReplicationControlManager.
    getTopicEffectiveMinIsr``)."""
    if state.config.follows(Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS):
        return min(state.min_isr, len(state.partition.replicas))
    return state.min_isr


def apply_elr_rules(state: ClusterState, d: PartitionMetadata, removed_from_isr: frozenset[int],
                    unclean_restart: frozenset[int] = frozenset()) -> PartitionMetadata:
    """ISR removals move to the ELR while the ISR is below MinISR (§2.9, §5.2.1
    cases A, C); once the ISR reaches MinISR the ELR and LastKnownELR are emptied
    (case G, §5.3.1). ISR members leave the ELR and LastKnownELR.

    Under Rule.ELR_KEEPS_REMOVED_REPLICAS removals join the ELR whether or not
    they are still replicas; ``unclean_restart`` (a broker registering after an
    unclean shutdown) never does (PartitionChangeBuilder.maybePopulateTargetElr).
    Under Rule.LAST_KNOWN_LEADER the LastKnownELR is left to ``commit_partition``.
    With the ELR feature off (Rule.ELR_FEATURE_LEVEL) the ELR is emptied, and the
    LastKnownELR too unless Rule.LAST_KNOWN_LEADER leaves it be (maybeUpdateRecordElr)."""
    cfg = state.config
    lke_rule = cfg.follows(Rule.LAST_KNOWN_LEADER)
    if not state.elr_enabled:
        return attrs.evolve(d, elr=frozenset(), last_known_elr=d.last_known_elr if lke_rule else frozenset())
    if len(d.isr) >= effective_min_isr(state):
        if cfg.has(Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR):
            return attrs.evolve(d, elr=d.elr - d.isr,
                                last_known_elr=d.last_known_elr if lke_rule else d.last_known_elr - d.isr)
        return attrs.evolve(d, elr=frozenset(), last_known_elr=d.last_known_elr if lke_rule else frozenset())
    if cfg.has(Variant.NO_ELR):
        removed_from_isr = frozenset()
    if not cfg.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS):
        removed_from_isr = removed_from_isr & frozenset(d.replicas)
    elr = (d.elr | removed_from_isr) - d.isr - unclean_restart
    return attrs.evolve(d, elr=elr, last_known_elr=d.last_known_elr if lke_rule else d.last_known_elr - d.isr)


def marked_recovering(state: ClusterState, d: PartitionMetadata) -> PartitionMetadata:
    """``d``, the draft of an unclean election, marked RECOVERING under
    Rule.LEADER_RECOVERY_STATE (``PartitionChangeBuilder.electLeader``), unless the
    change names a leader recovery state of its own (an AlterPartition's target,
    ``setTargetLeaderRecoveryState``, which ``build`` writes over the election's)."""
    if not state.config.follows(Rule.LEADER_RECOVERY_STATE) or \
            d.leader_recovery_state != state.partition.leader_recovery_state:
        return d
    return attrs.evolve(d, leader_recovery_state=RECOVERING)


def elect(state: ClusterState, d: PartitionMetadata, order: Optional[tuple[int, ...]] = None,
          unclean: bool = True, preferred: bool = False,
          unclean_restart: frozenset[int] = frozenset()) -> tuple[PartitionMetadata, Optional[str]]:
    """With ``preferred`` (ElectLeaders PREFERRED, ``PartitionChangeBuilder.
    electPreferredLeader``) the first replica when it is a valid leader (an unfenced
    ISR member, or ELR member while the ISR is empty, moved to the ISR); then, as
    for any election: keep a still-valid leader; else the first unfenced ISR
    member; else the first unfenced ELR member, moved to the ISR (case B; under
    Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR only while the ISR is empty,
    PartitionChangeBuilder.isValidNewLeader); else NoLeader. ``order`` defaults to
    the replica order.

    Returns the draft and, for an unclean election, its mechanism (None when
    clean): under Rule.LAST_KNOWN_LEADER, with ISR and ELR empty, the last known
    leader (the registration's LastKnownELR, when it is the only member) once
    unfenced (PartitionChangeBuilder.canElectLastKnownLeader, which reads the ELR
    the change populated: the ISR members it removes, but ``unclean_restart``, join
    it first); then, under
    Rule.UNCLEAN_ELECTION_IN_CHANGES with unclean.leader.election.enable and
    ``unclean``, the first unfenced replica (electAnyLeader, Election.UNCLEAN).
    Either sets ISR = [leader] and empties the ELR (maybeUpdateRecordElr), and
    marks the draft RECOVERING (``marked_recovering``). With the ELR feature off
    (Rule.ELR_FEATURE_LEVEL) no last known leader is elected, yet an ELR member
    still is (isValidNewLeader reads the registration's ELR whatever the feature).

    Each candidate is asked of ``_acceptable``, which raises ControllerFault under
    Rule.LEADER_ACCEPTOR_READS_DIRECTORY for an active broker outside the
    registration's replicas (the last known leader after a revert, a leader the
    revert left outside them)."""
    order = d.replicas if order is None else order
    first = d.replicas[0] if d.replicas else NO_LEADER
    valid_first = first in d.isr or (not d.isr and first in d.elr)   # isValidNewLeader
    if preferred and first != NO_LEADER and valid_first and _acceptable(state, first):
        return attrs.evolve(d, leader=first, isr=d.isr | {first}, elr=d.elr - {first}), None
    if d.leader in d.isr and _acceptable(state, d.leader):
        return d, None
    for r in order:
        if r in d.isr and _acceptable(state, r):
            return attrs.evolve(d, leader=r), None
    cfg = state.config
    elr_electable = not d.isr or not cfg.follows(Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR)
    for r in order if elr_electable else ():
        if r in d.elr and _acceptable(state, r):
            return attrs.evolve(d, leader=r, isr=d.isr | {r}, elr=d.elr - {r}), None
    known = state.partition.last_known_elr
    if (cfg.follows(Rule.LAST_KNOWN_LEADER) and state.elr_enabled and not d.isr and len(known) == 1
            and not apply_elr_rules(state, d, state.partition.isr - d.isr, unclean_restart).elr):
        (last,) = known
        if _acceptable(state, last):
            return (marked_recovering(state, attrs.evolve(d, leader=last, isr=frozenset({last}), elr=frozenset())),
                    LAST_KNOWN_LEADER)
    if unclean and cfg.follows(Rule.UNCLEAN_ELECTION_IN_CHANGES) and state.unclean_leader_election:
        for r in order:
            if _acceptable(state, r):
                return (marked_recovering(state, attrs.evolve(d, leader=r, isr=frozenset({r}), elr=frozenset())),
                        UNCLEAN_LEADER_ELECTION)
    return attrs.evolve(d, leader=NO_LEADER), None


def elect_with_elr(state: ClusterState, d: PartitionMetadata, removed: frozenset[int],
                   unclean_restart: frozenset[int] = frozenset(), **election: bool) -> tuple[PartitionMetadata,
                                                                                            Optional[str]]:
    """One change's election (``elect`` with ``election``'s flags) and ELR rules
    (``apply_elr_rules`` with ``removed``, the ISR members the change removes). The
    chapters: the election first, then the ELR rules on its result. Rule.
    ELR_POPULATED_BEFORE_ELECTION, while the ELR feature is on: the ELR rules on the
    change's targets first (``PartitionChangeBuilder.maybePopulateTargetElr``), then
    the election (``tryElection``: an elected ELR member leaves the ELR, the others
    stay). An unclean election's ELR is void either way (``maybeUpdateRecordElr``)."""
    if state.config.follows(Rule.ELR_POPULATED_BEFORE_ELECTION) and state.elr_enabled:
        return elect(state, apply_elr_rules(state, d, removed, unclean_restart), unclean_restart=unclean_restart,
                     **election)
    d, how = elect(state, d, unclean_restart=unclean_restart, **election)
    return (apply_elr_rules(state, d, removed, unclean_restart) if how is None else d), how


def commit_election(state: ClusterState, d: PartitionMetadata, how: Optional[str],
                    bump_leader_epoch: bool = False) -> ClusterState:
    """``commit_partition``, then report an unclean election (§5.3.2)."""
    state = commit_partition(state, d, bump_leader_epoch)
    return state if how is None else _report(state, how, state.partition.leader)


def completed_reassignment(state: ClusterState, d: PartitionMetadata) -> Optional[PartitionMetadata]:
    """The draft with its reassignment completed (§4.2 step 3), or None when it
    cannot complete yet. The chapters: the final ISR (ISR - removing) holds every
    adding replica and at least MinISR members. Rule.REASSIGNMENT_COMPLETION
    (PartitionReassignmentReplicas.maybeCompleteReassignment): the final ISR is
    non-empty and holds every adding replica and, when the replication factor
    shrinks, every target replica. The replica set becomes the target; the removed
    replicas leave the ELR and LastKnownELR unless Rule.ELR_KEEPS_REMOVED_REPLICAS
    or Rule.LAST_KNOWN_LEADER keeps them there. Leader and ELR are the caller's."""
    if not d.reassigning:
        return None
    cfg = state.config
    final_isr = d.isr - d.removing
    target = d.target_replicas
    if cfg.follows(Rule.REASSIGNMENT_COMPLETION):
        if not final_isr or not target or not d.adding <= final_isr:
            return None
        if len(d.adding) < len(d.removing) and not frozenset(target) <= final_isr:
            return None
    elif not d.adding <= final_isr or (len(final_isr) < state.min_isr and
                                       not cfg.has(Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR)):
        return None
    keep_elr = cfg.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS)
    keep_lke = cfg.follows(Rule.LAST_KNOWN_LEADER)
    return attrs.evolve(d, replicas=target, isr=final_isr,
                        elr=d.elr if keep_elr else d.elr - d.removing,
                        last_known_elr=d.last_known_elr if keep_lke else d.last_known_elr - d.removing,
                        adding=frozenset(), removing=frozenset())


def maybe_complete_reassignment(state: ClusterState, d: PartitionMetadata) -> tuple[PartitionMetadata, bool, Optional[str]]:
    """Completion phase (§4.2 step 3) when ``completed_reassignment`` allows it: a
    removed (or no) leader is replaced from the target replicas, and the ELR rules
    applied. Returns the draft, whether it completed (the chapters bump the leader
    epoch then, §2.3.1) and how the leader was elected when not cleanly."""
    done = completed_reassignment(state, d)
    if done is None:
        return d, False, None
    how = None
    if done.leader in d.removing or done.leader == NO_LEADER:
        done, how = elect(state, attrs.evolve(done, leader=NO_LEADER), done.replicas)
    return (apply_elr_rules(state, done, d.isr & d.removing) if how is None else done), True, how


def completed_first(state: ClusterState, d: PartitionMetadata) -> tuple[PartitionMetadata, bool]:
    """A change's first step under Rule.REASSIGNMENT_COMPLETION
    (``PartitionChangeBuilder.completeReassignmentIfNeeded``, before the election):
    the draft with its reassignment completed when it can be, a leader the
    completion leaves out of the ISR dropped, and whether it was completed."""
    if state.config.follows(Rule.REASSIGNMENT_COMPLETION) and d.reassigning:
        done = completed_reassignment(state, d)
        if done is not None:
            return (done if done.leader in done.isr else attrs.evolve(done, leader=NO_LEADER)), True
    return d, False


def change_partition(state: ClusterState, d: PartitionMetadata, unclean_restart: frozenset[int] = frozenset(),
                     bump_leader_epoch: bool = False, unclean: bool = True, preferred: bool = False) -> ClusterState:
    """One partition change the way PartitionChangeBuilder.build makes it
    (completeReassignmentIfNeeded under Rule.REASSIGNMENT_COMPLETION, the election
    and the ELR rules with the previous ISR's removals, ``elect_with_elr``, then the
    record) and commit it.
    ``d`` holds the change's targets (ISR, replicas, ...); ``unclean``: whether the
    election may be unclean (Election.UNCLEAN, Rule.UNCLEAN_ELECTION_IN_CHANGES);
    ``preferred``: the preferred election (Election.PREFERRED)."""
    p = state.partition
    d, completed = completed_first(state, d)
    bump_leader_epoch = bump_leader_epoch or completed
    d, how = elect_with_elr(state, d, p.isr - d.isr, unclean_restart, unclean=unclean, preferred=preferred)
    return commit_election(state, d, how, bump_leader_epoch)


# --------------------------------------------------------------- broker lifecycle

def registration_offset(state: ClusterState, broker: int) -> Optional[int]:
    """Offset of ``broker``'s latest RegisterBrokerRecord in the metadata log (its
    broker epoch, unless Rule.METADATA_RECORD_ORDER put its batch's partition
    changes first), or None."""
    log = state.controller.metadata_log
    for i in range(len(log) - 1, -1, -1):
        rec = log[i]
        if isinstance(rec, RegisterBrokerRecord) and rec.broker == broker:
            # a snapshot's records are all replayed at its last offset (FailOverFromSnapshot)
            return max(i, state.controller.snapshot_offset)
    return None


def register_broker(state: ClusterState, broker: int, clean: bool) -> ClusterState:
    """Accept a BrokerRegistration (§8.1): the broker epoch is the record's offset.
    An empty broker epoch (unclean shutdown) moves the broker's replica from the
    ELR to the LastKnownELR (§5.2, §5.3.1).

    Under Rule.LAST_KNOWN_LEADER an unclean registration takes the broker out of
    the ISR and ELR in a partition change that may elect
    (ReplicationControlManager.handleBrokerShutdown); a clean one, or any with the
    ELR feature off (Rule.ELR_FEATURE_LEVEL), takes it out of the ISR only, as a
    fencing does (which changes something only for a broker still in the ISR: one
    the feature off kept there as the last member); under
    Rule.METADATA_RECORD_ORDER that change precedes the RegisterBrokerRecord and
    the broker epoch is the offset of the first (ClusterControlManager.registerBroker)."""
    cfg = state.config
    epoch = len(state.controller.metadata_log)
    state = set_registration(state, attrs.evolve(state.registration(broker), broker_epoch=epoch, fenced=True,
                                                 in_controlled_shutdown=False, session=True,
                                                 controlled_shutdown_offset=None))
    state = _heard(state, broker)
    record_first = not cfg.follows(Rule.METADATA_RECORD_ORDER)
    if record_first:
        state = append_metadata(state, RegisterBrokerRecord(broker, epoch, clean))
    p = state.partition
    if cfg.follows(Rule.LAST_KNOWN_LEADER):
        if clean or not state.elr_enabled:
            state = _remove_broker(state, broker)
        else:
            state = _unclean_shutdown_changes(state, broker)
    elif not clean and broker in p.elr and not cfg.has(Variant.UNCLEAN_REGISTRATION_KEEPS_ELR):
        state = commit_partition(state, attrs.evolve(p, elr=p.elr - {broker},
                                                     last_known_elr=p.last_known_elr | {broker}))
    if not record_first:
        state = append_metadata(state, RegisterBrokerRecord(broker, epoch, clean))
    return state


def _unclean_shutdown_changes(state: ClusterState, broker: int) -> ClusterState:
    """Kafka's handleBrokerShutdown for an unclean shutdown: one partition change
    taking ``broker`` out of the ISR and ELR (it may elect) for each entry its ISR
    and ELR indexes hold for the partition, each built from the registration before
    any of them (generateLeaderAndIsrUpdates): under Rule.CLEARED_ELR_STAYS_INDEXED
    a cleared ELR member's entry still counts, and a second entry repeats the same
    record, which moves the epochs again."""
    p = state.partition
    if state.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
        changes = (broker in p.isr) + state.controller.elr_entries(broker)
    else:
        changes = int(broker in p.isr or broker in p.elr)
    if not changes:
        return state
    d = attrs.evolve(p, isr=p.isr - {broker}, elr=p.elr - {broker},
                     leader=NO_LEADER if p.leader == broker else p.leader)
    written = len(state.controller.metadata_log)
    state = change_partition(state, d, unclean_restart=frozenset({broker}))
    for record in state.controller.metadata_log[written:written + 1] * (changes - 1):
        state = append_metadata(state, record, merge(state.partition, record))
    return state


def expire_session(state: ClusterState, broker: int) -> ClusterState:
    """Session expiry (§2.8; ``ReplicationControlManager.maybeFenceOneStaleBroker``):
    an unfenced broker is fenced (``fence_broker``). Under
    Rule.FENCED_BROKER_SESSION_EXPIRES a broker already fenced by its controlled
    shutdown still has a session, and its expiry runs the fencing's partition
    change again (``handleBrokerFenced``; its registration change is a no-op, left
    out of the log). The session ends either way."""
    if state.registration(broker).fenced:
        state = refence(state, broker)
    else:
        state = fence_broker(state, broker)
    return set_registration(state, attrs.evolve(state.registration(broker), session=False))


def renew_session(state: ClusterState, broker: int) -> ClusterState:
    """A heartbeat renews the broker's session (``BrokerHeartbeatManager``), fenced or not."""
    return set_registration(state, attrs.evolve(state.registration(broker), session=True))


def fail_over(state: ClusterState) -> ClusterState:
    """A standby becomes the active controller (Rule.CONTROLLER_FAILOVER;
    ``ClusterControlManager.activate``): the metadata log and what it holds stay;
    each registration's session is rebuilt, fresh for an unfenced broker, none for
    a fenced one. Under Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS the new
    heartbeat manager holds no controlled shutdown offset, and has heard from no
    broker that is not running (``ControllerState.unheard``)."""
    ctrl = state.controller
    regs = tuple(attrs.evolve(r, session=not r.fenced, controlled_shutdown_offset=None)
                 for r in ctrl.registrations)
    unheard = ctrl.unheard
    if state.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS):
        unheard = frozenset(b.id for b in state.brokers
                            if b.status not in (BrokerStatus.STARTING, BrokerStatus.RUNNING))
    partition, elr_index = ctrl.log_replay
    return attrs.evolve(state, controller=attrs.evolve(
        ctrl, registrations=regs, unheard=unheard, partition=partition, elr_index=elr_index, replayed=None,
        snapshot_offset=-1))


def renounce(state: ClusterState, fault: ControllerFault) -> ClusterState:
    """A controller event faulted (Rule.LEADER_ACCEPTOR_READS_DIRECTORY;
    ``QuorumController.handleEventException``): ``state`` is the state before it,
    as the event wrote nothing; the active controller renounces and a standby that
    replayed the log becomes active (``fail_over``); the fault's message is
    recorded (``History.controller_faults``)."""
    state = fail_over(state)
    return set_history(state, controller_faults=state.history.controller_faults + (str(fault),))


def fail_over_from_snapshot(state: ClusterState) -> ClusterState:
    """A controller that loaded the latest metadata snapshot, taken at the log's
    end, becomes active (Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED;
    ``SnapshotEmitter.maybeEmit`` writes the log's image, ``QuorumController.
    handleLoadSnapshot`` replays it at the snapshot's last offset): the log's
    partition registration without its ELR and LastKnownELR while the ELR feature
    is off (``PartitionRegistration.toRecord``), Kafka's broker-to-ELR index built
    from it anew, every registration at the snapshot's offset
    (``registration_offset``); the sessions as ``fail_over`` rebuilds them. The
    log's replay is kept beside it (``ControllerState.replayed``) while they differ."""
    ctrl = state.controller
    partition, elr_index = ctrl.log_replay
    loaded = partition
    if not ctrl.elr_enabled:
        loaded = attrs.evolve(partition, elr=frozenset(), last_known_elr=frozenset())
    loaded_index = elr_index
    if state.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
        loaded_index = tuple((b, 1) for b in sorted(loaded.elr))
    state = fail_over(state)
    differs = (loaded, loaded_index) != (partition, elr_index)
    return attrs.evolve(state, controller=attrs.evolve(
        state.controller, partition=loaded, elr_index=loaded_index,
        replayed=(partition, elr_index) if differs else None, snapshot_offset=len(ctrl.metadata_log) - 1))


def _heard(state: ClusterState, broker: int) -> ClusterState:
    """``broker`` registered: the heartbeat manager knows it again."""
    if broker not in state.controller.unheard:
        return state
    return attrs.evolve(state, controller=attrs.evolve(state.controller,
                                                       unheard=state.controller.unheard - {broker}))


def refence(state: ClusterState, broker: int) -> ClusterState:
    """The fencing's partition change run again for a broker already fenced
    (``handleBrokerFenced``; its registration change is a no-op, not written): at
    its session's expiry (``expire_session``) and, under
    Rule.FENCED_BROKER_SESSION_EXPIRES, at its heartbeat asking to shut down
    (``BrokerHeartbeatManager.calculateNextBrokerState``: FENCED, then
    SHUTDOWN_NOW). It changes something only for a broker still in the ISR."""
    return _remove_broker(state, broker)


def fence_broker(state: ClusterState, broker: int) -> ClusterState:
    """Fence a broker (§2.8, §2.9.1): remove it from leadership and the ISR, elect a
    new leader, and move it to the ELR when the new ISR is below MinISR. Under
    Rule.METADATA_RECORD_ORDER the partition change precedes the fence record
    (ReplicationControlManager.handleBrokerFenced). The session stays (a
    controlled shutdown's fencing; ``expire_session`` ends it)."""
    state = set_registration(state, attrs.evolve(state.registration(broker), fenced=True,
                                                 controlled_shutdown_offset=None))
    record_first = not state.config.follows(Rule.METADATA_RECORD_ORDER)
    if record_first:
        state = append_metadata(state, FenceBrokerRecord(broker))
    state = _remove_broker(state, broker)
    if not record_first:
        state = append_metadata(state, FenceBrokerRecord(broker))
    return state


def _remove_broker(state: ClusterState, broker: int) -> ClusterState:
    """The partition change taking ``broker`` out of leadership and the ISR, once it
    is no longer active (generateLeaderAndIsrUpdates with it as brokerToRemove)."""
    p = state.partition
    if broker in p.isr or broker == p.leader:
        d = attrs.evolve(p, isr=p.isr - {broker}, leader=NO_LEADER if p.leader == broker else p.leader)
        if not d.isr and state.config.has(Variant.NO_ELR):
            # Last replica standing: the pre-KIP-966 controller keeps it in the ISR.
            state = commit_partition(state, attrs.evolve(d, isr=p.isr))
        else:
            state = change_partition(state, d)
    return state


def begin_controlled_shutdown(state: ClusterState, broker: int) -> ClusterState:
    """A heartbeat with wantShutDown from an unfenced broker (§8.3;
    BrokerHeartbeatManager.calculateNextBrokerState, UNFENCED): a broker that
    leads enters controlled shutdown -- the registration change record, then the
    partition change moving its leadership and ISR membership away
    (ReplicationControlManager.handleBrokerInControlledShutdown) -- and stays
    unfenced; one that leads nothing is fenced at once (SHUTDOWN_NOW,
    handleBrokerFenced). Under Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS
    the broker's controlled shutdown offset is the log's end after these records
    (QuorumController.processBrokerHeartbeat, processBatchEndOffset)."""
    if state.partition.leader != broker:
        return fence_broker(state, broker)
    state = set_registration(state, attrs.evolve(state.registration(broker), in_controlled_shutdown=True))
    state = append_metadata(state, ControlledShutdownRecord(broker))
    state = _remove_broker(state, broker)
    if not state.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS):
        return state
    return set_registration(state, attrs.evolve(state.registration(broker),
                                                controlled_shutdown_offset=len(state.controller.metadata_log)))


def controlled_shutdown_wait(state: ClusterState, broker: int) -> Optional[tuple[int, int, int]]:
    """What keeps ``broker``, in controlled shutdown, from being let go
    (Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS; Kafka's
    ``BrokerHeartbeatManager.calculateNextBrokerState``, CONTROLLED_SHUTDOWN): the
    first active broker (registered, unfenced, without a controlled shutdown offset)
    whose reported metadata offset is below ``broker``'s controlled shutdown offset,
    as (that broker, its reported offset, the offset awaited), both exclusive ends;
    None when nothing does (without an offset it is let go at once). A broker's
    report is the records it has applied (a running broker's heartbeats are read
    as current; a stopped one's as of its stop), 0 from one the controller has not
    heard from since it became active."""
    awaited = state.registration(broker).controlled_shutdown_offset
    if awaited is None:
        return None
    for reg in state.controller.registrations:
        if reg.broker == broker or reg.broker_epoch is None or reg.fenced \
                or reg.controlled_shutdown_offset is not None:
            continue
        reported = 0 if reg.broker in state.controller.unheard else state.broker(reg.broker).metadata_offset
        if reported < awaited:
            return reg.broker, reported, awaited
    return None


def next_heartbeat_shutdown_wait(state: ClusterState, broker: int) -> Optional[tuple[int, int, int]]:
    """``controlled_shutdown_wait`` as ``broker``'s next heartbeats asking to shut
    down meet it: an unfenced broker not yet in controlled shutdown enters it
    first (``begin_controlled_shutdown``: a leader's batch, whose end it then waits
    for; a broker leading nothing is fenced, and waits for nothing)."""
    reg = state.registration(broker)
    if not reg.fenced and reg.controlled_shutdown_offset is None:
        state = begin_controlled_shutdown(state, broker)
    return controlled_shutdown_wait(state, broker)


def unfence_broker(state: ClusterState, broker: int) -> ClusterState:
    """Unfence (heartbeat, §8.1); with no leader, an unfenced ELR member is elected
    (§2.8; not under Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE). Kafka runs this election for a leaderless partition whichever broker
    is unfenced (ReplicationControlManager.handleBrokerUnfenced), which is what
    lets the last known leader or an unclean candidate in. With the ELR feature off
    (Rule.ELR_FEATURE_LEVEL) that change is written whenever it changes the
    registration, electing or not: it empties an ELR kept from before the downgrade
    (maybeUpdateRecordElr). Under Rule.REASSIGNMENT_COMPLETION it is written too
    when it completes a reassignment, electing or not."""
    # the heartbeat renews the session (after an expiry, a running broker's next one starts it again)
    state = set_registration(state, attrs.evolve(state.registration(broker), fenced=False, session=True))
    state = append_metadata(state, UnfenceBrokerRecord(broker))
    p = state.partition
    cfg = state.config
    if p.leader == NO_LEADER and (broker in p.replicas or cfg.follows(Rule.LAST_KNOWN_LEADER)
                                  or cfg.follows(Rule.UNCLEAN_ELECTION_IN_CHANGES)):
        d, _ = elect(state, p)
        elected = d.leader != NO_LEADER and not (cfg.has(Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE)
                                                 and d.leader in p.elr)
        # the builder's other effect: a reassignment whose adding replicas are all in
        # the ISR completes (PartitionChangeBuilder.build, completeReassignmentIfNeeded)
        completes = (cfg.follows(Rule.REASSIGNMENT_COMPLETION) and p.reassigning
                     and completed_reassignment(state, p) is not None)
        if elected or not state.elr_enabled or completes:
            state = change_partition(state, p)
    return state


def amend_registration(state: ClusterState, broker: int) -> ClusterState:
    """The same incarnation of ``broker`` registers again (Rule.REGISTRATION_AMENDED;
    ``ClusterControlManager.registerBroker`` with the incarnation id it holds): a
    RegisterBrokerRecord with the broker epoch kept and the registration's fencing and
    controlled shutdown copied, no partition change; the record's offset is the one
    its unfencing waits for (Rule.METADATA_RECORD_ORDER)."""
    reg = state.registration(broker)
    assert reg.broker_epoch is not None
    # its replay starts the broker's heartbeat state anew: no controlled shutdown offset
    state = set_registration(state, attrs.evolve(reg, controlled_shutdown_offset=None))
    return append_metadata(state, RegisterBrokerRecord(broker, reg.broker_epoch, True, reg.fenced,
                                                       reg.in_controlled_shutdown))


def registrations(state: ClusterState, broker: int) -> int:
    """How many times ``broker`` has registered (its broker epochs in the metadata
    log's RegisterBrokerRecords, the initial one included; an amended registration
    keeps its epoch)."""
    return len({r.broker_epoch for r in state.controller.metadata_log
                if isinstance(r, RegisterBrokerRecord) and r.broker == broker})


# ------------------------------------------------------------------ AlterPartition

def validate_alter_partition(state: ClusterState, req: AlterPartitionRequest) -> Optional[str]:
    """The controller's checks (§2.9.2, §6.3, §6.5.1 case 3); None when accepted.
    Rule.ALTER_PARTITION_VALIDATION: Kafka's order and eligibility of every
    proposed member (ReplicationControlManager.validateAlterPartitionData)."""
    p = state.partition
    reg = state.registration(req.src)
    if reg.broker_epoch != req.broker_epoch:
        return STALE_BROKER_EPOCH
    if state.config.follows(Rule.ALTER_PARTITION_VALIDATION):
        return _validate_alter_partition_kafka(state, req)
    if p.leader != req.src:
        return NOT_LEADER_OR_FOLLOWER
    if req.leader_epoch != p.leader_epoch:
        return FENCED_LEADER_EPOCH
    if req.partition_epoch != p.partition_epoch:
        return INVALID_UPDATE_VERSION
    if not req.isr <= frozenset(p.replicas) or req.src not in req.isr or _recovery_state_refused(state, req):
        return INVALID_REQUEST
    added_epochs = dict(req.added_broker_epochs)
    for added in req.isr - p.isr:
        areg = state.registration(added)
        if areg.fenced or areg.in_controlled_shutdown:
            return INELIGIBLE_REPLICA
        if areg.broker_epoch != added_epochs.get(added) and \
                not state.config.has(Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH):
            return INELIGIBLE_REPLICA
    return None


def _recovery_state_refused(state: ClusterState, req: AlterPartitionRequest) -> bool:
    """Under Rule.LEADER_RECOVERY_STATE, a request marked RECOVERING with more than
    the leader in its ISR, or marked RECOVERING while the partition is RECOVERED
    (``validateAlterPartitionData``, INVALID_REQUEST)."""
    return state.config.follows(Rule.LEADER_RECOVERY_STATE) and req.leader_recovery_state == RECOVERING and (
        len(req.isr) > 1 or state.partition.leader_recovery_state == RECOVERED)


def _validate_alter_partition_kafka(state: ClusterState, req: AlterPartitionRequest) -> Optional[str]:
    """ReplicationControlManager.validateAlterPartitionData: leader epoch first, a
    non-leader is an INVALID_REQUEST, every proposed member must be unfenced, not in
    controlled shutdown, and in the broker epoch the request names (None, Kafka's
    -1, skips that check; ineligibleReplicasForIsr), after the leader recovery
    state (``_recovery_state_refused``). A request in a leader or partition epoch
    ahead of the controller's is NOT_CONTROLLER (Kafka takes this controller for a
    deposed one): only a controller whose registration is not the log's replay
    meets one (``FailOverFromSnapshot``)."""
    p = state.partition
    if req.leader_epoch > p.leader_epoch or req.partition_epoch > p.partition_epoch:
        return NOT_CONTROLLER
    if req.leader_epoch < p.leader_epoch:
        return FENCED_LEADER_EPOCH
    if req.src != p.leader:
        return INVALID_REQUEST
    if req.partition_epoch < p.partition_epoch:
        return INVALID_UPDATE_VERSION
    if not req.isr <= frozenset(p.replicas) or p.leader not in req.isr:
        return INVALID_REQUEST
    if _recovery_state_refused(state, req):
        return INVALID_REQUEST
    epochs = dict(req.added_broker_epochs)
    for member in sorted(req.isr):
        reg = state.registration(member)
        if reg.fenced or reg.in_controlled_shutdown:
            return INELIGIBLE_REPLICA
        named = epochs.get(member)
        if named is not None and named != reg.broker_epoch and \
                not (member not in p.isr and state.config.has(Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH)):
            return INELIGIBLE_REPLICA
    return None


def alter_partition(state: ClusterState, req: AlterPartitionRequest) -> tuple[ClusterState, AlterPartitionResponse]:
    """Handle an AlterPartition request; the response carries no id yet (0). Under
    Rule.LEADER_RECOVERY_STATE the change takes the request's leader recovery state
    (RECOVERED from a leader: the first ISR change after an unclean election ends
    RECOVERING). Under Rule.REASSIGNMENT_COMPLETION a change that completes a reassignment and moves
    leadership away from the requester is committed and answered
    NEW_LEADER_ELECTED (ReplicationControlManager.alterPartition)."""
    error = validate_alter_partition(state, req)
    if error is not None:
        return state, AlterPartitionResponse(0, req.src, req.id, error)
    p = state.partition
    if state.config.follows(Rule.LEADER_RECOVERY_STATE):  # setTargetLeaderRecoveryState
        p = attrs.evolve(p, leader_recovery_state=req.leader_recovery_state)
    if state.config.follows(Rule.REASSIGNMENT_COMPLETION):
        state = change_partition(state, attrs.evolve(p, isr=req.isr))
        if state.partition.leader != req.src:
            return state, AlterPartitionResponse(0, req.src, req.id, NEW_LEADER_ELECTED)
    else:
        d = apply_elr_rules(state, attrs.evolve(p, isr=req.isr), p.isr - req.isr)
        d, bump, how = maybe_complete_reassignment(state, d)
        state = commit_election(state, d, how, bump)
    q = state.partition
    return state, AlterPartitionResponse(0, req.src, req.id, None, q.isr, q.leader_epoch, q.partition_epoch)


# ------------------------------------------------------------------- reassignment

def reassign(state: ClusterState, target: tuple[int, ...]) -> ClusterState:
    """AlterPartitionReassignments (§4.2): the growth change when replicas are added
    (replicas := current + adding, ISR and leader unchanged), else a removal that
    completes at once when the completion rules hold. Rule.REASSIGNMENT_REPLICA_ORDER:
    the replica set is the target followed by the removing replicas in id order
    (PartitionReassignmentReplicas)."""
    p = state.partition
    adding = frozenset(target) - frozenset(p.replicas)
    removing = frozenset(p.replicas) - frozenset(target)
    cfg = state.config
    if cfg.follows(Rule.REASSIGNMENT_REPLICA_ORDER):
        replicas = tuple(target) + tuple(sorted(removing))
    elif adding:
        replicas = p.replicas + tuple(b for b in target if b in adding)
    else:
        replicas = p.replicas
    d = attrs.evolve(p, replicas=replicas, adding=adding, removing=removing)
    if cfg.follows(Rule.REASSIGNMENT_COMPLETION):
        # changePartitionReassignment builds without Election.UNCLEAN
        return change_partition(state, d, unclean=False)
    if adding:
        return commit_partition(state, d)
    d, bump, how = maybe_complete_reassignment(state, d)
    return commit_election(state, d, how, bump)


def cancel_reassignment(state: ClusterState) -> ClusterState:
    """Revert an ongoing reassignment (§4.5): back to the original replicas,
    without the adding replicas in the ISR/ELR; bumps the leader epoch. Under
    Rule.CANCEL_WITH_ANY_ISR an ISR left empty becomes the first original replica
    (PartitionReassignmentRevert; allowed only with unclean leader election,
    reported as one). Under Rule.ELR_KEEPS_REMOVED_REPLICAS the adding replicas
    that leave the ISR below MinISR join the ELR, as any removal does."""
    p = state.partition
    original = tuple(r for r in p.replicas if r not in p.adding)
    isr = p.isr - p.adding
    forced = not isr and state.config.follows(Rule.CANCEL_WITH_ANY_ISR)
    if forced:
        isr = frozenset({original[0]})
    keep_lke = state.config.follows(Rule.LAST_KNOWN_LEADER)
    keep_elr = state.config.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS)
    d = attrs.evolve(p, replicas=original, isr=isr, elr=p.elr if keep_elr else p.elr - p.adding,
                     last_known_elr=p.last_known_elr if keep_lke else p.last_known_elr - p.adding,
                     adding=frozenset(), removing=frozenset())
    if d.leader in p.adding or d.leader not in d.isr:
        d = attrs.evolve(d, leader=NO_LEADER)
    d, how = elect_with_elr(state, d, p.isr - d.isr)
    state = commit_election(state, d, how, True)
    if forced and how is None:
        state = _report(state, UNCLEAN_LEADER_ELECTION, original[0])
    return state


def preferred_election_refused(state: ClusterState) -> Optional[str]:
    """Why ElectLeaders with ElectionType.PREFERRED writes nothing now, in Kafka's
    words (``ReplicationControlManager.electLeader``), or None when it writes a
    partition change: ELECTION_NOT_NEEDED while the first replica leads
    (``hasPreferredLeader``); PREFERRED_LEADER_NOT_AVAILABLE when the change it
    would make (``elect_preferred_leader``) changes nothing."""
    p = state.partition
    if p.replicas and p.leader == p.replicas[0]:
        return f"ELECTION_NOT_NEEDED: the preferred replica {p.replicas[0]} leads already"
    if len(elect_preferred_leader(state).controller.metadata_log) == len(state.controller.metadata_log):
        return (f"PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica {p.replicas[0] if p.replicas else None} "
                f"cannot lead and nothing else changes")
    return None


def elect_preferred_leader(state: ClusterState) -> ClusterState:
    """ElectLeaders with ElectionType.PREFERRED (an operator's request, or the
    controller's leader balancing): one partition change made as any other
    (``change_partition``: under Rule.REASSIGNMENT_COMPLETION a reassignment that
    can complete completes first, as Kafka's ``build`` does) with the preferred
    election (``elect``'s ``preferred``). Nothing is written when nothing changes."""
    return change_partition(state, state.partition, unclean=False, preferred=True)


def can_cancel_reassignment(state: ClusterState) -> bool:
    """§4.5: reverting must leave MinISR ISR members. Rule.CANCEL_WITH_ANY_ISR: one,
    or none with unclean leader election (cancelPartitionReassignment)."""
    p = state.partition
    cfg = state.config
    if not p.reassigning:
        return False
    if cfg.follows(Rule.CANCEL_WITH_ANY_ISR):
        return bool(p.isr - p.adding) or state.unclean_leader_election
    return len(p.isr - p.adding) >= state.min_isr


# ------------------------------------------------------- dynamic configuration

def alter_min_isr(state: ClusterState, min_isr: int) -> ClusterState:
    """IncrementalAlterConfigs of the topic's ``min.insync.replicas``
    (``ConfigurationControlManager.incrementalAlterConfig``): a ``ConfigRecord``,
    then one partition change, which moves the partition epoch (fencing an
    AlterPartition proposed under the old MinISR) and applies §5.2.1 case G under
    the new MinISR: ELR and LastKnownELR emptied when the ISR has MinISR members,
    else kept (KIP-966: an ELR member is known complete only while the HWM is
    frozen). Under Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, Kafka's: both emptied whatever
    the ISR, and the change written only when one was not empty
    (``createClearElrRecordsAsNeeded``'s ``ClearElrRecord``, replayed as
    ``ReplicationControlManager.removeTopicElrs``, a merge). Under
    Variant.MIN_ISR_CHANGE_KEEPS_ELR only the ConfigRecord is written. The fault budget's floor
    (``History.min_isr_floor``) follows the lowest value ever set. With the ELR
    feature off (Rule.ELR_FEATURE_LEVEL) Kafka writes no ClearElrRecord."""
    ctrl = attrs.evolve(state.controller, min_isr=min_isr)
    state = append_metadata(attrs.evolve(state, controller=ctrl), ConfigRecord(MIN_INSYNC_REPLICAS, min_isr))
    floor = state.history.min_isr_floor
    state = set_history(state, min_isr_floor=min(state.config.min_isr if floor is None else floor, min_isr))
    p = state.partition
    if state.config.has(Variant.MIN_ISR_CHANGE_KEEPS_ELR):
        return state
    if state.config.follows(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE):
        return remove_topic_elrs(state) if state.elr_enabled else state
    if len(p.isr) >= min_isr:
        rec = PartitionChangeRecord(elr=frozenset(), last_known_elr=frozenset())
    else:
        rec = PartitionChangeRecord(elr=p.elr, last_known_elr=p.last_known_elr)
    return append_metadata(state, rec, merge(p, rec))


def alter_cluster_min_isr(state: ClusterState, min_isr: int) -> ClusterState:
    """IncrementalAlterConfigs of the cluster-level ``min.insync.replicas``
    (resource BROKER with the empty name), Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR:
    its ``ConfigRecord``, then Kafka's ``ClearElrRecord`` with no topic name
    (``createClearElrRecordsAsNeeded``), replayed as ``replayClearAllElrs``: the
    topic's ELR and LastKnownELR emptied although its own MinISR, which overrides
    the default, is unchanged. The topic's MinISR and the fault budget's floor
    stay. Under Variant.MIN_ISR_CHANGE_KEEPS_ELR, or with the ELR feature off
    (Rule.ELR_FEATURE_LEVEL), only the ConfigRecord is written."""
    state = append_metadata(state, ConfigRecord(MIN_INSYNC_REPLICAS, min_isr, cluster_default=True))
    if state.config.has(Variant.MIN_ISR_CHANGE_KEEPS_ELR) or not state.elr_enabled:
        return state
    return remove_topic_elrs(state)


def remove_topic_elrs(state: ClusterState) -> ClusterState:
    """Kafka's replay of a ``ClearElrRecord`` (``ReplicationControlManager.removeTopicElrs``):
    a partition with an ELR or LastKnownELR has both emptied (a merge, so the
    partition epoch moves); one with neither is left as it is."""
    p, replayed = state.partition, state.controller.log_partition
    if not (p.elr or p.last_known_elr or replayed.elr or replayed.last_known_elr):
        return state   # it changes no registration: left out of the log, as the bridge leaves Kafka's out
    rec = ClearElrRecord()
    # removeTopicElrs merges without updating Kafka's ELR index (Rule.CLEARED_ELR_STAYS_INDEXED)
    return append_metadata(state, rec, merge(p, rec), index=False)


def alter_unclean_leader_election(state: ClusterState, enable: bool) -> ClusterState:
    """IncrementalAlterConfigs of the topic's ``unclean.leader.election.enable``
    (ch7): its ``ConfigRecord``, nothing else (Kafka's controller reads the config
    at its next unclean election, ``maybeElectUncleanLeaders``, and at its next
    partition change, ``Election.UNCLEAN``)."""
    ctrl = attrs.evolve(state.controller, unclean_leader_election=enable)
    return append_metadata(attrs.evolve(state, controller=ctrl), ConfigRecord(UNCLEAN_LEADER_ELECTION_ENABLE, enable))


def update_elr_feature(state: ClusterState, enabled: bool) -> ClusterState:
    """UpdateFeatures of ``eligible.leader.replicas.version`` (Rule.ELR_FEATURE_LEVEL;
    ``ConfigurationControlManager.updateFeatures``): an upgrade to 1 first writes
    the cluster-level ``min.insync.replicas`` at the controller's static value when
    no cluster-level value was ever set (``maybeGenerateElrSafetyRecords``), then
    the ``FeatureLevelRecord``; a downgrade to 0 writes the record alone. No
    partition registration changes: an ELR written before a downgrade stays until
    the partition's next change empties it."""
    if enabled and not any(isinstance(r, ConfigRecord) and r.cluster_default and r.name == MIN_INSYNC_REPLICAS
                           for r in state.controller.metadata_log):
        state = append_metadata(state, ConfigRecord(MIN_INSYNC_REPLICAS, STATIC_MIN_INSYNC_REPLICAS,
                                                    cluster_default=True))
    state = attrs.evolve(state, controller=attrs.evolve(state.controller, elr_enabled=enabled))
    return append_metadata(state, FeatureLevelRecord(ELR_FEATURE, int(enabled)))


# ------------------------------------------------------------- unclean recovery

def log_rank(state: ClusterState, broker: int) -> tuple[int, int]:
    """GetReplicaLogInfo answer: (last epoch, LEO) of the broker's replica (§5.3.2)."""
    r = state.replica(broker)
    if r is None:
        return (-1, 0)
    entries = epoch_entries(r.log)
    return (entries[-1][0] if entries else -1, r.leo)


def _answers(state: ClusterState, broker: int) -> bool:
    """A replica answers log inspection when its broker runs, unfenced, hosting it."""
    b = state.broker(broker)
    return b.status == BrokerStatus.RUNNING and _unfenced(state, broker) and b.replica is not None


def recovery_candidates(state: ClusterState) -> tuple[int, ...]:
    """Replicas unclean recovery may elect now (§5.3.1); empty when it cannot run.

    balanced: ISR and ELR empty, and every LastKnownELR member has answered.
    proactive: no leader and no unfenced ISR/ELR member; any answering replica.
    manual / none: never automatic.
    """
    p = state.partition
    strategy = state.config.unclean_recovery
    if p.leader != NO_LEADER or p.isr:
        return ()
    if strategy == "balanced":
        if p.elr or not p.last_known_elr or not all(_answers(state, b) for b in p.last_known_elr):
            return ()
        return tuple(r for r in p.replicas if r in p.last_known_elr)
    if strategy == "proactive":
        return tuple(r for r in p.replicas if _answers(state, r))
    return ()


def unclean_recovery(state: ClusterState) -> ClusterState:
    """Elect the candidate with the highest (epoch, offset) — first in replica
    order on a tie — and report potential data loss (§5.3.2)."""
    candidates = recovery_candidates(state)
    if state.config.unclean_recovery == "balanced" and state.config.has(Variant.BALANCED_RECOVERY_ANY_MEMBER):
        best = candidates[0]
    else:
        best = max(candidates, key=lambda b: (log_rank(state, b), -candidates.index(b)))
    p = state.partition
    d = marked_recovering(state, attrs.evolve(p, leader=best, isr=frozenset({best}), elr=p.elr - {best},
                                              last_known_elr=p.last_known_elr - {best}))
    state = commit_partition(state, apply_elr_rules(state, d, frozenset()))
    return _report(state, state.config.unclean_recovery, best)


def _report(state: ClusterState, mechanism: str, leader: int) -> ClusterState:
    """Report potential data loss (§5.3.2). The elected replica becomes the log the
    others recover from, so it no longer counts as unclean (§5.1.2)."""
    h = state.history
    report = UncleanElectionReport(mechanism, leader, state.partition.leader_epoch)
    return set_history(state, unclean_elections=h.unclean_elections + (report,), unclean=h.unclean - {leader})


def unclean_election_candidate(state: ClusterState) -> Optional[int]:
    """Legacy unclean leader election (ch7): with no ISR and no leader, the first
    unfenced replica in assignment order, when the config allows it. Under
    Rule.PERIODIC_UNCLEAN_ELECTION (ReplicationControlManager.maybeElectUncleanLeaders):
    with no leader, whoever the builder's election with Election.UNCLEAN elects,
    among the replicas a reassignment the builder completes first leaves."""
    p = state.partition
    if not state.unclean_leader_election or p.leader != NO_LEADER:
        return None
    if state.config.follows(Rule.PERIODIC_UNCLEAN_ELECTION):
        leader = elect(state, completed_first(state, p)[0])[0].leader
        return None if leader == NO_LEADER else leader
    if p.isr:
        return None
    for r in p.replicas:
        if _unfenced(state, r):
            return r
    return None


def unclean_leader_election(state: ClusterState) -> ClusterState:
    """Elect the candidate with ISR = [it]; the ELR and LastKnownELR guarantees are
    void after it, so both are cleared. Reported as potential data loss. Under
    Rule.PERIODIC_UNCLEAN_ELECTION: the change Kafka's builder makes with the
    partition's own targets (``change_partition``, electLeader)."""
    leader = unclean_election_candidate(state)
    assert leader is not None
    if state.config.follows(Rule.PERIODIC_UNCLEAN_ELECTION):
        return change_partition(state, state.partition)
    d = marked_recovering(state, attrs.evolve(state.partition, leader=leader, isr=frozenset({leader}),
                                              elr=frozenset(), last_known_elr=frozenset()))
    state = commit_partition(state, d)
    return _report(state, UNCLEAN_LEADER_ELECTION, leader)
