"""Minimal counterexamples: for every protocol-flaw ``Variant``, the chapter's (or
the JIRA's) story as the shortest action sequence we found that makes the
variant break one of its expected properties.

``MINIMAL[v]`` is data only. Its ``config`` does not name the variant: run
``actions`` from ``initial_state(config)`` for the correct protocol, and from
``initial_state(attrs.evolve(config, variants=frozenset({v})))`` for the flaw.
Every scenario stays inside the fault budget (at most MinISR - 1 lossy unclean
shutdowns) and uses no unclean leader election or proactive recovery, so every
property is promised; ``expected`` is the property the flaw breaks (one of
``VARIANT_DOCS[v][1]``), first violated at the last step or up to two steps before.
A liveness-only variant's scenario ends in the directive ``Heal`` (``model.
healing``): its expected property is a liveness goal (``properties.liveness``),
judged at the end of the healing phase, which under the correct protocol meets
every goal.

Message ids are literal: the network numbers messages 1, 2, ... in the order they
are sent (a FetchResponse or AlterPartitionResponse gets the next id when its
request is handled). ``ReplicateMetadata`` counts are literal too.

Under the correct protocol every action is enabled and every property holds after
every step, except in four scenarios whose flaw is an ISR expansion the correct
protocol refuses: it runs every earlier step cleanly and then refuses the
``ProposeIsrExpand``. For ``ISR_JOIN_WITHOUT_LESO`` and
``ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH`` (which only relax that guard) and
``NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH`` (which only changes the last-fetch marker,
read by that guard alone) no scenario can avoid this: both runs reach identical
states (up to the marker) until the flawed expansion. For
``NO_FETCH_LEADER_EPOCH_FENCING`` none was found: a served zombie fetch also moves
the follower's fetch offset (and so the HWM), but it passed the diverging-epoch
check, and we found no way for it to exceed the log of a replica in the leader's
ISR; what hurts is the expansion it enables.
"""

from __future__ import annotations

import attrs

from model import (Action, AlterMinIsr, CancelReassignment, Config, ControlledShutdown, FenceBroker, Heal, ListOffsets,
                   ProposeIsrExpand,
                   ProposeIsrShrink, Produce, Reassign, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse,
                   ReplicateMetadata, SendFetch, StartBroker, UncleanRecovery, UncleanShutdown,
                   UnfenceBroker, Variant)


@attrs.frozen
class MinimalScenario:
    """One minimal counterexample (see the module docstring).

    config: the cluster, without the variant. actions: the steps from the initial
    state. expected: the property the variant breaks. story: what happens.
    """

    config: Config
    actions: tuple[Action, ...] = attrs.field(converter=tuple)
    expected: str
    story: str


# ------------------------------------------------------------ building blocks
# The first fetch of a follower returns the records; its second tells the leader
# the follower's new LEO (the leader advances the HWM on fetch offsets, §2.7).

def commit_one_on_rf2(follower: int = 2) -> tuple[Action, ...]:
    """Leader 1 writes value 1; ``follower`` fetches it (msgs 1, 2) and reports
    fetch offset 1 (msg 3; its response, msg 4, stays in flight): HWM 1."""
    return (Produce(1, 1), SendFetch(follower), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
            SendFetch(follower), ReceiveFetchRequest(3))


# §6.5.4: remove-then-readd of replica 2 (assignment [1, 2], MinISR 1). Leader 1 has
# committed value 1 on [1, 2] and knows 2's fetch offset 1. The removal completes at
# once (ISR [1] >= MinISR) with a leader epoch bump; the leader applies removal and
# re-add as ONE metadata batch, so 2 stays in its replica set with its old follower
# state; broker 2 applies the removal alone, so its replica is deleted (applying the
# re-add next would recreate it empty: an electable replica lacking committed data
# either way, one step sooner here).
_REMOVE_READD_2 = (Reassign((1,)), Reassign((1, 2)), ReplicateMetadata(1, 2), ReplicateMetadata(2, 1))

_RF2 = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2)
_RF2_MIN1 = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1)
_RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)
_RF1 = Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1)

# The last replica standing is fenced, restarts after an unclean shutdown (not lossy,
# so no fault budget is spent) and registers with an empty broker epoch (§5.2, §6.5.1).
_LAST_REPLICA_UNCLEAN_RESTART = (FenceBroker(1), UncleanShutdown(1, False), StartBroker(1))

# Scenarios shared by two variants.
_REMOVE_READD_REJOIN = (*commit_one_on_rf2(), *_REMOVE_READD_2,
                        ProposeIsrExpand(1, 2), ReceiveAlterPartition(5))


MINIMAL: dict[Variant, MinimalScenario] = {
    Variant.TRUNCATE_TO_HWM: MinimalScenario(
        config=_RF2,
        actions=(*commit_one_on_rf2(),
                 Reassign((1, 2, 3)), CancelReassignment(),
                 ReplicateMetadata(2, 2)),
        expected="LeaderCandidateCompleteness",
        story=(
            "KIP-101 / KAFKA-1211 'HWM truncation': leader 1 commits value 1 on ISR [1, 2]; follower 2\n"
            "holds it but its local HWM is still 0. A reassignment started and cancelled bumps the\n"
            "leader epoch (§4.5); follower 2 follows the new epoch by truncating to its HWM, dropping\n"
            "committed offset 0 while staying in the ISR (an electable replica without it)."),
    ),
    Variant.NO_LAST_FETCHED_EPOCH: MinimalScenario(
        config=Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1),
        actions=(Produce(1, 1), SendFetch(3), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
                 FenceBroker(1), ReplicateMetadata(2, 2), Produce(2, 2),
                 FenceBroker(2), ReplicateMetadata(3, 4), ReplicateMetadata(2, 2),
                 SendFetch(2), ReceiveFetchRequest(3), ReceiveFetchResponse(4)),
        expected="LogMatching",
        story=(
            "§3.3.7 case G / KAFKA-6361: 3 copies e1:1 from leader 1; 1 is fenced, 2 leads epoch 2 and\n"
            "writes e2:2 at the same offset 0, uncommitted; 2 is fenced, 3 leads epoch 3 and commits\n"
            "its e1:1 (MinISR 1). Follower 2 fetches (offset 1, last fetched epoch 2): 3's end offset\n"
            "for epoch <= 2 is 1, not below the fetch offset, so without comparing epochs no\n"
            "divergence is reported; 2 keeps e2:2 and takes HWM 1."),
    ),
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: MinimalScenario(
        config=_RF2_MIN1,
        actions=(Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
                 SendFetch(2), *_REMOVE_READD_2,
                 ReceiveFetchRequest(3), ProposeIsrExpand(1, 2), ReceiveAlterPartition(5)),
        expected="StrongIsr",
        story=(
            "KIP-320 / KAFKA-6880 with §6.5.4's remove-then-readd: follower 2 holds value 1 and sends a\n"
            "fetch at offset 1 in leader epoch 1; 2 is removed and re-added, the leader (epoch 2) commits\n"
            "value 1 alone, and broker 2 applies the removal and deletes its replica. The old fetch\n"
            "arrives: unfenced, it counts as offset 1 fetched in this epoch, so 2 joins the ISR\n"
            "without the committed record."),
    ),
    Variant.NO_MAXIMAL_ISR: MinimalScenario(
        config=_RF2_MIN1,
        actions=(ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2),
                 SendFetch(2), ReceiveFetchRequest(3),
                 ProposeIsrExpand(1, 2), Produce(1, 1), ReceiveAlterPartition(5)),
        expected="LeaderCandidateCompleteness",
        story=(
            "§6.5.2's 8 steps, KIP-497 / KAFKA-8836: ISR [1] (MinISR 1); empty follower 2 has fetched at\n"
            "offset 0 and leader 1 proposes ISR [1, 2]. Before the controller answers, 1 writes value 1\n"
            "and advances the HWM on its committed ISR [1] instead of the Maximal ISR [1, 2]; the\n"
            "controller then accepts [1, 2]: electable replica 2 lacks committed offset 0."),
    ),
    Variant.ISR_JOIN_WITHOUT_LESO: MinimalScenario(
        config=_RF2,
        actions=(*commit_one_on_rf2(),
                 FenceBroker(1), Reassign((1, 2, 3)), ReplicateMetadata(2, 3), ReplicateMetadata(3, 3),
                 SendFetch(3), ReceiveFetchRequest(5), ProposeIsrExpand(2, 3), ReceiveAlterPartition(7)),
        expected="LeaderCandidateCompleteness",
        story=(
            "§6.4.1 then §6.5.3, KAFKA-7128: 1 commits value 1 on [1, 2], but 2's local HWM is 0; 1 is\n"
            "fenced and 2 leads epoch 2 with the stale HWM 0 < LESO 1 (ISR [2] < MinISR 2, so it stays).\n"
            "A reassignment adds empty replica 3, which fetches at offset 0: it has reached the HWM, not\n"
            "the LESO; without the LESO condition it joins the ISR without committed offset 0."),
    ),
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: MinimalScenario(
        config=_RF2_MIN1,
        actions=_REMOVE_READD_REJOIN,
        expected="StrongIsr",
        story=(
            "§6.5.4: value 1 is committed on [1, 2] and leader 1 knows 2's fetch offset 1. Replica 2 is\n"
            "removed and re-added; the leader applies both changes in one metadata batch (new leader\n"
            "epoch 2, 2 still a replica), broker 2 applies the removal alone (replica deleted). 2's old\n"
            "fetch offset reaches the HWM and LESO; without condition 3 (a fetch in the current leader\n"
            "epoch) 2 rejoins the ISR without the committed record."),
    ),
    Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH: MinimalScenario(
        config=_RF3,
        actions=(FenceBroker(3), ReplicateMetadata(1, 2), SendFetch(3),
                 UncleanShutdown(3, True), StartBroker(3), ReplicateMetadata(3, 3), UnfenceBroker(3),
                 ReceiveFetchRequest(1), ProposeIsrExpand(1, 3), ReceiveAlterPartition(3)),
        expected="UncleanExclusion",
        story=(
            "§6.5.1 case 3, KIP-903 / KAFKA-14139: out-of-sync follower 3 sends a fetch, then restarts\n"
            "after a lossy unclean shutdown and is unfenced in a new broker epoch. Leader 1 receives the\n"
            "old fetch, finds 3 in sync and proposes ISR [1, 2, 3] with 3's OLD broker epoch; a controller\n"
            "ignoring the added replica's broker epoch accepts the unclean replica into the ISR."),
    ),
    Variant.NO_ELR: MinimalScenario(
        config=_RF1,
        actions=_LAST_REPLICA_UNCLEAN_RESTART,
        expected="UncleanExclusion",
        story=(
            "Pre-KIP-966 'last replica standing', KAFKA-15581: fencing the last ISR member keeps it in the\n"
            "ISR (no ELR). It restarts after an unclean shutdown and registers with an empty broker\n"
            "epoch, but nothing removes it: an unclean replica stays in the ISR, electable on unfence."),
    ),
    Variant.UNCLEAN_REGISTRATION_KEEPS_ELR: MinimalScenario(
        config=_RF1,
        actions=_LAST_REPLICA_UNCLEAN_RESTART,
        expected="UncleanExclusion",
        story=(
            "§5.2 / §5.3.1: the fenced last ISR member moves to the ELR. It restarts after an unclean\n"
            "shutdown and registers with an empty broker epoch, which must move it from the ELR to the\n"
            "LastKnownELR; kept in the ELR, the unclean replica stays electable."),
    ),
    Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR: MinimalScenario(
        config=_RF3,
        actions=(FenceBroker(2), FenceBroker(3), UnfenceBroker(2), ReplicateMetadata(1, 5),
                 SendFetch(2), ReceiveFetchRequest(1),
                 ProposeIsrExpand(1, 2), ReceiveAlterPartition(3), ReceiveAlterPartitionResponse(4)),
        expected="ReplicationQuorumSuperset",
        story=(
            "§5.2.1 case G: fencing 2 then 3 leaves ISR [1], ELR [3] (MinISR 2). 2 returns and leader 1\n"
            "adds it: ISR [1, 2] reaches MinISR, so the ELR must be emptied. Kept, the election quorum\n"
            "ISR + ELR = [1, 2, 3] is no longer within the leader's replication quorum [1, 2], on which\n"
            "it may now advance the HWM (§6.5.2)."),
    ),
    Variant.HWM_ADVANCES_BELOW_MIN_ISR: MinimalScenario(
        config=_RF2,
        actions=(FenceBroker(2), ReplicateMetadata(1, 2), Produce(1, 1)),
        expected="LeaderCandidateCompleteness",
        story=(
            "§2.6, §2.7: fencing 2 leaves ISR [1] < MinISR 2 and moves 2 to the ELR. An acks=all write\n"
            "must now fail with NotEnoughReplicas; accepted and committed by leader 1 alone, it is\n"
            "missing from ELR member 2, which may be elected."),
    ),
    Variant.BALANCED_RECOVERY_ANY_MEMBER: MinimalScenario(
        config=Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, unclean_recovery="balanced"),
        actions=(*commit_one_on_rf2(),
                 UncleanShutdown(1, True), FenceBroker(1), UncleanShutdown(2, False), FenceBroker(2),
                 StartBroker(1), StartBroker(2),
                 ReplicateMetadata(1, 8), UnfenceBroker(1), ReplicateMetadata(2, 9), UnfenceBroker(2),
                 UncleanRecovery(), ReplicateMetadata(1, 3)),
        expected="LeaderCompleteness",
        story=(
            "§5.3.2 / §5.3.3: value 1 is committed on [1, 2]. 1 loses it in a lossy unclean shutdown (the\n"
            "one allowed, MinISR - 1); 2 shuts down uncleanly without loss. Both are fenced into the ELR\n"
            "and their unclean registrations move them to LastKnownELR [1, 2]. Balanced recovery must\n"
            "elect the highest (epoch, offset), 2; electing the first member, 1, makes an empty leader."),
    ),
    Variant.LIST_OFFSETS_BEFORE_LESO: MinimalScenario(
        config=_RF2,
        actions=(*commit_one_on_rf2(), ListOffsets(),
                 FenceBroker(1), ReplicateMetadata(2, 2), ListOffsets()),
        expected="AppliedHwmMonotonicity",
        story=(
            "§6.4.1 / §6.4.2: leader 1 commits value 1 on [1, 2] and ListOffsets answers HWM 1. 1 is\n"
            "fenced and 2 leads with its stale local HWM 0, below its LESO 1 (ISR [2] < MinISR 2, so it\n"
            "cannot advance). It must answer 'unknown'; answering its HWM, ListOffsets goes 1 -> 0."),
    ),
    Variant.NO_FETCH_RESPONSE_VALIDATION: MinimalScenario(
        config=_RF2_MIN1,
        actions=(Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
                 Produce(1, 2), SendFetch(2), ReceiveFetchRequest(3),
                 Reassign((1,)), Reassign((1, 2)), ReplicateMetadata(2, 1), ReplicateMetadata(2, 1),
                 ReceiveFetchResponse(4)),
        expected="LogMatching",
        story=(
            "§2.2.2 / §2.10: follower 2 holds value 1 and fetches at offset 1; leader 1 answers value 2\n"
            "with HWM 1. Before the response arrives, 2 is removed and re-added and broker 2 recreates\n"
            "its replica empty in leader epoch 2. Applied without checking fetch offset and leader\n"
            "epoch, the stale response puts value 2 at offset 0, below HWM 1, where leader 1 has value 1."),
    ),
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: MinimalScenario(
        config=_RF2_MIN1,
        actions=_REMOVE_READD_REJOIN,
        expected="StrongIsr",
        story=(
            "§2.10.3 with §6.5.4's remove-then-readd: leader 1 moves to leader epoch 2 in one metadata\n"
            "batch that removes and re-adds replica 2; broker 2 applies the removal and deletes its\n"
            "replica. The leader keeps 2's last-fetch marker from epoch 1, so 2 counts as having\n"
            "fetched in epoch 2 at offset 1, and it rejoins the ISR without the committed record."),
    ),
    Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR: MinimalScenario(
        config=_RF2_MIN1,
        actions=(FenceBroker(2), Reassign((2,))),
        expected="MinIsrRecoveryQuorum",
        story=(
            "Ch4 rules 1-2, §6.7: fencing follower 2 leaves ISR [1] (MinISR 1, so no ELR). Reassigning to\n"
            "[2] must wait for 2 to rejoin the ISR; completed at once, its final ISR is [] below MinISR:\n"
            "leader 1 leaves, no replica is left to lead, and the LastKnownELR [] holds no recovery\n"
            "quorum (§5.3.2)."),
    ),
    Variant.MIN_ISR_CHANGE_KEEPS_ELR: MinimalScenario(
        config=_RF2,
        actions=(FenceBroker(2), AlterMinIsr(1)),
        expected="ValidPartitionMetadata",
        story=(
            "KIP-966, §5.2.1 case G: fencing follower 2 leaves ISR [1] below MinISR 2, so 2 joins the\n"
            "ELR. MinISR is lowered to 1: the ISR [1] now has MinISR members, and the HWM may advance\n"
            "without 2, so the ELR must be emptied; kept, ELR [2] stands beside a full ISR and stays\n"
            "electable although it misses what leader 1 commits from now on."),
    ),
    # The liveness-only flaws: every safety property holds throughout; the healing
    # phase (Heal, model.healing) ends stuck where the correct protocol recovers.
    Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE: MinimalScenario(
        config=_RF1,
        actions=(FenceBroker(1), Heal()),
        expected="LeaderElected",
        story=(
            "§2.8, §5.2: fencing the only replica 1 empties the ISR and moves 1 to the ELR (MinISR 1).\n"
            "Healing unfences 1, which the controller must elect from the ELR; electing nobody, the\n"
            "partition stays leaderless although 1 may lead."),
    ),
    Variant.REREGISTERED_BROKER_STAYS_FENCED: MinimalScenario(
        config=_RF2_MIN1,
        actions=(UncleanShutdown(2, False), Heal()),
        expected="BrokersUnfenced",
        story=(
            "§8.1: follower 2 shuts down uncleanly (no loss). Healing fences its old broker epoch and\n"
            "restarts it; it registers again and catches up with the metadata log, but the controller\n"
            "ignores its heartbeats: 2 stays fenced and starting, and out of the ISR, for ever."),
    ),
    Variant.EXPANSION_ABANDONED_AFTER_REJECTION: MinimalScenario(
        config=_RF2_MIN1,
        actions=(SendFetch(2), ReceiveFetchRequest(1), ControlledShutdown(2), ReplicateMetadata(1, 2),
                 ProposeIsrExpand(1, 2), Heal()),
        expected="IsrRestored",
        story=(
            "§2.9.2: follower 2 has fetched up to leader 1's LEO, then shuts down in a controlled way and\n"
            "leaves the ISR. Leader 1 proposes adding it back; the controller rejects the AlterPartition\n"
            "(2 is shutting down). Healing restarts 2, which catches up, but leader 1 never proposes it\n"
            "again in its leader epoch: the ISR stays [1]."),
    ),
    Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE: MinimalScenario(
        config=_RF2_MIN1,
        actions=(Produce(1, 1), ControlledShutdown(1), ReplicateMetadata(2, 2), Produce(2, 2), Heal()),
        expected="HwmReachesLeo",
        story=(
            "§3.2: leader 1 appends value 1, uncommitted, and shuts down in a controlled way; 2 leads in\n"
            "leader epoch 1 and commits value 2 at offset 0. Healing restarts 1 as a follower: its first\n"
            "fetch is answered with a diverging epoch and it truncates, then stops fetching, so it never\n"
            "gets value 2: the HWM never reaches the leader's LEO on 1."),
    ),
}
