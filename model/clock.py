"""The brokers' clock under Rule.REPLICA_LAG_TIME: what Kafka's leader measures
replica.lag.time.max.ms on.

Times are integers in milliseconds from the start of the run (``ClusterState.
now_ms``, 0 at the start). A follower state's ``last_caught_up_ms`` and
``last_fetch_ms`` are moments on it, None for "never" (Kafka's 0, long before
any moment of a run). Time moves only by ``AdvanceTime``, which the model
offers to the moments at which a recorded caught-up time expires and by one
millisecond: every other moment is like one of these for every check a leader
makes (``isCaughtUp`` compares the age of a caught-up time with the lag).
"""

from __future__ import annotations

from typing import Optional

from .state import BrokerStatus, ClusterState, FollowerState, Replica, Role

#: Kafka's replica.lag.time.max.ms (its default, ReplicationConfigs.REPLICA_LAG_TIME_MAX_MS_DEFAULT), in ms.
REPLICA_LAG_TIME_MAX_MS = 30_000


def is_caught_up(now_ms: int, leader_leo: int, fs: Optional[FollowerState]) -> bool:
    """Kafka's ``ReplicaState.isCaughtUp``: the follower's LEO, as the leader last
    heard it, is the leader's LEO ``leader_leo``, or it caught up within
    replica.lag.time.max.ms of ``now_ms``. A follower without a state (None)
    never is: Kafka's empty state has an unknown LEO and caught up at time 0."""
    if fs is None:
        return False
    if fs.fetch_offset is not None and fs.fetch_offset == leader_leo:
        return True
    return fs.last_caught_up_ms is not None and now_ms - fs.last_caught_up_ms <= REPLICA_LAG_TIME_MAX_MS


def after_fetch(prev: FollowerState, fetch_offset: int, leader_leo: int, now_ms: int) -> tuple[int | None, int, int]:
    """What a fetch at ``fetch_offset`` served at ``now_ms`` by a leader whose LEO
    is ``leader_leo`` records (Kafka's ``Replica.updateFetchStateOrThrow``): the
    last caught-up time (``now_ms`` when the fetch reached the leader's LEO, the
    previous fetch's time when it reached the leader's LEO of that fetch, else
    unchanged; never earlier than before), the last fetch time (``now_ms``) and
    the leader's LEO at the last fetch (the largest so far). Returns
    (last_caught_up_ms, last_fetch_ms, last_fetch_leader_leo)."""
    caught = prev.last_caught_up_ms
    before = prev.last_fetch_leader_leo
    if fetch_offset >= leader_leo:
        caught = _latest(caught, now_ms)
    elif before is None or fetch_offset >= before:
        # Kafka's unknown lastFetchLeaderLogEndOffset is -1 (or 0): every fetch reaches it
        caught = _latest(caught, prev.last_fetch_ms)
    return caught, now_ms, leader_leo if before is None else max(before, leader_leo)


def _latest(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None:
        return b
    return a if b is None else max(a, b)


def expiry_delays(state: ClusterState) -> tuple[int, ...]:
    """The ``AdvanceTime`` delays the model offers (ms, ascending, distinct): one
    millisecond, and each delay after which a caught-up time recorded by a running
    leader is just older than replica.lag.time.max.ms."""
    now = state.now_ms
    out = {1}
    for b in state.brokers:
        r: Optional[Replica] = b.replica
        if r is None or not r.followers or b.status != BrokerStatus.RUNNING or r.role != Role.LEADER:
            continue
        for _, fs in r.followers:
            if fs.last_caught_up_ms is not None:
                expires = fs.last_caught_up_ms + REPLICA_LAG_TIME_MAX_MS + 1
                if expires > now:
                    out.add(expires - now)
    return tuple(sorted(out))
