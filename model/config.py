"""Cluster configuration for one replicated partition (§2.6, §5.3.1, ch7)."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from .profile import CHAPTERS, PROFILES, Rule, rules_error

UNCLEAN_RECOVERY_STRATEGIES = ("none", "balanced", "proactive", "manual")
MIN_BROKERS, MAX_BROKERS = 3, 5


class Variant(enum.Enum):
    """A historic (or plausible) protocol flaw switched into the model.

    Each member names what it removes; its value cites the source. The correct
    protocol uses no variant. ``VARIANT_DOCS`` gives, per variant, what it removes
    and the property expected to fail.
    """

    TRUNCATE_TO_HWM = "pre-KIP-101, KAFKA-1211"
    NO_LAST_FETCHED_EPOCH = "KIP-101 before KIP-279, KAFKA-6361"
    NO_FETCH_LEADER_EPOCH_FENCING = "pre-KIP-320, KAFKA-6880"
    NO_MAXIMAL_ISR = "§6.5.2, KIP-497, KAFKA-8836"
    ISR_JOIN_WITHOUT_LESO = "§6.5.3, KAFKA-7128"
    ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH = "§6.5.4"
    ALTER_PARTITION_WITHOUT_BROKER_EPOCH = "§6.5.1 case 3, KIP-903, KAFKA-14139"
    NO_ELR = "pre-KIP-966, KAFKA-15581"
    UNCLEAN_REGISTRATION_KEEPS_ELR = "§5.2"
    ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR = "§5.2.1 case G"
    HWM_ADVANCES_BELOW_MIN_ISR = "§2.6, §2.7"
    BALANCED_RECOVERY_ANY_MEMBER = "§5.3.2"
    LIST_OFFSETS_BEFORE_LESO = "§6.4.2"
    NO_FETCH_RESPONSE_VALIDATION = "§2.2.2, §2.10"
    NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH = "§2.10.3"
    REASSIGNMENT_COMPLETES_BELOW_MIN_ISR = "ch4 rules 1-2, §6.7"
    MIN_ISR_CHANGE_KEEPS_ELR = "KIP-966 ClearElrRecord (Kafka 4.0.0)"
    # Liveness-only flaws: no safety property can fail, a healed partition stays stuck (ch9).
    ELR_MEMBER_NOT_ELECTED_ON_UNFENCE = "§2.8, §5.2 (ch9 liveness)"
    REREGISTERED_BROKER_STAYS_FENCED = "§8.1 (ch9 liveness)"
    EXPANSION_ABANDONED_AFTER_REJECTION = "§2.9.2 (ch9 liveness)"
    FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE = "§3.2 (ch9 liveness)"

    def __repr__(self) -> str:
        return f"Variant.{self.name}"

    __hash__ = object.__hash__   # as Rule's: identity, in C (Config.has runs inside guards)


VARIANT_DOCS: dict[Variant, tuple[str, tuple[str, ...]]] = {
    Variant.TRUNCATE_TO_HWM: (
        "A follower truncates to its local HWM when it follows a new leader epoch, instead of by "
        "diverging epoch; the leader does no divergence check and a fetch beyond its LEO is "
        "answered OFFSET_OUT_OF_RANGE with its LEO, to which the follower truncates.",
        ("LeaderCompleteness", "NoCommittedRecordLostGlobally", "LogMatching", "LeaderCandidateCompleteness", "StrongIsr")),
    Variant.NO_LAST_FETCHED_EPOCH: (
        "The leader reports divergence only when the fetch offset exceeds its end offset for the "
        "last fetched epoch (the epochs are not compared), and the follower truncates to the "
        "leader's end offset without its own lookup.",
        ("LogMatching", "LeaderCandidateCompleteness", "LeaderCompleteness", "StrongIsr")),
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: (
        "The leader serves fetches whatever the requester's leader epoch (no FENCED_LEADER_EPOCH / "
        "UNKNOWN_LEADER_EPOCH): a zombie fetch from an older epoch counts as fetched in this one.",
        ("LogMatching", "StrongIsr", "LeaderCandidateCompleteness")),
    Variant.NO_MAXIMAL_ISR: (
        "The leader advances the HWM on its committed ISR while an ISR expansion is pending.",
        ("ReplicationQuorumSuperset", "LeaderCompleteness", "LeaderCandidateCompleteness", "StrongIsr")),
    Variant.ISR_JOIN_WITHOUT_LESO: (
        "A follower joins the ISR once it reaches the local HWM, without reaching the LESO.",
        ("LeaderCandidateCompleteness", "UncleanExclusion", "StrongIsr")),
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: (
        "A follower joins the ISR without having fetched in the current leader epoch (the "
        "remove-then-readd in one metadata batch of §6.5.4).",
        ("LeaderCandidateCompleteness", "StrongIsr")),
    Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH: (
        "The controller ignores the broker epochs of the replicas an AlterPartition adds.",
        ("UncleanExclusion", "LeaderCandidateCompleteness")),
    Variant.NO_ELR: (
        "No ELR: the controller keeps the last ISR member in the ISR when fencing it ('last "
        "replica standing') and re-elects it when it returns, even after a lossy restart.",
        ("NoCommittedRecordLostGlobally", "LeaderCompleteness", "UncleanExclusion")),
    Variant.UNCLEAN_REGISTRATION_KEEPS_ELR: (
        "A registration with an empty broker epoch leaves the replica in the ELR.",
        ("UncleanExclusion", "LeaderCandidateCompleteness")),
    Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR: (
        "The ELR is not emptied when the ISR grows back to MinISR (case G not applied).",
        ("LeaderCandidateCompleteness", "ReplicationQuorumSuperset")),
    Variant.HWM_ADVANCES_BELOW_MIN_ISR: (
        "The leader advances the HWM (and accepts acks=all writes) while its ISR is below MinISR.",
        ("LeaderCandidateCompleteness", "StrongIsr")),
    Variant.BALANCED_RECOVERY_ANY_MEMBER: (
        "Balanced unclean recovery elects the first LastKnownELR member, not the one with the "
        "highest (epoch, offset).",
        ("NoCommittedRecordLostGlobally", "LeaderCompleteness", "LeaderCandidateCompleteness")),
    Variant.LIST_OFFSETS_BEFORE_LESO: (
        "ListOffsets answers the local HWM even before it has reached the LESO.",
        ("AppliedHwmMonotonicity",)),
    Variant.NO_FETCH_RESPONSE_VALIDATION: (
        "A follower applies a fetch response even when its fetch offset or leader epoch no longer "
        "matches its fetch state, appending the records at its LEO. The records land at the wrong "
        "offsets: where the leader has others (LogMatching), or where an in-sync follower should "
        "hold a committed record (LeaderCandidateCompleteness, StrongIsr), whichever the run hits first.",
        ("LogMatching", "LeaderCandidateCompleteness", "StrongIsr")),
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: (
        "A leader in a new leader epoch keeps its followers' last-fetch markers, so an "
        "out-of-sync follower counts as having fetched in the new epoch.",
        ("LeaderCandidateCompleteness", "StrongIsr")),
    Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR: (
        "A reassignment completes even when the final ISR would be below MinISR.",
        ("NoCommittedRecordLostGlobally", "LeaderCandidateCompleteness", "MinIsrRecoveryQuorum")),
    Variant.MIN_ISR_CHANGE_KEEPS_ELR: (
        "A MinISR change writes only the ConfigRecord: the ELR and LastKnownELR stay whatever the ISR, and "
        "the partition epoch does not move. Lowered to the ISR's size or below, it leaves ELR members "
        "beside an ISR that has MinISR members, and the HWM advances without them.",
        ("ValidPartitionMetadata", "LeaderCandidateCompleteness", "NoCommittedRecordLostGlobally",
         "LeaderCompleteness")),
    Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE: (
        "A broker's unfencing elects no leader from the ELR: once the ISR is empty, an ELR member "
        "coming back is not elected, and the leaderless partition waits for ever although it may lead.",
        ("LeaderElected", "HwmReachesLeo", "IsrRestored", "ReassignmentCompletes", "AcknowledgedWritesReplicated")),
    Variant.REREGISTERED_BROKER_STAYS_FENCED: (
        "The controller unfences a broker only after its first registration: once it restarts and "
        "registers again its heartbeats are ignored, and it stays fenced (finding 5's stuck broker).",
        ("BrokersUnfenced", "BrokersStarted", "IsrRestored", "HwmReachesLeo", "LeaderElected", "ReassignmentCompletes",
         "AlterPartitionCompletes", "AcknowledgedWritesReplicated")),
    Variant.EXPANSION_ABANDONED_AFTER_REJECTION: (
        "A leader whose AlterPartition adding a follower is rejected never proposes that follower "
        "again in its leader epoch: the follower catches up but stays out of the ISR.",
        ("IsrRestored", "HwmReachesLeo", "ReassignmentCompletes")),
    Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE: (
        "A follower that truncates on a diverging-epoch answer stops fetching until it follows a new "
        "leader epoch: it never catches up, and an ISR member holds the HWM (and acks=all writes) back.",
        ("HwmReachesLeo", "AcknowledgedWritesReplicated", "WritesAnswered", "IsrRestored", "ReassignmentCompletes")),
}

#: The variants that break only liveness goals (``properties.liveness``): a run
#: finds them at the end of a healing phase, never before.
LIVENESS_VARIANTS = frozenset({Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE, Variant.REREGISTERED_BROKER_STAYS_FENCED,
                               Variant.EXPANSION_ABANDONED_AFTER_REJECTION,
                               Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE})


def _check_brokers(_inst: Any, _attr: Any, brokers: tuple[int, ...]) -> None:
    if not isinstance(brokers, tuple) or not all(isinstance(b, int) and not isinstance(b, bool) for b in brokers):
        raise ValueError(f"Config.brokers must be a tuple of int broker ids, got {brokers!r}")
    if not MIN_BROKERS <= len(brokers) <= MAX_BROKERS:
        raise ValueError(
            f"Config.brokers must hold {MIN_BROKERS} to {MAX_BROKERS} broker ids, got {len(brokers)}: {brokers!r}"
        )
    if len(set(brokers)) != len(brokers):
        raise ValueError(f"Config.brokers must be distinct, got {brokers!r}")
    if any(b < 0 for b in brokers):
        raise ValueError(f"Config.brokers must be non-negative ids, got {brokers!r}")


def _profile_rules(config: "Config") -> frozenset[Rule]:
    return PROFILES.get(config.profile, frozenset())


@attrs.frozen(repr=False)
class Config:
    """One partition on a KRaft cluster.

    Fields:
      brokers: the broker ids of the cluster (3 to 5 distinct non-negative ints).
      assignment: the initial replica assignment, ordered; the first replica is the
        preferred (and initial) leader. 1 <= len(assignment) <= len(brokers).
      min_isr: ``min.insync.replicas`` (§2.6), 1 <= min_isr <= len(assignment).
      unclean_recovery: ``unclean.recovery.strategy`` (§5.3.1), one of
        ``"none" | "balanced" | "proactive" | "manual"``.
      unclean_leader_election: legacy ``unclean.leader.election.enable`` (ch7).
      variants: historic protocol flaws switched on (see ``Variant``).
      profile: whose rules the model follows: ``"chapters"`` (the default, chapters
        2–6) or ``"kafka-4.4.0"`` (Apache Kafka's code at that release); see
        ``model.profile``.
      rules: the ``Rule``s in force; defaults to the profile's. Give the profile's
        rules minus some to switch single Kafka choices off.

    Raises ValueError naming the field and the allowed values on invalid input.
    """

    brokers: tuple[int, ...] = attrs.field(default=(1, 2, 3), converter=tuple, validator=_check_brokers)
    assignment: tuple[int, ...] = attrs.field(default=(1, 2, 3), converter=tuple)
    min_isr: int = 2
    unclean_recovery: str = "none"
    unclean_leader_election: bool = False
    variants: frozenset[Variant] = attrs.field(default=frozenset(), converter=frozenset)
    profile: str = CHAPTERS
    rules: frozenset[Rule] = attrs.field(default=attrs.Factory(_profile_rules, takes_self=True),
                                         converter=frozenset)

    def __attrs_post_init__(self) -> None:
        a = self.assignment
        if not a:
            raise ValueError("Config.assignment must name at least one replica")
        unknown = [b for b in a if b not in self.brokers]
        if unknown:
            raise ValueError(f"Config.assignment names unknown broker(s) {unknown}; allowed: {self.brokers}")
        if len(set(a)) != len(a):
            raise ValueError(f"Config.assignment must not repeat a broker, got {a!r}")
        if isinstance(self.min_isr, bool) or not isinstance(self.min_isr, int) or not 1 <= self.min_isr <= len(a):
            raise ValueError(
                f"Config.min_isr must be an int in 1..{len(a)} (the replication factor), got {self.min_isr!r}"
            )
        if self.unclean_recovery not in UNCLEAN_RECOVERY_STRATEGIES:
            raise ValueError(
                f"Config.unclean_recovery must be one of {UNCLEAN_RECOVERY_STRATEGIES}, got {self.unclean_recovery!r}"
            )
        if not isinstance(self.unclean_leader_election, bool):
            raise ValueError(
                f"Config.unclean_leader_election must be True or False, got {self.unclean_leader_election!r}"
            )
        bad = [v for v in self.variants if not isinstance(v, Variant)]
        if bad:
            raise ValueError(f"Config.variants must hold Variant members ({[v.name for v in Variant]}), got {bad!r}")
        if self.profile not in PROFILES:
            raise ValueError(f"Config.profile must be one of {tuple(PROFILES)}, got {self.profile!r}")
        bad = [r for r in self.rules if not isinstance(r, Rule)]
        if bad:
            raise ValueError(f"Config.rules must hold Rule members ({[r.name for r in Rule]}), got {bad!r}")
        if (why := rules_error(self.rules)) is not None:
            raise ValueError(f"Config.rules: {why}")
        if Rule.LAST_KNOWN_LEADER in self.rules and self.unclean_recovery != "none":
            raise ValueError(
                f"Config.unclean_recovery must be 'none' under Rule.LAST_KNOWN_LEADER (Kafka has no "
                f"unclean.recovery.strategy; it elects the last known leader), got {self.unclean_recovery!r}")

    def __repr__(self) -> str:
        fields = [f"brokers={self.brokers!r}", f"assignment={self.assignment!r}", f"min_isr={self.min_isr!r}",
                  f"unclean_recovery={self.unclean_recovery!r}",
                  f"unclean_leader_election={self.unclean_leader_election!r}",
                  f"variants={self.variants!r}"]
        if self.profile != CHAPTERS:
            fields.append(f"profile={self.profile!r}")
        if self.rules != PROFILES.get(self.profile):
            fields.append(f"rules={self.rules!r}")
        return f"Config({', '.join(fields)})"

    @property
    def replication_factor(self) -> int:
        return len(self.assignment)

    def position(self, broker: int) -> int:
        """Index of ``broker`` in ``brokers``; raises ValueError for an unknown id."""
        try:
            return self.brokers.index(broker)
        except ValueError:
            raise ValueError(f"unknown broker {broker!r}; allowed: {self.brokers}") from None

    def has(self, variant: Variant) -> bool:
        return variant in self.variants

    def follows(self, rule: Rule) -> bool:
        """Whether Kafka's ``rule`` is in force (else the chapters' rule applies)."""
        return rule in self.rules
