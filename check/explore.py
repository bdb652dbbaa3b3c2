"""Guided search without Hypothesis's engine: Go-Explore over the protocol's
abstract states.

The machine's own policy (``ReplicationMachine``: its configurations, swarm,
fault spacing, warm-up writes, compound steps, every action through the one
lockstep check) makes each choice, drawn from a ``random.Random``
(``check.strategies.RandomDraws``) instead of Hypothesis. What this adds is
where each burst of steps starts:

- an archive maps each *cell* — an abstract protocol state (``cell_of``: the
  shapes of ISR, ELR and LastKnownELR against MinISR, each replica's LEO
  against the leader's and its HWM, stale leader epochs, unflushed suffixes,
  HWM against LESO, messages in flight, faults spent) — to the shortest
  example that reached it so far;
- a burst starts from a cell chosen with weight ``1 / sqrt(1 + times chosen)``
  (new, rarely revisited cells first), as a fork of that example (the model
  state is an immutable value, the implementation is rebuilt and replays the
  trace: ``Snapshot``), with a fresh swarm and fault spacing; now and then from a
  fresh example (a new configuration);
- a burst runs ``burst`` rule steps (one family among those enabled, as a
  Hypothesis rule would be, then the machine's draws), and every cell it reaches
  that is new, or reached by a shorter trace, goes into the archive;
- with an ``unguided_share``, that share of the steps goes to whole fresh
  examples of the machine's policy instead, kept out of the archive: some flaws
  need one long coherent example (one swarm, one fault spacing) more than a
  state reached again (the campaign runs both, ``campaign.unit``).

A failure is the lockstep's ``Verdict`` (the failing example's whole trace from
its initial state, the forks' prefixes included), raised by the machine as
``CheckFailed``; the explorer returns it with what the search did. The trace is
not shrunk: ``check.refine.reduced`` reduces it (ddmin, smaller
configurations) as it does a Hypothesis counterexample.

Sources: Ecoffet et al., "First return, then explore" (Go-Explore, Nature 2021);
swarm testing (Groce et al., ISSTA 2012), as the machine does it.
"""

from __future__ import annotations

import copy
import math
import random
import time
from typing import Any, Callable, Hashable, Optional

import attrs

from model import FAMILIES as MODEL_FAMILIES, NO_LEADER, ClusterState

from .failures import CheckFailed
from .lockstep import Verdict
from .strategies import RandomDraws

#: The machine's rules, one per action family (``ReplicationMachine``; ``model.FAMILIES``).
FAMILIES = tuple(MODEL_FAMILIES)

BURST = 40            # rule steps from a chosen cell before the next choice
MAX_TRACE = 400       # an example this long is not extended further (Hypothesis's step count)
FRESH = 0.1           # chance that a burst starts from a fresh example instead of a cell
#: Shortening bounded by the search (``Explorer.run``'s ``shorten_bounded``) lasts
#: at most as long as the first failure took to find, and at least this long: a
#: flaw found in a tenth of a second costs a campaign that, not ``shorten_s``.
MIN_SHORTEN_S = 0.5


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def cell_of(state: ClusterState) -> Hashable:
    """The abstract protocol state of ``state``: a hashable value, equal for states
    that differ only in what the properties do not care about (offsets' and
    epochs' magnitudes, which broker is which, messages in flight). Shape:

    (replicas, MinISR (the controller's), the leader's MinISR differing from it
    (a change on its way), leader present, |ISR| against MinISR, |ELR| (capped
    at 2), LastKnownELR non-empty, lossy shutdowns, the leader's HWM against its
    LESO (None without a leader or a LESO), and the replicas' shapes, sorted:
    ``("down",)`` for a broker without the replica, else (its role: leader,
    follower, none while its broker is down; in ISR, in ELR, LEO against the
    leader's LEO, its leader epoch behind the controller's, its last record's
    epoch against the leader's last record's)), comparisons as -1, 0, 1.

    Coarse on purpose: finer cells (broker statuses, fencing, HWMs, messages in
    flight by kind) made an archive of thousands of cells after a few seconds and
    found the deep flaws more slowly (README, "Time to find")."""
    p = state.partition
    leader = state.replica(p.leader) if p.leader != NO_LEADER else None
    lleo = leader.leo if leader is not None else -1
    llast = leader.log[-1].epoch if leader is not None and leader.log else -1
    shapes = []
    for b in p.replicas:
        r = state.broker(b).replica
        if r is None:
            shapes.append(("down",))
            continue
        last = r.log[-1].epoch if r.log else -1
        shapes.append((r.role.value, b in p.isr, b in p.elr, _cmp(r.leo, lleo), r.leader_epoch < p.leader_epoch,
                       _cmp(last, llast)))
    # MinISR as the controller holds it, and whether the leader still acts on another (a change on its way)
    stale = p.leader != NO_LEADER and state.leader_min_isr(p.leader) != state.min_isr
    return (len(p.replicas), state.min_isr, stale, p.leader != NO_LEADER, _cmp(len(p.isr), state.min_isr),
            min(2, len(p.elr)), bool(p.last_known_elr), state.history.lossy_shutdowns,
            None if leader is None or leader.leso is None else _cmp(leader.hwm, leader.leso),
            tuple(sorted(shapes, key=repr)))


@attrs.frozen
class Snapshot:
    """A ``ReplicationMachine`` mid-example, cheaply: its fields (a shallow copy),
    and the model state and trace it had (immutable values). ``restore()`` gives
    an independent machine there: the implementation is built again and takes
    the trace's actions (``LockStep.resumed``), which costs far less than deep-
    copying it at every new cell, and works for one that cannot be copied."""

    machine: Any
    state: ClusterState
    trace: tuple
    detached: tuple[str, ...]
    known_met: tuple[str, ...] = ()

    @classmethod
    def of(cls, machine: Any) -> "Snapshot":
        lockstep = machine.lockstep
        return cls(copy.copy(machine), machine.state, tuple(machine.trace), lockstep.detached, lockstep.known_met)

    def restore(self) -> Any:
        other = copy.copy(self.machine)
        other.lockstep = self.machine.lockstep.resumed(self.state, self.trace, self.detached, self.known_met)
        other.state = self.state
        return other


@attrs.define
class _Entry:
    snapshot: Snapshot
    chosen: int = 0

    @property
    def steps(self) -> int:
        return len(self.snapshot.trace)


@attrs.frozen
class Exploration:
    """How one explorer run searches: ``guided`` and ``unguided_share`` as
    ``Explorer`` takes them, ``shorten_s`` and ``shorten_bounded`` as
    ``Explorer.run`` does."""

    guided: bool = True
    unguided_share: float = 0.0
    shorten_s: float = 0.0
    shorten_bounded: bool = False


@attrs.frozen
class ExploreResult:
    """What a search did. verdict: the failure found (its trace from the example's
    initial state), or None. examples: fresh examples started; bursts: bursts run;
    steps: actions checked (warm-up and compound steps included); cells: cells in
    the archive; seconds: wall-clock seconds; first_failure_s: seconds to the
    failure (None when none)."""

    verdict: Optional[Verdict]
    examples: int
    bursts: int
    steps: int
    cells: int
    seconds: float
    first_failure_s: Optional[float] = None


class Explorer:
    """Go-Explore over ``machine_cls`` (a ``machine_for(...)`` class), seeded by
    ``seed``. ``burst``: rule steps per burst; ``fresh``: the chance of a fresh
    example per burst; ``guided``: False makes every burst a fresh example of
    ``MAX_TRACE`` rule steps (the machine's policy with no archive: what the
    guidance is measured against). ``cell``: the abstraction (``cell_of``).
    ``unguided_share`` (0 to 1): the share of the checked steps spent, beside
    the guided bursts, on such fresh examples, whose states stay out of the
    archive — two searches in one run, neither disturbing the other (a burst is
    unguided while the unguided steps are below their share)."""

    def __init__(self, machine_cls: type, seed: int, burst: int = BURST, fresh: float = FRESH,
                 guided: bool = True, cell: Callable[[ClusterState], Hashable] = cell_of,
                 unguided_share: float = 0.0) -> None:
        self.machine_cls = machine_cls
        self.rng = random.Random(seed)
        self.draws = RandomDraws(self.rng)
        self.burst = burst
        self.fresh = fresh
        self.guided = guided
        self.cell = cell
        self.unguided_share = unguided_share if guided else 0.0
        self.archive: dict[Hashable, _Entry] = {}
        self.examples = self.bursts = 0
        self._steps = {True: 0, False: 0}   # guided?, checked steps so far
        self._uncounted = False

    def _fresh(self) -> Any:
        # RunStats counts finished examples (a Hypothesis example's teardown does):
        # the one before this, so a failure in this one is counted as the next.
        self._count_example()
        machine = self.machine_cls()
        self.examples += 1
        self._uncounted = True
        machine.begin(machine.draw_config(self.draws), self.draws)
        return machine

    def _count_example(self) -> None:
        if self._uncounted:
            self.machine_cls.run_stats.examples += 1
            self._uncounted = False

    def _chosen(self, below: int) -> Optional[Any]:
        entries = [e for e in self.archive.values() if e.steps < below]
        if not entries:
            return None
        weights = [1.0 / math.sqrt(1 + e.chosen) for e in entries]
        entry = self.rng.choices(entries, weights)[0]
        entry.chosen += 1
        machine = entry.snapshot.restore()
        machine.reswarm(self.draws)
        return machine

    def _note(self, machine: Any) -> None:
        key = self.cell(machine.state)
        entry = self.archive.get(key)
        steps = len(machine.trace)
        if entry is None or steps < entry.steps:
            self.archive[key] = _Entry(Snapshot.of(machine), 0 if entry is None else entry.chosen)

    def _burst(self, limit: int) -> None:
        """One burst, its examples' traces kept under ``limit`` actions; raises
        ``CheckFailed`` at a failure."""
        # The share is counted in checked steps, not seconds: the run's choices
        # stay a function of its seed.
        spent, stats = self._steps, self.machine_cls.run_stats
        guided = self.guided and not (self.unguided_share > 0
                                      and spent[False] < self.unguided_share * (spent[False] + spent[True]))
        steps0 = stats.steps
        try:
            if guided:
                machine = None if self.archive and self.rng.random() < self.fresh else self._chosen(limit)
                self._extend(machine if machine is not None else self._fresh(), limit, self.burst, noted=True)
            else:
                self._extend(self._fresh(), limit, MAX_TRACE, noted=False)
        finally:
            spent[guided] += stats.steps - steps0

    def _extend(self, machine: Any, limit: int, rule_steps: int, noted: bool) -> None:
        self.bursts += 1
        if noted:
            self._note(machine)
        for _ in range(rule_steps):
            if len(machine.trace) >= limit:
                break
            family = self._family(machine)
            if family is None:
                break
            machine.act(family, self.draws)
            if noted:
                self._note(machine)

    def _family(self, machine: Any) -> Optional[str]:
        """A family drawn uniformly among those with an enabled action (None: no
        family has one): families are drawn without replacement until one has,
        so only the families looked at have their guards asked."""
        left = list(FAMILIES)
        while left:
            family = left.pop(self.rng.randrange(len(left)))
            if machine.enabled(family):
                return family
        return None

    def run(self, seconds: float, stop: Optional[Callable[[], bool]] = None, shorten_s: float = 0.0,
            shorten_bounded: bool = False) -> ExploreResult:
        """Search for ``seconds`` (wall clock; checked between bursts and rule
        steps' bursts) or until a failure, or until ``stop()`` says so. With
        ``shorten_s``, a failure found is followed by up to ``shorten_s`` more
        seconds of search for a shorter one (examples kept below the shortest
        failure's length, bursts started only from cells reached by shorter
        traces) — with ``shorten_bounded``, no longer than the first failure took
        to find (at least ``MIN_SHORTEN_S``) — and the shortest is returned, so
        that reduction starts closer to a minimal scenario."""
        t0 = time.monotonic()
        end = t0 + seconds
        stats = self.machine_cls.run_stats
        steps0 = stats.steps
        best: Optional[Verdict] = None
        found_s: Optional[float] = None
        limit = MAX_TRACE
        try:
            while time.monotonic() < end and limit > 1 and not (stop is not None and stop()):
                try:
                    self._burst(limit)
                except CheckFailed as e:
                    now = time.monotonic()
                    if best is None:
                        found_s = now - t0
                        end = now + (min(shorten_s, max(MIN_SHORTEN_S, found_s)) if shorten_bounded
                                     else shorten_s)
                    if best is None or len(e.verdict.trace) < len(best.trace):
                        best = e.verdict
                    limit = len(best.trace) - 1
        finally:
            self._count_example()
        took = time.monotonic() - t0
        return ExploreResult(best, self.examples, self.bursts, stats.steps - steps0, len(self.archive), took,
                             found_s)
