"""Catalogue of switchable implementation mistakes.

Each ``Bug`` is a realistic slip in one code path of the SUT (an off-by-one, a
missed reset, a check left out, a wrong set), guarded in that code path by
``if Bug.X in self.bugs``. ``DOCS`` says, per bug, the protocol rule it breaks,
the section of the protocol description, and where the code path lives. The
correct implementation runs with ``bugs=frozenset()``.

Both are built from one table, ``CATALOGUE``: a row a bug, grouped by code path.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from model import Rule


class BugDoc(NamedTuple):
    rule: str      # the protocol rule the mistake breaks
    section: str   # where the rule is stated
    where: str     # the SUT code path that holds the mistake (file, then class.method)
    #: The Kafka profile's rules (``model.Rule``) under which the code path runs at
    #: all; empty: it runs under every profile. A search for the bug follows them and
    #: compares the SUT with the model only (the rules' own findings are Kafka's).
    needs: frozenset = frozenset()


#: (name, section, where, rule[, needs]) of every bug (``BugDoc``). A bug's enum
#: value is its name in lower case; stored traces name a bug by its name.
CATALOGUE: tuple[tuple, ...] = (
    # --- log and epoch cache (ch3)
    ("EPOCH_CACHE_NOT_TRUNCATED",
     "§3.2", "sut/log.py UnifiedLog.truncate_to",
     "Truncating the log must truncate the leader epoch cache with it (LeaderEpochFileCache.truncateFromEnd); "
     "otherwise the follower's next fetch carries a last fetched epoch that no longer has records."),
    ("EPOCH_ASSIGN_KEEPS_LATER_OFFSETS",
     "§3.2, §2.10.1", "sut/epoch_cache.py LeaderEpochFileCache.assign",
     "Assigning epoch e at start offset s removes every entry of epoch >= e OR start offset >= s "
     "(LeaderEpochFileCache.assign): the cache stays increasing in both. The buggy assign removes the higher "
     "epochs only, so the entry of an epoch its replica led without writing stays beside the new one at the same "
     "offset, and End Offset for Leader Epoch answers a later epoch with that unwritten epoch.",
     frozenset({Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH})),
    ("END_OFFSET_FOR_EPOCH_OFF_BY_ONE",
     "§3.2", "sut/epoch_cache.py LeaderEpochFileCache.end_offset_for",
     "End Offset for Leader Epoch returns the EXCLUSIVE end of the epoch (the start offset of the next higher "
     "epoch); the buggy lookup returns the offset of the epoch's last record, so a leader reports divergence for "
     "a follower that is merely behind and truncates a committed record."),
    # --- follower fetch path (§2.2.2, §3.2)
    ("FOLLOWER_HWM_UPDATED_BEFORE_TRUNCATION",
     "§3.2, §2.7", "sut/fetcher.py ReplicaFetcherThread._truncate_on_diverging_epoch",
     "KAFKA-14704: on a diverging-epoch response the follower must truncate first and keep its own HWM capped by "
     "the truncation offset; the buggy follower first takes the leader's HWM (not capped by its LEO), then "
     "truncates."),
    ("TRUNCATE_TO_LEADER_OFFSET",
     "§3.2, §3.3 cases E-G", "sut/fetcher.py ReplicaFetcherThread._truncate_on_diverging_epoch",
     "The follower truncates to the MINIMUM of its own End Offset for the diverging epoch and the leader's end "
     "offset; the buggy follower ignores its own lookup and keeps a forked suffix when its epoch ended earlier "
     "than the leader's."),
    # --- leader fetch path and HWM (§2.7, §6.5.2)
    ("HWM_FROM_ISR_NOT_MAXIMAL_ISR",
     "§6.5.2", "sut/partition.py Partition.maybe_increment_leader_hw",
     "The leader advances its HWM over the Maximal ISR (committed ISR plus a pending expansion); the buggy leader "
     "uses the committed ISR only, so a write can be acknowledged without a replica the controller may already "
     "count in the ISR."),
    ("STALE_LEADER_EPOCH_ACCEPTED_IN_FETCH",
     "§2.2.2, §2.10, §6.5.4", "sut/partition.py Partition.fetch_records",
     "A fetch carrying an older leader epoch than the leader's must be answered FENCED_LEADER_EPOCH; the buggy "
     "leader serves it and counts it as a fetch in its current epoch."),
    ("PRODUCE_IGNORES_MIN_ISR",
     "§2.6", "sut/partition.py Partition.append_records_to_leader",
     "An acks=all write to a leader whose ISR is below MinISR is rejected with NotEnoughReplicas; the buggy "
     "leader appends it anyway."),
    ("LIST_OFFSETS_IGNORES_LESO",
     "§6.4.2", "sut/partition.py Partition.fetch_offset_for_timestamp",
     "A leader whose HWM is still below its Leader Epoch Start Offset answers ListOffsets with 'unknown'; the "
     "buggy leader returns its lagging local HWM, which may go backwards."),
    # --- leader ISR changes (§2.9.2, §2.10, §6.5)
    ("STALE_ALTER_PARTITION_RESPONSE_APPLIED",
     "§2.9.2, §6.3", "sut/partition.py Partition.handle_alter_partition_update",
     "A successful AlterPartition response is applied only if its leader epoch is the leader's and its partition "
     "epoch is newer than the partition state the leader holds; the buggy leader applies it whatever its epochs "
     "(e.g. the response to the expansion that completed a reassignment, which bumped the leader epoch)."),
    ("PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR",
     "§2.9.2, §6.5.2", "sut/partition.py Partition.handle_alter_partition_update",
     "On an AlterPartition error the leader rolls its pending ISR back to the committed ISR; the buggy leader "
     "forgets the request but keeps the proposed ISR in its Maximal ISR."),
    ("OUT_OF_SYNC_FOLLOWER_STATE_NOT_RESET",
     "§2.10.3, §6.5.4", "sut/partition.py Partition.make_leader",
     "In a new leader epoch the leader clears the last-fetch marker of every follower, so an out-of-sync follower "
     "must fetch again in the new epoch before it may rejoin; the buggy leader clears it only for ISR members and "
     "can expand the ISR on a fetch from the old epoch (the remove-then-readd of one metadata batch)."),
    ("ISR_EXPANSION_IGNORES_LESO",
     "§6.5.3", "sut/partition.py Partition.is_follower_in_sync",
     "A follower may join the ISR only once it has reached the leader's LESO as well as the local HWM; the buggy "
     "leader checks the HWM only."),
    # --- controller (§2.8, §2.9, ch4, §5.2, §5.3)
    ("ELR_NOT_CLEARED_AT_MIN_ISR",
     "§2.9, §5.2.1 case G, §5.3.1", "sut/change_builder.py PartitionChangeBuilder.apply_elr_rules",
     "Once the ISR reaches MinISR the ELR and LastKnownELR are emptied; the buggy change builder keeps them."),
    ("UNCLEAN_REGISTRATION_KEEPS_ELR",
     "§5.2, §5.3.1, §6.5.1", "sut/replication_control.py ReplicationControlManager.handle_broker_registration",
     "A broker that registers with an empty broker epoch (unclean shutdown) moves from the ELR to the "
     "LastKnownELR; the buggy controller leaves it in the ELR, from which it can be elected cleanly although it "
     "may have lost data."),
    ("REASSIGNMENT_COMPLETES_WITHOUT_ADDING_IN_ISR",
     "§4.2, §6.7", "sut/change_builder.py PartitionChangeBuilder.complete_reassignment",
     "A reassignment completes only when every adding replica is in the ISR (and the final ISR has MinISR "
     "members); the buggy controller checks the size only."),
    ("ALTER_PARTITION_IGNORES_BROKER_EPOCH",
     "§6.5.1 case 3", "sut/replication_control.py ReplicationControlManager.ineligible_replicas_for_isr",
     "An ISR expansion is accepted only if each added replica is unfenced AND in the broker epoch the leader saw "
     "in its fetches; the buggy controller checks fencing only, so a replica that restarted uncleanly joins on a "
     "fetch from its previous life."),
    ("UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE",
     "§5.3.2", "sut/replication_control.py ReplicationControlManager.unclean_recovery",
     "Unclean recovery elects the candidate with the highest (last epoch, end offset); the buggy controller "
     "elects the first candidate in replica order."),
    # --- broker (§2.3.2, ch8)
    ("METADATA_BATCH_LAST_DELTA_ONLY",
     "§2.3.2, §6.5.4", "sut/metadata.py MetadataDelta.replay",
     "A batch of metadata records is replayed into one delta, each PartitionChangeRecord merged onto the "
     "registration the previous records of the batch produced; the buggy delta merges each record onto the old "
     "image, so only the batch's last change survives."),
    ("CONTROLLED_SHUTDOWN_WITHOUT_FLUSH",
     "§5.2, §8.3", "sut/broker.py BrokerServer.controlled_shutdown",
     "A controlled shutdown flushes the log before writing the clean-shutdown marker; the buggy broker writes the "
     "marker without flushing, so a later lossy crash of the next life can lose records the marker vouched for."),
    ("CONTROLLED_SHUTDOWN_BROKER_ELECTED",
     "§8.3", "sut/replication_control.py ReplicationControlManager._builder",
     "A broker in controlled shutdown is no acceptable leader (ClusterControlManager.isActive: unfenced and not in "
     "controlled shutdown): the point of the shutdown is to move leadership off it before it stops. The buggy "
     "controller asks only whether it is unfenced, so an ELR member in controlled shutdown is elected when the ISR "
     "empties, and leads until it stops moments later."),
    ("MIN_ISR_CHANGE_NOT_APPLIED_TO_LOG",
     "§2.6, §2.7", "sut/replica_manager.py ReplicaManager.update_min_isr",
     "A topic's new min.insync.replicas reaches the hosted log's config once the broker applies its ConfigRecord "
     "(Kafka's DynamicConfigPublisher, LogManager.updateTopicConfig); the buggy broker updates its metadata image "
     "only, so its leader keeps advancing the HWM and acknowledging acks=all writes under the MinISR the topic was "
     "created with."),
    ("PREFERRED_ELECTION_IGNORES_ISR",
     "§2.8", "sut/change_builder.py PartitionChangeBuilder.elect_leader",
     "ElectLeaders(PREFERRED) makes the first replica leader only when it is an unfenced ISR member "
     "(PartitionChangeBuilder.isValidNewLeader); the buggy controller checks only that it is unfenced, so a replica "
     "that was shrunk out, or has not caught up since it came back, becomes leader without the acknowledged writes "
     "it lacks."),
    ("PENDING_WRITES_KEPT_ON_STEP_DOWN",
     "§2.6, §2.10.4", "sut/replica_manager.py ReplicaManager.apply_image",
     "A leader that becomes a follower fails its waiting acks=all writes (NOT_LEADER_OR_FOLLOWER); the buggy "
     "broker leaves them in purgatory, where a later HWM can acknowledge a write the new leader truncated."),
    ("LEADER_STAYS_RECOVERING",
     "§5.3.2", "sut/partition.py Partition.make_leader",
     "A leader elected uncleanly finds its registration RECOVERING and marks itself RECOVERED when it becomes "
     "leader (Kafka's Partition.makeLeader, KIP-704), so its next AlterPartition ends the recovery. The buggy "
     "leader keeps the registration's RECOVERING and proposes every follower's return with it: the controller "
     "refuses a RECOVERING ISR of more than the leader (INVALID_REQUEST), and the partition never leaves an ISR "
     "of one after an unclean election.",
     frozenset({Rule.LEADER_RECOVERY_STATE})),
    ("CLUSTER_MIN_ISR_OVERRIDES_TOPIC",
     "§2.6", "sut/metadata.py MetadataDelta.replay",
     "A topic's own min.insync.replicas overrides the cluster-level default (KafkaConfigSchema."
     "resolveEffectiveTopicConfig: the topic's config first); the buggy broker applies a cluster-level "
     "ConfigRecord as its topic's MinISR, so after the default is lowered its leader advances the HWM and "
     "acknowledges acks=all writes with fewer ISR members than the topic asks for.",
     frozenset({Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR, Rule.CLEAR_ELR_ON_MIN_ISR_CHANGE})),
    ("AMENDED_REGISTRATION_FENCES",
     "§8.1", "sut/controller.py QuorumController.amend_registration",
     "A registration the same incarnation sends again amends the one the controller holds: the "
     "RegisterBrokerRecord keeps its broker epoch and copies its fencing and controlled shutdown "
     "(ClusterControlManager.registerBroker); the buggy controller writes the record's defaults, fenced and not "
     "shutting down, so an unfenced leader is fenced in every broker's metadata, and the controller's, with no "
     "partition change: it keeps leading, and no other broker is elected until its session expires.",
     frozenset({Rule.REGISTRATION_AMENDED, Rule.METADATA_RECORD_ORDER})),
    ("FENCING_IGNORES_ELR_FEATURE",
     "§2.9, §5.2", "sut/replication_control.py ReplicationControlManager.handle_broker_fenced",
     "Every partition change is built with the finalized ELR feature level (PartitionChangeBuilder's "
     "eligibleLeaderReplicasEnabled, which Kafka 4.3 moved into the constructor because a call site had left it "
     "out); the buggy fencing path builds its change with the ELR on whatever the level, so with "
     "eligible.leader.replicas.version at 0 a fenced replica leaving an ISR below MinISR joins the ELR, and the "
     "last one leaves the ISR empty, where the controller keeps no ELR and keeps the last member in the ISR.",
     frozenset({Rule.ELR_FEATURE_LEVEL})),
    ("EPOCH_CHECKPOINT_WRITES_TRUNCATION_SNAPSHOT",
     "§3.2, §5.1.1", "sut/log.py UnifiedLog.truncate_epoch_cache",
     "The checkpoint write a truncation schedules writes the cache as it is when the write runs "
     "(LeaderEpochFileCache.writeIfDirExists reads the entries under the cache's lock); the buggy write takes "
     "the entries when the truncation schedules it, so a newer epoch assigned (and written) in between is "
     "overwritten with the older entries, and a crash brings the cache back without it: the design KAFKA-17142's "
     "review turned down.",
     frozenset({Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH})),
    # --- controller failover (Kafka profile)
    ("ACTIVATION_TRACKS_FENCED_BROKERS",
     "§2.8", "sut/cluster_control.py ClusterControlManager.activate",
     "A new active controller starts a heartbeat session only for the unfenced brokers (ClusterControlManager."
     "activate touches the contact time of an unfenced registration only); the buggy one starts one for every "
     "registered broker, so a fenced broker's session expires once more after the failover and the controller "
     "runs its fencing again: a fenced replica a reassignment's revert put back in a leaderless ISR leaves it "
     "for the ELR, where Kafka keeps it in the ISR.",
     frozenset({Rule.CONTROLLER_FAILOVER, Rule.FENCED_BROKER_SESSION_EXPIRES})),
    ("SNAPSHOT_OPTIONS_FROM_METADATA_VERSION",
     "§1.2.1", "sut/replication_control.py ReplicationControlManager.load_snapshot",
     "A snapshot is written with the options of the image's features (SnapshotEmitter.maybeEmit sets "
     "ImageWriterOptions' ELR flag from the finalized eligible.leader.replicas.version); the buggy writer builds "
     "its options from the metadata version alone (ImageWriterOptions.Builder(metadataVersion), whose ELR flag "
     "defaults to off), so every snapshot leaves the ELR and LastKnownELR out, with the feature on too, and a "
     "controller that loads one forgets which replicas may still be elected.",
     frozenset({Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED, Rule.CONTROLLER_FAILOVER, Rule.ELR_FEATURE_LEVEL,
                Rule.FENCED_BROKER_SESSION_EXPIRES})),
    # --- controlled shutdown's wait for the active brokers (Kafka profile)
    ("FENCED_BROKER_HOLDS_CONTROLLED_SHUTDOWN",
     "§8.3", "sut/controller.py QuorumController.controlled_shutdown_wait",
     "A broker in controlled shutdown is let go once every active broker (unfenced, not shutting down) has "
     "reported its controlled shutdown offset (BrokerHeartbeatManager.lowestActiveOffset; fence takes a broker "
     "out of the active set); the buggy controller still counts a fenced broker, so a controlled shutdown waits "
     "for a broker whose session expired, which reports nothing more until it registers and is unfenced again.",
     frozenset({Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS})),
)


class _Catalogued(enum.Enum):
    """The members of ``Bug``: named by the catalogue, shown as ``Bug.NAME``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


Bug = _Catalogued("Bug", [(row[0], row[0].lower()) for row in CATALOGUE], module=__name__, qualname="Bug")
Bug.__doc__ = "A switchable implementation mistake of the SUT (see ``DOCS``)."

DOCS: dict[_Catalogued, BugDoc] = {Bug[row[0]]: BugDoc(row[3], row[1], row[2], *row[4:]) for row in CATALOGUE}

__all__ = ["Bug", "BugDoc", "CATALOGUE", "DOCS"]
