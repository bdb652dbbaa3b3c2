"""Profiles: whose rules the model follows.

The default profile, ``"chapters"``, follows chapters 2–6 of the replication
protocol description (the KIP-966 design). The Kafka profile follows Apache
Kafka's code at one pinned release, where that code made other choices. Each
such choice is a named ``Rule``; a profile is a set of rules in force
(``PROFILES``), and ``Config(profile=..., rules=...)`` may switch single rules off
to see what one of Kafka's choices does.

The rules are legitimate choices, not flaws (those are ``Variant``s): every
property is checked under them, and a property that fails under the Kafka
profile within the fault budget is a finding about Kafka.

Kafka 4.4.0 publishes no ``-sources`` jar. The sources read are 4.3.1's, whose
classes named below decompile identically to 4.4.0's (CFR 0.152, both jars from
Maven Central), apart from renamed imports and code outside one partition's
replication (partition-count limits, cordoned log directories, controller
unregistration, logging).
"""

from __future__ import annotations

import enum
import re
from typing import Optional

import attrs

KAFKA_RELEASE = "4.4.0"
#: The Kafka releases whose own classes can run in the loop (the implementation
#: ``"kafka@X"``; ``kafka_bridge.releases`` builds the bridge's shims for each):
#: every release from 4.0.0 to the pinned one, as published. The profile's rules
#: are those of the pinned release.
KAFKA_RELEASES = ("4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.1.1", "4.1.2", "4.2.0", "4.2.1", "4.2.2",
                  "4.3.0", "4.3.1", KAFKA_RELEASE)


def release_number(version: str) -> Optional[tuple[int, ...]]:
    """A release number ``"4.3.1"`` as ``(4, 3, 1)``; None for anything not of the
    form X.Y.Z."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version or ""):
        return None
    return tuple(int(part) for part in version.split("."))


def kafka_release_error(release: str) -> Optional[str]:
    """Why ``release`` is not one of ``KAFKA_RELEASES`` (None: it is), naming them."""
    if release in KAFKA_RELEASES:
        return None
    return f"kafka version {release!r}: allowed are {', '.join(KAFKA_RELEASES)}"


CHAPTERS = "chapters"
KAFKA = f"kafka-{KAFKA_RELEASE}"


class Rule(enum.Enum):
    """A rule of Kafka's code that departs from the chapters (see ``RULE_DOCS``).

    The value names the Kafka source it follows.
    """

    # --- the controller: PartitionChangeBuilder and ReplicationControlManager
    LAST_KNOWN_LEADER = "PartitionChangeBuilder.maybeUpdateLastKnownLeader, canElectLastKnownLeader"
    ELR_KEEPS_REMOVED_REPLICAS = "PartitionChangeBuilder.maybePopulateTargetElr"
    UNCLEAN_ELECTION_IN_CHANGES = "ReplicationControlManager.generateLeaderAndIsrUpdates (Election.UNCLEAN)"
    REASSIGNMENT_REPLICA_ORDER = "PartitionReassignmentReplicas(currentAssignment, targetAssignment)"
    REASSIGNMENT_COMPLETION = "PartitionReassignmentReplicas.maybeCompleteReassignment"
    LEADER_EPOCH_BUMP_ON_REMOVAL = "PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded"
    CANCEL_WITH_ANY_ISR = "PartitionReassignmentRevert, ReplicationControlManager.cancelPartitionReassignment"
    ALTER_PARTITION_VALIDATION = "ReplicationControlManager.validateAlterPartitionData, ineligibleReplicasForIsr"
    METADATA_RECORD_ORDER = "ClusterControlManager.registerBroker, ReplicationControlManager.handleBrokerFenced"
    FENCED_BROKER_SESSION_EXPIRES = "ReplicationControlManager.maybeFenceOneStaleBroker (a fenced broker's session)"
    CONTROLLER_FAILOVER = "QuorumController.renounce, claim; ClusterControlManager.activate"
    REGISTRATION_AMENDED = "ClusterControlManager.registerBroker (the same incarnation id)"
    CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS = ("BrokerHeartbeatManager.calculateNextBrokerState "
                                                    "(CONTROLLED_SHUTDOWN), lowestActiveOffset")
    EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS = "ReplicationControlManager.getTopicEffectiveMinIsr"
    ELR_ELECTION_ONLY_WITH_EMPTY_ISR = "PartitionChangeBuilder.isValidNewLeader"
    ELR_POPULATED_BEFORE_ELECTION = "PartitionChangeBuilder.build (maybePopulateTargetElr, then tryElection)"
    PERIODIC_UNCLEAN_ELECTION = "ReplicationControlManager.maybeElectUncleanLeaders, electLeader"
    LEADER_RECOVERY_STATE = "PartitionChangeBuilder.electLeader, build (LeaderRecoveryState)"
    LEADER_ACCEPTOR_READS_DIRECTORY = ("ReplicationControlManager.LeaderAcceptor.test (PartitionRegistration.directory); "
                                       "QuorumController.handleEventException (renounce)")
    # --- the broker: Partition, Replica, AlterPartitionManager, AbstractFetcherThread
    ALTER_PARTITION_ERRORS_KEEP_PENDING = "Partition.handleAlterPartitionError, handleAlterPartitionUpdate"
    ONE_ALTER_PARTITION_IN_FLIGHT = "DefaultAlterPartitionManager.submit"
    LEADER_APPLIES_SAME_PARTITION_EPOCH = "Partition.makeLeader, TopicDelta.localChanges"
    LEADER_CHECKS_ISR_ELIGIBILITY = "Partition.isReplicaIsrEligible"
    STALE_BROKER_EPOCH_FETCH_FENCED = "Replica.updateFetchStateOrThrow"
    HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS = "Partition.maybeIncrementLeaderHW (shouldWaitForReplicaToJoinIsr)"
    FETCH_ERROR_ORDER = "Partition.fetchRecords, getLocalLog, followerReplicaOrThrow"
    TRUNCATION_IN_ROUNDS = "AbstractFetcherThread.getOffsetTruncationState"
    FENCED_FETCH_AWAITS_NEW_EPOCH = "AbstractFetcherThread.onPartitionFenced, markPartitionFailed"
    FETCH_ANSWER_HWM_BEFORE_UPDATE = "Partition.fetchRecords (readRecords before updateFollowerFetchState)"
    SHRINK_ALL_OUT_OF_SYNC = "Partition.maybeShrinkIsr, getOutOfSyncReplicas, prepareIsrShrink"
    CAUGHT_UP_AT_LEADER_LEO = "ReplicaState.isCaughtUp (leaderEndOffset == logEndOffset)"
    EXPAND_ISR_ON_FETCH = "Partition.updateFollowerFetchState, maybeExpandIsr"
    REPLICA_LAG_TIME = "ReplicaState.isCaughtUp, Replica.updateFetchStateOrThrow, resetReplicaState"
    FOLLOWER_APPLIES_PARTITION_EPOCH = "Partition.makeFollower (partitionEpoch)"
    EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH = "Partition.makeLeader/makeFollower, UnifiedLog.truncateTo, LogLoader.load"
    EPOCH_CHECKPOINT_WRITTEN_LATER = "LeaderEpochFileCache.truncateFromEndAsyncFlush, LogLoader.load"
    CLEAR_ELR_ON_MIN_ISR_CHANGE = "ConfigurationControlManager.createClearElrRecordsAsNeeded, removeTopicElrs"
    CONFIG_APPLIED_AFTER_PARTITION_CHANGES = "BrokerMetadataPublisher.onMetadataUpdate (DynamicConfigPublisher last)"
    CLEARED_ELR_STAYS_INDEXED = "ReplicationControlManager.removeTopicElrs (brokersToElrs not updated)"
    CLUSTER_MIN_ISR_CLEARS_EVERY_ELR = "ConfigurationControlManager.createClearElrRecordsAsNeeded, replayClearAllElrs"
    ELR_FEATURE_LEVEL = "FeatureControlManager.isElrFeatureEnabled, PartitionChangeBuilder (eligibleLeaderReplicasEnabled)"
    SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED = ("PartitionRegistration.toRecord (ImageWriterOptions), "
                                             "QuorumController.handleLoadSnapshot")

    def __repr__(self) -> str:
        return f"Rule.{self.name}"

    # Members are singletons compared by identity: hash them so too, in C, not through
    # Enum's Python __hash__ (Config.follows runs inside every guard).
    __hash__ = object.__hash__


@attrs.frozen
class RuleDoc:
    """What one rule changes, for the README table and error messages.

    section: the chapter section it departs from. source: the Kafka file and
    method it follows (at ``KAFKA_RELEASE``). chapters / kafka: each side's rule.
    consequence: what it changes for a run, in a Kafka engineer's words.
    requires: rules it cannot be in force without.
    """

    section: str
    source: str
    chapters: str
    kafka: str
    consequence: str
    requires: tuple[Rule, ...] = ()


_META = "metadata/src/main/java/org/apache/kafka/controller/"
_CORE = "core/src/main/scala/kafka/"
_STORAGE = "storage/src/main/java/org/apache/kafka/storage/internals/log/"

RULE_DOCS: dict[Rule, RuleDoc] = {
    Rule.LAST_KNOWN_LEADER: RuleDoc(
        "§5.2, §5.3.1, §5.3.2",
        _META + "PartitionChangeBuilder.java: maybeUpdateLastKnownLeader, canElectLastKnownLeader, "
        "maybePopulateTargetElr (uncleanShutdownReplicas); ReplicationControlManager.java: handleBrokerShutdown",
        "LastKnownELR holds the ELR members that restarted uncleanly; balanced unclean recovery (an "
        "unclean.recovery.strategy) inspects their logs and elects the most complete once all answer.",
        "LastKnownELR holds the last leader, recorded when the partition first becomes leaderless and "
        "cleared with the next leader; once ISR and ELR are empty, any partition change elects it (an "
        "unclean election: ISR = [it]) as soon as it is unfenced. A broker restarting uncleanly just "
        "leaves the ISR and ELR. There is no unclean.recovery.strategy.",
        "Recovery waits for one replica, not a quorum, and elects it without comparing logs: when it "
        "lost its unflushed suffix and another replica restarted uncleanly without loss, committed "
        "records are lost within the fault budget (see the findings)."),
    Rule.ELR_KEEPS_REMOVED_REPLICAS: RuleDoc(
        "§2.9, ch4",
        _META + "PartitionChangeBuilder.java: maybePopulateTargetElr",
        "Replicas leaving the ISR below MinISR join the ELR if they are still replicas; a completed "
        "reassignment removes the removed replicas from the ELR.",
        "ELR = (ELR + previous ISR) - new ISR, whatever the replica set: a reassignment that completes "
        "with the new ISR below MinISR puts the removed ISR members in the ELR and keeps removed ELR members.",
        "The ELR names brokers that no longer host a replica (ValidPartitionMetadata, see the findings); "
        "they are never elected (elections walk the replica set)."),
    Rule.UNCLEAN_ELECTION_IN_CHANGES: RuleDoc(
        "ch7",
        _META + "ReplicationControlManager.java: generateLeaderAndIsrUpdates, alterPartition, "
        "cancelPartitionReassignment (Election.UNCLEAN); PartitionChangeBuilder.java: electAnyLeader",
        "A legacy unclean leader election is its own step, taken while the partition has no leader.",
        "With unclean.leader.election.enable, every partition change (a fencing, an unfencing, an "
        "AlterPartition, a registration) that leaves no clean candidate elects the first unfenced replica "
        "uncleanly in the same record; the periodic election remains for the rest (see "
        "PERIODIC_UNCLEAN_ELECTION).",
        "The partition is never leaderless while an unfenced replica exists; unclean elections happen "
        "earlier and more often."),
    Rule.REASSIGNMENT_REPLICA_ORDER: RuleDoc(
        "§4.2",
        _META + "PartitionReassignmentReplicas.java: PartitionReassignmentReplicas(PartitionAssignment, "
        "PartitionAssignment)",
        "During a move the replica set is the current replicas followed by the adding ones "
        "([1,2,3] -> [1,2,3,4] -> [1,2,4]).",
        "During a move the replica set is the target followed by the removing replicas in id order "
        "([1,2,3] -> [1,2,4,3] -> [1,2,4]).",
        "Elections during a move walk another order, so another replica may be elected."),
    Rule.REASSIGNMENT_COMPLETION: RuleDoc(
        "ch4 rules 1-2, §4.2 step 3, §6.7",
        _META + "PartitionReassignmentReplicas.java: maybeCompleteReassignment; PartitionChangeBuilder.java: "
        "completeReassignmentIfNeeded; ReplicationControlManager.java: alterPartition (NEW_LEADER_ELECTED)",
        "A reassignment completes on an AlterPartition (or at once for a removal) when the final ISR "
        "(ISR - removing) holds every adding replica and at least MinISR members.",
        "Any partition change completes it when ISR - removing is non-empty and holds every adding "
        "replica, and, when the replication factor shrinks, every target replica. There is no MinISR "
        "condition. An AlterPartition whose completion moves leadership is answered NEW_LEADER_ELECTED.",
        "A reassignment may complete with the final ISR below MinISR, and the ELR then takes the removed "
        "ISR members (see the findings); a move that shrinks the replication factor waits for every target "
        "replica in the ISR, which stops the REASSIGNMENT_COMPLETES_BELOW_MIN_ISR variant's story."),
    Rule.LEADER_EPOCH_BUMP_ON_REMOVAL: RuleDoc(
        "§2.3.1, §4.2 step 3, §4.5",
        _META + "PartitionChangeBuilder.java: triggerLeaderEpochBumpForReplicaReassignmentIfNeeded",
        "A completed or cancelled reassignment bumps the leader epoch.",
        "The leader epoch is bumped when the replica set loses a member (a completion with removals, a "
        "cancellation that drops adding replicas), or when the leader changes.",
        "A completion that only adds replicas keeps the leader epoch: followers need not refetch."),
    Rule.CANCEL_WITH_ANY_ISR: RuleDoc(
        "§4.5",
        _META + "PartitionReassignmentRevert.java; ReplicationControlManager.java: cancelPartitionReassignment",
        "A reassignment may be reverted only if the ISR without the adding replicas keeps MinISR members.",
        "A reassignment may be reverted while the ISR without the adding replicas is non-empty; when it is "
        "empty, only with unclean.leader.election.enable (the first original replica becomes the ISR).",
        "Cancelling may leave the ISR below MinISR."),
    Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR: RuleDoc(
        "§2.8, §5.2.1 case B",
        _META + "PartitionChangeBuilder.java: isValidNewLeader, electAnyLeader, tryElection",
        "With no unfenced ISR member, the first unfenced ELR member is elected and joins the ISR.",
        "An ELR member is a valid new leader only while the target ISR is empty: an ISR whose members are "
        "all fenced (a reverted reassignment's forced ISR) blocks the ELR, and the partition stays "
        "leaderless.",
        "Found by running Kafka's own PartitionChangeBuilder in lockstep with the model "
        "(benchmarks/kafka_campaign.py): after a reassignment is cancelled with every original ISR member "
        "gone, the ISR holds one fenced broker and an unfenced ELR member is not elected until that broker "
        "returns."),
    Rule.PERIODIC_UNCLEAN_ELECTION: RuleDoc(
        "ch7",
        _META + "ReplicationControlManager.java: maybeElectUncleanLeaders, "
        "maybeTriggerUncleanLeaderElectionForLeaderlessPartitions, electLeader (ElectionType.UNCLEAN); "
        "PartitionChangeBuilder.java: electAnyLeader",
        "The legacy unclean leader election runs while the partition has no leader and an empty ISR: the "
        "first unfenced replica becomes leader with ISR = [it].",
        "The controller's periodic unclean election takes every leaderless partition and builds a change "
        "with Election.UNCLEAN: the builder's whole election (an unfenced ISR member, an ELR member while "
        "the ISR is empty, the last known leader, then the first unfenced replica, uncleanly), after the "
        "builder has completed a reassignment it can complete, so among the replicas that leaves. The ISR need "
        "not be empty: an ISR whose members are all fenced is replaced by the unclean leader. (A run that "
        "only completes a reassignment, electing no one, is not drawn: the next change completes it.)",
        "Found by running Kafka's own ReplicationControlManager in lockstep with the model: after a "
        "reverted move leaves an ISR of one fenced broker (the ELR blocked by it, see "
        "ELR_ELECTION_ONLY_WITH_EMPTY_ISR), the periodic election elects an unfenced replica uncleanly, "
        "where the chapters' legacy election waits for the ISR to empty.",
        requires=(Rule.UNCLEAN_ELECTION_IN_CHANGES,)),
    Rule.ALTER_PARTITION_VALIDATION: RuleDoc(
        "§2.9.2, §6.3, §6.5.1 case 3",
        _META + "ReplicationControlManager.java: alterPartition, validateAlterPartitionData, "
        "ineligibleReplicasForIsr; ClusterControlManager.java: checkBrokerEpoch",
        "STALE_BROKER_EPOCH, then NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, "
        "INVALID_REQUEST; INELIGIBLE_REPLICA for an added replica fenced, in controlled shutdown (§8.3) or in "
        "another broker epoch.",
        "STALE_BROKER_EPOCH, then NOT_CONTROLLER for a leader or partition epoch above the controller's (it "
        "takes itself for a deposed controller: only one whose registration is not the log's replay meets it, "
        "see SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED), FENCED_LEADER_EPOCH (so a deposed leader gets it), "
        "INVALID_REQUEST for a non-leader, INVALID_UPDATE_VERSION, INVALID_REQUEST; INELIGIBLE_REPLICA for any "
        "proposed member fenced, shutting down or in another broker epoch (-1, an epoch the leader does not "
        "know, skips the epoch check). The request carries every member's broker epoch.",
        "Another error code for a deposed leader; existing members are re-checked."),
    Rule.METADATA_RECORD_ORDER: RuleDoc(
        "§8.1, §2.8",
        _META + "ClusterControlManager.java: registerBroker; ReplicationControlManager.java: "
        "handleBrokerFenced, handleBrokerUnfenced; QuorumController.java: registerBroker (nextWriteOffset)",
        "A registration record comes first and the broker epoch is its offset; a fence record precedes "
        "the partition change it causes.",
        "The partition changes of a registration (its unclean-shutdown clean-up) and of a fencing precede "
        "the RegisterBrokerRecord and the fence record; the broker epoch is the offset of the batch's first "
        "record. An unfence record precedes its partition changes, as in the chapters.",
        "A broker applying the metadata log one record at a time sees the partition change before it sees "
        "the fencing or the registration."),
    Rule.FENCED_BROKER_SESSION_EXPIRES: RuleDoc(
        "§2.8, §8.3",
        _META + "BrokerHeartbeatManager.java: touch, fence (the session tracker keeps a fenced broker's session); "
        "ReplicationControlManager.java: maybeFenceOneStaleBroker, handleBrokerFenced, generateLeaderAndIsrUpdates, "
        "processBrokerHeartbeat; BrokerHeartbeatManager.java: calculateNextBrokerState (FENCED, wantShutDown: "
        "SHUTDOWN_NOW); ClusterControlManager.java: registerBroker (hasValidSession)",
        "A broker is fenced once, by its session's expiry or by its controlled shutdown; a fenced broker has no "
        "session left to expire.",
        "A broker fenced by its controlled shutdown (SHUTDOWN_NOW, as the heartbeat asking to shut down is "
        "answered) keeps the session that heartbeat renewed. When it expires (FenceBroker), or before the broker's "
        "next registration, the controller runs the fencing again: the broker leaves any ISR it is in, which a "
        "reassignment's revert can have put it back in (PartitionReassignmentRevert takes the first original "
        "replica when no ISR member is left, fenced or not); the registration change it writes is a no-op. A "
        "fenced broker's own heartbeat asking to shut down (ControlledShutdown) runs it again too (SHUTDOWN_NOW), "
        "which matters for a last member the ELR feature off kept in the ISR.",
        "A fenced replica put back in the ISR of a leaderless partition leaves it at its session's expiry, for the "
        "ELR when the ISR falls below MinISR, where the chapters keep it in the ISR until it is elected."),
    Rule.EFFECTIVE_MIN_ISR_CAPPED_AT_REPLICAS: RuleDoc(
        "§2.6, §2.9 (the ELR rules read the topic's MinISR)",
        _META + "ReplicationControlManager.java: getTopicEffectiveMinIsr (the MinISR every PartitionChangeBuilder "
        "of the controller is given); PartitionChangeBuilder.java: maybePopulateTargetElr",
        "The controller's ELR rules read the topic's MinISR as configured.",
        "The controller's partition changes read the topic's MinISR capped at the partition's replica count (of "
        "the registration the change starts from, adding and removing replicas included), as its leaders do "
        "(Partition.effectiveMinIsr). Only a cancelled reassignment leaves fewer replicas than MinISR: a MinISR "
        "raised while a move to more replicas runs stays when the move is reverted.",
        "With fewer replicas than MinISR, an ISR holding every replica has the effective MinISR: the next "
        "partition change empties the ELR (an ElectLeaders that elects no one is then a change, not "
        "PREFERRED_LEADER_NOT_AVAILABLE), where the configured MinISR would keep it."),
    Rule.REGISTRATION_AMENDED: RuleDoc(
        "§8.1 (every registration is a new broker epoch)",
        _META + "ClusterControlManager.java: registerBroker (a request with the incarnation id the controller "
        "holds amends the registration: setFenced, setInControlledShutdown and setBrokerEpoch copied, no "
        "shutdown records), replay(RegisterBrokerRecord) (registerBrokerRecordOffsets); "
        + _CORE + "server/BrokerLifecycleManager.scala: resendBrokerRegistration",
        "A broker registers once per incarnation, and each registration is a new broker epoch.",
        "A running broker can send its registration again with the same incarnation id (ResendRegistration): "
        "the controller writes a RegisterBrokerRecord that keeps the broker epoch and copies the registration's "
        "fencing and controlled shutdown, and no partition change. Its offset is the broker's latest "
        "registration record's, which a fenced broker's unfencing waits for.",
        "A starting broker that registers again must replicate the metadata log past the amended record before "
        "it is unfenced; a running broker's registration, ISR membership and leadership are unchanged.",
        requires=(Rule.METADATA_RECORD_ORDER,)),
    Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS: RuleDoc(
        "§8.3 (the controller lets a broker in controlled shutdown go once its leadership has moved)",
        _META + "BrokerHeartbeatManager.java: calculateNextBrokerState (CONTROLLED_SHUTDOWN), lowestActiveOffset, "
        "maybeUpdateControlledShutdownOffset, touch, register; QuorumController.java: processBrokerHeartbeat "
        "(processBatchEndOffset); ClusterControlManager.java: activate, replay(RegisterBrokerRecord)",
        "A broker in controlled shutdown is fenced at its next heartbeat once it leads nothing.",
        "The heartbeat that puts a broker in controlled shutdown sets its controlled shutdown offset to the last "
        "offset of the batch it wrote (the leadership moves). The broker is let go (SHUTDOWN_NOW, fenced) only once "
        "every active broker (registered, unfenced, not in controlled shutdown) has reported, in its heartbeats, "
        "a metadata offset at or past it. A running broker's heartbeats are read as current; a broker that stopped "
        "while unfenced keeps the offset it last reported until its session expires, and one a new active "
        "controller has not heard from (not running when it became active) reports none. The offset lives in the "
        "heartbeat manager only: a fencing, a new registration (an amended one too) or a failover drops it, and a "
        "broker in controlled shutdown without one is let go at its next heartbeat.",
        "A leader's controlled shutdown waits for the other brokers to replicate its leadership moves, and for "
        "the session of a broker that stopped uncleanly before it did to expire. A leader asking to shut down "
        "while another broker is active enters controlled shutdown first (BeginControlledShutdown): its whole "
        "shutdown in one heartbeat (ControlledShutdown) is refused."),
    Rule.CONTROLLER_FAILOVER: RuleDoc(
        "§2.1 (the controller is one replicated state machine: a failover changes nothing the chapters hold)",
        _META + "QuorumController.java: renounce (ClusterControlManager.deactivate drops the heartbeat "
        "manager), claim; ClusterControlManager.java: activate; BrokerHeartbeatManager.java: register, touch; "
        "ActivationRecordsGenerator.java: recordsForNonEmptyLog (no record for a log with a metadata version)",
        "The active controller never changes.",
        "The active controller can fail over (FailOverController): a standby that has replayed the metadata log "
        "becomes active and writes nothing for it. The heartbeat sessions, which only the active controller's "
        "memory holds, are rebuilt from the registrations: each unfenced broker gets a fresh session, a fenced "
        "broker none, also one its controlled shutdown fenced or one that registered and has not heartbeat since. "
        "Its next heartbeat starts a session again.",
        "A fenced broker put back in a leaderless ISR by a reassignment's revert (see "
        "FENCED_BROKER_SESSION_EXPIRES) stays in that ISR after a failover, where its session's expiry would have "
        "taken it out: it has no session left to expire.",
        requires=(Rule.FENCED_BROKER_SESSION_EXPIRES,)),
    Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING: RuleDoc(
        "§2.9.2, §6.3",
        _CORE + "cluster/Partition.scala: handleAlterPartitionError, handleAlterPartitionUpdate",
        "Any error rolls the leader's pending ISR back to the committed one; a success is applied only for "
        "a newer partition epoch.",
        "Only INELIGIBLE_REPLICA (and OPERATION_NOT_ATTEMPTED) roll back; FENCED_LEADER_EPOCH, "
        "INVALID_UPDATE_VERSION, INVALID_REQUEST and NEW_LEADER_ELECTED leave the change pending until new "
        "metadata arrives; any other error (NOT_CONTROLLER) sends the same request again. A success with the "
        "same partition epoch (nothing changed) is applied too.",
        "A leader whose change was refused keeps its Maximal ISR, and proposes nothing, until it applies "
        "new partition metadata."),
    Rule.ONE_ALTER_PARTITION_IN_FLIGHT: RuleDoc(
        "§2.9.2",
        _CORE + "server/AlterPartitionManager.scala: DefaultAlterPartitionManager.submit (unsentIsrUpdates)",
        "A leader proposes a change whenever it has none pending in its current leader epoch.",
        "A broker keeps one AlterPartition per partition until its response arrives, across leader epochs; "
        "a proposal meanwhile fails at once (OPERATION_NOT_ATTEMPTED) and is rolled back. (The model keeps "
        "the request with the replica: a replica deleted and re-created forgets it, where Kafka's broker "
        "would not.)",
        "After a new leader epoch the leader waits for the old request's answer before changing the ISR."),
    Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH: RuleDoc(
        "§2.10.2",
        _CORE + "cluster/Partition.scala: makeLeader; metadata/.../image/TopicDelta.java: localChanges",
        "A leader applies metadata of its own leader epoch only for a partition epoch newer than it knows.",
        "A leader applies every partition registration its metadata batch changed whose partition epoch is "
        "not older than its own, resetting its ISR state to the committed one: a change proposed after the "
        "AlterPartition response, before the metadata record, leaves the Maximal ISR.",
        "The Maximal ISR can lose a proposed member the controller then accepts (see the findings)."),
    Rule.LEADER_CHECKS_ISR_ELIGIBILITY: RuleDoc(
        "§6.5.1 case 3, §6.5.3",
        _CORE + "cluster/Partition.scala: isReplicaIsrEligible, isBrokerEpochIsrEligible",
        "The leader proposes a follower that reached the HWM and the LESO and fetched in its leader epoch; "
        "the controller checks the broker epoch.",
        "The leader also requires, from its own metadata, that the follower's broker is unfenced, not "
        "shutting down, and registered in the broker epoch its fetches carry.",
        "Fewer proposals reach the controller; a follower whose fencing the leader has applied is not proposed."),
    Rule.STALE_BROKER_EPOCH_FETCH_FENCED: RuleDoc(
        "§6.5.1",
        "server/src/main/java/org/apache/kafka/server/replica/Replica.java: updateFetchStateOrThrow",
        "The leader records the broker epoch of every fetch it serves.",
        "A fetch whose broker epoch is older than the one the leader's metadata holds for that broker is "
        "answered NOT_LEADER_OR_FOLLOWER and does not update the follower's state.",
        "A zombie fetch from a restarted broker's previous session cannot move the HWM or an expansion."),
    Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS: RuleDoc(
        "§2.7, §6.5.2",
        _CORE + "cluster/Partition.scala: maybeIncrementLeaderHW (shouldWaitForReplicaToJoinIsr); "
        "server/src/main/java/org/apache/kafka/server/replica/Replica.java: updateFetchStateOrThrow, "
        "resetReplicaState",
        "The HWM is the lowest fetch offset over the Maximal ISR.",
        "Followers outside the Maximal ISR that are caught up (within replica.lag.time.max.ms) and "
        "ISR-eligible hold the HWM too. Without a clock (Rule.REPLICA_LAG_TIME off) a follower is caught up "
        "once a fetch in the current leader epoch reached the leader's LEO (or the LEO of its previous "
        "fetch), and stays so until the leader shrinks it out, its epoch changes or it becomes ineligible.",
        "The HWM waits for a follower that is about to join the ISR."),
    Rule.FETCH_ERROR_ORDER: RuleDoc(
        "§2.2.2, §2.10",
        _CORE + "cluster/Partition.scala: fetchRecords, getLocalLog, followerReplicaOrThrow, readRecords",
        "A fetch to a broker that is not the leader, or from a broker outside the replica set, is answered "
        "NOT_LEADER_OR_FOLLOWER before the leader epoch is compared.",
        "The leader epoch is compared first (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), then "
        "NOT_LEADER_OR_FOLLOWER; a requester outside the replica set gets UNKNOWN_LEADER_EPOCH.",
        "Other error codes on the wire; the follower discards either."),
    Rule.TRUNCATION_IN_ROUNDS: RuleDoc(
        "§3.2",
        _CORE + "server/AbstractFetcherThread.scala: getOffsetTruncationState",
        "On a diverging epoch the follower truncates to min(its end offset for that epoch, the leader's).",
        "When the follower does not have the diverging epoch itself, it truncates to its own end offset "
        "for the largest epoch below it (not capped by the leader's) and fetches again.",
        "Truncation may take more than one fetch round."),
    Rule.ELR_POPULATED_BEFORE_ELECTION: RuleDoc(
        "§5.2, §5.3.1",
        _META + "PartitionChangeBuilder.java: build (maybePopulateTargetElr, then tryElection), tryElection",
        "A change elects first, then applies the ELR rules to its result: once the new ISR reaches MinISR "
        "the ELR and LastKnownELR are emptied.",
        "A change computes the ELR from its target ISR before the election; an ELR member elected leaves "
        "the ELR (the ISR becomes that member), and the other members stay, even when the new ISR reaches "
        "MinISR. While the ELR feature is off nothing is populated before the election, which may still "
        "elect from the registration's ELR; the ELR is emptied after it.",
        "After an election from the ELR that fills the ISR to MinISR (MinISR lowered while the ELR was "
        "off), the other ELR members stay in the ELR beside an ISR at MinISR, and a later election of one loses "
        "the writes acknowledged meanwhile (finding 12).",
        (Rule.ELR_ELECTION_ONLY_WITH_EMPTY_ISR,)),
    Rule.FENCED_FETCH_AWAITS_NEW_EPOCH: RuleDoc(
        "§2.2.2, §2.10",
        _CORE + "server/AbstractFetcherThread.scala: processFetchRequest, onPartitionFenced, markPartitionFailed; "
        "server/ReplicaManager.scala: applyLocalFollowersDelta (the partition added to a fetcher again)",
        "A follower answered FENCED_LEADER_EPOCH discards the answer and may fetch again at once.",
        "A follower answered FENCED_LEADER_EPOCH to a fetch sent in its current leader epoch removes the "
        "partition from its fetcher (marked failed) and fetches no more until its metadata gives it a new "
        "leader epoch, which adds the partition to a fetcher again; a restart starts a new fetcher.",
        "A fenced follower waits for the metadata instead of fetching again; what it holds does not change."),
    Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE: RuleDoc(
        "§2.2.2, §2.7",
        _CORE + "cluster/Partition.scala: fetchRecords (readFromLocalLog, then updateFollowerFetchState); "
        "server/ReplicaManager.scala: readFromLog (the LogReadInfo's high watermark)",
        "The leader records the follower's fetch offset, advances its HWM, and answers with the advanced HWM.",
        "The leader reads the records and its HWM first, then records the fetch offset and advances the HWM: "
        "the answer carries the HWM from before this fetch.",
        "A follower learns an HWM its own fetch advanced one fetch later. Found by driving Kafka's own "
        "kafka.cluster.Partition (kafka_bridge.partition)."),
    Rule.SHRINK_ALL_OUT_OF_SYNC: RuleDoc(
        "§2.9, §2.9.2",
        _CORE + "cluster/Partition.scala: maybeShrinkIsr, getOutOfSyncReplicas, prepareIsrShrink",
        "A shrink proposal removes one lagging follower (ProposeIsrShrink); followers lagging together "
        "leave the ISR in as many AlterPartitions.",
        "The leader's periodic ISR check removes, in one AlterPartition, every ISR follower out of sync at "
        "that moment: ProposeIsrShrinkMany removes two or more at once, ProposeIsrShrink is the check finding "
        "one. With the clock (Rule.REPLICA_LAG_TIME) the check finds exactly the followers out of sync now; "
        "without it, any two or more that may be out of sync (see CAUGHT_UP_AT_LEADER_LEO).",
        "Several followers leave the ISR in one partition change: when it takes the ISR below MinISR, every "
        "removed follower joins the ELR, where one at a time those removed while the ISR kept MinISR members "
        "do not. Found by driving Kafka's own kafka.cluster.Partition (kafka_bridge.partition)."),
    Rule.CAUGHT_UP_AT_LEADER_LEO: RuleDoc(
        "§2.9",
        _CORE + "cluster/Partition.scala: getOutOfSyncReplicas, isFollowerOutOfSync; "
        "server/src/main/java/org/apache/kafka/server/replica/ReplicaState.java: isCaughtUp",
        "A follower is out of sync when its log lags the leader's or the leader has not heard from it within "
        "replica.lag.time.max.ms; without a clock, the leader may shrink any ISR follower out at any time.",
        "A follower whose LEO, as the leader last heard it, equals the leader's LEO is caught up however long "
        "since its last fetch, and is never shrunk out. The leader's next write ends that: the follower is "
        "then out of sync as soon as its last caught-up time (its last fetch at the LEO) is older than "
        "replica.lag.time.max.ms (Rule.REPLICA_LAG_TIME; without the clock, at any time after the write). "
        "Without the clock, a follower whose LEO the leader does not know may be shrunk out at any time.",
        "A follower that stops fetching while fully caught up keeps its ISR seat until the leader writes "
        "again (or the controller fences it): a leader taking no writes never shrinks its ISR. Found by "
        "driving Kafka's own kafka.cluster.Partition (kafka_bridge.partition)."),
    Rule.EXPAND_ISR_ON_FETCH: RuleDoc(
        "§2.9, §2.9.2",
        _CORE + "cluster/Partition.scala: updateFollowerFetchState, maybeExpandIsr, canAddReplicaToIsr, "
        "isFollowerInSync",
        "The leader proposes adding an in-sync follower to the ISR in a step of its own (ProposeIsrExpand), "
        "at any moment while the follower qualifies and no AlterPartition is in flight.",
        "The leader proposes the expansion while it serves the follower's fetch: right after the fetch "
        "updates the follower's state and before the HWM advances, when the follower qualifies then (at or "
        "above the HWM and the LESO, ISR-eligible) and no AlterPartition is in flight. The AlterPartition is "
        "sent before the fetch's answer. ProposeIsrExpand is never enabled.",
        "A follower joins on the fetch that brings it in sync, with no step of its own; one that came in "
        "sync while a change was in flight waits for its next fetch. Found by driving Kafka's own "
        "kafka.cluster.Partition (kafka_bridge.partition)."),
    Rule.REPLICA_LAG_TIME: RuleDoc(
        "§2.9, §2.7",
        "server/src/main/java/org/apache/kafka/server/replica/ReplicaState.java: isCaughtUp; Replica.java: "
        "updateFetchStateOrThrow, resetReplicaState; " + _CORE + "cluster/Partition.scala: makeLeader, "
        "getOutOfSyncReplicas, maybeIncrementLeaderHW, updateFollowerFetchState",
        "A follower is out of sync when it has not caught up within replica.lag.time.max.ms; the chapters "
        "measure no time, so the leader may find any lagging follower out of sync at any moment.",
        "The brokers share a clock (AdvanceTime moves it). The leader records, per follower, the time of "
        "its last fetch and its last caught-up time: a fetch at the leader's LEO sets the latter to now, a "
        "fetch at the leader's LEO of the previous fetch to that fetch's time. A new leader epoch dates the "
        "ISR members caught up now and the others never. A follower is caught up while at the leader's LEO "
        "or caught up within replica.lag.time.max.ms (30 s, Kafka's default); the ISR check removes exactly "
        "the ISR followers not caught up, and the HWM waits for caught-up eligible followers outside the "
        "Maximal ISR. A follower's fetch moves the HWM only when it moved the follower's LEO.",
        "Which followers leave the ISR, and when, follows from the order of their fetches and writes: a "
        "follower that caught up later than another is never shrunk out without it. Time moves only to a "
        "moment at which a recorded caught-up time expires, or by one millisecond, so a run has few choices "
        "of time.",
        requires=(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS, Rule.CAUGHT_UP_AT_LEADER_LEO, Rule.SHRINK_ALL_OUT_OF_SYNC)),
    Rule.FOLLOWER_APPLIES_PARTITION_EPOCH: RuleDoc(
        "§2.10.5, §2.10.6",
        _CORE + "cluster/Partition.scala: makeFollower; metadata/.../image/TopicDelta.java: localChanges",
        "A follower acts on new metadata only when the leader epoch changes; in the same leader epoch it "
        "changes nothing, the partition epoch it acted on included.",
        "A follower takes the partition epoch of every changed registration that is not older than its own "
        "(an ISR change, a reassignment step), and restarts its fetcher only for a new leader epoch.",
        "Only what a follower shows changes (its partition epoch); its fetches do not. Found by running "
        "Kafka's own kafka.cluster.Partition as the brokers' replica in lockstep (kafka_bridge.replica)."),
    Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH: RuleDoc(
        "§3.2, §2.10.4",
        _CORE + "cluster/Partition.scala: makeLeader (assignEpochStartOffset), makeFollower; " + _STORAGE
        + "UnifiedLog.java: truncateTo; LogLoader.java: load",
        "The epoch cache holds the epochs of the replica's records and, while it leads, its own epoch at "
        "its LESO; a follower's last fetched epoch is the epoch of its last record.",
        "A leader that steps down before it appends a record keeps its epoch's entry (epoch, LEO) in the "
        "epoch cache: its fetches as a follower carry that epoch as the last fetched epoch until a "
        "truncation (even one at the LEO), an appended record, a new leadership or a restart (the log's "
        "load truncates the cache at the LEO) drops it.",
        "A deposed leader that wrote nothing in its epoch meets a diverging epoch at its first fetch and "
        "truncates at its LEO: one more fetch round trip, the same log. Found by running Kafka's own "
        "kafka.cluster.Partition as the brokers' replica in lockstep (kafka_bridge.replica)."),
    Rule.EPOCH_CHECKPOINT_WRITTEN_LATER: RuleDoc(
        "§3.2, §5.1.1 (the chapters' epoch cache is as durable as the records it describes)",
        "storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java: assign, "
        "truncateFromEndAsyncFlush, writeIfDirExists; " + _STORAGE + "LogLoader.java: load, recoverLog "
        "(KAFKA-15046, Kafka 3.7.0: no fsync on truncation; KAFKA-16541, Kafka 3.7.1 and 3.8.0: the write "
        "moved to the scheduler)",
        "A truncation of the epoch cache is on disk when the truncation returns.",
        "An assignment writes and syncs the whole leader-epoch-checkpoint at once; a truncation that removes "
        "entries only schedules that write (WriteEpochCheckpoint: the log's scheduler runs it). An unclean "
        "shutdown, lossy or not, loses a write still scheduled: the next start reads the checkpoint as it was "
        "before the truncation, and the log's load drops only the entries at or above the log end offset. A "
        "controlled shutdown runs the scheduled write (the scheduler's shutdown runs its queued tasks).",
        "A replica that truncated, then appended records of an older epoch past the removed entry's start "
        "offset, and crashed before the write, comes back with the removed entry: an epoch it holds no record "
        "of, claiming records of another epoch. Its fetches carry that epoch as the last fetched epoch, and its "
        "End Offset for Leader Epoch answers read it.",
        requires=(Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH,)),
    Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE: RuleDoc(
        "§5.2.1 case G (the chapters are silent on a MinISR change; KIP-966)",
        _META + "ConfigurationControlManager.java: incrementalAlterConfig, createClearElrRecordsAsNeeded; "
        "ReplicationControlManager.java: replay(ClearElrRecord), removeTopicElrs (ClearElrRecord: Kafka 4.0.0)",
        "A MinISR change writes the ConfigRecord and one partition change, always, which moves the partition "
        "epoch (an AlterPartition the leader proposed under the old MinISR is fenced: every ISR change the "
        "controller accepts afterwards comes from a leader that applied the new MinISR) and applies case G "
        "under the new MinISR: the ELR and LastKnownELR are emptied when the ISR has MinISR members, and "
        "kept while it has fewer (the HWM is still frozen, so they are still complete).",
        "A MinISR change empties the ELR and LastKnownELR whatever the ISR (a ClearElrRecord), and the "
        "partition epoch moves only when they were not empty; with both empty, the leader's AlterPartition "
        "at the current partition epoch is still accepted while its log config holds the old MinISR.",
        "A leaderless partition waiting on its ELR loses every clean candidate on any MinISR change. After "
        "MinISR is raised, the controller can accept a shrink from a leader that still applies the old "
        "MinISR: the removed follower joins the ELR (the ISR is below the new MinISR), while the leader "
        "advances the HWM without it under the old one."),
    Rule.CONFIG_APPLIED_AFTER_PARTITION_CHANGES: RuleDoc(
        "§2.3.2, §2.6 (the chapters are silent on a MinISR change)",
        _CORE + "server/metadata/BrokerMetadataPublisher.scala: onMetadataUpdate (ReplicaManager.applyDelta, "
        "then DynamicConfigPublisher); cluster/Partition.scala: effectiveMinIsr",
        "A broker materializes a batch as one image: its replica acts on the batch's partition changes with "
        "the batch's MinISR.",
        "The broker applies a batch's partition changes (Partition.makeLeader, which may advance the HWM) "
        "before the batch's topic configs reach the log (LogConfig): a leader made or changed by the batch "
        "acts once on the MinISR from before it.",
        "A leader whose ISR shrinks in the same batch as a MinISR increase advances the HWM once on the old "
        "MinISR, while the controller put the removed follower in the ELR under the new one."),
    Rule.CLEARED_ELR_STAYS_INDEXED: RuleDoc(
        "§5.2 (the chapters keep no index)",
        _META + "ReplicationControlManager.java: replay(ClearElrRecord), removeTopicElrs (the registration merged "
        "without updatePartitionInfo), handleBrokerShutdown (brokersToElrs.partitionsWithBrokerInElr)",
        "A broker that restarts uncleanly changes the partitions whose ISR or ELR holds it.",
        "The ClearElrRecord's replay empties the ELR without updating the controller's broker-to-ELR index "
        "(BrokersToElrs): a cleared member stays indexed until it joins and leaves the ELR again, so its "
        "unclean restart still runs a partition change for the partition, which can elect (uncleanly, with "
        "unclean.leader.election.enable) where the chapters change nothing.",
        "A leaderless partition gets its unclean election when a broker of the cleared ELR restarts, not at the "
        "next periodic check (finding 7: an index out of step with the registrations it indexes).",
        requires=(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE, Rule.LAST_KNOWN_LEADER)),
    Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR: RuleDoc(
        "§2.6 (the chapters know one MinISR, the topic's; no cluster-level default)",
        _META + "ConfigurationControlManager.java: incrementalAlterConfigResource (a BROKER resource's "
        "ConfigRecord is written even when unchanged), createClearElrRecordsAsNeeded (a ClearElrRecord with no "
        "topic name); ReplicationControlManager.java: replay(ClearElrRecord), replayClearAllElrs (Kafka 4.0.0)",
        "A topic's MinISR is its own; nothing else changes it or its ELR.",
        "The cluster-level min.insync.replicas (the default of every topic without its own; resource BROKER with "
        "the empty name) can be set at run time (AlterClusterMinIsr). The topic keeps its own MinISR, which "
        "overrides the default, yet the controller writes a ClearElrRecord for every topic: the ELR and "
        "LastKnownELR are emptied (moving the partition epoch when either was set), also when the value set is "
        "the one already in force.",
        "A leaderless partition waiting on its ELR loses every clean candidate on a change to a default it does "
        "not read: with the last known leader cleared too, it stays leaderless until an unclean election.",
        requires=(Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE,)),
    Rule.LEADER_RECOVERY_STATE: RuleDoc(
        "§5.3.2 (the chapters report an unclean election; they keep no state for it)",
        _META + "PartitionChangeBuilder.java: electLeader, setTargetLeaderRecoveryState, build; "
        "ReplicationControlManager.java: validateAlterPartitionData; " + _CORE + "cluster/Partition.scala: "
        "makeLeader (LeaderRecoveryState: KIP-704, Kafka 3.2.0)",
        "An unclean election is reported as potential data loss; the registration does not record it.",
        "An unclean election (the last known leader, or any replica with unclean.leader.election.enable) marks "
        "the registration RECOVERING, unless it already is; it stays RECOVERING through leader changes until "
        "the leader's next accepted AlterPartition, which carries the RECOVERED the leader marked itself with "
        "when it became leader. The controller refuses (INVALID_REQUEST) an AlterPartition proposing more than "
        "one ISR member while RECOVERING, or going back from RECOVERED to RECOVERING.",
        "While RECOVERING the ISR has at most one member (ValidPartitionMetadata); a partition that stays "
        "RECOVERING names the unclean election its registration comes from."),
    Rule.LEADER_ACCEPTOR_READS_DIRECTORY: RuleDoc(
        "§5.3.2 (the chapters elect only among the replicas), §2.1 (the controller never fails)",
        _META + "ReplicationControlManager.java: LeaderAcceptor.test (PartitionRegistration.directory); "
        "PartitionChangeBuilder.java: canElectLastKnownLeader; QuorumController.java: handleEventException, "
        "renounce (a non-ApiException in an event is a fault)",
        "A last known leader outside the replicas is no candidate, and a controller event never fails.",
        "Asked whether a broker can lead, the controller's leader acceptor looks up the broker's log directory in "
        "the partition's registration (PartitionRegistration.directory), which throws IllegalArgumentException "
        "\"Replica N is not assigned to this partition\" for a broker outside its replicas; the lookup is made for "
        "an active broker only. So a change that tries to elect an active last known leader outside the replicas "
        "throws, whatever event builds it (a registration, a heartbeat's unfencing, a fencing). The event writes "
        "nothing, its request is answered with an error, and QuorumController treats the non-API exception as a "
        "fault: the active controller renounces and a standby that replayed the log becomes active (as "
        "FailOverController). A registration that failed leaves the broker as it was: not started.",
        "After a cancelled move leaves a last known leader outside the replicas (finding 5), every event that "
        "reaches that election faults again: the broker whose registration triggers it never registers, and "
        "each attempt costs a controller failover.",
        (Rule.LAST_KNOWN_LEADER, Rule.CONTROLLER_FAILOVER)),
    Rule.ELR_FEATURE_LEVEL: RuleDoc(
        "§2.9, §5.2 (the chapters' controller always keeps an ELR)",
        _META + "ConfigurationControlManager.java: updateFeatures, maybeGenerateElrSafetyRecords; "
        "FeatureControlManager.java: isElrFeatureEnabled; PartitionChangeBuilder.java: maybePopulateTargetElr, "
        "isValidNewLeader, maybeUpdateRecordElr, maybeUpdateLastKnownLeader, build; ReplicationControlManager.java: "
        "handleBrokerShutdown (eligible.leader.replicas.version: KAFKA-18062, Kafka 4.0.0)",
        "The ELR is always kept.",
        "An operator can switch the ELR off and on at run time (UpdateElrFeature: eligible.leader.replicas.version "
        "0 by a safe downgrade, 1 by an upgrade, which first writes a cluster-level min.insync.replicas when there "
        "is none). Switching writes only the feature level. While it is 0, every partition change empties the ELR "
        "(and, as the last known leader is only written with the ELR on, leaves the LastKnownELR as it is), the "
        "ISR is never written empty (its last member stays), no last known leader is elected, a MinISR change "
        "clears nothing, a broker back from an unclean shutdown leaves only the ISR, and an unfencing writes the "
        "change of a leaderless partition even when it elects no one (it empties the ELR). Yet a change's election "
        "still reads the registration's ELR (isValidNewLeader): while the ISR it leaves is empty, an unfenced "
        "member of an ELR kept from before the downgrade is elected, cleanly.",
        "An ELR written before a downgrade outlives it: a member whose unclean restart the controller no longer "
        "takes out of the ELR can still be elected from it while the feature is off, or after it is on again."),
    Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED: RuleDoc(
        "§1.2.1 (the controller is one replicated state machine: a snapshot holds what the log it replaces holds)",
        "metadata/src/main/java/org/apache/kafka/image/publisher/SnapshotEmitter.java: maybeEmit; "
        "metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java: toRecord; "
        "metadata/src/main/java/org/apache/kafka/image/writer/ImageWriterOptions.java; " + _META +
        "QuorumController.java: handleLoadSnapshot (the ELR feature's level in the options: Kafka 4.0.0)",
        "A controller that loads a snapshot holds what a controller that replayed the log holds.",
        "A controller can become active from a snapshot (FailOverFromSnapshot: it restarted and loaded the "
        "quorum's latest snapshot, taken at the committed log's end). The snapshot writes each partition's "
        "ELR and LastKnownELR only while the ELR feature is on: with the feature off they are left out, "
        "silently (no loss is reported). Every snapshot record is replayed at the snapshot's last offset, "
        "which each broker's unfencing then waits for, and Kafka's broker-to-ELR index is built anew from the "
        "registration loaded. A controller that replayed the log (FailOverController) holds the log's "
        "registration again.",
        "An ELR kept from before a downgrade (see ELR_FEATURE_LEVEL) is gone from a controller that loaded a "
        "snapshot, and only from it: the brokers' images and a standby that replayed the log keep it, so which "
        "controller is active decides whether its members can be elected.",
        requires=(Rule.CONTROLLER_FAILOVER, Rule.ELR_FEATURE_LEVEL)),
}

#: Rules in force per profile.
PROFILES: dict[str, frozenset[Rule]] = {
    CHAPTERS: frozenset(),
    KAFKA: frozenset(Rule),
}


def rules_without(rules: frozenset[Rule], *off: Rule) -> frozenset[Rule]:
    """``rules`` without the rules ``off`` and every rule that requires one of them,
    directly or through another (``RuleDoc.requires``): a set ``rules_error`` accepts
    when ``rules`` is one."""
    gone = set(off)
    while True:
        more = {r for r in rules if r not in gone and gone & set(RULE_DOCS[r].requires)}
        if not more:
            return frozenset(rules - gone)
        gone |= more


def rules_error(rules: frozenset[Rule]) -> str | None:
    """Why a set of rules cannot be in force together (a rule missing one it
    requires), or None."""
    for rule in sorted(rules, key=lambda r: r.name):
        missing = [r.name for r in RULE_DOCS[rule].requires if r not in rules]
        if missing:
            return f"Rule.{rule.name} requires {missing}"
    return None
