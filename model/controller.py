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
from .log import epoch_entries
from .state import (NO_LEADER, NO_LEADER_CHANGE, AlterPartitionRequest, AlterPartitionResponse,
                    BrokerStatus, ClusterState, FenceBrokerRecord, PartitionChangeRecord,
                    PartitionMetadata, RegisterBrokerRecord, UncleanElectionReport,
                    UnfenceBrokerRecord, merge)
from .update import append_metadata, set_history, set_registration

# AlterPartition error codes (Kafka's names)
STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
INVALID_REQUEST = "INVALID_REQUEST"


# ------------------------------------------------------------------ change builder

def commit_partition(state: ClusterState, draft: PartitionMetadata, bump_leader_epoch: bool = False) -> ClusterState:
    """Commit ``draft`` as one PartitionChangeRecord holding only the changed fields.

    The record bumps the partition epoch, and the leader epoch when the leader
    changes or ``bump_leader_epoch`` (completed reassignment, §2.3.1). Nothing is
    written when nothing changed.
    """
    p = state.partition
    rec = PartitionChangeRecord(
        leader=draft.leader if (draft.leader != p.leader or bump_leader_epoch) else NO_LEADER_CHANGE,
        isr=draft.isr if draft.isr != p.isr else None,
        elr=draft.elr if draft.elr != p.elr else None,
        last_known_elr=draft.last_known_elr if draft.last_known_elr != p.last_known_elr else None,
        replicas=draft.replicas if draft.replicas != p.replicas else None,
        adding=draft.adding if draft.adding != p.adding else None,
        removing=draft.removing if draft.removing != p.removing else None,
    )
    if rec == PartitionChangeRecord():
        return state
    return append_metadata(state, rec, merge(p, rec))


def _unfenced(state: ClusterState, broker: int) -> bool:
    return not state.registration(broker).fenced


def apply_elr_rules(state: ClusterState, d: PartitionMetadata, removed_from_isr: frozenset[int]) -> PartitionMetadata:
    """ISR removals move to the ELR while the ISR is below MinISR (§2.9, §5.2.1
    cases A, C); once the ISR reaches MinISR the ELR and LastKnownELR are emptied
    (case G, §5.3.1). ISR members leave the ELR and LastKnownELR."""
    cfg = state.config
    if len(d.isr) >= cfg.min_isr:
        if cfg.has(Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR):
            return attrs.evolve(d, elr=d.elr - d.isr, last_known_elr=d.last_known_elr - d.isr)
        return attrs.evolve(d, elr=frozenset(), last_known_elr=frozenset())
    if cfg.has(Variant.NO_ELR):
        removed_from_isr = frozenset()
    elr = (d.elr | (removed_from_isr & frozenset(d.replicas))) - d.isr
    return attrs.evolve(d, elr=elr, last_known_elr=d.last_known_elr - d.isr)


def elect(state: ClusterState, d: PartitionMetadata, order: Optional[tuple[int, ...]] = None) -> PartitionMetadata:
    """Clean election (§2.8): keep a still-valid leader; else the first unfenced ISR
    member; else the first unfenced ELR member, moved to the ISR (case B); else
    NoLeader. ``order`` defaults to the replica order."""
    order = d.replicas if order is None else order
    if d.leader in d.isr and _unfenced(state, d.leader):
        return d
    for r in order:
        if r in d.isr and _unfenced(state, r):
            return attrs.evolve(d, leader=r)
    for r in order:
        if r in d.elr and _unfenced(state, r):
            return attrs.evolve(d, leader=r, isr=d.isr | {r}, elr=d.elr - {r})
    return attrs.evolve(d, leader=NO_LEADER)


def maybe_complete_reassignment(state: ClusterState, d: PartitionMetadata) -> tuple[PartitionMetadata, bool]:
    """Completion phase (§4.2 step 3) when both rules hold: the final ISR has at
    least MinISR members, and every adding replica is in it. Returns the draft and
    whether the leader epoch must be bumped."""
    if not d.reassigning:
        return d, False
    final_isr = d.isr - d.removing
    if not d.adding <= final_isr or (len(final_isr) < state.config.min_isr and
                                     not state.config.has(Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR)):
        return d, False
    target = d.target_replicas
    done = attrs.evolve(d, replicas=target, isr=final_isr, elr=d.elr - d.removing,
                        last_known_elr=d.last_known_elr - d.removing,
                        adding=frozenset(), removing=frozenset())
    if done.leader in d.removing or done.leader == NO_LEADER:
        done = elect(state, attrs.evolve(done, leader=NO_LEADER), target)
    return apply_elr_rules(state, done, frozenset()), True


# --------------------------------------------------------------- broker lifecycle

def register_broker(state: ClusterState, broker: int, clean: bool) -> ClusterState:
    """Accept a BrokerRegistration (§8.1): the broker epoch is the record's offset.
    An empty broker epoch (unclean shutdown) moves the broker's replica from the
    ELR to the LastKnownELR (§5.2, §5.3.1)."""
    epoch = len(state.controller.metadata_log)
    state = set_registration(state, attrs.evolve(state.registration(broker), broker_epoch=epoch, fenced=True))
    state = append_metadata(state, RegisterBrokerRecord(broker, epoch, clean))
    p = state.partition
    if not clean and broker in p.elr and not state.config.has(Variant.UNCLEAN_REGISTRATION_KEEPS_ELR):
        state = commit_partition(state, attrs.evolve(p, elr=p.elr - {broker},
                                                     last_known_elr=p.last_known_elr | {broker}))
    return state


def fence_broker(state: ClusterState, broker: int) -> ClusterState:
    """Fence a broker (§2.8, §2.9.1): remove it from leadership and the ISR, elect a
    new leader, and move it to the ELR when the new ISR is below MinISR."""
    state = set_registration(state, attrs.evolve(state.registration(broker), fenced=True))
    state = append_metadata(state, FenceBrokerRecord(broker))
    p = state.partition
    if broker not in p.isr and broker != p.leader:
        return state
    d = attrs.evolve(p, isr=p.isr - {broker}, leader=NO_LEADER if p.leader == broker else p.leader)
    if not d.isr and state.config.has(Variant.NO_ELR):
        # Last replica standing: the pre-KIP-966 controller keeps it in the ISR.
        return commit_partition(state, attrs.evolve(d, isr=p.isr))
    if d.leader == NO_LEADER:
        d = elect(state, d)
    d = apply_elr_rules(state, d, frozenset({broker}))
    return commit_partition(state, d)


def unfence_broker(state: ClusterState, broker: int) -> ClusterState:
    """Unfence (heartbeat, §8.1); with no leader, an unfenced ELR member is elected (§2.8)."""
    state = set_registration(state, attrs.evolve(state.registration(broker), fenced=False))
    state = append_metadata(state, UnfenceBrokerRecord(broker))
    p = state.partition
    if p.leader == NO_LEADER and broker in p.replicas:
        d = elect(state, p)
        if d.leader != NO_LEADER:
            state = commit_partition(state, apply_elr_rules(state, d, frozenset()))
    return state


# ------------------------------------------------------------------ AlterPartition

def validate_alter_partition(state: ClusterState, req: AlterPartitionRequest) -> Optional[str]:
    """The controller's checks (§2.9.2, §6.3, §6.5.1 case 3); None when accepted."""
    p = state.partition
    reg = state.registration(req.src)
    if reg.broker_epoch != req.broker_epoch:
        return STALE_BROKER_EPOCH
    if p.leader != req.src:
        return NOT_LEADER_OR_FOLLOWER
    if req.leader_epoch != p.leader_epoch:
        return FENCED_LEADER_EPOCH
    if req.partition_epoch != p.partition_epoch:
        return INVALID_UPDATE_VERSION
    if not req.isr <= frozenset(p.replicas) or req.src not in req.isr:
        return INVALID_REQUEST
    added_epochs = dict(req.added_broker_epochs)
    for added in req.isr - p.isr:
        areg = state.registration(added)
        if areg.fenced:
            return INELIGIBLE_REPLICA
        if areg.broker_epoch != added_epochs.get(added) and \
                not state.config.has(Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH):
            return INELIGIBLE_REPLICA
    return None


def alter_partition(state: ClusterState, req: AlterPartitionRequest) -> tuple[ClusterState, AlterPartitionResponse]:
    """Handle an AlterPartition request; the response carries no id yet (0)."""
    error = validate_alter_partition(state, req)
    if error is not None:
        return state, AlterPartitionResponse(0, req.src, req.id, error)
    p = state.partition
    d = apply_elr_rules(state, attrs.evolve(p, isr=req.isr), p.isr - req.isr)
    d, bump = maybe_complete_reassignment(state, d)
    state = commit_partition(state, d, bump)
    q = state.partition
    return state, AlterPartitionResponse(0, req.src, req.id, None, q.isr, q.leader_epoch, q.partition_epoch)


# ------------------------------------------------------------------- reassignment

def reassign(state: ClusterState, target: tuple[int, ...]) -> ClusterState:
    """AlterPartitionReassignments (§4.2): the growth change when replicas are added
    (replicas := current + adding, ISR and leader unchanged), else a removal that
    completes at once when the completion rules hold."""
    p = state.partition
    adding = frozenset(target) - frozenset(p.replicas)
    removing = frozenset(p.replicas) - frozenset(target)
    if adding:
        d = attrs.evolve(p, replicas=p.replicas + tuple(b for b in target if b in adding),
                         adding=adding, removing=removing)
        return commit_partition(state, d)
    d, bump = maybe_complete_reassignment(state, attrs.evolve(p, removing=removing))
    return commit_partition(state, d, bump)


def cancel_reassignment(state: ClusterState) -> ClusterState:
    """Revert an ongoing reassignment (§4.5): back to the original replicas,
    without the adding replicas in the ISR/ELR; bumps the leader epoch."""
    p = state.partition
    original = tuple(r for r in p.replicas if r not in p.adding)
    d = attrs.evolve(p, replicas=original, isr=p.isr - p.adding, elr=p.elr - p.adding,
                     last_known_elr=p.last_known_elr - p.adding,
                     adding=frozenset(), removing=frozenset())
    if d.leader in p.adding:
        d = elect(state, attrs.evolve(d, leader=NO_LEADER))
    return commit_partition(state, apply_elr_rules(state, d, frozenset()), True)


def can_cancel_reassignment(state: ClusterState) -> bool:
    p = state.partition
    return p.reassigning and len(p.isr - p.adding) >= state.config.min_isr


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
    d = attrs.evolve(p, leader=best, isr=frozenset({best}), elr=p.elr - {best},
                     last_known_elr=p.last_known_elr - {best})
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
    unfenced replica in assignment order, when the config allows it."""
    p = state.partition
    if not state.config.unclean_leader_election or p.leader != NO_LEADER or p.isr:
        return None
    for r in p.replicas:
        if _unfenced(state, r):
            return r
    return None


def unclean_leader_election(state: ClusterState) -> ClusterState:
    """Elect the candidate with ISR = [it]; the ELR and LastKnownELR guarantees are
    void after it, so both are cleared. Reported as potential data loss."""
    leader = unclean_election_candidate(state)
    assert leader is not None
    d = attrs.evolve(state.partition, leader=leader, isr=frozenset({leader}),
                     elr=frozenset(), last_known_elr=frozenset())
    state = commit_partition(state, d)
    return _report(state, "unclean_leader_election", leader)
