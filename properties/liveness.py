"""Liveness goals: what must hold once faults stop and the cluster heals
(``model.healing``), checked at the end of a healing phase.

Chapter 9 lists seven liveness properties of the protocol's formal model
("clusters may experience failures but are allowed to recover and so should
eventually allow stuck operations to complete"); four more say what a healed
partition looks like. Each goal reads the observable projection
(``model.observe``: what an implementation shows too, so in lockstep they judge
the implementation as well) and, for the writes, the model's history of produce
requests, which an implementation's outcomes equal in lockstep.

Where the configuration legitimately cannot make progress — the partition is
leaderless and no replica may lead: ISR and ELR empty (and, under
Rule.LAST_KNOWN_LEADER, no last known leader), unclean recovery ``none`` or
``manual`` and unclean leader election off — the goals that need a leader are not judged, and
``waiting_for`` says why (the operator's decision the partition waits for), so
a report says so rather than failing. Likewise the acknowledged-writes goal is
not judged outside the fault budget or after an unguarded election
(``guarantees_apply``), where the protocol no longer promises the writes.
"""

from __future__ import annotations

from typing import Callable, Optional

from model import (NO_LEADER, AlterPartitionRequest, AlterPartitionResponse, BrokerStatus, ClusterState,
                   Observation, Role, Rule, observe)

from model.healing import rounds, schedule

from .base import Property, Violation, fmt_set, guarantees_apply


#: The unclean recovery strategies the controller runs by itself (§5.3.1); "none"
#: and "manual" wait for an operator.
AUTOMATIC_RECOVERY = ("balanced", "proactive")


def waiting_for(state: ClusterState) -> Optional[str]:
    """Why the partition cannot have a leader in ``state`` whatever happens next
    without an operator (None: it can): no replica may lead under the
    configuration."""
    p, config = state.partition, state.config
    if p.leader != NO_LEADER:
        return None
    electable = (p.isr | p.elr) & set(p.replicas)
    if config.follows(Rule.LAST_KNOWN_LEADER):
        electable |= p.last_known_elr & set(p.replicas)
    if electable or config.unclean_recovery in AUTOMATIC_RECOVERY or state.unclean_leader_election:
        return None
    return (f"no replica may lead: ISR and ELR are empty, unclean recovery is \"{config.unclean_recovery}\" (never "
            f"automatic) and unclean leader election is off; the partition waits for an operator")


Goal = Callable[[ClusterState, Observation], tuple[Violation, ...]]


def _goal(name: str, section: str, description: str, needs_leader: bool = False) -> Callable[[Goal], Property]:
    """A liveness ``Property`` of a goal over (state, observation); one that
    ``needs_leader`` is not judged while the partition is ``waiting_for`` one."""
    def make(goal: Goal) -> Property:
        def check(state: ClusterState) -> tuple[Violation, ...]:
            if needs_leader and waiting_for(state) is not None:
                return ()
            return goal(state, observe(state))
        return Property(name, section, description, check)
    return make


def _v(name: str, message: str, replicas: tuple[int, ...] = ()) -> tuple[Violation, ...]:
    return (Violation(name, message, replicas),)


@_goal("BrokersStarted", "ch9; §8.1", "every broker has completed start-up: it is running")
def BROKERS_STARTED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    stuck = tuple(b.id for b in obs.brokers if b.status != BrokerStatus.RUNNING)
    return _v("BrokersStarted", f"broker(s) {list(stuck)} did not complete start-up "
              f"({', '.join(f'{b.id}: {b.status.value}' for b in obs.brokers if b.id in stuck)})", stuck) \
        if stuck else ()


@_goal("BrokersUnfenced", "ch9; §8.1", "every broker is unfenced: its registration took its heartbeats")
def BROKERS_UNFENCED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    fenced = tuple(r.broker for r in obs.registrations if r.fenced)
    return _v("BrokersUnfenced", f"broker(s) {list(fenced)} are still fenced", fenced) if fenced else ()


@_goal("AlterPartitionCompletes", "ch9; §2.9.2",
       "every AlterPartition request completed, accepted or rejected: none in flight, no ISR change pending")
def ALTER_PARTITION_COMPLETES(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    in_flight = [m.id for m in obs.messages if isinstance(m, (AlterPartitionRequest, AlterPartitionResponse))]
    pending = tuple(b.id for b in obs.brokers if b.replica is not None and b.replica.pending_isr is not None)
    if not in_flight and not pending:
        return ()
    return _v("AlterPartitionCompletes", f"AlterPartition message(s) {in_flight} still in flight; leader(s) "
              f"{list(pending)} still wait for a proposed ISR", pending)


@_goal("MetadataConverges", "ch9; §2.3.2", "every broker's metadata log has caught up with the controller's")
def METADATA_CONVERGES(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    behind = tuple(b.id for b in obs.brokers if b.metadata_offset != obs.metadata_end_offset)
    return _v("MetadataConverges", f"broker(s) {list(behind)} applied metadata up to "
              f"{[b.metadata_offset for b in obs.brokers if b.id in behind]}, the controller's log ends at "
              f"{obs.metadata_end_offset}", behind) if behind else ()


@_goal("WritesAnswered", "ch9", "every write was acknowledged, positively or negatively", needs_leader=True)
def WRITES_ANSWERED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    pending = state.history.pending
    return _v("WritesAnswered", f"write(s) {[w.value for w in pending]} never answered") if pending else ()


@_goal("AcknowledgedWritesReplicated", "ch9",
       "every positively acknowledged write is on every replica of the partition", needs_leader=True)
def ACKNOWLEDGED_WRITES_REPLICATED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    replicas = {b.id: b.replica for b in obs.brokers if b.id in obs.partition.replicas}
    missing = []
    for w in state.history.acked:
        lacking = [b for b, r in replicas.items()
                   if r is None or w.offset >= len(r.log) or r.log[w.offset].value != w.value]
        if lacking:
            missing.append(f"value {w.value} at offset {w.offset} not on {lacking}")
    return _v("AcknowledgedWritesReplicated", "; ".join(missing[:3]) + ("…" if len(missing) > 3 else "")) \
        if missing else ()


@_goal("ReassignmentCompletes", "ch9; ch4", "no reassignment is left in progress", needs_leader=True)
def REASSIGNMENT_COMPLETES(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    p = obs.partition
    if not p.reassigning:
        return ()
    return _v("ReassignmentCompletes", f"reassignment still in progress: replicas {list(p.replicas)}, adding "
              f"{fmt_set(p.adding)}, removing {fmt_set(p.removing)}", tuple(sorted(p.adding | p.removing)))


@_goal("LeaderElected", "§5; ch7",
       "the partition has a leader whenever a replica that may lead under the configuration is alive",
       needs_leader=True)
def LEADER_ELECTED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    p = obs.partition
    if p.leader != NO_LEADER:
        return ()
    return _v("LeaderElected", f"no leader although a replica may lead: ISR {fmt_set(p.isr)}, ELR "
              f"{fmt_set(p.elr)}, LastKnownELR {fmt_set(p.last_known_elr)}, replicas {list(p.replicas)}")


@_goal("IsrRestored", "§2.9", "every replica is back in the ISR, and ELR and LastKnownELR are empty "
       "(with the ELR feature off, Rule.ELR_FEATURE_LEVEL, the ELR only: Kafka writes no LastKnownELR then)",
       needs_leader=True)
def ISR_RESTORED(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    p = obs.partition
    out = set(p.replicas) - p.isr
    # With the feature off Kafka's builder never writes the LastKnownELR (maybeUpdateLastKnownLeader):
    # one kept from before the downgrade stays until the feature is on again.
    known = p.last_known_elr if obs.elr_enabled else frozenset()
    if not out and not p.elr and not known:
        return ()
    return _v("IsrRestored", f"ISR {fmt_set(p.isr)} of replicas {list(p.replicas)}, ELR {fmt_set(p.elr)}, "
              f"LastKnownELR {fmt_set(known)}", tuple(sorted(out | p.elr | known)))


@_goal("HwmReachesLeo", "§2.5", "every replica holds the leader's log, and its HWM is the leader's LEO",
       needs_leader=True)
def HWM_REACHES_LEO(state: ClusterState, obs: Observation) -> tuple[Violation, ...]:
    by_id = {b.id: b.replica for b in obs.brokers}
    leader = by_id.get(obs.partition.leader)
    if leader is None or leader.role != Role.LEADER:
        return _v("HwmReachesLeo", f"leader {obs.partition.leader} hosts no leading replica")
    behind = [(b, r.leo if r else None, r.hwm if r else None) for b, r in by_id.items()
              if b in obs.partition.replicas and (r is None or r.log != leader.log or r.hwm != leader.leo)]
    if not behind:
        return ()
    return _v("HwmReachesLeo", f"leader LEO {leader.leo}; behind (broker, LEO, HWM): {behind}",
              tuple(b for b, _, _ in behind))


#: Every liveness goal, in a stable order: chapter 9's seven, then the four of a
#: healed partition.
LIVENESS: tuple[Property, ...] = (
    BROKERS_STARTED, BROKERS_UNFENCED, ALTER_PARTITION_COMPLETES, METADATA_CONVERGES, WRITES_ANSWERED,
    ACKNOWLEDGED_WRITES_REPLICATED, REASSIGNMENT_COMPLETES, LEADER_ELECTED, ISR_RESTORED, HWM_REACHES_LEO,
)


def check_liveness(state: ClusterState) -> tuple[Violation, ...]:
    """Every goal's violations in ``state`` (a healed one), in ``LIVENESS`` order."""
    return tuple(v for goal in LIVENESS for v in goal.check(state))


def met_by(state: ClusterState) -> dict[str, Optional[int]]:
    """Healing ``state`` (``model.healing``), the round after which each goal held
    for good (0-based: held at the end of that round and of every later one), or
    None when it did not hold at the end of the phase. How far below the bound
    (``model.healing.rounds``) each goal is met."""
    ends: list[ClusterState] = []
    current = -1
    for number, _, after in schedule(state):
        while current < number - 1:   # rounds that took no action end where the last did
            ends.append(ends[-1] if ends else state)
            current += 1
        if current < number:
            ends.append(after)
            current = number
        ends[-1] = after
    ends += [ends[-1] if ends else state] * (rounds(state.config) - len(ends))
    out: dict[str, Optional[int]] = {}
    for goal in LIVENESS:
        held = [not goal.check(end) for end in ends]
        out[goal.name] = None if not held[-1] else next(r for r in range(len(held)) if all(held[r:]))
    return out
