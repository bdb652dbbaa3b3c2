"""Every named property of the replication protocol, as pure predicates over
model state. ``ALL`` is the registry in a stable order; ``check_all(state)``
returns every violation."""

from __future__ import annotations

from model import ClusterState

from .base import (Property, Violation, budget_min_isr, guarantees_apply, keeps_fault_budget, no_unguarded_election,
                   within_fault_budget)
from .log_properties import (ACKED_WRITES_LINEARIZABLE, CONSISTENT_READ, LEADER_CANDIDATE_COMPLETENESS,
                             LEADER_COMPLETENESS, LOG_MATCHING, NO_COMMITTED_RECORD_LOST, STRONG_ISR,
                             WEAK_ISR)
from .metadata_properties import (APPLIED_HWM_MONOTONICITY, CONTROLLER_LOG_REPLAY, EPOCH_MONOTONICITY, LEADER_IN_ISR,
                                  METADATA_LOG_MATCHING, MIN_ISR_RECOVERY_QUORUM,
                                  REPLICATION_QUORUM_SUPERSET, UNCLEAN_EXCLUSION,
                                  VALID_PARTITION_METADATA)

ALL: tuple[Property, ...] = (
    LEADER_COMPLETENESS,
    LOG_MATCHING,
    LEADER_CANDIDATE_COMPLETENESS,
    REPLICATION_QUORUM_SUPERSET,
    UNCLEAN_EXCLUSION,
    APPLIED_HWM_MONOTONICITY,
    MIN_ISR_RECOVERY_QUORUM,
    METADATA_LOG_MATCHING,
    CONSISTENT_READ,
    NO_COMMITTED_RECORD_LOST,
    ACKED_WRITES_LINEARIZABLE,
    VALID_PARTITION_METADATA,
    EPOCH_MONOTONICITY,
    CONTROLLER_LOG_REPLAY,
    WEAK_ISR,
    STRONG_ISR,
    LEADER_IN_ISR,
)

BY_NAME: dict[str, Property] = {p.name: p for p in ALL}


def check_all(state: ClusterState) -> tuple[Violation, ...]:
    """Every violation of every property in ``ALL``, in registry order."""
    out: list[Violation] = []
    for prop in ALL:
        out.extend(prop.check(state))
    return tuple(out)


def check_some(state: ClusterState, names: frozenset[str]) -> tuple[Violation, ...]:
    """Every violation of the properties of ``ALL`` named in ``names`` (other
    names are ignored), in registry order."""
    out: list[Violation] = []
    for prop in ALL:
        if prop.name in names:
            out.extend(prop.check(state))
    return tuple(out)


__all__ = ["ALL", "BY_NAME", "Property", "Violation", "budget_min_isr", "check_all", "check_some", "guarantees_apply",
           "keeps_fault_budget", "no_unguarded_election", "within_fault_budget"]
