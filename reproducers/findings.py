"""The findings about Kafka's code that a JUnit reproducer of Kafka's controller
shows (docs: Findings about Kafka's code, numbered as there): each with the
configuration and the trace that shows it on Kafka's classes. The findings whose
defect shows only in a broker's log or HWM (1, 2, 6) need Kafka's ``Partition`` in
the reproducer, which it does not drive yet, and are not listed."""

from __future__ import annotations

import attrs

from model import (KAFKA, AlterMinIsr, AlterUncleanLeaderElection, CancelReassignment, Config, ControlledShutdown,
                   FenceBroker, Reassign, ReceiveAlterPartition, ReceiveFetchRequest, ReplicateMetadata, SendFetch,
                   StartBroker, UncleanShutdown, UnfenceBroker)


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
    (``upstream``), and the Kafka component at fault."""

    number: int
    title: str
    config: Config
    trace: tuple
    shows: str
    upstream: Upstream
    component: str = "controller"

    @property
    def name(self) -> str:
        """The JUnit test class's name."""
        return f"ReplicheckFinding{self.number}Test"


_CONTROLLER = "metadata/src/main/java/org/apache/kafka/controller/"

FINDINGS: tuple[KafkaFinding, ...] = (
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
        (ControlledShutdown(1), Reassign((2,)), CancelReassignment()),
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
)


def finding(number: int) -> KafkaFinding:
    """The finding numbered ``number``; ValueError naming the numbers there are."""
    for f in FINDINGS:
        if f.number == number:
            return f
    raise ValueError(f"finding: {number} has no reproducer; one of {', '.join(str(f.number) for f in FINDINGS)}")
