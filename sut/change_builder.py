"""``PartitionChangeBuilder``: the controller's draft of a change to the
partition registration, with the election and ELR rules, built into one
PartitionChangeRecord holding only the fields that changed (§2.3.2, §2.8,
§2.9, §5.2.1, §5.3.1).

Choices are deterministic: the first eligible replica in replica (assignment)
order.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from model import NO_LEADER, NO_LEADER_CHANGE

from .bugs import Bug
from .metadata import PartitionChangeRecord, PartitionRegistration


class PartitionChangeBuilder:
    def __init__(self, partition: PartitionRegistration, is_acceptable_leader: Callable[[int], bool],
                 min_isr: int, bugs: frozenset) -> None:
        self.partition = partition
        self.is_acceptable_leader = is_acceptable_leader  # unfenced (§2.8)
        self.min_isr = min_isr
        self.bugs = bugs
        self.target_replicas: tuple[int, ...] = partition.replicas
        self.target_isr: frozenset[int] = partition.isr
        self.target_elr: frozenset[int] = partition.elr
        self.target_last_known_elr: frozenset[int] = partition.last_known_elr
        self.target_adding: frozenset[int] = partition.adding
        self.target_removing: frozenset[int] = partition.removing
        self.target_leader: int = partition.leader
        self.bump_leader_epoch = False

    # ------------------------------------------------------------- elections (§2.8)

    def elect_leader(self, order: Optional[Iterable[int]] = None) -> None:
        """Keep a leader that is still in the ISR and unfenced; else the first
        unfenced ISR member; else the first unfenced ELR member, which moves to the
        ISR (§5.2.1 case B); else NO_LEADER."""
        order = tuple(self.target_replicas if order is None else order)
        ok = self.is_acceptable_leader
        if self.target_leader in self.target_isr and ok(self.target_leader):
            return
        for r in order:
            if r in self.target_isr and ok(r):
                self.target_leader = r
                return
        for r in order:
            if r in self.target_elr and ok(r):
                self.target_leader = r
                self.target_isr = self.target_isr | {r}
                self.target_elr = self.target_elr - {r}
                return
        self.target_leader = NO_LEADER

    # --------------------------------------------------------------- ELR (§2.9)

    def apply_elr_rules(self, removed_from_isr: frozenset[int] = frozenset()) -> None:
        """Replicas leaving the ISR join the ELR while the ISR is below MinISR (§5.2.1
        cases A, C); ISR members leave the ELR and LastKnownELR; once the ISR
        reaches MinISR both are emptied (case G, §5.3.1)."""
        if len(self.target_isr) >= self.min_isr:
            if Bug.ELR_NOT_CLEARED_AT_MIN_ISR in self.bugs:
                # BUG: only the ISR members leave; the rest of the ELR/LastKnownELR stays
                self.target_elr = self.target_elr - self.target_isr
                self.target_last_known_elr = self.target_last_known_elr - self.target_isr
                return
            self.target_elr = frozenset()
            self.target_last_known_elr = frozenset()
            return
        replicas = frozenset(self.target_replicas)
        self.target_elr = (self.target_elr | (removed_from_isr & replicas)) - self.target_isr
        self.target_last_known_elr = self.target_last_known_elr - self.target_isr

    # ------------------------------------------------------------------- build

    def build(self) -> Optional[PartitionChangeRecord]:
        """The record of the changed fields, or None when nothing changed. The
        leader field is set when the leader changes or the leader epoch must be
        bumped (completed or cancelled reassignment, §2.3.1)."""
        p = self.partition
        record = PartitionChangeRecord(
            leader=self.target_leader if (self.target_leader != p.leader or self.bump_leader_epoch)
            else NO_LEADER_CHANGE,
            isr=self.target_isr if self.target_isr != p.isr else None,
            elr=self.target_elr if self.target_elr != p.elr else None,
            last_known_elr=self.target_last_known_elr if self.target_last_known_elr != p.last_known_elr else None,
            replicas=self.target_replicas if self.target_replicas != p.replicas else None,
            adding=self.target_adding if self.target_adding != p.adding else None,
            removing=self.target_removing if self.target_removing != p.removing else None,
        )
        return None if record.is_empty() else record
