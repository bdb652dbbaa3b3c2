"""The findings about Kafka's code, each with a JUnit reproducer (docs: Findings
under the Kafka profile, numbered as there): the configuration and the trace that
show it on Kafka's classes, what an issue filed upstream says, and whether the
reproducer drives the brokers' replicas (Kafka's ``Partition``: findings 1, 2, 6,
10 and 12, whose defect shows in a broker's log or HWM) or Kafka's controller alone."""

from __future__ import annotations

import attrs

from model import (KAFKA, AdvanceTime, AlterMinIsr, AlterUncleanLeaderElection, BeginControlledShutdown, CancelReassignment, Config,
                   ControlledShutdown, ElectPreferredLeader, FailOverFromSnapshot, FenceBroker, Produce, ProposeIsrShrink, Reassign, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                   SendFetch, StartBroker, UncleanShutdown, UnfenceBroker, UpdateElrFeature)


@attrs.frozen
class Upstream:
    """What an issue filed upstream says beyond the reproducer: a ``summary`` a Kafka
    committer would search for, the Kafka ``sources`` (file, method, line in the
    4.3.1 sources, whose classes 4.4.0's equal), the ``impact`` for users, suggested
    ``fixes`` and ``related`` JIRA issues (id, how it relates)."""

    summary: str
    sources: tuple[tuple[str, str, int], ...]
    impact: str
    fixes: tuple[str, ...]
    related: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class KafkaFinding:
    """A finding about Kafka's code: its number and title on the findings page, the
    configuration (profile kafka) and trace that show it, what the reproducer shows
    (``shows``: one sentence for the test's doc), what an issue filed upstream says
    (``upstream``), the Kafka component at fault, and whether the reproducer drives
    the brokers' replicas (Kafka's ``Partition``: ``replicas``) or Kafka's controller
    alone, the brokers' requests written as the values they were."""

    number: int
    title: str
    config: Config
    trace: tuple
    shows: str
    upstream: Upstream
    component: str = "controller"
    replicas: bool = False

    @property
    def name(self) -> str:
        """The JUnit test class's name."""
        return f"ReplicheckFinding{self.number}Test"


_CONTROLLER = "metadata/src/main/java/org/apache/kafka/controller/"

def _fetch(follower: int, request: int) -> tuple:
    """A fetch of ``follower``, delivered and answered (messages ``request``, ``request + 1``)."""
    return (SendFetch(follower), ReceiveFetchRequest(request), ReceiveFetchResponse(request + 1))


FINDINGS: tuple[KafkaFinding, ...] = (
    KafkaFinding(
        1, "The last known leader loses acknowledged writes",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, profile=KAFKA),
        (Produce(1, 1), *_fetch(2, 1), SendFetch(2), ReceiveFetchRequest(3), FenceBroker(2), FenceBroker(1),
         UncleanShutdown(2, lossy=False), StartBroker(2), UncleanShutdown(1, lossy=True), StartBroker(1),
         ReplicateMetadata(1, 8), UnfenceBroker(1)),
        "with ISR and ELR emptied by two unclean restarts, the controller elects the last known leader 1, whose "
        "lossy restart left its log empty, while 2 holds the acknowledged write",
        Upstream(
            "KRaft controller: the last known leader is elected after an unclean restart that lost its unflushed "
            "records, while another LastKnownELR candidate holds the acknowledged write",
            ((_CONTROLLER + "PartitionChangeBuilder.java", "canElectLastKnownLeader", 286),
             (_CONTROLLER + "PartitionChangeBuilder.java", "electAnyLeader", 256),
             (_CONTROLLER + "ReplicationControlManager.java", "handleBrokerShutdown", 1482)),
            "One lossy shutdown (a machine's power, within MinISR - 1 failures) loses an acknowledged write: each "
            "unclean registration takes its broker out of the ELR, and with ISR and ELR empty the controller "
            "elects the last known leader as soon as it is unfenced, whatever its log holds now. Replica 2, "
            "which restarted without loss and holds the write, follows it and truncates.",
            ("Keep the brokers an unclean registration takes out of the ELR as candidates (KIP-966's "
             "LastKnownELR), and elect among them the one with the longest log (KIP-966's balanced unclean "
             "recovery) instead of the last known leader alone.",
             "Or elect the last known leader only when its registration followed a clean shutdown."),
            (("KAFKA-19522", "a fenced last known leader elected (fixed in 4.1.1): not an unfenced one with a lost "
                             "suffix"),)),
        component="controller, broker (kafka.cluster.Partition)", replicas=True),
    KafkaFinding(
        2, "A pending ISR expansion leaves the Maximal ISR, and the HWM passes an ISR member",
        Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA),
        (Produce(1, 1), Produce(1, 2), *_fetch(2, 1), *_fetch(3, 3), *_fetch(2, 5), AdvanceTime(1), *_fetch(3, 7),
         Produce(1, 3), Produce(1, 4), AdvanceTime(30000), ProposeIsrShrink(1, 2), ReceiveAlterPartition(9),
         ReceiveAlterPartitionResponse(10), *_fetch(3, 11), SendFetch(2), ReceiveFetchRequest(13),
         ReplicateMetadata(1, 1), SendFetch(3), ReceiveFetchRequest(16), ReceiveFetchResponse(17),
         ReceiveAlterPartition(14)),
        "leader 1's makeLeader with the partition epoch it already has drops the pending expansion of 2; the HWM "
        "reaches 4 past 2's log end offset 2, and the controller then commits 2 to the ISR",
        Upstream(
            "Partition.makeLeader with the current partition epoch drops a pending ISR expansion: the HWM passes "
            "the expanding follower, which the controller then adds to the ISR",
            (("core/src/main/scala/kafka/cluster/Partition.scala", "makeLeader", 588),),
            "No fault is needed: a race between an AlterPartition response and the metadata record of the same "
            "change. The leader, having learnt the new partition epoch from the response, accepts the record "
            "of that partition epoch in makeLeader and resets its ISR state, dropping the expansion in flight "
            "from the Maximal ISR. The HWM then advances without the expanding follower, and the controller "
            "commits that follower to the ISR although it lacks committed records; if the leader fails before "
            "it catches up, an acknowledged write can be lost.",
            ("Skip the ISR reset in makeLeader when the registration's partition epoch is the one the leader "
             "already has (the chapters: act only on a newer partition epoch).",
             "Or keep a pending AlterPartition's proposal in the Maximal ISR across the reset.")),
        component="broker (kafka.cluster.Partition)", replicas=True),
    KafkaFinding(
        3, "A completed reassignment keeps a removed replica in the ELR",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, profile=KAFKA),
        (Reassign((1, 3)), FenceBroker(1), ReplicateMetadata(2, 3), ReplicateMetadata(3, 3), SendFetch(3),
         ReceiveFetchRequest(1), ReceiveAlterPartition(2)),
        "the move [1, 2] -> [1, 3] completes with ISR [3] and the ELR holds 2, no longer a replica",
        Upstream(
            "KRaft controller: a completed reassignment leaves a removed replica in the ELR "
            "(PartitionChangeBuilder.maybePopulateTargetElr)",
            ((_CONTROLLER + "PartitionChangeBuilder.java", "maybePopulateTargetElr", 532),),
            "The partition's registration names, in its ELR, a broker that no longer hosts the partition "
            "(KIP-966's ELR is a subset of the replicas): clients that read the ELR see it, and code that "
            "trusts the invariant (a directory lookup of an ELR member) can fail. Elections walk the replica "
            "set, so it is never elected. The same happens when a cancelled move drops an adding replica "
            "that was in the ISR.",
            ("Intersect the target ELR with the target replicas in maybePopulateTargetElr.",
             "Or remove the replicas a completed or reverted move drops from the ELR where the move's "
             "replicas are set."),
            (("KAFKA-19975", "a move that never completes while a non-moving replica is out of the ISR; before "
                             "4.3.0 it stops this trace short of the finding"),))),
    KafkaFinding(
        4, "Cancelling a reassignment puts a fenced broker in the ISR",
        Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1, unclean_leader_election=True, profile=KAFKA),
        # 1's controlled shutdown waits for the active brokers to apply its batch
        # (Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)
        (BeginControlledShutdown(1), ReplicateMetadata(2, 2), ReplicateMetadata(3, 2), ControlledShutdown(1),
         Reassign((2,)), CancelReassignment()),
        "the cancelled move [1] -> [2] reverts to ISR [1] while broker 1 is fenced",
        Upstream(
            "KRaft controller: cancelling a reassignment puts a fenced broker in the ISR "
            "(PartitionReassignmentRevert)",
            ((_CONTROLLER + "PartitionReassignmentRevert.java", "PartitionReassignmentRevert(PartitionRegistration)",
              63),),
            "With unclean.leader.election.enable, the revert of a move whose ISR holds no original replica "
            "makes the first original replica the ISR without asking whether it is fenced: the ISR names a "
            "broker that is not alive, and the partition waits for it with no leader. After a MinISR change "
            "cleared the ELR, the revert's leader-epoch bump also records NoLeader (-1) as the last known "
            "leader.",
            ("Choose the revert's ISR member among the unfenced original replicas, or leave the ISR empty "
             "and let the unclean election choose a leader.",))),
    KafkaFinding(
        5, "A last known leader outside the replicas makes Kafka's controller throw",
        Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=1, unclean_leader_election=True, profile=KAFKA),
        (Reassign((2,)), Reassign((1, 2, 3)), FenceBroker(2), CancelReassignment(), UncleanShutdown(2, lossy=False),
         StartBroker(2)),
        "broker 2's registration after an unclean shutdown throws: the revert left 1, no longer a replica, as the "
        "last known leader",
        Upstream(
            "KRaft controller: registerBroker throws IllegalArgumentException \"Replica N is not assigned to this "
            "partition\" when the LastKnownELR names a broker outside the replicas after a cancelled reassignment",
            ((_CONTROLLER + "PartitionChangeBuilder.java", "canElectLastKnownLeader", 286),
             (_CONTROLLER + "ReplicationControlManager.java", "LeaderAcceptor.test", 2545),
             ("metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java", "directory", 366)),
            "The broker's registration fails, and so does every retry. In a running QuorumController a "
            "non-API exception in an event is a fault: the active controller renounces leadership, the next "
            "one replays the same state and fails the same way at the broker's next attempt. No lossy "
            "shutdown is needed; the requests are an operator's (a move and its cancel) and a broker's "
            "restart.",
            ("Drop LastKnownELR members outside the target replicas when a move sets the replicas (its "
             "completion and its revert).",
             "Make LeaderAcceptor.test answer false for a broker outside the replicas instead of asking "
             "PartitionRegistration.directory, which throws."),
            (("KAFKA-15584", "KIP-966 ELR work; does not report it"),
             ("KAFKA-15586", "KIP-966 ELR work; does not report it"),
             ("KAFKA-18940", "KIP-966 ELR work; does not report it")))),
    KafkaFinding(
        6, "A raised MinISR reaches the leader after the controller applies it: the ELR holds a replica missing "
           "acknowledged writes",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1, profile=KAFKA),
        (Produce(1, 1), AlterMinIsr(2), FenceBroker(2), ReplicateMetadata(1, 2), UnfenceBroker(2), FenceBroker(1)),
        "MinISR is raised to 2 and follower 2 fenced into the ELR; leader 1 applies both records in one batch and "
        "advances the HWM on ISR [1] under the old MinISR; 2, elected from the ELR, lacks the acknowledged write",
        Upstream(
            "min.insync.replicas raised while the ELR is in use: the leader applies the new MinISR after the "
            "partition change of the same metadata batch, and an ELR member lacks an acknowledged write",
            (("core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala", "onMetadataUpdate", 148),
             (_CONTROLLER + "ConfigurationControlManager.java", "createClearElrRecordsAsNeeded", 235),
             (_CONTROLLER + "ReplicationControlManager.java", "removeTopicElrs", 609)),
            "KIP-966's ELR is sound only while the controller and the leader agree on MinISR. After a topic's "
            "min.insync.replicas is raised, the controller puts a replica leaving the ISR into the ELR (the ISR "
            "is below the new MinISR) while the leader, on the old MinISR, still advances the HWM without it: "
            "a write is acknowledged that the ELR member lacks, and electing that member loses it. No crash is "
            "needed. The same opens through AlterPartition: the ClearElrRecord moves the partition epoch only "
            "of a partition with an ELR, so a shrink proposed under the old MinISR is accepted.",
            ("Bump the partition epoch of every partition of the topic with the ClearElrRecord, so a shrink "
             "proposed under the old MinISR is refused.",
             "Apply a metadata batch's configs before its partition changes (BrokerMetadataPublisher), or with "
             "them as one image.",
             "Until then: raise min.insync.replicas only while every partition of the topic has its full ISR."),
            (("KAFKA-16540", "removed broker-level min.insync.replicas overrides for the same reason"),
             ("KAFKA-18649", "the ClearElrRecord's handling"))),
        component="controller, broker (kafka.cluster.Partition, BrokerMetadataPublisher)", replicas=True),
    KafkaFinding(
        7, "A cleared ELR stays in the controller's broker-to-ELR index",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1, profile=KAFKA),
        (FenceBroker(1), FenceBroker(2), AlterMinIsr(2), AlterUncleanLeaderElection(True), UnfenceBroker(2),
         UncleanShutdown(2, lossy=False), FenceBroker(2), StartBroker(2)),
        "broker 2, indexed twice in the ELR, registers again and the same PartitionChangeRecord is written twice: "
        "the partition epoch moves by 2",
        Upstream(
            "KRaft controller: replaying ClearElrRecord leaves BrokersToElrs stale; a broker indexed twice gets "
            "the same PartitionChangeRecord twice",
            ((_CONTROLLER + "ReplicationControlManager.java", "removeTopicElrs", 609),
             (_CONTROLLER + "ReplicationControlManager.java", "updatePartitionInfo", 2474),
             (_CONTROLLER + "ReplicationControlManager.java", "handleBrokerShutdown", 1488),
             (_CONTROLLER + "BrokersToElrs.java", "add", 103),
             (_CONTROLLER + "BrokersToElrs.java", "remove", 121)),
            "The members of an ELR a MinISR change cleared stay indexed: an unclean restart of one still "
            "runs a partition change for the partition (an unclean election when it is enabled), and a "
            "member that joins the ELR again is indexed twice, so its next unclean restart writes the same "
            "PartitionChangeRecord twice and the partition epoch moves by two. Read from the code, not run: "
            "removing a duplicated entry of a partition other than 0 leaves a 0 in the index, which then "
            "names partition 0 for the broker.",
            ("Update the index (updatePartitionInfo, or brokersToElrs.update) for every partition "
             "removeTopicElrs changes.",
             "Make BrokersToElrs.add leave an entry already there."),
            (("KAFKA-18649", "the ClearElrRecord's handling (merges only a partition with an ELR); not the "
                             "index"),
             ("KAFKA-19383", "deleted topics; not the index")))),
    KafkaFinding(
        8, "With the ELR off, an ELR member back from an unclean shutdown is elected",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, profile=KAFKA),
        (Produce(1, 1), *_fetch(2, 1), *_fetch(2, 3), FenceBroker(2), UpdateElrFeature(False),
         UncleanShutdown(2, lossy=True), StartBroker(2), ReplicateMetadata(2, 4), UnfenceBroker(2), FenceBroker(1)),
        "with eligible.leader.replicas.version downgraded to 0, broker 2 registers after an unclean shutdown and "
        "stays in the ELR; the fencing of leader 1 then elects it from that ELR, cleanly",
        Upstream(
            "KRaft controller: with eligible.leader.replicas.version downgraded to 0, the ELR kept from before is "
            "still used for elections, and an unclean restart no longer removes a broker from it",
            ((_CONTROLLER + "ConfigurationControlManager.java", "updateFeatures", 752),
             (_CONTROLLER + "ReplicationControlManager.java", "handleBrokerShutdown", 1482),
             (_CONTROLLER + "PartitionChangeBuilder.java", "isValidNewLeader", 318),
             (_CONTROLLER + "PartitionChangeBuilder.java", "maybePopulateTargetElr", 532)),
            "Kafka's operations guide calls the downgrade of eligible.leader.replicas.version to 0 safe. It writes "
            "the feature level only: every partition keeps its ELR until its next change. While the feature is "
            "off, a broker registering after an unclean shutdown is handled as a fencing, which takes it out of "
            "the ISR but not of the ELR, yet PartitionChangeBuilder.isValidNewLeader still elects an ELR member "
            "when the ISR left is empty. So one lossy shutdown (a machine's power; within MinISR - 1 failures) "
            "followed by the leader's fencing elects the replica that lost the acknowledged writes, in a clean "
            "election: no unclean election is reported, and the other replica, which holds them, follows it and "
            "truncates. The same ELR is read again after an upgrade back to 1. No crash is needed either: with the "
            "feature off a MinISR change writes no ClearElrRecord, so lowering min.insync.replicas leaves the ELR "
            "beside an ISR the leader acknowledges writes with, and the leader's fencing elects the ELR member "
            "that lacks them.",
            ("Clear every partition's ELR and LastKnownELR when the feature is downgraded (a ClearElrRecord with "
             "no topic name, as a cluster-level MinISR change writes).",
             "Or read no ELR in isValidNewLeader while the feature is off, and take a broker registering after "
             "an unclean shutdown out of the ELR whatever the feature level."),
            (("KAFKA-18062", "brought the feature level that switches the ELR (Kafka 4.0.0)"),
             ("KAFKA-15586", "clean shutdown detection: an unclean registration leaves the ELR, with the feature "
                             "on only")))),
    KafkaFinding(
        9, "With the ELR off, a partition whose ISR is empty loses its ELR and stays offline",
        Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1, profile=KAFKA),
        (FenceBroker(1), UpdateElrFeature(False), FenceBroker(2), UnfenceBroker(2), UnfenceBroker(1)),
        "with eligible.leader.replicas.version downgraded to 0, the unfencing of broker 2 empties the ELR of the "
        "leaderless partition whose ISR is empty; once its one replica 1 is unfenced nothing elects it: no "
        "leader, ISR and ELR empty",
        Upstream(
            "KRaft controller: after eligible.leader.replicas.version is downgraded to 0, a partition whose ISR "
            "is empty loses its ELR at its next change and no clean election can bring it back",
            ((_CONTROLLER + "ConfigurationControlManager.java", "updateFeatures", 752),
             (_CONTROLLER + "ReplicationControlManager.java", "handleBrokerUnfenced", 1444),
             (_CONTROLLER + "PartitionChangeBuilder.java", "maybeUpdateRecordElr", 502),
             (_CONTROLLER + "PartitionChangeBuilder.java", "canElectLastKnownLeader", 286),
             (_CONTROLLER + "PartitionChangeBuilder.java", "build", 426)),
            "With the ELR on, a partition's ISR can be empty: its last member went to the ELR (a fencing, a "
            "controlled shutdown), to be elected when it returns. The downgrade leaves it so. The next change "
            "the controller builds for the partition empties the ELR (maybeUpdateRecordElr with the feature "
            "off), and an unfencing of any broker builds one for every leaderless partition "
            "(handleBrokerUnfenced). From then on the ISR and the ELR are empty, and with the feature off the "
            "last known leader is not elected either: the partition stays offline, its replicas unfenced, until "
            "an unclean leader election or an upgrade back to 1 (which elects the last known leader, "
            "uncleanly). Before KIP-966 the last member would have stayed in the ISR.",
            ("On the downgrade, give every partition whose ISR is empty its ELR as ISR (or its last known "
             "leader), as the controller before KIP-966 kept the last member in the ISR.",
             "Or elect the ELR and the last known leader while the feature is off, as long as the registration "
             "holds them."),
            (("KAFKA-18062", "brought the feature level that switches the ELR (Kafka 4.0.0)"),))),
    KafkaFinding(
        10, "A restart brings back an epoch a truncation removed, and committed records diverge",
        Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1, profile=KAFKA),
        (Produce(1, 1), *_fetch(2, 1), *_fetch(3, 3), SendFetch(2), ReceiveFetchRequest(5), SendFetch(3),
         ReceiveFetchRequest(7), Produce(1, 2), Reassign((2, 1, 3)), ElectPreferredLeader(),
         ReplicateMetadata(2, 2), ReplicateMetadata(3, 2), Produce(2, 3), *_fetch(3, 9), FenceBroker(2),
         ReplicateMetadata(1, 4), ReplicateMetadata(3, 2), ReplicateMetadata(2, 2), UnfenceBroker(2),
         *_fetch(2, 11), *_fetch(2, 13), UncleanShutdown(2, lossy=False), FenceBroker(2), FenceBroker(1),
         ReplicateMetadata(3, 4), StartBroker(2), ReplicateMetadata(2, 5), UnfenceBroker(2), *_fetch(2, 15)),
        "broker 2 truncates away its epoch-2 record and entry, takes 1's epoch-1 record at the same offset, and "
        "dies before the scheduled checkpoint write: restarted, its epoch cache holds (2, 1) again, its fetch "
        "to the new leader 3 (which holds the epoch-2 record) carries epoch 2 and finds no divergence, and the "
        "two replicas hold different records under the HWM",
        Upstream(
            "Leader epoch cache: a checkpoint write a truncation scheduled and a crash lost brings back the removed "
            "entry at the next start when the log regrew past its start offset, and the follower keeps a "
            "diverging log",
            (("storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java",
              "truncateFromEndAsyncFlush", 335),
             ("storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java", "load", 220),
             ("storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java", "recover", 505),
             ("core/src/main/scala/kafka/cluster/Partition.scala", "readRecords", 1401),
             ("core/src/main/scala/kafka/server/ReplicaFetcherThread.scala", "latestEpoch", 50)),
            "Since KAFKA-15046 and KAFKA-16541 a truncation of the epoch cache writes the checkpoint file later, "
            "on the log's scheduler; the comment there reasons that stale entries a crash brings back are "
            "removed by the load's truncateFromEnd at the log end offset. That holds only while the log has not "
            "grown back past them. A follower that truncates a removed epoch's records and appends the leader's "
            "records of an older epoch at the same offsets (no new epoch: no assign, no synchronous write) "
            "restarts after a crash with the removed entry in front of records of another epoch. Its fetches "
            "then carry the removed epoch as their last fetched epoch; a leader that holds that epoch's records "
            "(a replica that took them from the old leader) ends the epoch at or past the follower's fetch "
            "offset and answers without a diverging epoch. The follower keeps its records, joins the ISR and "
            "takes the HWM: two replicas hold different records at committed offsets, and a consumer reads "
            "different data at the same offset depending on which replica leads. A crash of the process (not the "
            "machine) suffices; the window is as long as the scheduler's queue, which a leadership change "
            "that truncates many partitions at once fills with one fsync each.",
            ("Write the checkpoint synchronously when the truncation removes an entry below the log end offset "
             "the log can grow back to, or flush the scheduled write before the log appends past a removed "
             "entry's start offset.",
             "Or on load, check the cache against the log: drop the entries whose epoch no batch at or after "
             "their start offset carries (LogSegment.recover already reads every batch of the segments it "
             "recovers).",
             "Or write the checkpoint on every flush of the log, so that the cache on disk is never older than "
             "the records on disk."),
            (("KAFKA-15046", "removed the fsync of the checkpoint on truncation (Kafka 3.7.0)"),
             ("KAFKA-16541", "moved the truncation's checkpoint write to the scheduler (Kafka 3.7.1 and 3.8.0)"))),
        component="broker (LeaderEpochFileCache, UnifiedLog)", replicas=True),
    KafkaFinding(
        11, "A controller that loaded a snapshot runs a partition epoch behind the brokers, and refuses every ISR change",
        Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA),
        (FenceBroker(3), FenceBroker(2), UpdateElrFeature(False), FailOverFromSnapshot(), UpdateElrFeature(True),
         AlterMinIsr(1), ReplicateMetadata(1, 9), ReplicateMetadata(2, 9), UnfenceBroker(2), ReplicateMetadata(1, 1),
         ReplicateMetadata(2, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(3), ReceiveAlterPartition(2),
         ReceiveAlterPartitionResponse(4),
         ReceiveAlterPartition(5)),
        "with eligible.leader.replicas.version downgraded to 0, the controller that becomes active from a snapshot "
        "holds no ELR where the log holds [2]; after the upgrade back to 1 the ClearElrRecord of a MinISR change "
        "moves the partition epoch of the brokers' registrations, not of the controller's, which then answers "
        "NOT_CONTROLLER to every AlterPartition of the leader",
        Upstream(
            "KRaft: a metadata snapshot written while eligible.leader.replicas.version is 0 drops the ELR the log "
            "holds; a controller that loads it diverges from the log, and after a ClearElrRecord refuses every "
            "AlterPartition with NOT_CONTROLLER",
            (("metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java", "toRecord", 375),
             ("metadata/src/main/java/org/apache/kafka/image/publisher/SnapshotEmitter.java", "maybeEmit", 149),
             (_CONTROLLER + "QuorumController.java", "handleLoadSnapshot", 1031),
             (_CONTROLLER + "ReplicationControlManager.java", "removeTopicElrs", 609),
             ("metadata/src/main/java/org/apache/kafka/image/TopicDelta.java", "maybeClearElr", 126),
             (_CONTROLLER + "ReplicationControlManager.java", "validateAlterPartitionData", 1276),
             ("core/src/main/scala/kafka/cluster/Partition.scala", "handleAlterPartitionError", 1733)),
            "A snapshot is written from the metadata image with the options of its features "
            "(SnapshotEmitter.maybeEmit): while eligible.leader.replicas.version is 0, "
            "PartitionRegistration.toRecord leaves the ELR and LastKnownELR out, silently (no loss is reported). "
            "The downgrade itself clears no ELR, so every partition that held one keeps it in the log, in every "
            "broker's image and in every controller that replayed the log, but not in a controller that restarts "
            "and loads the snapshot (QuorumController.handleLoadSnapshot). The two then differ on what a "
            "ClearElrRecord does: removeTopicElrs and TopicDelta.replay merge it, moving the partition epoch, only "
            "into a registration holding an ELR or LastKnownELR. After an upgrade back to 1, the first "
            "ClearElrRecord (a min.insync.replicas change of the topic or of the cluster) moves the brokers' "
            "partition epoch and not the active controller's. Each later change moves both by one: the leader's "
            "AlterPartition always carries a partition epoch above the controller's, which answers NOT_CONTROLLER "
            "(validateAlterPartitionData takes itself for a deposed controller), and the leader sends it again "
            "for ever (handleAlterPartitionError's default case). The ISR can neither shrink nor expand: a "
            "follower that restarts never rejoins, and with acks=all the partition stops taking writes once the "
            "ISR falls below min.insync.replicas, until a controller that replayed the log becomes active, or "
            "one restarts from a snapshot written after the upgrade.",
            ("Write the ELR and LastKnownELR into snapshots whatever the feature level, as the log holds them "
             "(they are tagged fields: an older reader ignores them).",
             "Or clear every partition's ELR and LastKnownELR when the feature is downgraded, so the log and the "
             "snapshot agree (a ClearElrRecord with no topic name).",
             "And move the partition epoch with every ClearElrRecord the controller writes for a partition, as a "
             "PartitionChangeRecord would, so its replay does not depend on the replayer's state."),
            (("KAFKA-18062", "brought the feature level that switches the ELR (Kafka 4.0.0)"),
             ("KAFKA-15581", "introduced the ELR fields, written by toRecord only with the ELR enabled")))),
    KafkaFinding(
        12, "An election from the ELR keeps the other ELR members beside an ISR at MinISR: an acknowledged write "
            "is lost",
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, profile=KAFKA),
        (FenceBroker(2), FenceBroker(1), UpdateElrFeature(False), AlterMinIsr(1), UpdateElrFeature(True),
         UnfenceBroker(1), ReplicateMetadata(1, 10), Produce(1, 1), FenceBroker(1), ReplicateMetadata(2, 12),
         UnfenceBroker(2), ReplicateMetadata(2, 2)),
        "with eligible.leader.replicas.version downgraded to 0, min.insync.replicas lowered to 1 and the feature "
        "upgraded back, the unfencing of broker 1 elects it from ELR [1, 2] and leaves 2 in the ELR beside ISR [1]; "
        "leader 1 acknowledges a write with ISR [1], and once 1 is fenced the unfencing of 2 elects it from the "
        "ELR, with an empty log",
        Upstream(
            "KRaft controller: an election from the ELR leaves the other ELR members in the ELR even when the new "
            "ISR reaches min.insync.replicas; after an ELR feature downgrade and upgrade this loses acknowledged "
            "writes",
            ((_CONTROLLER + "PartitionChangeBuilder.java", "build", 426),
             (_CONTROLLER + "PartitionChangeBuilder.java", "maybePopulateTargetElr", 532),
             (_CONTROLLER + "PartitionChangeBuilder.java", "tryElection", 324),
             (_CONTROLLER + "ConfigurationControlManager.java", "createClearElrRecordsAsNeeded", 235),
             (_CONTROLLER + "ConfigurationControlManager.java", "maybeGenerateElrSafetyRecords", 705)),
            "PartitionChangeBuilder.build computes the target ELR from the target ISR (maybePopulateTargetElr, "
            "which empties the ELR once the ISR has min.insync.replicas members) before the election "
            "(tryElection). An election from the ELR makes the ISR the new leader alone and takes only that "
            "member out of the ELR: the others stay, even when the one-member ISR now reaches "
            "min.insync.replicas. With the feature on throughout, an ELR holds fewer members than MinISR, so this "
            "never happens: a MinISR change writes a ClearElrRecord. It does happen once the ELR outlives a "
            "downgrade of eligible.leader.replicas.version to 0 (finding 8): a min.insync.replicas change while "
            "the feature is off writes no ClearElrRecord (createClearElrRecordsAsNeeded), and the upgrade back to "
            "1 generates the configuration records that make the ELR safe (maybeGenerateElrSafetyRecords), not a "
            "check of the ELRs kept. RF 2, MinISR 2: both replicas fenced (ISR empty, ELR [1, 2]), the feature "
            "downgraded, MinISR lowered to 1, the feature upgraded; unfencing 1 elects it, ISR [1], ELR [2]. "
            "Leader 1 acknowledges acks=all writes with ISR [1] (MinISR 1), which 2 lacks; when 1 is fenced "
            "again, unfencing 2 elects it from the ELR, cleanly, and the acknowledged writes are lost (1 "
            "truncates when it follows). No crash and no unclean election: every step is an operation the "
            "documentation calls safe.",
            ("In PartitionChangeBuilder.build, apply maybePopulateTargetElr's MinISR check to the ISR the "
             "election leaves: an election from the ELR that brings the ISR to min.insync.replicas empties the "
             "ELR and LastKnownELR.",
             "And write the ClearElrRecord of a min.insync.replicas change whatever the feature level, since the "
             "ELR outlives a downgrade (or clear the ELRs on the downgrade, as finding 8 suggests)."),
            (("KAFKA-15584", "brought the election from the ELR, after the ELR is populated (KIP-966)"),
             ("KAFKA-18062", "brought the feature level that switches the ELR (Kafka 4.0.0)"),
             ("KAFKA-16540", "clears the ELR on a min.insync.replicas change, with the feature on only"))),
        component="controller (PartitionChangeBuilder)", replicas=True),
)


def finding(number: int) -> KafkaFinding:
    """The finding numbered ``number``; ValueError naming the numbers there are."""
    for f in FINDINGS:
        if f.number == number:
            return f
    raise ValueError(f"finding: {number} has no reproducer; one of {', '.join(str(f.number) for f in FINDINGS)}")
