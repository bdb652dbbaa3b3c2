"""Broker-side replica logic: reacting to materialized metadata (§2.10), serving
and applying fetches (§2.2, §3.2), HWM advancement (§2.7, §6.5.2) and ISR change
proposals (§2.9.2, §6.5.3, §6.5.4)."""

from __future__ import annotations

from typing import Optional

import attrs

from .clock import after_fetch, is_caught_up
from .config import Variant
from . import epoch_checkpoint as ec
from .log import end_offset_for_epoch, truncation_offset
from .profile import Rule
from .state import (AckedWrite, AlterPartitionRequest, AlterPartitionResponse, EpochEndOffset, BrokerStatus, ClusterState,
                    ControlledShutdownRecord, FenceBrokerRecord, FetchRequest, FetchResponse, FollowerState,
                    PartitionMetadata, RegisterBrokerRecord, Replica, Role)
from .update import nack, send, set_follower, set_history, set_replica

NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
NOT_CONTROLLER = "NOT_CONTROLLER"
#: AlterPartition errors after which a leader rolls its pending ISR back under
#: Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING (Partition.handleAlterPartitionError).
ROLLBACK_ERRORS = (INELIGIBLE_REPLICA,)


def is_leader(state: ClusterState, broker: int) -> bool:
    """The broker runs and its replica presumes leadership (possibly stale)."""
    b = state.broker(broker)
    return b.status == BrokerStatus.RUNNING and b.replica is not None and b.replica.role == Role.LEADER


def known_registration(state: ClusterState, observer: int, broker: int) -> tuple[Optional[int], bool, bool]:
    """(broker epoch, fenced, in controlled shutdown) of ``broker`` as
    ``observer``'s metadata has it: its registration and the registration changes
    after it among the metadata records it applied (Kafka's
    KRaftMetadataCache.getAliveBrokerEpoch, isBrokerFenced, isBrokerShuttingDown).
    (None, True, False) when it has applied no registration of that broker."""
    log = state.controller.metadata_log
    fenced: Optional[bool] = None
    shutting_down = False
    for i in range(state.broker(observer).metadata_offset - 1, -1, -1):
        rec = log[i]
        if getattr(rec, "broker", None) != broker:
            continue
        if isinstance(rec, RegisterBrokerRecord):
            return rec.broker_epoch, rec.fenced if fenced is None else fenced, shutting_down or rec.in_controlled_shutdown
        if isinstance(rec, ControlledShutdownRecord):
            shutting_down = True
        elif fenced is None:
            fenced = isinstance(rec, FenceBrokerRecord)
    return None, True, False


def isr_eligible(state: ClusterState, leader: int, follower: int) -> bool:
    """Partition.isReplicaIsrEligible (Rule.LEADER_CHECKS_ISR_ELIGIBILITY): in the
    leader's metadata the follower's broker is unfenced, not in controlled
    shutdown, and registered in the broker epoch its last fetch carried."""
    epoch, fenced, shutting_down = known_registration(state, leader, follower)
    r = state.replica(leader)
    assert r is not None
    fs = r.follower(follower)
    return (not fenced and not shutting_down and fs is not None and fs.broker_epoch is not None
            and fs.broker_epoch == epoch)


# ----------------------------------------------------------- HWM and produce acks

def hwm_quorum(state: ClusterState, broker: int) -> frozenset[int]:
    """The replicas leader ``broker``'s HWM waits for (§2.7, §6.5.2): itself and its
    Maximal ISR, and under Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS the caught-up,
    ISR-eligible followers outside it (Partition.maybeIncrementLeaderHW,
    shouldWaitForReplicaToJoinIsr; caught up now under Rule.REPLICA_LAG_TIME)."""
    r = state.replica(broker)
    assert r is not None
    cfg = state.config
    quorum = r.isr if cfg.has(Variant.NO_MAXIMAL_ISR) else r.maximal_isr
    if cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS):
        quorum = quorum | {f for f, fs in r.followers
                           if f not in quorum and follower_caught_up(state, r, fs) and isr_eligible(state, broker, f)}
    return quorum | {broker}


def follower_caught_up(state: ClusterState, r: Replica, fs: FollowerState) -> bool:
    """Whether leader replica ``r`` counts follower state ``fs`` caught up
    (Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS): on the clock under
    Rule.REPLICA_LAG_TIME (``ReplicaState.isCaughtUp``), else its flag."""
    if state.config.follows(Rule.REPLICA_LAG_TIME):
        return is_caught_up(state.now_ms, r.leo, fs)
    return fs.caught_up


def maybe_advance_hwm(state: ClusterState, broker: int) -> ClusterState:
    """Advance the leader's HWM (§2.7, §6.5.2): only when its ISR has at least MinISR
    members, to the lowest of its LEO and the fetch offsets of every follower in
    ``hwm_quorum`` (the Maximal ISR; unknown fetch offsets block). Acknowledges the
    pending writes below the new HWM and raises the True HWM."""
    r = state.replica(broker)
    assert r is not None and r.role == Role.LEADER
    cfg = state.config
    if len(r.isr) < state.leader_min_isr(broker) and not cfg.has(Variant.HWM_ADVANCES_BELOW_MIN_ISR):
        return state
    new_hwm = r.leo
    for f in hwm_quorum(state, broker):
        if f == broker:
            continue
        fs = r.follower(f)
        if fs is None or fs.fetch_offset is None:
            return state
        new_hwm = min(new_hwm, fs.fetch_offset)
    if new_hwm <= r.hwm:
        return state
    state = set_replica(state, broker, attrs.evolve(r, hwm=new_hwm))
    h = state.history
    done = tuple(w for w in h.pending if w.broker == broker and w.offset < new_hwm)
    committed = h.committed
    if new_hwm > len(committed):
        committed = committed + r.log[len(committed):new_hwm]
    return set_history(
        state,
        committed=committed,
        pending=tuple(w for w in h.pending if not (w.broker == broker and w.offset < new_hwm)),
        acked=h.acked + tuple(AckedWrite(w.value, w.offset, h.next_value)
                               for w in sorted(done, key=lambda w: w.offset)),
    )


def _after_leader_isr_change(state: ClusterState, broker: int) -> ClusterState:
    """After the leader's committed ISR changed: pending writes fail when it is below
    MinISR (NotEnoughReplicasAfterAppend, §2.6); otherwise try the HWM."""
    r = state.replica(broker)
    assert r is not None
    if len(r.isr) < state.leader_min_isr(broker) and not state.config.has(Variant.HWM_ADVANCES_BELOW_MIN_ISR):
        return nack(state, broker)
    return maybe_advance_hwm(state, broker)


# ------------------------------------------------------------ role transitions

def _reset_followers(state: ClusterState, r: Replica, image: PartitionMetadata, new_leader: bool,
                     keep: tuple) -> tuple:
    """The leader's follower states in a new leader epoch (Replica.resetReplicaState).
    The chapters: a new leader knows nothing; a re-elected one keeps what it knew
    but the last-fetch markers (§2.10.3). Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS:
    ISR members count as caught up, as of the leader's LESO. Rule.REPLICA_LAG_TIME:
    ISR members caught up and fetched now, the others never; a re-elected leader
    keeps each follower's LEO and broker epoch, and the leader's LEO at the last
    fetch is the LESO."""
    cfg = state.config
    caught = cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS)
    if not new_leader and cfg.has(Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH):
        return keep
    if cfg.follows(Rule.REPLICA_LAG_TIME):
        return _reset_on_the_clock(state.now_ms, r, image, new_leader, keep)
    if new_leader:
        if not caught:
            return ()
        return tuple((f, FollowerState(caught_up=True)) for f in sorted(image.isr - {image.leader}))
    if not caught:
        return tuple((f, attrs.evolve(fs, last_fetch_leader_epoch=None)) for f, fs in keep)
    out = {f: attrs.evolve(fs, last_fetch_leader_epoch=None, caught_up=f in image.isr,
                           last_fetch_leader_leo=r.leo if f in image.isr else None) for f, fs in keep}
    for f in image.isr - {image.leader} - set(out):
        out[f] = FollowerState(caught_up=True, last_fetch_leader_leo=r.leo)
    return _known(tuple(sorted(out.items())))


def _reset_on_the_clock(now: int, r: Replica, image: PartitionMetadata, new_leader: bool, keep: tuple) -> tuple:
    """Rule.REPLICA_LAG_TIME's ``Replica.resetReplicaState`` at ``now`` (ms): a new
    leader dates its ISR followers caught up now and knows nothing else; a
    re-elected one keeps each follower's LEO and broker epoch, takes its own LEO
    (the LESO) as every follower's last fetch leader LEO, and dates the ISR
    members fetched and caught up now, the others never."""
    if new_leader:
        return tuple((f, FollowerState(last_caught_up_ms=now)) for f in sorted(image.isr - {image.leader}))
    out = {f: FollowerState(fs.fetch_offset, fs.broker_epoch, last_fetch_leader_leo=r.leo) for f, fs in keep}
    for f in image.replicas:
        if f != image.leader:
            fs = out.get(f, FollowerState(last_fetch_leader_leo=r.leo))
            out[f] = attrs.evolve(fs, last_fetch_ms=now, last_caught_up_ms=now) if f in image.isr else fs
    return _known(tuple(sorted(out.items())))


def _known(followers: tuple) -> tuple:
    """Follower states that know something (an entry at its defaults is no entry)."""
    return tuple((f, fs) for f, fs in followers if fs != FollowerState())


def reconcile(state: ClusterState, broker: int, changed: bool = True,
              added: frozenset[int] = frozenset()) -> ClusterState:
    """A RUNNING broker's replica acts on its materialized metadata (§2.10, §4.3).

    Removed from the replica set: the replica is deleted. Added: an empty replica is
    created. Then the transition: follower→leader (§2.10.1), leader→leader in the
    same epoch (§2.10.2, only for a newer partition epoch), leader→leader in a new
    epoch (§2.10.3), leader→follower (§2.10.4), follower→follower (§2.10.5/6).

    ``changed``: whether the batch just applied changed the partition registration
    (a start-up applies the whole image); ``added``: the replicas it added. Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH:
    a leader applies a changed registration of its own leader epoch whose partition
    epoch is not older than its own (Partition.makeLeader). Rule.
    ONE_ALTER_PARTITION_IN_FLIGHT: the in-flight AlterPartition stays in flight
    across transitions (its id in ``pending_request``) until answered.
    Rule.FOLLOWER_APPLIES_PARTITION_EPOCH: a follower in the same leader epoch takes
    a changed registration's newer partition epoch (Partition.makeFollower).
    Rule.REPLICA_LAG_TIME: a replica added in the leader's epoch starts at Kafka's
    ``ReplicaState.EMPTY``, whose leader LEO at the last fetch is 0 (a new leader
    epoch resets it to unknown). Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH: a leader
    stepping down keeps its epoch's entry when it appended nothing in it.
    """
    b = state.broker(broker)
    image: Optional[PartitionMetadata] = b.image
    r = b.replica
    was_leader = r is not None and r.role == Role.LEADER
    if image is None or broker not in image.replicas:
        if r is None:
            return state
        if was_leader:
            state = nack(state, broker)
        return set_replica(state, broker, None)
    if r is None:
        r = Replica()

    cfg = state.config
    # The in-flight request's id survives the transition under the rule.
    in_flight = r.pending_request if cfg.follows(Rule.ONE_ALTER_PARTITION_IN_FLIGHT) else None
    if image.leader == broker:
        keep = tuple((f, fs) for f, fs in r.followers if f in image.replicas)
        same_epoch_applies = image.partition_epoch > r.partition_epoch or (
            cfg.follows(Rule.LEADER_APPLIES_SAME_PARTITION_EPOCH) and changed
            and image.partition_epoch == r.partition_epoch)
        if not was_leader:
            # The new epoch's entry at the LESO replaces a kept unwritten one (LeaderEpochFileCache.assign).
            r = ec.assigned(cfg, r, attrs.evolve(
                r, role=Role.LEADER, leader=broker, leader_epoch=image.leader_epoch,
                partition_epoch=image.partition_epoch, leso=r.leo, isr=image.isr,
                pending_isr=None, pending_request=in_flight, unwritten_epoch=None,
                followers=_reset_followers(state, r, image, True, ())), image.leader_epoch, r.leo)
        elif image.leader_epoch != r.leader_epoch:
            # Clearing the last-fetch marker is what makes a follower fetch again in this
            # epoch before it can join the ISR (§2.10.3, §6.5.4 condition 3).
            r = ec.assigned(cfg, r, attrs.evolve(
                r, leader_epoch=image.leader_epoch, partition_epoch=image.partition_epoch,
                leso=r.leo, isr=image.isr, pending_isr=None, pending_request=in_flight,
                followers=_reset_followers(state, r, image, False, keep)), image.leader_epoch, r.leo)
        elif same_epoch_applies:
            if cfg.follows(Rule.REPLICA_LAG_TIME):
                # Partition.updateAssignmentAndIsr starts an added replica at ReplicaState.EMPTY
                keep = tuple(sorted(keep + tuple((f, FollowerState(last_fetch_leader_leo=0))
                                                 for f in added - {broker} if r.follower(f) is None)))
            r = attrs.evolve(r, partition_epoch=image.partition_epoch, isr=image.isr,
                             pending_isr=None, pending_request=in_flight, followers=keep)
        else:
            r = attrs.evolve(r, followers=keep)
            if cfg.follows(Rule.REPLICA_LAG_TIME):
                # Kafka skips makeLeader, and its HWM recomputation, for this registration
                return set_replica(state, broker, r)
        state = set_replica(state, broker, r)
        return _after_leader_isr_change(state, broker)

    if was_leader:
        state = nack(state, broker)
    if was_leader or r.role == Role.NONE or image.leader_epoch != r.leader_epoch:
        cache = r.epoch_cache
        if was_leader and cfg.follows(Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH) and cache is None:
            r = attrs.evolve(r, unwritten_epoch=_unwritten_epoch(r))
        if cfg.has(Variant.TRUNCATE_TO_HWM) and r.role != Role.NONE:
            # UnifiedLog.truncateTo drops the cache's entries at or past the new LEO
            r = ec.truncated(cfg, r, attrs.evolve(r, log=r.log[:r.hwm], flushed=min(r.flushed, r.hwm),
                                                  unwritten_epoch=None), r.hwm)
            cache = r.epoch_cache
        r = attrs.evolve(r, role=Role.FOLLOWER, leader=image.leader, leader_epoch=image.leader_epoch,
                         partition_epoch=image.partition_epoch, leso=None, isr=frozenset(),
                         pending_isr=None, pending_request=in_flight, followers=())
        if cache is not None:
            # makeFollower leaves a restored cache as it is (the leader's entry included)
            r = ec.settled(r, cache)
    elif cfg.follows(Rule.FOLLOWER_APPLIES_PARTITION_EPOCH) and changed and image.partition_epoch > r.partition_epoch:
        r = attrs.evolve(r, partition_epoch=image.partition_epoch)   # Partition.makeFollower
    return set_replica(state, broker, r)


def _unwritten_epoch(r: Replica) -> Optional[tuple[int, int]]:
    """The entry ``(leader epoch, LESO)`` a stepping-down leader keeps in its epoch
    cache when it appended nothing in its epoch (Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH:
    Partition.makeLeader assigned it, makeFollower leaves the log alone), else None."""
    assert r.leso is not None
    last = r.log[-1].epoch if r.log else None
    return (r.leader_epoch, r.leso) if r.leso == r.leo and (last is None or last < r.leader_epoch) else None


def deactivate(state: ClusterState, broker: int) -> ClusterState:
    """The broker stops: its replica becomes inactive (Role.NONE) and forgets the
    leader's in-memory state (and a flawed variant's memory of a rejection or a
    divergence); its pending produce requests fail. A kept unwritten
    epoch goes too: loading the log at the restart truncates the epoch cache at
    the LEO (LogLoader.load)."""
    b = state.broker(broker)
    r = b.replica
    if r is not None:
        state = nack(state, broker)
        r = attrs.evolve(r, role=Role.NONE, leso=None, isr=frozenset(), pending_isr=None,
                         pending_request=None, followers=(), unwritten_epoch=None, abandoned=frozenset(),
                         stopped_in_epoch=None)
        state = set_replica(state, broker, r)
    return state


# ------------------------------------------------------------------------ fetch

def fetch_request_for(state: ClusterState, follower: int, msg_id: int) -> FetchRequest:
    b = state.broker(follower)
    r = b.replica
    assert r is not None and b.broker_epoch is not None
    return FetchRequest(msg_id, follower, r.leader, b.broker_epoch, r.leader_epoch,
                        r.fetch_offset, r.last_fetched_epoch)


def _fetch_error(state: ClusterState, r: Optional[Replica], image: Optional[PartitionMetadata],
                 req: FetchRequest) -> Optional[str]:
    """The error a fetch is answered with before any read, or None (§2.2.2, §2.10).
    The chapters: NOT_LEADER_OR_FOLLOWER (not the leader, or a requester outside
    the replica set), then FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH. Rule.
    FETCH_ERROR_ORDER: the leader epoch first (whatever the role), then
    NOT_LEADER_OR_FOLLOWER, and UNKNOWN_LEADER_EPOCH for a requester outside the
    replica set (Partition.getLocalLog, followerReplicaOrThrow)."""
    cfg = state.config
    fencing = not cfg.has(Variant.NO_FETCH_LEADER_EPOCH_FENCING)
    if r is None or image is None:
        return NOT_LEADER_OR_FOLLOWER
    if cfg.follows(Rule.FETCH_ERROR_ORDER):
        if fencing and req.leader_epoch < r.leader_epoch:
            return FENCED_LEADER_EPOCH
        if fencing and req.leader_epoch > r.leader_epoch:
            return UNKNOWN_LEADER_EPOCH
        if r.role != Role.LEADER:
            return NOT_LEADER_OR_FOLLOWER
        if req.src not in image.replicas:
            return UNKNOWN_LEADER_EPOCH
        return None
    if r.role != Role.LEADER or req.src not in image.replicas:
        return NOT_LEADER_OR_FOLLOWER
    if fencing and req.leader_epoch < r.leader_epoch:
        return FENCED_LEADER_EPOCH
    if fencing and req.leader_epoch > r.leader_epoch:
        return UNKNOWN_LEADER_EPOCH
    return None


def handle_fetch_request(state: ClusterState, req: FetchRequest) -> ClusterState:
    """The leader serves a fetch (§2.2.2, §2.10, §3.2): leader-epoch fencing, the
    diverging-epoch check, then follower state update, HWM advancement and records
    from the fetch offset to its LEO.

    Rule.STALE_BROKER_EPOCH_FETCH_FENCED: a fetch whose broker epoch is older than
    the one the leader's metadata holds for an unfenced follower is answered
    NOT_LEADER_OR_FOLLOWER without updating its state (Replica.
    updateFetchStateOrThrow). Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS: the fetch
    marks the follower caught up when it reached the leader's LEO, or the LEO of
    its previous fetch. Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE: the answer carries the
    HWM from before this fetch advanced it (Partition.fetchRecords reads first).
    Rule.REPLICA_LAG_TIME: the fetch records the clock's times (``clock.
    after_fetch``) and moves the HWM only when it moved the follower's LEO
    (Partition.updateFollowerFetchState)."""
    leader = req.dst
    r = state.replica(leader)

    def respond(state: ClusterState, **fields: object) -> ClusterState:
        return send(state, lambda i: FetchResponse(i, leader, req.src, req.broker_epoch, req.leader_epoch,
                                                   req.fetch_offset, **fields))

    image = state.broker(leader).image
    cfg = state.config
    error = _fetch_error(state, r, image, req)
    if error is not None:
        return respond(state, error=error)
    assert r is not None
    if cfg.has(Variant.TRUNCATE_TO_HWM):
        if req.fetch_offset > r.leo:
            return respond(state, error=OFFSET_OUT_OF_RANGE, hwm=r.hwm, log_end_offset=r.leo)
    elif req.last_fetched_epoch is not None:
        eoe = end_offset_for_epoch(r.log, req.last_fetched_epoch, (r.leader_epoch, r.leso), r.epoch_cache)
        if eoe is None and cfg.follows(Rule.FETCH_ERROR_ORDER):
            # readRecords: the end offset of the last fetched epoch cannot be determined
            return respond(state, error=OFFSET_OUT_OF_RANGE)
        if eoe is None:
            # Requested epoch above every epoch of the leader (only with a flawed
            # variant): the leader's log ends at its LEO in its latest epoch.
            eoe = EpochEndOffset(ec.cache_of(r)[-1][0], r.leo)
        epochs_differ = eoe.epoch < req.last_fetched_epoch and not cfg.has(Variant.NO_LAST_FETCHED_EPOCH)
        if epochs_differ or eoe.end_offset < req.fetch_offset:
            return respond(state, diverging_epoch=eoe, hwm=r.hwm)
    if cfg.follows(Rule.STALE_BROKER_EPOCH_FETCH_FENCED):
        known, fenced, _ = known_registration(state, leader, req.src)
        if not fenced and known is not None and known > req.broker_epoch:
            return respond(state, error=NOT_LEADER_OR_FOLLOWER)
    state = _note_caught_up(state, req)
    # The request's epoch equals the leader's unless fencing is off (a zombie fetch).
    fs = FollowerState(req.fetch_offset, req.broker_epoch, req.leader_epoch)
    prev = r.follower(req.src) or FollowerState()
    clock = cfg.follows(Rule.REPLICA_LAG_TIME)
    if clock:
        caught_ms, fetch_ms, leader_leo = after_fetch(prev, req.fetch_offset, r.leo, state.now_ms)
        fs = attrs.evolve(fs, last_fetch_leader_leo=leader_leo, last_fetch_ms=fetch_ms, last_caught_up_ms=caught_ms)
    elif cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS):
        before = prev.last_fetch_leader_leo
        caught_up = prev.caught_up or req.fetch_offset >= r.leo or (before is not None and req.fetch_offset >= before)
        fs = attrs.evolve(fs, caught_up=caught_up, last_fetch_leader_leo=max(r.leo, -1 if before is None else before))
    hwm_read = r.hwm
    state = set_replica(state, leader, set_follower(r, req.src, fs))
    if cfg.follows(Rule.EXPAND_ISR_ON_FETCH) and why_not_expand(state, leader, req.src) is None:
        state = propose_isr(state, leader, r.isr | {req.src})
    if not clock or prev.fetch_offset != req.fetch_offset:
        state = maybe_advance_hwm(state, leader)
    r = state.replica(leader)
    assert r is not None
    hwm = hwm_read if cfg.follows(Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE) else r.hwm
    return respond(state, records=r.log[req.fetch_offset:], hwm=hwm)


def _note_caught_up(state: ClusterState, req: FetchRequest) -> ClusterState:
    """Ghost: an unclean replica has provably caught up once its leader serves a
    fetch sent in its current broker epoch from a log holding the committed log."""
    h = state.history
    if req.src not in h.unclean or state.broker(req.src).broker_epoch != req.broker_epoch:
        return state
    r = state.replica(req.src)
    if r is None or req.fetch_offset < h.true_hwm or r.log[:h.true_hwm] != h.committed:
        return state
    return set_history(state, unclean=h.unclean - {req.src})


def fetch_response_matches(state: ClusterState, resp: FetchResponse) -> bool:
    """The follower applies a response only if its fetch state is unchanged since
    the request: same broker epoch, still following the same leader in the same
    leader epoch, and the fetch offset still equal to its LEO."""
    b = state.broker(resp.dst)
    r = b.replica
    return (r is not None and r.role == Role.FOLLOWER and b.broker_epoch == resp.broker_epoch
            and r.leader == resp.src and r.leader_epoch == resp.request_leader_epoch
            and r.leo == resp.fetch_offset)


def handle_fetch_response(state: ClusterState, resp: FetchResponse) -> ClusterState:
    """The follower applies a fetch response (§2.2.2, §3.2): truncation on a
    diverging epoch (HWM capped by the new LEO), or appending records and taking
    HWM = min(leader HWM, LEO). Errors and stale responses are discarded; Rule.
    FENCED_FETCH_AWAITS_NEW_EPOCH: FENCED_LEADER_EPOCH stops the follower's
    fetching in its leader epoch (``Replica.stopped_in_epoch``)."""
    cfg = state.config
    r = state.replica(resp.dst)
    if cfg.has(Variant.NO_FETCH_RESPONSE_VALIDATION):
        if r is None or r.role != Role.FOLLOWER or state.broker(resp.dst).broker_epoch != resp.broker_epoch:
            return state
    elif not fetch_response_matches(state, resp):
        return state
    assert r is not None
    if resp.error == OFFSET_OUT_OF_RANGE and cfg.has(Variant.TRUNCATE_TO_HWM) and resp.log_end_offset is not None:
        to = min(r.leo, resp.log_end_offset)
        return set_replica(state, resp.dst, ec.truncated(cfg, r, attrs.evolve(
            r, log=r.log[:to], hwm=min(r.hwm, to), flushed=min(r.flushed, to), unwritten_epoch=None), to))
    if resp.error == FENCED_LEADER_EPOCH and cfg.follows(Rule.FENCED_FETCH_AWAITS_NEW_EPOCH):
        # AbstractFetcherThread.onPartitionFenced: the partition leaves the fetcher until a new leader epoch
        return set_replica(state, resp.dst, attrs.evolve(r, stopped_in_epoch=r.leader_epoch))
    if resp.error is not None:
        return state
    if resp.diverging_epoch is not None:
        if cfg.has(Variant.NO_LAST_FETCHED_EPOCH):
            to = max(0, min(r.leo, resp.diverging_epoch.end_offset))
        else:
            to = truncation_offset(r.log, resp.diverging_epoch, cfg.follows(Rule.TRUNCATION_IN_ROUNDS),
                                   r.unwritten_epoch, r.epoch_cache)
        # UnifiedLog.truncateTo truncates the epoch cache at the new LEO, even a no-op truncation's
        r = ec.truncated(cfg, r, attrs.evolve(r, log=r.log[:to], hwm=min(r.hwm, to), flushed=min(r.flushed, to),
                                              unwritten_epoch=None), min(to, r.leo))
        if cfg.has(Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE):
            r = attrs.evolve(r, stopped_in_epoch=r.leader_epoch)
    else:
        log = r.log + resp.records
        # an appended record's entry replaces the unwritten one (LeaderEpochFileCache.assign)
        unwritten = r.unwritten_epoch if not resp.records else None
        r = ec.appended(cfg, r, attrs.evolve(r, log=log, hwm=min(resp.hwm, len(log)), unwritten_epoch=unwritten),
                        resp.records)
    return set_replica(state, resp.dst, r)


# --------------------------------------------------------------- ISR proposals

def can_join_isr(state: ClusterState, leader: int, follower: int) -> Optional[str]:
    """Why ``follower`` is not in-sync for ``leader`` (§2.9, §6.5.3, §6.5.4); None when
    it is: it has reached the local HWM and the LESO, and the leader received a
    fetch from it in the current leader epoch. Rule.LEADER_CHECKS_ISR_ELIGIBILITY:
    and the leader's metadata has its broker unfenced in the broker epoch of its
    fetches (Partition.isReplicaIsrEligible)."""
    r = state.replica(leader)
    assert r is not None and r.leso is not None
    fs = r.follower(follower)
    if fs is None or fs.fetch_offset is None:
        return f"the leader has no fetch state for follower {follower}"
    if fs.fetch_offset < r.hwm:
        return f"follower {follower} fetch offset {fs.fetch_offset} is below the HWM {r.hwm}"
    cfg = state.config
    if fs.fetch_offset < r.leso and not cfg.has(Variant.ISR_JOIN_WITHOUT_LESO):
        return f"follower {follower} fetch offset {fs.fetch_offset} is below the LESO {r.leso}"
    if fs.last_fetch_leader_epoch is None and not cfg.has(Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH):
        return f"follower {follower} has not fetched in leader epoch {r.leader_epoch}"
    if cfg.follows(Rule.LEADER_CHECKS_ISR_ELIGIBILITY) and not isr_eligible(state, leader, follower):
        epoch, fenced, shutting_down = known_registration(state, leader, follower)
        if not fenced and shutting_down:
            return f"leader {leader}'s metadata has broker {follower} in controlled shutdown"
        return (f"leader {leader}'s metadata has broker {follower} {'fenced' if fenced else f'in broker epoch {epoch}'}"
                f", its fetches broker epoch {fs.broker_epoch}")
    return None


def alter_partition_in_flight(state: ClusterState, leader: int) -> Optional[str]:
    """Why ``leader`` may propose no ISR change now (an AlterPartition of its is in
    flight: a request unanswered or a pending ISR), or None."""
    r = state.replica(leader)
    assert r is not None
    if r.pending_request is not None or r.pending_isr is not None:
        return f"leader {leader} has an AlterPartition in flight"
    return None


def why_not_expand(state: ClusterState, leader: int, follower: int) -> Optional[str]:
    """Why running leader ``leader`` may not propose adding ``follower`` to its ISR
    now, or None: no AlterPartition in flight, ``follower`` a replica outside the
    ISR, and in sync (``can_join_isr``). Rule.EXPAND_ISR_ON_FETCH asks it while
    the leader serves the follower's fetch (Partition.maybeExpandIsr,
    canAddReplicaToIsr); the chapters' ``ProposeIsrExpand`` at any step."""
    if (e := alter_partition_in_flight(state, leader)):
        return e
    r = state.replica(leader)
    assert r is not None
    image = state.broker(leader).image
    if follower in r.isr or image is None or follower not in image.replicas:
        return f"{follower} is not an out-of-sync replica of leader {leader}"
    if (r.leader_epoch, follower) in r.abandoned:
        return (f"leader {leader} gave up adding {follower} in leader epoch {r.leader_epoch} after a rejection "
                f"(Variant.EXPANSION_ABANDONED_AFTER_REJECTION)")
    return can_join_isr(state, leader, follower)


def can_leave_isr(state: ClusterState, leader: int, follower: int) -> Optional[str]:
    """Why the leader's ISR check cannot find ISR member ``follower`` out of sync
    (§2.9), or None when it may: without a clock any follower may have lagged past
    replica.lag.time.max.ms. Rule.CAUGHT_UP_AT_LEADER_LEO: not one whose LEO, as
    the leader last heard it, is the leader's LEO (Partition.isFollowerOutOfSync,
    ReplicaState.isCaughtUp). Rule.REPLICA_LAG_TIME: exactly one caught up now is
    not (use ``out_of_sync`` for the whole set a check finds)."""
    r = state.replica(leader)
    assert r is not None
    fs = r.follower(follower)
    if state.config.follows(Rule.REPLICA_LAG_TIME):
        if is_caught_up(state.now_ms, r.leo, fs):
            return (f"follower {follower} is caught up at {state.now_ms} ms "
                    f"(last caught up {None if fs is None else fs.last_caught_up_ms} ms)")
        return None
    if state.config.follows(Rule.CAUGHT_UP_AT_LEADER_LEO) and fs is not None and fs.fetch_offset == r.leo:
        return f"follower {follower} is at leader {leader}'s LEO {r.leo}: caught up, never out of sync"
    return None


def out_of_sync(state: ClusterState, leader: int) -> frozenset[int]:
    """The ISR followers leader ``leader``'s ISR check finds out of sync now under
    Rule.REPLICA_LAG_TIME (Partition.getOutOfSyncReplicas: every ISR follower not
    caught up; none while an AlterPartition is in flight)."""
    r = state.replica(leader)
    assert r is not None
    if alter_partition_in_flight(state, leader):
        return frozenset()
    return frozenset(f for f in r.isr - {leader} if can_leave_isr(state, leader, f) is None)


def propose_isr(state: ClusterState, leader: int, proposed: frozenset[int]) -> ClusterState:
    """Send an AlterPartition with ``proposed`` and apply it eagerly to the Maximal
    ISR (§2.9.2, §6.5.2); the added replicas' broker epochs come from fetch state.
    Rule.ALTER_PARTITION_VALIDATION: the request names every member's broker epoch,
    the leader's own and the followers' from fetch state (None, Kafka's -1, when
    unknown; Partition.addBrokerEpochToIsr). Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS:
    a follower shrunk out has lagged past replica.lag.time.max.ms, so it is no
    longer caught up. Rule.REPLICA_LAG_TIME: the clock says so; the HWM is not
    recomputed (Kafka's prepareIsrExpand, prepareIsrShrink)."""
    b = state.broker(leader)
    r = b.replica
    assert r is not None and b.broker_epoch is not None
    cfg = state.config

    def epoch_of(f: int) -> Optional[int]:
        if f == leader:
            return b.broker_epoch
        fs = r.follower(f)  # type: ignore[union-attr]
        return fs.broker_epoch if fs else None

    named = proposed if cfg.follows(Rule.ALTER_PARTITION_VALIDATION) else proposed - r.isr
    epochs = tuple(sorted((f, epoch_of(f)) for f in named))
    msg_id = state.network.next_id
    state = send(state, lambda i: AlterPartitionRequest(i, leader, b.broker_epoch, r.leader_epoch,  # type: ignore[arg-type]
                                                        r.partition_epoch, proposed, epochs))
    if cfg.follows(Rule.REPLICA_LAG_TIME):
        # the clock says who is caught up; Kafka's proposal does not touch the HWM
        return set_replica(state, leader, attrs.evolve(r, pending_isr=proposed, pending_request=msg_id,
                                                       pending_broker_epochs=epochs))
    followers = r.followers
    if cfg.follows(Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS):
        out = r.isr - proposed
        followers = _known(tuple((f, attrs.evolve(fs, caught_up=False, last_fetch_leader_leo=None) if f in out
                                  else fs) for f, fs in followers))
    state = set_replica(state, leader, attrs.evolve(r, pending_isr=proposed, pending_request=msg_id,
                                                    pending_broker_epochs=epochs, followers=followers))
    return maybe_advance_hwm(state, leader)


def _resend_proposal(state: ClusterState, broker: int, r: Replica) -> ClusterState:
    """Kafka's answer to an error it does not expect (``handleAlterPartitionError``'s
    default case, NOT_CONTROLLER among them: "Retrying."): the same proposal sent
    again (``submitAlterPartition(proposedIsrState)``), with the epochs it named and
    the broker epoch the leader has now."""
    b = state.broker(broker)
    assert r.pending_isr is not None and b.broker_epoch is not None
    msg_id = state.network.next_id
    state = send(state, lambda i: AlterPartitionRequest(i, broker, b.broker_epoch, r.leader_epoch,  # type: ignore[arg-type]
                                                        r.partition_epoch, r.pending_isr,  # type: ignore[arg-type]
                                                        r.pending_broker_epochs))
    return set_replica(state, broker, attrs.evolve(r, pending_request=msg_id))


def handle_alter_partition_response(state: ClusterState, broker: int, resp: AlterPartitionResponse) -> ClusterState:
    """The leader commits or rolls back its in-flight change (§2.9.2). Only the
    response to the in-flight request counts; success is applied only in the same
    leader epoch and for a partition epoch newer than the leader knows.

    Rule.ONE_ALTER_PARTITION_IN_FLIGHT: the answer clears the in-flight request
    whatever became of the change. Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING: only
    INELIGIBLE_REPLICA rolls back; other errors, and a stale success, leave the
    change pending until new metadata; a success with the partition epoch the
    leader knows is applied (Partition.handleAlterPartitionError,
    handleAlterPartitionUpdate). Rule.REPLICA_LAG_TIME: a rollback leaves the HWM
    for the next event that recomputes it."""
    r = state.replica(broker)
    if r is None or r.pending_request != resp.request_id:
        return state
    cfg = state.config
    one, keep = cfg.follows(Rule.ONE_ALTER_PARTITION_IN_FLIGHT), cfg.follows(Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING)
    answered = attrs.evolve(r, pending_request=None)
    if r.role != Role.LEADER or r.pending_isr is None:
        return set_replica(state, broker, answered) if one else state
    if resp.error is not None:
        if cfg.has(Variant.EXPANSION_ABANDONED_AFTER_REJECTION):
            rejected = frozenset((r.leader_epoch, f) for f in r.pending_isr - r.isr)
            r, answered = attrs.evolve(r, abandoned=r.abandoned | rejected), \
                attrs.evolve(answered, abandoned=answered.abandoned | rejected)
        if keep and resp.error == NOT_CONTROLLER:
            return _resend_proposal(state, broker, answered)
        if keep and resp.error not in ROLLBACK_ERRORS:
            return set_replica(state, broker, answered)
        r = attrs.evolve(r, pending_isr=None, pending_request=None)
        if cfg.follows(Rule.REPLICA_LAG_TIME):
            # handleAlterPartitionError rolls back without recomputing the HWM
            return set_replica(state, broker, r)
    elif resp.leader_epoch != r.leader_epoch or resp.partition_epoch < r.partition_epoch or (
            resp.partition_epoch == r.partition_epoch and not keep):
        return set_replica(state, broker, answered) if (one or keep) else state
    else:
        r = attrs.evolve(r, isr=resp.isr, partition_epoch=resp.partition_epoch,
                         pending_isr=None, pending_request=None)
    state = set_replica(state, broker, r)
    return _after_leader_isr_change(state, broker)
