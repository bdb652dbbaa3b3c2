"""Counterexample reduction: delta debugging (ddmin) over a failing trace.

Hypothesis shrinks the machine's choices, not the trace: a rule step that carries
a whole exchange, or a message id that names an earlier send, keeps steps that
the failure does not need. This pass works on the trace itself. It removes
chunks of steps, then single steps, and keeps every removal after which the
trace still replays and fails the same way. When no step can go, it merges two
catch-ups of one broker's metadata into one, or else moves one step elsewhere, and
reduces again: some steps are needed only because of the order of others (a write
before an ISR shrink needs the fetches that replicate it; the same write after the
expansion that raced with it does not).

When a step goes, the steps after it are re-based on the state they now reach:
- a delivery or drop names its message by the id its send gets in the new run
  (dropped with it when that send is gone);
- a Produce writes the next unique value;
- a ReplicateMetadata applies at most the records now pending;
- a step no longer enabled there goes too.
Without the last two, a removal that changes how many metadata records a later
catch-up finds, or that a later step needed, was refused whole: ddmin stopped at
traces three times their flaw's minimal scenario (benchmarks/reduce_cost.py
--corpus).

Each candidate is checked by ``check.replay``, so reduction keeps exactly the
machine's checks, SUT comparison included: first with only the failure's own
properties checked (none for a disagreement), then, when it fails so there,
with every property (``_Failure.screen``); the states are the same, so a
candidate the first replay rejects the second would too.

``reduce_trace`` works within the trace's configuration. ``reduce_counterexample``
also tries smaller ones: a cluster without one broker, a replica fewer, a lower
MinISR, no unclean recovery strategy and no unclean leader election, in that order.
The trace is carried over to the smaller configuration with its brokers renamed in
order and the steps that can no longer run left out (a replica left out leaves the
reassignment targets too), then reduced again; when it fails in no smaller
configuration as it is, it is carried over with one step moved. A
counterexample found on RF 4 of 5 brokers can so come down to the RF 2 of 3 brokers
of a hand-written scenario.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Mapping, Optional, Sequence

import attrs

from model import (MIN_BROKERS, ActionNotEnabled, AdvanceTime, Config, ControlledShutdown, Heal, ProposeIsrShrink,
                   ProposeIsrShrinkMany, Produce, ReplicateMetadata, Rule, initial_state, kind_of, step,
                   why_not_enabled)
from model.clock import expiry_delays
from model.healing import apply, expand
from model.shutdown import let_go_steps

from .replay import ReplayResult, TraceNotEnabled, replay
from .subject import Subject


def sends(trace: Sequence[Any], config: Config) -> list[tuple[Any, ...]]:
    """Per step of ``trace``, the messages it sends (in id order) that are still in
    flight after it, run from ``initial_state(config)`` (a healing phase sends and
    delivers many: only those left count)."""
    state, out = initial_state(config), []
    for action in trace:
        first = state.network.next_id
        state = apply(state, action)
        out.append(tuple(m for i in range(first, state.network.next_id) if (m := state.network.get(i)) is not None))
    return out


def _preference(new: Any, old: Any) -> int:
    """How well message ``new`` of the new run stands for ``old`` of the original
    (brokers may be renamed): 0 not at all (another class), 1 its class, 2 also
    from the same sender, 3 equal but for the id."""
    if type(new) is not type(old):
        return 0
    if attrs.evolve(new, id=old.id) == old:
        return 3
    return 2 if getattr(new, "src", None) == getattr(old, "src", None) else 1


def _claim(own: Sequence[Any], extra: list[int], state: Any, ids: dict[int, int]) -> bool:
    """A step not enabled in the new run whose messages an earlier step of it has
    already sent, unclaimed (``extra``): under another profile the same message
    can come from another step (a leader's expansion from the fetch it serves,
    Rule.EXPAND_ISR_ON_FETCH, where the chapters have a ProposeIsrExpand). Maps
    them, preferring an equal message, and says whether all were found."""
    found: dict[int, int] = {}
    for old in own:
        ranked = sorted(((_preference(m, old), -i) for i in extra
                         if i not in found.values() and (m := state.network.get(i)) is not None), reverse=True)
        if not ranked or ranked[0][0] == 0:
            return False
        found[old.id] = -ranked[0][1]
    ids.update(found)
    extra[:] = [i for i in extra if i not in found.values()]
    return bool(found)


#: Steps whose enablement the clock decides (Rule.REPLICA_LAG_TIME): the ISR check.
_TIMED = (ProposeIsrShrink, ProposeIsrShrinkMany)


def _wait_for(state: Any, action: Any) -> Optional[AdvanceTime]:
    """Under Rule.REPLICA_LAG_TIME, the shortest wait the model offers
    (``clock.expiry_delays``) after which the ISR check ``action`` is enabled, or
    None: a shrink whose followers the new run has not yet found out of sync (a
    step removed before it moved a caught-up time, a chapters' trace carried over
    to Kafka's rules) happens when time lets it."""
    if not isinstance(action, _TIMED) or not state.config.follows(Rule.REPLICA_LAG_TIME):
        return None
    for ms in expiry_delays(state):
        if why_not_enabled(step(state, AdvanceTime(ms)), action) is None:
            return AdvanceTime(ms)
    return None


def _waits_for(state: Any, action: Any) -> list:
    """The steps after which ``action``, not enabled in ``state``, is: a wait
    (``_wait_for``), or, under Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS,
    what lets a ``ControlledShutdown`` through (``model.shutdown.let_go_steps``: a
    trace of the chapters carried over to Kafka's rules); empty when neither does."""
    wait = _wait_for(state, action)
    if wait is not None:
        return [wait]
    if not isinstance(action, ControlledShutdown) or action.broker not in state.config.brokers:
        return []
    try:
        steps = let_go_steps(state, action.broker)
    except ActionNotEnabled:
        return []
    probe = state
    for s in steps:
        probe = step(probe, s)
    return steps if steps and why_not_enabled(probe, action) is None else []


def rebase(trace: Sequence[Any], keep: Sequence[bool], config: Config,
           sent: Optional[Sequence[tuple]] = None, lenient: bool = False) -> Optional[tuple]:
    """The steps of ``trace`` flagged in ``keep``, re-based as the module says.

    None when a kept step names a message whose send was removed, or is not
    enabled where the shorter trace reaches. ``lenient`` leaves such a step out
    instead (and a ReplicateMetadata applies at most what is pending): how a trace
    is carried over to another configuration. ``config`` must include the run's
    variants; ``sent`` is ``sends(trace, config)`` when already known (from the
    configuration the trace ran in). A step's messages map to the ones of their
    class and sender its new run sends; a step not enabled whose messages an
    earlier step already sent (under another profile) is left out, and its
    messages map to those (``_claim``); a shrink not enabled yet waits for the
    moment the clock lets it, a controlled shutdown for the brokers it waits for
    (``_waits_for``)."""
    if len(keep) != len(trace):
        raise ValueError(f"keep has {len(keep)} flags for a trace of {len(trace)} steps")
    return reorder(trace, [i for i, kept in enumerate(keep) if kept], config, sent, lenient)


def reorder(trace: Sequence[Any], order: Sequence[int], config: Config,
            sent: Optional[Sequence[tuple]] = None, lenient: bool = False) -> Optional[tuple]:
    """The steps of ``trace`` at the indices ``order``, in that order, re-based as
    the module says; None, ``lenient`` and ``sent`` as in ``rebase``. A delivery
    moved before its message's send is a delivery whose send is gone."""
    sent = sends(trace, config) if sent is None else sent
    state = initial_state(config)
    ids: dict[int, int] = {}  # message id in the original run -> id in the new one
    extra: list[int] = []     # messages of the new run no original send maps to
    out: list = []
    for index in order:
        action, own = trace[index], sent[index]
        if hasattr(action, "msg"):
            if action.msg not in ids:
                if lenient:
                    continue
                return None
            action = attrs.evolve(action, msg=ids[action.msg])
        if isinstance(action, Produce):
            action = Produce(action.broker, state.history.next_value)
        if lenient and isinstance(action, ReplicateMetadata) and action.broker in state.config.brokers:
            action = ReplicateMetadata(action.broker, min(action.count, state.pending_metadata(action.broker)))
        new_id = state.network.next_id
        try:
            state = apply(state, action)
        except ActionNotEnabled:
            waits = _waits_for(state, action)
            if not waits:
                if own and _claim(own, extra, state, ids) or lenient:
                    continue
                return None
            out.extend(waits)
            for wait in waits:
                state = step(state, wait)
            new_id = state.network.next_id   # the action's messages, not the waits'
            state = step(state, action)
        new = list(range(new_id, state.network.next_id))
        for old in own:
            match = next((i for i in new if _preference(state.network.get(i), old)), None)
            if match is not None:
                ids[old.id] = match
                new.remove(match)
        extra.extend(new)
        out.append(action)
    return tuple(out)


#: Steps moved only in traces up to this long: there are (n - 1)^2 orders with one
#: step moved, each replayed, so on longer traces (shrinking cut short) the time
#: goes to removing steps instead.
MOVE_MAX_STEPS = 30


def moves(n: int) -> Iterator[list[int]]:
    """Every order of ``n`` steps with one step moved elsewhere, as index lists:
    each step later first (nearest first), then earlier; each order once."""
    for i in range(n):
        rest = [k for k in range(n) if k != i]
        for j in [*range(i + 1, n), *range(i - 2, -1, -1)]:  # i -> i - 1 is the swap i - 1 -> i
            yield rest[:j] + [i] + rest[j:]


# ------------------------------------------------------- smaller configurations

def rename_brokers(action: Any, names: Mapping[int, int]) -> Optional[Any]:
    """``action`` with every broker id it names (``model.ActionKind.broker_fields``)
    mapped through ``names`` (a tuple of them, a reassignment target, loses the
    brokers ``names`` lacks); None when it names a broker ``names`` lacks, or a
    target is left empty."""
    changes = {}
    for field in kind_of(action).broker_fields:
        value = getattr(action, field)
        if isinstance(value, tuple):
            value = tuple(names[b] for b in value if b in names)
            if not value:
                return None
        elif value not in names:
            return None
        else:
            value = names[value]
        changes[field] = value
    return attrs.evolve(action, **changes) if changes else action


@attrs.frozen
class Smaller:
    """A simpler configuration to try: ``config``, and ``names``, the new id of
    each broker of the old configuration that it keeps."""

    config: Config
    names: Mapping[int, int]
    change: str  # what was simplified, for the reader


def smaller_configs(config: Config) -> Iterator[Smaller]:
    """The configurations one simplification below ``config``, simplest first:
    without one broker (above MIN_BROKERS; its replica goes too, and MinISR is
    capped by the new replication factor), without one replica (the broker
    stays; tried with the broker left out of every step, then kept as a target of
    reassignments), MinISR one lower, unclean recovery "none", no unclean leader election.
    The remaining brokers are renamed in order to 1..n, like the configurations
    the machine draws, when ``config``'s brokers are named so."""
    same = {b: b for b in config.brokers}
    numbered = tuple(sorted(config.brokers)) == tuple(range(1, len(config.brokers) + 1))
    if len(config.brokers) > MIN_BROKERS:
        for gone in reversed(config.brokers):
            assignment = tuple(b for b in config.assignment if b != gone)
            if not assignment:
                continue
            kept = [b for b in config.brokers if b != gone]
            names = {b: i for i, b in enumerate(sorted(kept), 1)} if numbered else {b: b for b in kept}
            yield Smaller(attrs.evolve(config, brokers=tuple(names[b] for b in kept),
                                       assignment=tuple(names[b] for b in assignment),
                                       min_isr=min(config.min_isr, len(assignment))),
                          names, f"without broker {gone}")
    if len(config.assignment) > 1:
        for gone in reversed(config.assignment):
            assignment = tuple(b for b in config.assignment if b != gone)
            smaller = attrs.evolve(config, assignment=assignment, min_isr=min(config.min_isr, len(assignment)))
            # First the broker leaves the story: the steps naming it go, and so does
            # it from every reassignment target (a target [1, 3] that removed replica 2
            # becomes [1], still a removal). Then the broker stays and may be
            # reassigned in: a target keeps it.
            yield Smaller(smaller, {b: b for b in config.brokers if b != gone}, f"without replica {gone}")
            yield Smaller(smaller, same, f"without replica {gone}, broker {gone} kept for reassignments")
    if config.min_isr > 1:
        yield Smaller(attrs.evolve(config, min_isr=config.min_isr - 1), same, f"MinISR {config.min_isr - 1}")
    if config.unclean_recovery != "none":
        yield Smaller(attrs.evolve(config, unclean_recovery="none"), same, 'unclean recovery "none"')
    if config.unclean_leader_election:
        yield Smaller(attrs.evolve(config, unclean_leader_election=False), same, "no unclean leader election")


def carry_over(trace: Sequence[Any], config: Config, smaller: Smaller,
               sent: Optional[Sequence[tuple]] = None, order: Optional[Sequence[int]] = None) -> tuple:
    """``trace`` (run in ``config``) carried over to ``smaller.config``: brokers
    renamed, and the steps left out that name a broker it lacks, are not enabled
    there, or deliver a message whose send was left out. ``sent`` is
    ``sends(trace, config)`` when already known; ``order`` (indices into
    ``trace``, default all in turn) takes the steps in another order."""
    renamed = [rename_brokers(a, smaller.names) for a in trace]
    sent = sends(trace, config) if sent is None else sent
    order = range(len(trace)) if order is None else order
    carried = reorder([r if r is not None else a for r, a in zip(renamed, trace)],
                      [i for i in order if renamed[i] is not None], smaller.config, sent, lenient=True)
    assert carried is not None  # a lenient rebase leaves steps out instead
    return carried


@attrs.frozen
class _Failure:
    """The failure a reduction keeps: ``result`` is the original trace's replay,
    ``props`` the properties of which one must still fail. ``tried`` remembers
    each candidate's answer: the reduction's passes meet the same candidate
    again (three times in four, on a 22-step trace), and a replay is
    deterministic."""

    result: ReplayResult
    props: frozenset[str]
    subject: Subject
    #: The subject of a candidate's first, cheaper replay: only the failure's own
    #: properties checked (none for a disagreement). A candidate that does not fail
    #: so there cannot fail so with every property checked (the same states, fewer
    #: checks); one that does is replayed again in full.
    screen: Subject = attrs.field(init=False, eq=False, repr=False)
    tried: dict = attrs.field(factory=dict, eq=False, repr=False)

    @screen.default
    def _screen(self) -> Subject:
        return attrs.evolve(self.subject, only_properties=self.props if self.result.violations else frozenset())

    @classmethod
    def of(cls, trace: Sequence[Any], subject: Subject, max_seconds: float, prop: Optional[str]) -> "_Failure":
        if not max_seconds > 0:
            raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
        result = replay(trace, subject)
        if not result.failed:
            raise ValueError(f"the trace of {len(trace)} steps does not fail; nothing to reduce")
        props = frozenset(result.property_names) if prop is None else frozenset({prop})
        if result.violations and not props & set(result.property_names):
            raise ValueError(f"the trace breaks {', '.join(result.property_names)}, not {prop}")
        return cls(result, props, subject)

    def reproduced(self, candidate: Optional[tuple], config: Config) -> Optional[tuple]:
        """``candidate`` up to its failing step when it fails in ``config`` (which
        includes the variants) as the original did; None otherwise."""
        if candidate is None:
            return None
        key = (candidate, config)
        if key not in self.tried:
            self.tried[key] = self._reproduced(candidate, config)
        return self.tried[key]

    def _reproduced(self, candidate: tuple, config: Config) -> Optional[tuple]:
        try:
            if not self._same(replay(candidate, self.screen.with_config(config))):
                return None   # most candidates: the properties' checks were half a replay's cost
            result = replay(candidate, self.subject.with_config(config))
        except TraceNotEnabled:
            return None
        return result.trace if self._same(result) else None

    def _same(self, result: ReplayResult) -> bool:
        """Whether ``result`` fails as the original did."""
        if not result.failed:
            return False
        if self.result.violations:
            return bool(result.violations) and bool(set(result.property_names) & self.props)
        return result.kind == self.result.kind


def _expanded(best: tuple, config: Config, failure: _Failure) -> tuple:
    """``best`` with its healing phases expanded (``model.healing.expand``; a liveness
    failure's own kept), when it fails so, up to its failing step; else ``best``.
    A healing phase is one step of a hundred actions or more, replayed in every
    candidate that keeps it: expanded, ddmin takes away the actions the failure
    does not need (a safety failure found during a heal: half of the
    reduction's time went to replaying heals before)."""
    if not any(isinstance(a, Heal) for a in best):
        return best
    try:
        expanded = expand(best, config, keep_last=failure.result.kind == "liveness")
    except ActionNotEnabled:
        return best
    found = failure.reproduced(expanded, config)
    return found if found is not None else best


def _ddmin(best: tuple, config: Config, failure: _Failure, deadline: float) -> tuple:
    """Delta debugging over ``best`` (a failing trace in ``config``) until it is
    1-minimal or ``deadline`` (time.monotonic()) passes."""
    chunks = 2
    while len(best) > 1 and time.monotonic() < deadline:
        size = max(1, len(best) // chunks)
        reduced = False
        start = 0
        sent = sends(best, config)  # the message ids of ``best``'s steps, for every candidate of it
        while start < len(best) and time.monotonic() < deadline:
            keep = [not start <= i < start + size for i in range(len(best))]
            shorter = failure.reproduced(rebase(best, keep, config, sent, lenient=True), config)
            # a removed wait may come back before a shrink (``_waits_for``): only shorter counts
            if shorter is not None and len(shorter) < len(best):
                best, reduced = shorter, True
                sent = sends(best, config)
            else:
                start += size
        if reduced:
            chunks = max(chunks - 1, 2)
        elif size == 1:
            break  # 1-minimal: no single step can go
        else:
            chunks = min(chunks * 2, len(best))
    return best


def _moved(best: tuple, config: Config, failure: _Failure, deadline: float) -> Optional[tuple]:
    """A trace shorter than ``best`` that fails in ``config`` as ``failure`` does:
    ``best`` with one step moved (``moves``), then reduced by ``_ddmin``; None when
    no move leads to one, ``deadline`` passes, or ``best`` is longer than
    MOVE_MAX_STEPS. Few moves keep a trace failing, so the reductions tried are few."""
    if len(best) > MOVE_MAX_STEPS:
        return None
    sent = sends(best, config)
    for order in moves(len(best)):
        if time.monotonic() >= deadline:
            return None
        moved = failure.reproduced(reorder(best, order, config, sent, lenient=True), config)
        if moved is None:
            continue
        shorter = _ddmin(moved, config, failure, deadline)
        if len(shorter) < len(best):
            return shorter
    return None


def merges(trace: Sequence[Any]) -> Iterator[tuple[tuple, list[bool]]]:
    """Each two catch-ups of one broker's metadata (``ReplicateMetadata(b, m)``, then
    the next ``ReplicateMetadata(b, n)``) made one, as (trace, keep flags for
    ``rebase``): the earlier applying m + n and the later gone, then the later
    applying m + n and the earlier gone. A broker that catches up in pieces needs
    none of them alone, often: ddmin cannot see that, since each piece removed
    leaves the records it applied pending. Two waits (``AdvanceTime``, one after
    the other in the trace) likewise: either removed leaves the clock short."""
    last: dict[object, int] = {}
    for j, action in enumerate(trace):
        if isinstance(action, ReplicateMetadata):
            key: object = action.broker
        elif isinstance(action, AdvanceTime):
            key = AdvanceTime   # two waits are one as long (Rule.REPLICA_LAG_TIME)
        else:
            continue
        i = last.get(key)
        last[key] = j
        if i is None:
            continue
        merged = (ReplicateMetadata(action.broker, trace[i].count + action.count)
                  if isinstance(action, ReplicateMetadata) else AdvanceTime(trace[i].ms + action.ms))
        for at, gone in ((i, j), (j, i)):
            yield (*trace[:at], merged, *trace[at + 1:]), [k != gone for k in range(len(trace))]


def _merged(best: tuple, config: Config, failure: _Failure, deadline: float) -> Optional[tuple]:
    """A trace shorter than ``best`` that fails in ``config`` as ``failure`` does:
    ``best`` with two catch-ups merged (``merges``), then reduced by ``_ddmin``;
    None when no merge fails so or ``deadline`` passes."""
    sent = sends(best, config)
    for merged, keep in merges(best):
        if time.monotonic() >= deadline:
            return None
        shorter = failure.reproduced(rebase(merged, keep, config, sent, lenient=True), config)
        if shorter is not None and len(shorter) < len(best):
            return _ddmin(shorter, config, failure, deadline)
    return None


def _shorter(best: tuple, config: Config, failure: _Failure, deadline: float) -> Optional[tuple]:
    """``_merged``, else ``_moved``: a shorter trace than ``best`` in ``config``, or None."""
    shorter = _merged(best, config, failure, deadline)
    return shorter if shorter is not None else _moved(best, config, failure, deadline)


def _reduce_within(best: tuple, config: Config, failure: _Failure, deadline: float) -> tuple:
    """``_ddmin``, then ``_shorter`` while it shortens the trace and time allows."""
    best = _ddmin(best, config, failure, deadline)
    while time.monotonic() < deadline:
        shorter = _shorter(best, config, failure, deadline)
        if shorter is None:
            break
        best = shorter
    return best


def reduce_trace(trace: Sequence[Any], subject: Subject, max_seconds: float = 60.0,
                 prop: Optional[str] = None) -> tuple:
    """The shortest trace found, in ``subject.config``, that still fails as
    ``trace`` does, and ends at the failing step.

    ``trace`` and ``subject`` are what ``check.replay.replay`` takes (the subject
    with the trace's config). "Fails as ``trace`` does" means:
    - for a property violation, at least one of the same properties fails (``prop``
      when given: a corpus row's property);
    - otherwise, the failure is of the same kind (the SUT differs, or a harness error).

    Stops after ``max_seconds`` and returns the best trace so far. When time
    allows, no single step of the result can go, nor can any after two catch-ups
    of a broker's metadata are merged or one step is moved.

    Raises ValueError when ``trace`` does not fail (or does not break ``prop``) or
    ``max_seconds`` is not positive, and TraceNotEnabled when a step of it is not
    enabled.
    """
    failure = _Failure.of(trace, subject, max_seconds, prop)
    config = failure.result.config
    best = _reduce_within(_expanded(failure.result.trace, config, failure), config, failure,
                          time.monotonic() + max_seconds)
    return best if len(best) <= len(failure.result.trace) else failure.result.trace  # expanded, out of time


@attrs.frozen
class Reduced:
    """A reduced counterexample: ``trace`` fails in ``config`` (which includes the
    run's variants) as the original did. ``changes`` lists the simplifications of
    the configuration, in the order they were made (empty: the original one)."""

    trace: tuple
    config: Config
    changes: tuple[str, ...] = ()


def reduce_counterexample(trace: Sequence[Any], subject: Subject, max_seconds: float = 60.0,
                          prop: Optional[str] = None) -> Reduced:
    """``reduce_trace``, then smaller configurations (``smaller_configs``): the
    first one the trace, carried over, still fails in is kept, and the trace is
    reduced again there, until no simplification fails or time is up.

    Arguments, the failure kept, the time limit and the errors raised are those
    of ``reduce_trace``. The trace never grows: a carried-over trace only loses
    steps. Broker ids in the result are those of the smaller configuration.
    """
    failure = _Failure.of(trace, subject, max_seconds, prop)
    deadline = time.monotonic() + max_seconds
    config = failure.result.config
    best = _ddmin(_expanded(failure.result.trace, config, failure), config, failure, deadline)
    changes: list[str] = []
    while time.monotonic() < deadline:
        simpler = _simpler(best, config, failure, deadline)
        if simpler is not None:
            smaller, carried = simpler
            config, best = smaller.config, _ddmin(carried, smaller.config, failure, deadline)
            changes.append(smaller.change)
            continue
        # No simpler configuration fails: try merging catch-ups, then reordering, in this one.
        shorter = _shorter(best, config, failure, deadline)
        if shorter is None:
            break
        best = shorter
    if len(best) > len(failure.result.trace):   # its healing phases expanded, and time ran out
        return Reduced(failure.result.trace, failure.result.config)
    return Reduced(best, config, tuple(changes))


def _simpler(best: tuple, config: Config, failure: _Failure, deadline: float) -> Optional[tuple[Smaller, tuple]]:
    """The first simpler configuration (``smaller_configs``) that ``best``, carried
    over, fails in as ``failure`` does, with that trace. When none does, ``best``
    with one step moved (``moves``) and then carried over counts too: the order a
    smaller cluster needs may differ (on two replicas a write before an ISR shrink
    is committed at once, and the expansion that raced with it is refused; only
    up to MOVE_MAX_STEPS steps). None when nothing fails or ``deadline`` passes."""
    sent = sends(best, config)  # the message ids of ``best``'s steps, for every candidate configuration
    simpler = list(smaller_configs(config))
    for order in [None, *(moves(len(best)) if len(best) <= MOVE_MAX_STEPS else ())]:
        for smaller in simpler:
            if time.monotonic() >= deadline:
                return None
            reproduced = failure.reproduced(carry_over(best, config, smaller, sent, order), smaller.config)
            if reproduced is not None:
                return smaller, reproduced
    return None
