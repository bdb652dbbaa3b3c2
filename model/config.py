"""Cluster configuration for one replicated partition (§2.6, §5.3.1, ch7)."""

from __future__ import annotations

import enum
from typing import Any

import attrs

UNCLEAN_RECOVERY_STRATEGIES = ("none", "balanced", "proactive", "manual")
MIN_BROKERS, MAX_BROKERS = 3, 5


class Variant(enum.Enum):
    """A historic (or plausible) protocol flaw switched into the model.

    Each member names what it removes and cites its KIP/JIRA; the catalogue is
    filled by the variants work. The correct protocol uses no variant.
    """


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


@attrs.frozen
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

    Raises ValueError naming the field and the allowed values on invalid input.
    """

    brokers: tuple[int, ...] = attrs.field(default=(1, 2, 3), converter=tuple, validator=_check_brokers)
    assignment: tuple[int, ...] = attrs.field(default=(1, 2, 3), converter=tuple)
    min_isr: int = 2
    unclean_recovery: str = "none"
    unclean_leader_election: bool = False
    variants: frozenset[Variant] = attrs.field(default=frozenset(), converter=frozenset)

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
