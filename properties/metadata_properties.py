"""Properties of the partition metadata, the quorums and the epochs (ch2, ch4,
§5.1.2, §5.3.2, §6.4.2, §6.5, ch9)."""

from __future__ import annotations

import attrs

from model import (NO_LEADER, RECOVERING, ClusterState, FeatureLevelRecord, PartitionChangeRecord, PartitionRecord,
                   RegisterBrokerRecord, Rule, Variant, hwm_quorum, merge)

from .base import (LastValueMemo, Property, Violation, budget_min_isr, current_leader, fmt_set, guarantees_apply,
                   hosted, no_unguarded_election)


def _replication_quorum_superset(state: ClusterState) -> tuple[Violation, ...]:
    cur = current_leader(state)
    if cur is None:
        return ()
    b, r = cur
    min_isr = state.leader_min_isr(b)
    if len(r.isr) < min_isr:
        return ()
    p = state.partition
    election_quorum = p.isr | p.elr
    kafka = state.config.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS)
    quorum = hwm_quorum(state, b) if kafka else r.maximal_isr
    missing = election_quorum - quorum
    if not missing:
        return ()
    name = "HWM quorum (Maximal ISR and caught-up followers)" if kafka else "Maximal ISR"
    return (Violation(
        "ReplicationQuorumSuperset",
        f"leader {b} advances the HWM on {name} {fmt_set(quorum)} (ISR {fmt_set(r.isr)} >= "
        f"MinISR {min_isr}) but the controller's election quorum ISR {fmt_set(p.isr)} + "
        f"ELR {fmt_set(p.elr)} also has {fmt_set(missing)}",
        (b, *sorted(missing)), (), (r.leader_epoch,)),)


def _unclean_exclusion(state: ClusterState) -> tuple[Violation, ...]:
    if not no_unguarded_election(state):
        return ()
    p = state.partition
    out: list[Violation] = []
    for b in sorted(state.history.unclean):
        roles = [name for name, hit in (("leader", p.leader == b), ("in the ISR", b in p.isr),
                                        ("in the ELR", b in p.elr)) if hit]
        if roles:
            out.append(Violation(
                "UncleanExclusion",
                f"replica {b} restarted after an unclean shutdown and has not caught up, yet is "
                f"{' and '.join(roles)} (leader {p.leader}, ISR {fmt_set(p.isr)}, ELR {fmt_set(p.elr)}, "
                f"leader epoch {p.leader_epoch})", (b,), (), (p.leader_epoch,)))
    return tuple(out)


def _applied_hwm_monotonicity(state: ClusterState) -> tuple[Violation, ...]:
    if not guarantees_apply(state):
        return ()
    return _list_offsets_check(state.history.list_offsets)  # type: ignore[return-value]


def _check_list_offsets(answers: tuple) -> tuple[Violation, ...]:
    last = None
    for a in answers:
        if a.hwm is None:
            continue
        if a.hwm > a.true_hwm:
            return (Violation(
                "AppliedHwmMonotonicity",
                f"ListOffsets on leader {a.broker} (leader epoch {a.leader_epoch}) answered HWM {a.hwm} "
                f"above the True HWM {a.true_hwm}", (a.broker,), (a.hwm, a.true_hwm), (a.leader_epoch,)),)
        if last is not None and a.hwm < last.hwm:
            return (Violation(
                "AppliedHwmMonotonicity",
                f"ListOffsets went backwards: leader {last.broker} answered {last.hwm} in leader epoch "
                f"{last.leader_epoch}, then leader {a.broker} answered {a.hwm} in leader epoch {a.leader_epoch}",
                (last.broker, a.broker), (last.hwm, a.hwm), (last.leader_epoch, a.leader_epoch)),)
        last = a
    return ()


_list_offsets_check = LastValueMemo(_check_list_offsets)


def _min_isr_recovery_quorum(state: ClusterState) -> tuple[Violation, ...]:
    if not no_unguarded_election(state) or state.config.follows(Rule.LAST_KNOWN_LEADER):
        return ()
    p = state.partition
    min_isr = budget_min_isr(state)
    if p.isr or p.elr or len(p.last_known_elr) >= min_isr:
        return ()
    return (Violation(
        "MinIsrRecoveryQuorum",
        f"ISR and ELR are empty but LastKnownELR {fmt_set(p.last_known_elr)} has only "
        f"{len(p.last_known_elr)} members, fewer than MinISR = {min_isr} (the lowest in force)",
        tuple(sorted(p.last_known_elr)), (), (p.leader_epoch,)),)


class _LogScan:
    """The partition materialized after every prefix of one metadata log, and the
    epoch-order problems found along it. Scans extend the scan of a log they
    extend, so a walk pays for each record once; lists are shared with the scan
    they extend and copied only when two logs branch from the same prefix."""

    __slots__ = ("log", "images", "problems", "last_broker_epoch", "broker_epochs", "n")

    def __init__(self, log: tuple, images: list, problems: list, last_broker_epoch: int,
                 broker_epochs: dict[int, int], n: int) -> None:
        self.log, self.images, self.problems = log, images, problems
        self.last_broker_epoch, self.broker_epochs, self.n = last_broker_epoch, broker_epochs, n


_SCANS: dict[int, _LogScan] = {}
_RECENT: list[_LogScan] = []


def _scan(log: tuple) -> _LogScan:
    hit = _SCANS.get(id(log))
    if hit is not None and hit.log is log:
        return hit
    base = next((c for c in reversed(_RECENT) if c.n <= len(log) and log[:c.n] == c.log), None)
    if base is None:
        images: list = [None]
        # (whether the record amends a registration, the violation)
        problems: list[tuple[bool, Violation]] = []
        last_epoch, epochs, n = -1, {}, 0
    else:
        images, last_epoch, n = base.images, base.last_broker_epoch, base.n
        epochs = dict(base.broker_epochs)
        problems = list(base.problems)  # rarely non-empty: copied, never shared
        if len(images) != n + 1:  # another log already extended this prefix
            images = images[:n + 1]
    for offset in range(n, len(log)):
        rec = log[offset]
        part = images[-1]
        if isinstance(rec, RegisterBrokerRecord):
            if rec.broker_epoch <= last_epoch:
                # the broker's own current epoch again: an amendment where Kafka's rules allow one
                amends = rec.broker_epoch == epochs.get(rec.broker)
                problems.append((amends, Violation(
                    "EpochMonotonicity",
                    f"broker {rec.broker} registered with broker epoch {rec.broker_epoch}, not above the "
                    f"earlier broker epoch {last_epoch}", (rec.broker,), (offset,))))
            last_epoch = max(last_epoch, rec.broker_epoch)
            epochs[rec.broker] = rec.broker_epoch
        nxt = merge(part, rec)
        if part is not None and nxt is not None and isinstance(rec, (PartitionChangeRecord, PartitionRecord)) and (
                nxt.leader_epoch < part.leader_epoch or nxt.partition_epoch <= part.partition_epoch):
            problems.append((False, Violation(
                "EpochMonotonicity",
                f"metadata record {offset} takes leader epoch {part.leader_epoch} -> {nxt.leader_epoch}, "
                f"partition epoch {part.partition_epoch} -> {nxt.partition_epoch}", (), (offset,))))
        images.append(nxt)
    scan = _LogScan(log, images, problems, last_epoch, epochs, len(log))
    if len(_SCANS) > 256:
        _SCANS.clear()
        del _RECENT[:-4]
    _SCANS[id(log)] = scan
    _RECENT.append(scan)
    del _RECENT[:-8]
    return scan


def _metadata_log_matching(state: ClusterState) -> tuple[Violation, ...]:
    log = state.controller.metadata_log
    scan = _scan(log)
    out: list[Violation] = []
    for b in state.brokers:
        if b.metadata_offset > len(log):
            out.append(Violation(
                "MetadataLogMatching",
                f"broker {b.id} has applied {b.metadata_offset} metadata records but the controller's "
                f"log has only {len(log)}", (b.id,), (b.metadata_offset, len(log))))
            continue
        expected = scan.images[b.metadata_offset]
        if b.image != expected:
            out.append(Violation(
                "MetadataLogMatching",
                f"broker {b.id}'s materialized partition metadata after {b.metadata_offset} records is "
                f"{b.image} but the controller's log prefix gives {expected}",
                (b.id,), (b.metadata_offset,)))
    return tuple(out)


def _isr_kept_without_elr(state: ClusterState) -> bool:
    """Kafka's controller with the ELR feature off (Rule.ELR_FEATURE_LEVEL) never writes
    the ISR empty: fencing its last member leaves it there, the partition leaderless,
    as NO_ELR does; an upgrade changes no registration, so the state may outlive it."""
    return (state.config.follows(Rule.ELR_FEATURE_LEVEL) and state.partition.leader == NO_LEADER
            and any(isinstance(r, FeatureLevelRecord) and r.level == 0 for r in state.controller.metadata_log))


def _valid_partition_metadata(state: ClusterState) -> tuple[Violation, ...]:
    p = state.partition
    replicas = frozenset(p.replicas)
    problems: list[str] = []
    if not p.isr <= replicas:
        problems.append(f"ISR {fmt_set(p.isr)} is not within replicas {list(p.replicas)}")
    if not p.elr <= replicas:
        problems.append(f"ELR {fmt_set(p.elr)} is not within replicas {list(p.replicas)}")
    if not p.last_known_elr <= replicas:
        problems.append(f"LastKnownELR {fmt_set(p.last_known_elr)} is not within replicas {list(p.replicas)}")
    if p.isr & p.elr:
        problems.append(f"ISR {fmt_set(p.isr)} and ELR {fmt_set(p.elr)} overlap")
    # A variant that removes a structural rule is judged by its consequences, not
    # by the rule itself: NO_ELR (and the ELR feature off) keeps a fenced last replica in the ISR, and
    # ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR keeps the ELR beside a full ISR.
    cfg = state.config
    if len(p.isr) >= state.min_isr and p.elr and not cfg.has(Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR):
        problems.append(f"ISR {fmt_set(p.isr)} has MinISR {state.min_isr} members but ELR is {fmt_set(p.elr)}")
    fenced = sorted(b for b in p.isr if state.registration(b).fenced)
    if fenced and not cfg.has(Variant.NO_ELR) and not _isr_kept_without_elr(state):
        problems.append(f"fenced broker(s) {fenced} in the ISR {fmt_set(p.isr)}")
    if p.leader != NO_LEADER and p.leader not in p.isr:
        problems.append(f"leader {p.leader} is not in the ISR {fmt_set(p.isr)}")
    if not p.adding <= replicas or not p.removing <= replicas or p.adding & p.removing:
        problems.append(f"adding {fmt_set(p.adding)} / removing {fmt_set(p.removing)} inconsistent "
                        f"with replicas {list(p.replicas)}")
    if len(set(p.replicas)) != len(p.replicas):
        problems.append(f"replicas {list(p.replicas)} repeat a broker")
    if p.leader_recovery_state == RECOVERING and len(p.isr) > 1:
        # KIP-704: only the uncleanly elected leader is in sync until it marks itself RECOVERED
        problems.append(f"the leader recovery state is RECOVERING with ISR {fmt_set(p.isr)}")
    return tuple(Violation("ValidPartitionMetadata", msg, tuple(p.replicas), (), (p.leader_epoch,))
                 for msg in problems)


def _epoch_monotonicity(state: ClusterState) -> tuple[Violation, ...]:
    scan = _scan(state.controller.metadata_log)
    # a registration repeating its broker's epoch is an amendment under Rule.REGISTRATION_AMENDED
    amended = state.config.follows(Rule.REGISTRATION_AMENDED)
    out: list[Violation] = [v for amends, v in scan.problems if not (amends and amended)]
    p = state.partition
    for b, r in hosted(state):
        if r.leader_epoch > p.leader_epoch or r.partition_epoch > p.partition_epoch:
            out.append(Violation(
                "EpochMonotonicity",
                f"replica {b} acts in leader epoch {r.leader_epoch} / partition epoch {r.partition_epoch}, "
                f"ahead of the controller's {p.leader_epoch} / {p.partition_epoch}",
                (b,), (), (r.leader_epoch, p.leader_epoch)))
    return tuple(out)


def _controller_log_replay(state: ClusterState) -> tuple[Violation, ...]:
    scan = _scan(state.controller.metadata_log)
    part = scan.images[scan.n]  # the list may already hold the images of a longer log that extends this one
    p = state.partition
    if part == p:
        return ()
    differ = [f"{field} {getattr(p, field)!r} where the log gives {getattr(part, field)!r}"
              for field in attrs.fields_dict(type(p)) if getattr(p, field) != getattr(part, field)]
    return (Violation("ControllerLogReplay",
                      f"the active controller's partition registration differs from its metadata log's replay: "
                      f"{'; '.join(differ)}", (), (len(state.controller.metadata_log),), (p.leader_epoch,)),)


def _leader_in_isr(state: ClusterState) -> tuple[Violation, ...]:
    p = state.partition
    if p.leader == NO_LEADER or p.leader in p.isr:
        return ()
    return (Violation("LeaderInIsr", f"leader {p.leader} is not in the ISR {fmt_set(p.isr)}",
                      (p.leader,), (), (p.leader_epoch,)),)


REPLICATION_QUORUM_SUPERSET = Property(
    "ReplicationQuorumSuperset", "§6.5.2",
    "When the non-stale leader's ISR has at least MinISR members (so its HWM may advance), its "
    "Maximal ISR contains the controller's ISR and ELR. Under Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS "
    "(Kafka) the quorum its HWM waits for is the Maximal ISR and the caught-up, ISR-eligible "
    "followers: that quorum must contain them.",
    _replication_quorum_superset)
UNCLEAN_EXCLUSION = Property(
    "UncleanExclusion", "§5.1.2, §6.5.1",
    "A replica restarted after an unclean shutdown is not leader, nor in the ISR or ELR, until "
    "its leader has served a fetch from it (in its new broker epoch) holding the committed log. "
    "An unclean recovery's chosen replica becomes the log others recover from. Not promised after "
    "a proactive recovery or legacy unclean election (the committed log itself may be lost).",
    _unclean_exclusion)
APPLIED_HWM_MONOTONICITY = Property(
    "AppliedHwmMonotonicity", "§6.4.2",
    "ListOffsets answers never decrease and never exceed the True HWM at the time of the answer "
    "(the True HWM itself is the length of the ghost committed log, which only grows). Not "
    "promised outside the fault budget or after an unclean/proactive election (ch7).",
    _applied_hwm_monotonicity)
MIN_ISR_RECOVERY_QUORUM = Property(
    "MinIsrRecoveryQuorum", "§5.3.2",
    "When the ISR and ELR are both empty, the LastKnownELR (the recovery quorum) has at least "
    "MinISR members, so with at most MinISR-1 lossy shutdowns one of them is complete. (Exactly "
    "MinISR is not invariant: a leader may add caught-up replicas to an ISR still below MinISR "
    "without clearing the ELR/LastKnownELR, §2.9.) Not promised after a proactive recovery or "
    "legacy unclean election. A chapters' rule: under Rule.LAST_KNOWN_LEADER (Kafka) the "
    "LastKnownELR names the last leader alone and this property does not apply; the recovery "
    "it elects is judged by the completeness properties.",
    _min_isr_recovery_quorum)
METADATA_LOG_MATCHING = Property(
    "MetadataLogMatching", "ch9, §2.3.2",
    "Each broker's metadata is a prefix of the controller's log: its materialized partition "
    "metadata equals the controller's log materialized up to the broker's metadata offset.",
    _metadata_log_matching)
VALID_PARTITION_METADATA = Property(
    "ValidPartitionMetadata", "ch2, ch4",
    "ISR, ELR, LastKnownELR within replicas; ISR and ELR disjoint; ELR empty once ISR >= MinISR; "
    "no fenced broker in the ISR; leader in the ISR or NoLeader; adding/removing consistent; at most "
    "one ISR member while the leader recovery state is RECOVERING (Kafka's profile, KIP-704).",
    _valid_partition_metadata)
EPOCH_MONOTONICITY = Property(
    "EpochMonotonicity", "§2.3.1, §6.5.1",
    "Along the metadata log the leader epoch never decreases and the partition epoch grows with "
    "every change; each registration gets a broker epoch above every earlier one (an amended "
    "registration, under Kafka's rules, keeps the epoch of the one it amends); no replica is "
    "ahead of the controller's epochs.",
    _epoch_monotonicity)
CONTROLLER_LOG_REPLAY = Property(
    "ControllerLogReplay", "§1.2.1, §2.3.2",
    "The active controller's partition registration is what its metadata log's replay gives, as "
    "each broker's image is: the controller is one replicated state machine, so a controller that "
    "loaded a snapshot and one that replayed the log hold the same registration.",
    _controller_log_replay)
LEADER_IN_ISR = Property(
    "LeaderInIsr", "KafkaReplication.tla",
    "The controller's leader is in its ISR. KRaft restates it with NoLeader allowed: the last ISR "
    "member fenced leaves the ISR empty (it moves to the ELR), unlike the ZooKeeper-era controller.",
    _leader_in_isr)
