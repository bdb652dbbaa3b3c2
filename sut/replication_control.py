"""``ReplicationControlManager``: the controller's partition registration and
every change to it — elections on fencing and unfencing (§2.8), the ELR
(§2.9, §5.2), AlterPartition validation (§2.9.2, §6.3, §6.5.1), reassignment
(ch4) and unclean recovery (§5.3, ch7). Each change is committed as one
PartitionChangeRecord built by ``PartitionChangeBuilder``."""

from __future__ import annotations

import logging
from typing import Callable, Collection, Optional

from model import NO_LEADER, NO_LEADER_CHANGE, RECOVERED, RECOVERING, AlterPartitionRequest, Config, Rule

from .bugs import Bug
from .change_builder import UNCLEAN_LEADER_ELECTION, PartitionChangeBuilder
from .cluster_control import ClusterControlManager
from .errors import ApiException, ControllerFault, Errors, InvalidReplicaAssignmentException
from .metadata import ApiMessage, ClearElrRecord, PartitionChangeRecord, PartitionRecord, PartitionRegistration

INITIAL_LEADER_EPOCH = 1      # the chapters' numbering (§3.1, §4.4)
INITIAL_PARTITION_EPOCH = 1

LogInfo = Callable[[int], Optional[tuple[int, int]]]
#: (Errors.NONE, the registration after the change) or (the error, None)
AlterPartitionResult = tuple[Errors, Optional[PartitionRegistration]]

log = logging.getLogger(__name__)


def _rejecting(error: Errors, broker_id: int, because: str) -> Errors:
    """``error``, logged as Kafka's ``validateAlterPartitionData`` logs a refusal."""
    log.debug("Rejecting AlterPartition request from node %d because %s: %s.", broker_id, because, error.name)
    return error


def validate_manual_partition_assignment(replicas: tuple[int, ...], registered: Collection[int]) -> None:
    """Kafka's ``ReplicationControlManager.validateManualPartitionAssignment`` of an
    AlterPartitionReassignments target (§4.2): a non-empty list of registered
    brokers, none twice. Raises ``InvalidReplicaAssignmentException`` with Kafka's
    message."""
    if not replicas:
        raise InvalidReplicaAssignmentException("The manual partition assignment includes an empty replica list.")
    previous: Optional[int] = None
    for broker_id in sorted(replicas):
        if broker_id not in registered:
            raise InvalidReplicaAssignmentException(f"The manual partition assignment includes broker {broker_id}, "
                                                    "but no such broker is registered.")
        if broker_id == previous:
            raise InvalidReplicaAssignmentException(f"The manual partition assignment includes the broker "
                                                    f"{previous} more than once.")
        previous = broker_id


def _index_elr_change(index: dict[int, int], before: frozenset[int], after: frozenset[int]) -> None:
    """Kafka's broker-to-ELR index (``BrokersToElrs.update``) after a replayed change of
    the ELR from ``before`` to ``after``: one entry added per broker joining it, one
    removed per broker leaving it (counts, in place)."""
    for b in after - before:
        index[b] = index.get(b, 0) + 1
    for b in before - after:
        index[b] = index.get(b, 0) - 1


def _leader_acceptor(is_acceptable: Callable[[int], bool], replicas: Collection[int]) -> Callable[[int], bool]:
    """Kafka's ``ReplicationControlManager.LeaderAcceptor.test`` (Rule.
    LEADER_ACCEPTOR_READS_DIRECTORY): an acceptable broker's log directory is looked up
    in the partition's registration (``PartitionRegistration.directory``), which
    throws for a broker outside its ``replicas``: ControllerFault, Kafka's message."""
    def test(broker: int) -> bool:
        if not is_acceptable(broker):
            return False
        if broker not in replicas:
            raise ControllerFault(f"Replica {broker} is not assigned to this partition.")
        return True
    return test


class ReplicationControlManager:
    def __init__(self, config: Config, cluster: ClusterControlManager, append: Callable[[ApiMessage], None],
                 bugs: frozenset, change_builder: type = PartitionChangeBuilder) -> None:
        self.config = config
        self.min_isr = config.min_isr
        self.unclean_recovery_strategy = config.unclean_recovery
        self.unclean_leader_election_enable = config.unclean_leader_election
        #: the finalized ELR feature level is 1 (Kafka's FeatureControlManager.isElrFeatureEnabled)
        self.elr_enabled = True
        self.cluster = cluster
        self.append = append
        self.bugs = bugs
        #: The class that decides partition changes: ours, or an adapter of Kafka's
        #: (``kafka_bridge.KafkaPartitionChangeBuilder``), built like ours.
        self.change_builder = change_builder
        self.partition: Optional[PartitionRegistration] = None
        #: Kafka's broker-to-ELR index entries of the partition (BrokersToElrs), kept only
        #: under Rule.CLEARED_ELR_STAYS_INDEXED, where a cleared ELR leaves them in place
        self.elr_index: dict[int, int] = {}
        #: after a controller loaded a snapshot that differs from the log's replay
        #: (``load_snapshot``): the registration and ELR index that replay gives, kept
        #: beside the loaded ones for the next failover to a standby that replayed it
        self.replayed: Optional[tuple[PartitionRegistration, dict[int, int]]] = None

    # ---------------------------------------------------------------- plumbing

    def create_partition(self, assignment: tuple[int, ...]) -> None:
        """CreateTopics: the first assigned replica leads, ISR = all replicas."""
        reg = PartitionRegistration(assignment, frozenset(assignment), assignment[0],
                                    INITIAL_LEADER_EPOCH, INITIAL_PARTITION_EPOCH)
        self.append(PartitionRecord(reg))
        self.partition = reg

    def _builder(self) -> PartitionChangeBuilder:
        assert self.partition is not None
        acceptable = self.cluster.is_active
        if Bug.CONTROLLED_SHUTDOWN_BROKER_ELECTED in self.bugs:
            acceptable = self.cluster.is_unfenced   # BUG: a broker in controlled shutdown may lead
        if self.config.follows(Rule.LEADER_ACCEPTOR_READS_DIRECTORY):
            acceptable = _leader_acceptor(acceptable, self.partition.replicas)
        min_isr = self.min_isr
        if self.config.follows(Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS):
            min_isr = min(min_isr, len(self.partition.replicas))   # getTopicEffectiveMinIsr
        return self.change_builder(self.partition, acceptable, self.config, self.bugs, min_isr,
                                   self.unclean_leader_election_enable, self.elr_enabled)

    def _replay(self, builder: PartitionChangeBuilder, record: PartitionChangeRecord) -> None:
        """Append ``record`` and replay it (Kafka's ``replay(PartitionChangeRecord)``:
        the registration merged, then ``updatePartitionInfo``'s index update)."""
        self._apply(record, builder.partition)

    def _apply(self, record: PartitionChangeRecord, base: PartitionRegistration) -> None:
        self.append(record)
        before = self.partition
        self.partition = base.merge(record)
        if self.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
            _index_elr_change(self.elr_index, frozenset() if before is None else before.elr, self.partition.elr)

    def _commit(self, builder: PartitionChangeBuilder) -> None:
        """The change the chapters' paths set up in full on ``builder``, committed."""
        record = builder.build()
        if record is not None:
            self._replay(builder, record)

    def _change(self, b: PartitionChangeBuilder, unclean_shutdown: frozenset[int] = frozenset(),
                unclean: bool = True, preferred: bool = False) -> None:
        """One change decided by the builder from its targets, as Kafka's
        ``PartitionChangeBuilder.build`` decides it (``build_change``), committed."""
        record = b.build_change(unclean_shutdown, unclean, preferred)
        if record is not None:
            self._replay(b, record)

    # ------------------------------------------------- dynamic configuration

    def handle_min_isr_change(self, min_isr: int) -> None:
        """After the topic's ``min.insync.replicas`` became ``min_isr`` (its
        ``ConfigRecord`` replayed): one change that moves the partition epoch and
        empties the ELR and LastKnownELR once the ISR has MinISR members, else
        keeps them (§5.2.1 case G under the new MinISR). Kafka
        (``ConfigurationControlManager.createClearElrRecordsAsNeeded``, a
        ``ClearElrRecord`` replayed by ``removeTopicElrs``): both emptied whatever
        the ISR, and nothing written when both were empty; nothing at all with the
        ELR feature off."""
        self.min_isr = min_isr
        p = self.partition
        if p is None:
            return
        if self.config.follows(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE):
            if self.elr_enabled:
                self.remove_topic_elrs()
            return
        if len(p.isr) >= min_isr:
            record = PartitionChangeRecord(elr=frozenset(), last_known_elr=frozenset())
        else:
            record = PartitionChangeRecord(elr=p.elr, last_known_elr=p.last_known_elr)
        self.append(record)
        self.partition = p.merge(record)

    def remove_topic_elrs(self) -> None:
        """A ``ClearElrRecord`` replayed (``ReplicationControlManager.removeTopicElrs``):
        a partition with an ELR or LastKnownELR has both emptied, moving its partition
        epoch; one with neither is left as it is. Written only when it changes this
        registration or the log's replay (``replayed``)."""
        p = self.partition
        if p is None:
            return
        log = p if self.replayed is None else self.replayed[0]
        if p.cleared() is p and log.cleared() is log:
            return
        # merged without _apply's index update: Kafka's removeTopicElrs skips it
        # (Rule.CLEARED_ELR_STAYS_INDEXED)
        self.append(ClearElrRecord())
        self.partition = p.cleared()

    # ------------------------------------------------------ snapshots (failover)

    def replay_beside(self, record: ApiMessage) -> None:
        """``record``, appended, replayed on the log's replay kept beside a loaded
        snapshot (``replayed``; nothing when there is none): Kafka's ``replay``
        of each partition record, the ELR index updated but by a ``ClearElrRecord``."""
        if self.replayed is None:
            return
        before, index = self.replayed
        if isinstance(record, PartitionRecord):
            after = record.registration
        elif isinstance(record, PartitionChangeRecord):
            after = before.merge(record)
        elif isinstance(record, ClearElrRecord):
            self.replayed = (before.cleared(), index)
            return
        else:
            return
        index = dict(index)
        if self.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
            _index_elr_change(index, before.elr, after.elr)
        self.replayed = (after, index)

    def load_snapshot(self) -> None:
        """The registration of a controller that loaded a snapshot of the log's replay
        (Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED; ``PartitionRegistration.toRecord``,
        ``QuorumController.handleLoadSnapshot``): no ELR nor LastKnownELR while the ELR
        feature is off, the ELR index built anew from it; the replay kept beside while
        they differ."""
        assert self.partition is not None
        partition, index = self.replayed or (self.partition, dict(self.elr_index))
        enabled = self.elr_enabled and Bug.SNAPSHOT_OPTIONS_FROM_METADATA_VERSION not in self.bugs  # BUG when not
        keeps = enabled or not (partition.elr or partition.last_known_elr)
        loaded = partition if keeps else partition.without_elr()
        loaded_index = index
        if self.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
            loaded_index = {b: 1 for b in loaded.elr}
        same = loaded is partition and {b: n for b, n in loaded_index.items() if n} == {
            b: n for b, n in index.items() if n}
        self.partition, self.elr_index = loaded, loaded_index
        self.replayed = None if same else (partition, index)

    def load_replay(self) -> None:
        """The registration of a standby that replayed the log (``FailOverController``)."""
        if self.replayed is not None:
            self.partition, self.elr_index = self.replayed[0], dict(self.replayed[1])
            self.replayed = None

    # --------------------------------------------------- broker lifecycle (§2.8)

    def handle_broker_registration(self, broker: int, clean: bool) -> None:
        """A broker registering with an empty broker epoch moves from the ELR to the
        LastKnownELR: its log may have lost records (§5.2, §5.3.1). Kafka
        (``handleBrokerShutdown``, unclean): it leaves the ISR and ELR in a change
        that may elect; a clean one, or any with the ELR feature off, leaves the ISR
        only, as a fencing does."""
        p = self.partition
        if self.config.follows(Rule.LAST_KNOWN_LEADER):
            if clean or not self.elr_enabled:
                self.handle_broker_fenced(broker)
            elif Bug.UNCLEAN_REGISTRATION_KEEPS_ELR in self.bugs and p is not None and broker not in p.isr:
                return  # BUG: the unclean broker keeps its ELR entry
            elif p is not None:
                self._unclean_shutdown_changes(p, broker)
            return
        if clean or p is None or broker not in p.elr:
            return
        if Bug.UNCLEAN_REGISTRATION_KEEPS_ELR in self.bugs:
            return
        b = self._builder()
        b.target_elr = p.elr - {broker}
        b.target_last_known_elr = p.last_known_elr | {broker}
        self._commit(b)

    def _unclean_shutdown_changes(self, p: PartitionRegistration, broker: int) -> None:
        """Kafka's ``handleBrokerShutdown`` (unclean): one change taking ``broker`` out of
        the ISR and ELR per entry of the partition in its ISR and ELR indexes, each built
        from the registration before any of them (``generateLeaderAndIsrUpdates``).
        Under Rule.CLEARED_ELR_STAYS_INDEXED the ELR index is Kafka's, stale entries
        and all; else it is the ELR."""
        if self.config.follows(Rule.CLEARED_ELR_STAYS_INDEXED):
            entries = (broker in p.isr) + self.elr_index.get(broker, 0)
        else:
            entries = int(broker in p.isr or broker in p.elr)
        if not entries:
            return
        b = self._builder()
        b.target_isr = p.isr - {broker}
        b.target_elr = p.elr - {broker}
        if p.leader == broker:
            b.target_leader = NO_LEADER
        record = b.build_change(frozenset({broker}))
        if record is None:
            return
        self._replay(b, record)
        for _ in range(entries - 1):
            self._apply(record, self.partition)   # type: ignore[arg-type]

    def handle_broker_fenced(self, broker: int) -> None:
        """Remove a fenced broker from leadership and the ISR; elect a new leader if
        it led; it joins the ELR when the ISR falls below MinISR (§2.8, §2.9.1)."""
        p = self.partition
        if p is None or (broker not in p.isr and broker != p.leader):
            return
        b = self._builder()
        if Bug.FENCING_IGNORES_ELR_FEATURE in self.bugs:
            b.elr_enabled = True   # BUG: the change is built with the ELR on, whatever the feature level
        b.target_isr = p.isr - {broker}
        if p.leader == broker:
            b.target_leader = NO_LEADER
        self._change(b)

    def handle_broker_in_controlled_shutdown(self, broker: int) -> None:
        """Kafka's ``handleBrokerInControlledShutdown``: the same change as a fencing
        (the broker is no longer an acceptable leader)."""
        self.handle_broker_fenced(broker)

    def handle_broker_unfenced(self, broker: int) -> None:
        """With no leader, an unfenced ISR or ELR member may now be elected (§2.8).
        Kafka tries every leaderless partition, whichever broker was unfenced; with
        the ELR feature off its change is written electing or not (it empties the ELR),
        and under Kafka's completion rule when it completes a reassignment."""
        p = self.partition
        cfg = self.config
        kafka = cfg.follows(Rule.LAST_KNOWN_LEADER) or cfg.follows(Rule.UNCLEAN_ELECTION_IN_CHANGES)
        if p is None or p.leader != NO_LEADER or (broker not in p.replicas and not kafka):
            return
        b = self._builder()
        b.elect_leader()
        # the builder also completes a reassignment whose adding replicas are the ISR
        completes = cfg.follows(Rule.REASSIGNMENT_COMPLETION) and self._builder().complete_reassignment()
        if b.target_leader != NO_LEADER or not self.elr_enabled or completes:
            self._change(self._builder())

    # ------------------------------------------------------ AlterPartition (§2.9.2)

    def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResult:
        """Kafka's ``alterPartition`` for the one partition: the requester's broker
        epoch (``ClusterControlManager.checkBrokerEpoch``), then
        ``validate_alter_partition_data``, then the change to the proposed ISR.
        Returns (Errors.NONE, the registration after the change) or (the error, None).
        Under Kafka's completion rule a change that completes a reassignment and
        moves leadership away from the requester is committed and answered
        NEW_LEADER_ELECTED."""
        broker_id = request.src
        try:
            self.cluster.check_broker_epoch(broker_id, request.broker_epoch)
        except ApiException as e:
            return e.error, None
        partition = self.partition
        assert partition is not None
        error = self.validate_alter_partition_data(broker_id, partition, request)
        if error is not Errors.NONE:
            return error, None
        builder = self._builder()
        builder.target_isr = request.isr
        builder.target_leader_recovery_state = request.leader_recovery_state
        if not self.config.follows(Rule.REASSIGNMENT_COMPLETION):
            builder.apply_elr_rules(partition.isr - request.isr)
            self._maybe_complete_reassignment(builder)
            self._commit(builder)
            return Errors.NONE, self.partition
        record = builder.build_change()
        if record is not None:
            self._replay(builder, record)
            if record.leader not in (broker_id, NO_LEADER_CHANGE):
                log.debug("AlterPartition request from node %d completed the ongoing partition reassignment and "
                          "triggered a leadership change. Returning NEW_LEADER_ELECTED.", broker_id)
                return Errors.NEW_LEADER_ELECTED, None
        return Errors.NONE, self.partition

    def validate_alter_partition_data(self, broker_id: int, partition: PartitionRegistration,
                                      data: AlterPartitionRequest) -> Errors:
        """Kafka's ``validateAlterPartitionData``: the request must come from the leader
        in its leader epoch and partition epoch, with an ISR of replicas holding the
        leader, of eligible replicas only (§2.9.2, §6.3, §6.5.1 case 3). The
        chapters' controller first refuses a requester that does not lead
        (NOT_LEADER_OR_FOLLOWER) and wants both epochs to be the partition's; Kafka's
        (Rule.ALTER_PARTITION_VALIDATION) fences an older leader epoch before it
        answers a non-leader INVALID_REQUEST, and refuses older epochs; a newer one
        first, NOT_CONTROLLER (only a controller whose registration is not the log's
        replay meets one: ``load_snapshot``). Under
        Rule.LEADER_RECOVERY_STATE a request marked RECOVERING is refused
        (INVALID_REQUEST) with more than the leader in its ISR, or while the
        partition is RECOVERED."""
        kafka = self.config.follows(Rule.ALTER_PARTITION_VALIDATION)
        if kafka and (data.leader_epoch > partition.leader_epoch or data.partition_epoch > partition.partition_epoch):
            return _rejecting(Errors.NOT_CONTROLLER, broker_id, f"the current epochs {partition.leader_epoch} / "
                              f"{partition.partition_epoch} are lower than the request's")
        if not kafka and broker_id != partition.leader:
            return _rejecting(Errors.NOT_LEADER_OR_FOLLOWER, broker_id, f"the current leader is {partition.leader}")
        stale_leader_epoch = data.leader_epoch < partition.leader_epoch
        if stale_leader_epoch or (not kafka and data.leader_epoch != partition.leader_epoch):
            return _rejecting(Errors.FENCED_LEADER_EPOCH, broker_id, f"the current leader epoch is "
                              f"{partition.leader_epoch}, not {data.leader_epoch}")
        if broker_id != partition.leader:
            return _rejecting(Errors.INVALID_REQUEST, broker_id, f"the current leader is {partition.leader}")
        stale_partition_epoch = data.partition_epoch < partition.partition_epoch
        if stale_partition_epoch or (not kafka and data.partition_epoch != partition.partition_epoch):
            return _rejecting(Errors.INVALID_UPDATE_VERSION, broker_id, f"the current partition epoch is "
                              f"{partition.partition_epoch}, not {data.partition_epoch}")
        if not data.isr <= frozenset(partition.replicas):   # Replicas.validateIsr
            return _rejecting(Errors.INVALID_REQUEST, broker_id, f"it specified an invalid ISR {sorted(data.isr)}")
        if partition.leader not in data.isr:
            return _rejecting(Errors.INVALID_REQUEST, broker_id, f"it specified an invalid ISR {sorted(data.isr)} "
                              "that doesn't include itself")
        if self.config.follows(Rule.LEADER_RECOVERY_STATE) and data.leader_recovery_state == RECOVERING:
            if len(data.isr) > 1:
                return _rejecting(Errors.INVALID_REQUEST, broker_id, "the ISR had more than one replica while the "
                                  "leader was still recovering from an unclean leader election")
            if partition.leader_recovery_state == RECOVERED:
                return _rejecting(Errors.INVALID_REQUEST, broker_id, "the leader recovery state cannot change "
                                  "from RECOVERED to RECOVERING")
        ineligible = self.ineligible_replicas_for_isr(partition, data)
        if ineligible:
            return _rejecting(Errors.INELIGIBLE_REPLICA, broker_id, f"it specified ineligible replicas "
                              f"{ineligible} in the new ISR {sorted(data.isr)}")
        return Errors.NONE

    def ineligible_replicas_for_isr(self, partition: PartitionRegistration,
                                    data: AlterPartitionRequest) -> list[tuple[int, str]]:
        """Kafka's ``ineligibleReplicasForIsr``: (broker id, why) of each proposed
        member that is fenced or registered in another broker epoch than the request
        gives it. Kafka checks every member and skips the epoch check of a member the
        request gives none (Kafka's -1); the chapters check the replicas the request
        adds, each of which must come with the broker epoch the leader saw in its
        fetches (§6.5.1 case 3)."""
        kafka = self.config.follows(Rule.ALTER_PARTITION_VALIDATION)
        given = dict(data.added_broker_epochs)
        out: list[tuple[int, str]] = []
        for member in sorted(data.isr):
            if not kafka and member in partition.isr:
                continue
            registration = self.cluster.registration(member)
            requested = given.get(member)
            if registration.fenced:
                out.append((member, "fenced"))
            elif registration.in_controlled_shutdown:
                out.append((member, "in controlled shutdown"))
            elif member not in partition.isr and Bug.ALTER_PARTITION_IGNORES_BROKER_EPOCH in self.bugs:
                continue   # BUG: an added replica's broker epoch goes unchecked
            elif (requested is not None or not kafka) and requested != registration.epoch:
                out.append((member, f"broker epoch mismatch: requested={requested} VS expected={registration.epoch}"))
        return out

    # --------------------------------------------------------------- reassignment (ch4)

    def _maybe_complete_reassignment(self, b: PartitionChangeBuilder) -> None:
        """The chapters' completion: a removed (or no) leader is replaced from the
        target replicas and the ELR rules applied."""
        removed_isr = b.target_isr & b.target_removing
        if not b.complete_reassignment():
            return
        if b.target_leader not in b.target_isr or b.target_leader == NO_LEADER:
            b.target_leader = NO_LEADER
            b.elect_leader(b.target_replicas)
        if b.election is None:
            b.apply_elr_rules(removed_isr)

    def alter_partition_reassignments(self, target: tuple[int, ...]) -> None:
        """AlterPartitionReassignments (§4.2): with replicas to add, the replica set
        grows to current + adding (ISR and leader unchanged); with removals only, it
        completes at once when the completion rules hold."""
        p = self.partition
        assert p is not None
        adding = frozenset(target) - frozenset(p.replicas)
        removing = frozenset(p.replicas) - frozenset(target)
        b = self._builder()
        if self.config.follows(Rule.REASSIGNMENT_REPLICA_ORDER):
            # PartitionReassignmentReplicas: the target, then the removing replicas in id order
            b.target_replicas = tuple(target) + tuple(sorted(removing))
        elif adding:
            b.target_replicas = p.replicas + tuple(r for r in target if r in adding)
        b.target_adding = adding
        b.target_removing = removing
        if self.config.follows(Rule.REASSIGNMENT_COMPLETION):
            self._change(b, unclean=False)   # changePartitionReassignment: no Election.UNCLEAN
            return
        if not adding:
            self._maybe_complete_reassignment(b)
        self._commit(b)

    def can_cancel_reassignment(self) -> bool:
        """Reverting must leave the ISR with at least MinISR members (§4.5); Kafka
        (``cancelPartitionReassignment``): one, or none with unclean leader election."""
        p = self.partition
        if p is None or not p.is_reassigning:
            return False
        if self.config.follows(Rule.CANCEL_WITH_ANY_ISR):
            return bool(p.isr - p.adding) or self.unclean_leader_election_enable
        return len(p.isr - p.adding) >= self.min_isr

    def cancel_reassignment(self) -> None:
        """Revert to the original replicas (§4.5), removing the adding replicas from
        ISR/ELR/LastKnownELR, re-electing if an adding replica led; bumps the leader
        epoch. Kafka's ``PartitionReassignmentRevert``: an ISR left empty becomes
        the first original replica (an unclean election)."""
        p = self.partition
        assert p is not None
        b = self._builder()
        b.target_replicas = tuple(r for r in p.replicas if r not in p.adding)
        b.target_isr = p.isr - p.adding
        forced = not b.target_isr and self.config.follows(Rule.CANCEL_WITH_ANY_ISR)
        if forced:
            b.target_isr = frozenset({b.target_replicas[0]})
        if not self.config.follows(Rule.ELR_KEEPS_REMOVED_REPLICAS):
            b.target_elr = p.elr - p.adding
        if not self.config.follows(Rule.LAST_KNOWN_LEADER):
            b.target_last_known_elr = p.last_known_elr - p.adding
        b.target_adding = frozenset()
        b.target_removing = frozenset()
        if b.target_leader in p.adding or b.target_leader not in b.target_isr:
            b.target_leader = NO_LEADER
        b.elect_with_elr(p.isr - b.target_isr)
        b.bump_leader_epoch = True
        self._commit(b)

    # ------------------------------------------------------------ unclean recovery (§5.3)

    def recovery_candidates(self, log_info: LogInfo) -> tuple[int, ...]:
        """Replicas unclean recovery may elect now (§5.3.1), in replica order.
        balanced: no leader, ISR and ELR empty, and every LastKnownELR member answers
        log inspection. proactive: no leader and empty ISR; any answering replica.
        manual / none: never automatically."""
        p = self.partition
        if p is None or p.leader != NO_LEADER or p.isr:
            return ()
        strategy = self.unclean_recovery_strategy

        def answers(b: int) -> bool:
            return self.cluster.is_active(b) and log_info(b) is not None

        if strategy == "balanced":
            if p.elr or not p.last_known_elr or not all(answers(b) for b in p.last_known_elr):
                return ()
            return tuple(r for r in p.replicas if r in p.last_known_elr)
        if strategy == "proactive":
            return tuple(r for r in p.replicas if answers(r))
        return ()

    def unclean_recovery(self, log_info: LogInfo) -> None:
        """Elect the candidate with the highest (last epoch, LEO) — the first in replica
        order on a tie — with ISR = [it], and report potential data loss (§5.3.2)."""
        candidates = self.recovery_candidates(log_info)
        assert candidates
        if Bug.UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE in self.bugs:
            best = candidates[0]
        else:
            best, best_rank = candidates[0], log_info(candidates[0])
            for c in candidates[1:]:
                rank = log_info(c)
                if rank > best_rank:  # type: ignore[operator]
                    best, best_rank = c, rank
        p = self.partition
        assert p is not None
        b = self._builder()
        b.target_leader = best
        b.target_isr = frozenset({best})
        b.target_elr = p.elr - {best}
        b.target_last_known_elr = p.last_known_elr - {best}
        b.election = self.unclean_recovery_strategy   # an unclean election (RECOVERING)
        b.apply_elr_rules()
        self._commit(b)

    def preferred_election_refused(self) -> Optional[str]:
        """Why ElectLeaders with ElectionType.PREFERRED writes nothing now, or None
        (``electLeader``): ELECTION_NOT_NEEDED while the first replica leads;
        PREFERRED_LEADER_NOT_AVAILABLE when the builder's change with the preferred
        election (``Election.PREFERRED``) changes nothing."""
        p = self.partition
        if p is None:
            return "no partition"
        if p.replicas and p.leader == p.replicas[0]:
            return "ELECTION_NOT_NEEDED"
        if self._builder().build_change(unclean=False, preferred=True) is None:
            return "PREFERRED_LEADER_NOT_AVAILABLE"
        return None

    def elect_preferred_leader(self) -> None:
        """ElectLeaders with ElectionType.PREFERRED: the builder's change with the
        preferred election, committed (a reassignment that can complete completes
        in it, as in any change Kafka's builder makes)."""
        self._change(self._builder(), unclean=False, preferred=True)

    def unclean_leader_election_candidate(self) -> Optional[int]:
        """Legacy unclean election (ch7): with no leader and an empty ISR, the first
        unfenced replica, when enabled. Kafka (``maybeElectUncleanLeaders``): with no
        leader, whoever the builder's election with Election.UNCLEAN elects, among the
        replicas a reassignment the builder completes first leaves (``build_change``)."""
        p = self.partition
        if not self.unclean_leader_election_enable or p is None or p.leader != NO_LEADER:
            return None
        if self.config.follows(Rule.PERIODIC_UNCLEAN_ELECTION):
            record = self._builder().build_change()   # a decision only: nothing is committed
            if record is None or record.leader in (NO_LEADER, NO_LEADER_CHANGE):
                return None
            return record.leader
        if p.isr:
            return None
        for r in p.replicas:
            if self.cluster.is_active(r):
                return r
        return None

    def unclean_leader_election(self) -> None:
        """ISR = [leader]; the ELR guarantees are void, so ELR and LastKnownELR are
        cleared. Reported as potential data loss. Kafka (``electLeader``): the change
        the builder makes from the partition's own targets."""
        leader = self.unclean_leader_election_candidate()
        assert leader is not None
        if self.config.follows(Rule.PERIODIC_UNCLEAN_ELECTION):
            self._change(self._builder())
            return
        b = self._builder()
        b.elect_uncleanly(leader, UNCLEAN_LEADER_ELECTION)
        b.target_last_known_elr = frozenset()
        self._commit(b)
