"""Changes Kafka made, between the releases the bridge runs, to the code in the
loop: what a campaign on an older release meets.

The model follows the pinned release's Kafka profile (``model.KAFKA_RELEASE``), so
on a release before one of these changes Kafka's code disagrees with it. Each
``ReleaseChange`` names the change (its JIRA or pull request, the first release with it, whether
it fixed a bug or changed a behaviour on purpose), the disagreement signatures it
shows as (``check.signature``: what ``replicheck replay CORPUS --list`` prints),
and the shortest trace known to show it, which
``tests/kafka_bridge/test_release_changes.py`` runs on the last release before the
change (it must disagree, with one of the signatures) and on the first release with
it (it must agree). ``known_before(release)`` is a campaign's known-disagreements
file for a release (``replicheck fuzz --known``): the runs go on past what is
already classified, to what is behind it.
"""

from __future__ import annotations

from typing import Optional

import attrs

from model import (KAFKA, KAFKA_RELEASES, Action, AlterClusterMinIsr, BeginControlledShutdown, Config,
                   FailOverController, FailOverFromSnapshot, FenceBroker, Reassign, StartBroker, UncleanShutdown,
                   UnfenceBroker, UpdateElrFeature)

from .releases import release

#: A kind of change: a bug Kafka fixed, or a behaviour it changed on purpose (which
#: the profile's rules would carry with the release it came in).
KINDS = ("fix", "change")


@attrs.frozen
class ReleaseChange:
    """One change of Kafka's code in the loop, between two releases the bridge runs.

    issue: Kafka's JIRA, or the pull request of a change without one. since: the first release with the change (one of
    ``model.KAFKA_RELEASES``). kind: one of ``KINDS``. title: what changed, in
    Kafka's words. signatures: the disagreement signatures it shows as on the
    releases before. config, trace: the shortest trace known to show it (its last
    step disagrees there). source: the Kafka source of the change.
    """

    issue: str
    since: str
    kind: str
    title: str
    signatures: tuple[str, ...]
    config: Config
    trace: tuple[Action, ...]
    source: str

    def __attrs_post_init__(self) -> None:
        if self.since not in KAFKA_RELEASES or self.kind not in KINDS:
            raise ValueError(f"{self.issue}: since must be one of {', '.join(KAFKA_RELEASES)} and kind one of "
                             f"{', '.join(KINDS)}, got {self.since!r}, {self.kind!r}")

    @property
    def last_without(self) -> Optional[str]:
        """The newest release the bridge runs without the change (None: none)."""
        before = [r for r in KAFKA_RELEASES if release(r) < release(self.since)]
        return before[-1] if before else None


_DIVERGENCE = "SutDiffersFromModel|divergence|"

CHANGES: tuple[ReleaseChange, ...] = (
    ReleaseChange(
        "KAFKA-19383", "4.0.1", "fix",
        "A ClearElrRecord for every topic clears the ELR of the topics created in the same metadata delta "
        "too (before: only of those already in the image, so a snapshot written from a delta that "
        "created the topic kept the ELR the record cleared, and a controller that loaded it ran a "
        "partition epoch behind)",
        (_DIVERGENCE + "observed.partition.partition_epoch",),
        Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3, profile=KAFKA),
        (FenceBroker(2), AlterClusterMinIsr(3), UnfenceBroker(2), FailOverFromSnapshot()),
        "metadata/src/main/java/org/apache/kafka/image/TopicsDelta.java: replay(ClearElrRecord)"),
    ReleaseChange(
        "KAFKA-19130", "4.1.0", "fix",
        "Do not add fenced brokers to BrokerRegistrationTracker on startup: a controller that becomes "
        "active starts a session only for the unfenced brokers (before: for every registered broker, so "
        "a fenced broker counted as alive until a session timeout after each failover)",
        (_DIVERGENCE + "observed.registrations[N].session",),
        Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1, profile=KAFKA),
        (FenceBroker(3), FailOverController()),
        "metadata/src/main/java/org/apache/kafka/controller/ClusterControlManager.java: activate"),
    ReleaseChange(
        "KAFKA-19522", "4.1.0", "fix",
        "Avoid electing a fenced last known leader: the election of the LastKnownELR's broker waits until "
        "it is unfenced (before: a broker re-registering after an unclean shutdown, still fenced, was "
        "elected at once, and a periodic unclean or preferred election elected a fenced one)",
        (_DIVERGENCE + "observed.partition.isr",
         _DIVERGENCE + "enablement of UncleanLeaderElection(): model=refused sut=enabled",
         _DIVERGENCE + "enablement of ElectPreferredLeader(): model=refused sut=enabled"),
        Config(brokers=(1, 2, 3), assignment=(2,), min_isr=1, profile=KAFKA),
        (UncleanShutdown(2, lossy=False), FenceBroker(2), StartBroker(2)),
        "metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java: canElectLastKnownLeader"),
    ReleaseChange(
        "apache/kafka#20629", "4.1.1", "fix",
        "MINOR: simplify last known elr update: the last known leader is recorded when a change leaves "
        "the partition leaderless and no LastKnownELR is held (before: when the ISR became empty, from "
        "the partition's leader, which could already be none: LastKnownELR [-1])",
        (_DIVERGENCE + "observed.partition.last_known_elr",
         _DIVERGENCE + "enablement of ElectPreferredLeader(): model=refused sut=enabled"),
        Config(brokers=(1, 2, 3), assignment=(2,), min_isr=1, profile=KAFKA),
        (UpdateElrFeature(False), BeginControlledShutdown(2), UpdateElrFeature(True), FenceBroker(2)),
        "metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java: "
        "maybeUpdateLastKnownLeader"),
    ReleaseChange(
        "KAFKA-19975", "4.3.0", "fix",
        "A reassignment completes once every replica it adds is in the ISR, unless it lowers the "
        "replication factor (then once every target replica is, as before for every move: a move never "
        "completed while a replica it keeps was out of the ISR)",
        (_DIVERGENCE + "enablement of ElectPreferredLeader(): model=enabled sut=refused",
         _DIVERGENCE + "observed.partition.adding",
         _DIVERGENCE + "outcome.sent[N].isr",
         _DIVERGENCE + "outcome.sent[N].error",
         _DIVERGENCE + "outcome.sent[N].leader_epoch"),
        Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1, profile=KAFKA, unclean_leader_election=True),
        (Reassign((1, 3)), FenceBroker(1)),
        "metadata/src/main/java/org/apache/kafka/controller/PartitionReassignmentReplicas.java: "
        "maybeCompleteReassignment"),
)


def known_before(version: str) -> str:
    """The known-disagreements text (``campaign.known``) of a campaign on Kafka
    ``version``: the signatures of every change that came after it."""
    lines = [f"# Kafka changes after {version} (kafka_bridge.changes)"]
    for change in CHANGES:
        if release(version) < release(change.since):
            lines += [f"# {change.issue}, since {change.since}"] + list(change.signatures)
    return "\n".join(lines) + "\n"
