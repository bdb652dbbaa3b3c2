"""``PartitionChangeBuilder``: the controller's draft of a change to the
partition registration, with the election and ELR rules, built into one
PartitionChangeRecord holding only the fields that changed (§2.3.2, §2.8,
§2.9, §5.2.1, §5.3.1).

Choices are deterministic: the first eligible replica in replica (assignment)
order. Kafka's rules (``model.Rule``) are followed when the config says so.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from model import NO_LEADER, NO_LEADER_CHANGE, RECOVERING, Config, Rule

from .bugs import Bug
from .metadata import PartitionChangeRecord, PartitionRegistration

LAST_KNOWN_LEADER = "last_known_leader"
UNCLEAN_LEADER_ELECTION = "unclean_leader_election"


class PartitionChangeBuilder:
    def __init__(self, partition: PartitionRegistration, is_acceptable_leader: Callable[[int], bool],
                 config: Config, bugs: frozenset, min_isr: Optional[int] = None,
                 unclean_leader_election: Optional[bool] = None, elr_enabled: bool = True) -> None:
        self.partition = partition
        self.is_acceptable_leader = is_acceptable_leader  # unfenced (§2.8)
        self.config = config
        # the topic's configs as the controller holds them (None: the creation's)
        self.min_isr = config.min_isr if min_isr is None else min_isr
        self.unclean_leader_election = (config.unclean_leader_election if unclean_leader_election is None
                                        else unclean_leader_election)
        #: the ELR feature level the controller holds (Kafka's eligibleLeaderReplicasEnabled)
        self.elr_enabled = elr_enabled
        self.bugs = bugs
        self.election: Optional[str] = None   # how the leader was elected when not cleanly
        self.target_replicas: tuple[int, ...] = partition.replicas
        self.target_isr: frozenset[int] = partition.isr
        self.target_elr: frozenset[int] = partition.elr
        self.target_last_known_elr: frozenset[int] = partition.last_known_elr
        self.target_adding: frozenset[int] = partition.adding
        self.target_removing: frozenset[int] = partition.removing
        self.target_leader: int = partition.leader
        self.target_leader_recovery_state: str = partition.leader_recovery_state
        self.bump_leader_epoch = False

    # ------------------------------------------------------------- elections (§2.8)

    def elect_leader(self, order: Optional[Iterable[int]] = None, unclean: bool = True,
                     preferred: bool = False, unclean_shutdown: frozenset[int] = frozenset()) -> None:
        """With ``preferred`` (``Election.PREFERRED``, ``electPreferredLeader``) the
        first target replica when it is an unfenced ISR member. Otherwise, and
        then: keep a leader that is still in the ISR and unfenced; else the first
        unfenced ISR member; else the first unfenced ELR member, which moves to the
        ISR (§5.2.1 case B); else, under Kafka's rules, the last known leader once
        ISR and ELR are empty (``canElectLastKnownLeader``), then with unclean
        leader election the first unfenced replica (``Election.UNCLEAN``), each
        an unclean election with ISR = [it]; else NO_LEADER."""
        order = tuple(self.target_replicas if order is None else order)
        ok = self.is_acceptable_leader
        first = self.target_replicas[0] if self.target_replicas else NO_LEADER
        # isValidNewLeader: an ISR member, or an ELR member while the ISR is empty
        valid = first in self.target_isr or (not self.target_isr and first in self.target_elr)
        if Bug.PREFERRED_ELECTION_IGNORES_ISR in self.bugs:
            valid = first in self.target_replicas          # BUG: any replica, caught up or not
        if preferred and first != NO_LEADER and valid and ok(first):
            self.target_leader = first
            self.target_isr = self.target_isr | {first} if first in self.target_elr else self.target_isr
            self.target_elr = self.target_elr - {first}
            return
        if self.target_leader in self.target_isr and ok(self.target_leader):
            return
        for r in order:
            if r in self.target_isr and ok(r):
                self.target_leader = r
                return
        # Kafka's isValidNewLeader: an ELR member only while the target ISR is empty
        elr_electable = not self.target_isr or not self.config.follows(Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR)
        for r in order if elr_electable else ():
            if r in self.target_elr and ok(r):
                self.target_leader = r
                self.target_isr = self.target_isr | {r}
                self.target_elr = self.target_elr - {r}
                return
        cfg = self.config
        known = self.partition.last_known_elr
        # canElectLastKnownLeader: only with the ELR feature on, and with no ELR once the ISR
        # members the change removes joined it (maybePopulateTargetElr runs before the election)
        if (cfg.follows(Rule.LAST_KNOWN_LEADER) and self.elr_enabled and not self.target_isr
                and not self._populated_elr(unclean_shutdown) and len(known) == 1):
            (last,) = known
            if ok(last):
                self.elect_uncleanly(last, LAST_KNOWN_LEADER)
                return
        if unclean and cfg.follows(Rule.UNCLEAN_ELECTION_IN_CHANGES) and self.unclean_leader_election:
            for r in order:
                if ok(r):
                    self.elect_uncleanly(r, UNCLEAN_LEADER_ELECTION)
                    return
        self.target_leader = NO_LEADER

    def _populated_elr(self, unclean_shutdown: frozenset[int]) -> frozenset[int]:
        """The ELR ``apply_elr_rules`` would make of the current targets (Kafka
        populates it before the election)."""
        return self._elr_rules(self.partition.isr - self.target_isr, unclean_shutdown)[0]

    def elect_uncleanly(self, leader: int, how: str) -> None:
        """``leader`` elected uncleanly (``how``: the mechanism reported): ISR = [it],
        the ELR emptied; ``build`` marks the record RECOVERING (Rule.LEADER_RECOVERY_STATE)."""
        self.target_leader = leader
        self.target_isr = frozenset({leader})
        self.target_elr = frozenset()
        self.election = how

    # --------------------------------------------------------------- ELR (§2.9)

    def apply_elr_rules(self, removed_from_isr: frozenset[int] = frozenset(),
                        unclean_shutdown: frozenset[int] = frozenset()) -> None:
        """Replicas leaving the ISR join the ELR while the ISR is below MinISR (§5.2.1
        cases A, C); ISR members leave the ELR and LastKnownELR; once the ISR
        reaches MinISR both are emptied (case G, §5.3.1). Kafka's
        ``maybePopulateTargetElr``: removals join whether or not still replicas, a
        broker back from an unclean shutdown never; the LastKnownELR is the last
        leader's, kept by ``build``. With the ELR feature off (``maybeUpdateRecordElr``)
        the ELR is emptied, and the LastKnownELR unless Kafka's rule keeps it."""
        self.target_elr, self.target_last_known_elr = self._elr_rules(removed_from_isr, unclean_shutdown)

    def _elr_rules(self, removed_from_isr: frozenset[int],
                   unclean_shutdown: frozenset[int]) -> tuple[frozenset[int], frozenset[int]]:
        """(ELR, LastKnownELR) as ``apply_elr_rules`` sets them, the targets left as they are."""
        elr, known, isr = self.target_elr, self.target_last_known_elr, self.target_isr
        lke_rule = self.config.follows(Rule.LAST_KNOWN_LEADER)
        if not self.elr_enabled:
            return frozenset(), known if lke_rule else frozenset()
        if len(isr) >= self.min_isr:
            if Bug.ELR_NOT_CLEARED_AT_MIN_ISR in self.bugs:
                # BUG: only the ISR members leave; the rest of the ELR/LastKnownELR stays
                return elr - isr, known if lke_rule else known - isr
            return frozenset(), known if lke_rule else frozenset()
        if not self.config.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS):
            removed_from_isr = removed_from_isr & frozenset(self.target_replicas)
        return (elr | removed_from_isr) - isr - unclean_shutdown, known if lke_rule else known - isr

    # ----------------------------------------------------------- reassignment (ch4)

    def complete_reassignment(self) -> bool:
        """Completion (§4.2 step 3) when the final ISR (ISR minus removing) holds every
        adding replica and at least MinISR members — under Kafka's rule
        (``PartitionReassignmentReplicas.maybeCompleteReassignment``) when it is
        non-empty, holds every adding replica and, if the replication factor
        shrinks, every target replica: the replicas become the target, removed
        replicas leave ISR/ELR/LastKnownELR (Kafka: the ISR only) and the leader
        epoch is bumped (§2.3.1). Returns whether it completed."""
        if not (self.target_adding or self.target_removing):
            return False
        removing = self.target_removing
        final_isr = self.target_isr - removing
        target = tuple(r for r in self.target_replicas if r not in removing)
        adding_ok = self.target_adding <= final_isr or Bug.REASSIGNMENT_COMPLETES_WITHOUT_ADDING_IN_ISR in self.bugs
        if self.config.follows(Rule.REASSIGNMENT_COMPLETION):
            if not final_isr or not target or not adding_ok:
                return False
            if len(self.target_adding) < len(removing) and not frozenset(target) <= final_isr:
                return False
        elif len(final_isr) < self.min_isr or not adding_ok:
            return False
        self.target_replicas = target
        self.target_isr = final_isr
        if not self.config.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS):
            self.target_elr = self.target_elr - removing
        if not self.config.follows(Rule.LAST_KNOWN_LEADER):
            self.target_last_known_elr = self.target_last_known_elr - removing
        self.target_adding = frozenset()
        self.target_removing = frozenset()
        self.bump_leader_epoch = True
        return True

    # ------------------------------------------------------------------- build

    def build_change(self, unclean_shutdown: frozenset[int] = frozenset(),
                     unclean: bool = True, preferred: bool = False) -> Optional[PartitionChangeRecord]:
        """The record of one change decided from the targets, in Kafka's
        ``PartitionChangeBuilder.build`` order: complete a reassignment when its rule
        allows (``completeReassignmentIfNeeded``), elect (keeping a valid leader;
        ``unclean``: an unclean election is allowed; ``preferred``: the preferred
        replica first, ``elect_leader``), apply the ELR rules to what
        left the ISR (``unclean_shutdown``: replicas back from an unclean shutdown,
        ``setUncleanShutdownReplicas``; under Rule.ELR_POPULATED_BEFORE_ELECTION, with
        the ELR feature on, before the election), build. None: nothing changed."""
        p = self.partition
        if self.config.follows(Rule.REASSIGNMENT_COMPLETION) and (self.target_adding or self.target_removing):
            if self.complete_reassignment() and self.target_leader not in self.target_isr:
                self.target_leader = NO_LEADER
        self.elect_with_elr(p.isr - self.target_isr, unclean_shutdown, unclean=unclean, preferred=preferred)
        return self.build()

    def elect_with_elr(self, removed_from_isr: frozenset[int], unclean_shutdown: frozenset[int] = frozenset(),
                       unclean: bool = True, preferred: bool = False) -> None:
        """The election (``elect_leader``) and the ELR rules (``apply_elr_rules`` with
        ``removed_from_isr``): the election first, the ELR rules on its result; under
        Rule.ELR_POPULATED_BEFORE_ELECTION with the ELR feature on, the ELR rules
        first (``maybePopulateTargetElr``, then ``tryElection``). After an unclean
        election the ELR is void (``maybeUpdateRecordElr``)."""
        first = self.config.follows(Rule.ELR_POPULATED_BEFORE_ELECTION) and self.elr_enabled
        if first:
            self.apply_elr_rules(removed_from_isr, unclean_shutdown)
        self.elect_leader(unclean=unclean, preferred=preferred, unclean_shutdown=unclean_shutdown)
        if not first and self.election is None:
            self.apply_elr_rules(removed_from_isr, unclean_shutdown)

    def build(self) -> Optional[PartitionChangeRecord]:
        """The record of the changed fields, or None when nothing changed, set field
        by field in the order of Kafka's ``PartitionChangeBuilder.build`` once the
        targets are final: the leader (an unclean election marks the record
        RECOVERING, ``electLeader``), the ELR, the ISR, the LastKnownELR, the
        assignment (``setAssignmentChanges``), then the target leader recovery
        state when it differs from the partition's (``setTargetLeaderRecoveryState``,
        written over the election's). With the ELR feature off an empty target ISR is
        not written (the ISR keeps its members)."""
        p = self.partition
        record = PartitionChangeRecord()
        self._trigger_leader_epoch_bump_for_replica_reassignment_if_needed()
        if self.target_leader != p.leader or self.bump_leader_epoch:
            record.leader = self.target_leader
        recovery = self.config.follows(Rule.LEADER_RECOVERY_STATE)
        if recovery and self.election is not None and p.leader_recovery_state != RECOVERING:
            record.leader_recovery_state = RECOVERING
        if self.target_elr != p.elr:   # maybeUpdateRecordElr
            record.elr = self.target_elr
        if self.target_isr != p.isr and (self.target_isr or self.elr_enabled):
            record.isr = self.target_isr
        self._maybe_update_last_known_leader(record)
        if self.target_replicas != p.replicas:
            record.replicas = self.target_replicas
        if self.target_removing != p.removing:
            record.removing = self.target_removing
        if self.target_adding != p.adding:
            record.adding = self.target_adding
        if recovery and self.target_leader_recovery_state != p.leader_recovery_state:
            record.leader_recovery_state = self.target_leader_recovery_state
        return None if record.is_empty() else record

    def _trigger_leader_epoch_bump_for_replica_reassignment_if_needed(self) -> None:
        """Whether the record sets the leader (bumping the leader epoch) although the
        leader stays: the chapters' paths ask for it on a completed or cancelled
        reassignment (§2.3.1); under Kafka's rule (Rule.LEADER_EPOCH_BUMP_ON_REMOVAL,
        ``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``) it is exactly when
        the replica set loses a member."""
        if self.config.follows(Rule.LEADER_EPOCH_BUMP_ON_REMOVAL):
            self.bump_leader_epoch = not set(self.partition.replicas) <= set(self.target_replicas)

    def _maybe_update_last_known_leader(self, record: PartitionChangeRecord) -> None:
        """The chapters' LastKnownELR is the target the ELR rules leave. Under Kafka's
        rule (Rule.LAST_KNOWN_LEADER, ``maybeUpdateLastKnownLeader``) it is the last
        leader: set when the record first leaves the partition leaderless, cleared
        with the next leader, kept while there is none."""
        p = self.partition
        if not self.config.follows(Rule.LAST_KNOWN_LEADER):
            if self.target_last_known_elr != p.last_known_elr:
                record.last_known_elr = self.target_last_known_elr
        elif not self.elr_enabled:
            return
        elif record.leader == NO_LEADER and not p.last_known_elr:
            record.last_known_elr = frozenset({p.leader})
        elif record.leader not in (NO_LEADER, NO_LEADER_CHANGE) and p.last_known_elr:
            record.last_known_elr = frozenset()
