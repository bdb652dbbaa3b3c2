"""The property type, violations, and the fault-model facts properties rely on."""

from __future__ import annotations

from typing import Callable, Optional

import attrs

from model import NO_LEADER, AlterMinIsr, BrokerStatus, ClusterState, Replica, Role, UncleanShutdown


@attrs.frozen
class Violation:
    """One way a state breaks a property, in a Kafka engineer's words.

    property: the property's name. message: what is wrong. replicas, offsets,
    epochs: the broker ids, offsets and leader epochs involved (for reports).
    """

    property: str
    message: str
    replicas: tuple[int, ...] = ()
    offsets: tuple[int, ...] = ()
    epochs: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.property}: {self.message}"


Check = Callable[[ClusterState], tuple[Violation, ...]]


@attrs.frozen
class Property:
    """A named property: ``check(state)`` returns its violations (empty: holds)."""

    name: str
    section: str
    description: str
    check: Check = attrs.field(eq=False, repr=False)

    def __call__(self, state: ClusterState) -> tuple[Violation, ...]:
        return self.check(state)


# ------------------------------------------------------------ fault model (§6.2)

UNGUARDED_MECHANISMS = ("proactive", "unclean_leader_election")


def budget_min_isr(state: ClusterState) -> int:
    """The MinISR the fault budget counts from: the lowest ever in force
    (``Config.min_isr``, or the lowest an ``AlterMinIsr`` set). A record committed
    under a MinISR of m reached m replicas, and a leader may commit under an older,
    lower MinISR than the controller's, so only the lowest bounds them all."""
    floor = state.history.min_isr_floor
    return state.config.min_isr if floor is None else floor


def within_fault_budget(state: ClusterState) -> bool:
    """At most MinISR - 1 lossy unclean shutdowns so far (§5.1.2, §6.2), MinISR
    being the lowest ever in force (``budget_min_isr``)."""
    return state.history.lossy_shutdowns <= budget_min_isr(state) - 1


def keeps_fault_budget(state: ClusterState, action: object, lossy_budget: Optional[int] = None) -> bool:
    """Whether ``action`` keeps a run inside its fault budget: at most
    ``lossy_budget`` lossy unclean shutdowns (None: MinISR - 1, MinISR the lowest
    in force, so a MinISR change to ``m`` also needs at most m - 1 so far). What
    the search's walks and machine draw from (§6.2)."""
    lossy = state.history.lossy_shutdowns
    if isinstance(action, UncleanShutdown) and action.lossy:
        return lossy < (budget_min_isr(state) - 1 if lossy_budget is None else lossy_budget)
    if isinstance(action, AlterMinIsr) and lossy_budget is None:
        return lossy <= action.min_isr - 1
    return True


def no_unguarded_election(state: ClusterState) -> bool:
    """No legacy unclean leader election (ch7) and no proactive recovery (§5.3.1):
    both trade the completeness guarantee for availability."""
    return not any(e.mechanism in UNGUARDED_MECHANISMS for e in state.history.unclean_elections)


def guarantees_apply(state: ClusterState) -> bool:
    """The safety guarantees are promised: inside the fault budget and with no
    unguarded election so far."""
    return within_fault_budget(state) and no_unguarded_election(state)


# ---------------------------------------------------------------- state helpers

def hosted(state: ClusterState) -> list[tuple[int, Replica]]:
    """Every (broker, replica) pair, in broker order, whatever the broker's status."""
    return [(b.id, b.replica) for b in state.brokers if b.replica is not None]


def running_replica(state: ClusterState, broker: int) -> Optional[Replica]:
    b = state.broker(broker)
    return b.replica if b.status == BrokerStatus.RUNNING else None


def current_leader(state: ClusterState) -> Optional[tuple[int, Replica]]:
    """The non-stale leader: the controller's leader, running, acting as leader in
    the controller's leader epoch."""
    p = state.partition
    if p.leader == NO_LEADER:
        return None
    r = running_replica(state, p.leader)
    if r is None or r.role != Role.LEADER or r.leader_epoch != p.leader_epoch:
        return None
    return p.leader, r


def first_difference(a: tuple, b: tuple, upto: int) -> Optional[int]:
    """The first offset below ``upto`` where logs ``a`` and ``b`` differ (a missing
    record counts as a difference), or None."""
    if len(a) >= upto and len(b) >= upto and a[:upto] == b[:upto]:
        return None  # the common case, compared at C speed
    for o in range(upto):
        if o >= len(a) or o >= len(b) or a[o] != b[o]:
            return o
    return None


def record_at(log: tuple, offset: int) -> str:
    """``offset:epoch:value`` of the record at ``offset``, or "no record"."""
    if offset >= len(log):
        return "no record"
    return f"{offset}:{log[offset].epoch}:{log[offset].value}"


def fmt_set(s: frozenset[int]) -> str:
    return "[" + ", ".join(str(x) for x in sorted(s)) + "]"


class LastValueMemo:
    """Memoizes a pure function of one immutable value on that value's identity.

    States share unchanged parts (a step that does not touch the history keeps the
    same History object), so checks that depend on one part are computed once per
    distinct part. Holds a reference to each cached key, so an id is never reused
    while it is cached.
    """

    def __init__(self, fn: Callable, size: int = 64) -> None:
        self._fn = fn
        self._size = size
        self._cache: dict[int, tuple[object, object]] = {}

    def __call__(self, value: object) -> object:
        hit = self._cache.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        result = self._fn(value)
        if len(self._cache) >= self._size:
            self._cache.clear()
        self._cache[id(value)] = (value, result)
        return result
