"""The stateful harness: a Hypothesis RuleBasedStateMachine that drives the
reference model (and the SUT beside it) through interleavings of every action
family, checking every property, the SUT's outcomes and its observation after every step."""

from __future__ import annotations

import time
from typing import Any, Optional

from hypothesis import currently_in_test_context, event, note
from hypothesis.errors import HypothesisException
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from model import (ACTION_TYPES, ACTIONS, DIRECTIVE_FAMILIES, FAMILIES, NO_LEADER, Action, ClusterState, Config, Heal,
                   ControlledShutdown, FenceBroker, Produce, Reassign, ReplicateMetadata, SendFetch, StartBroker,
                   UncleanRecovery, UncleanShutdown, UnfenceBroker, enabled_actions, family_of,
                   why_not_enabled)

from properties import keeps_fault_budget

from .coverage import events_between
from .failures import CheckFailed, failure_for
from .lockstep import LockStep
from .statistics import RunStats
from .strategies import Draws, HypothesisDraws, configs, draw_config
from .subject import Subject
from .verdict import Verdict, error_verdict


#: Actions that send a request without delivering a message: the start of an
#: exchange the machine may carry through (``model.ActionKind.sends``).
EXCHANGE_STARTERS = tuple(k.cls for k in ACTIONS if k.sends and not k.receives)

#: Actions that disturb a healthy partition (``model.ActionKind.fault``): crashes,
#: fencing, reassignments, message loss, and a leader giving up on a slow follower.
FAULTS = tuple(k.cls for k in ACTIONS if k.fault)
MAX_FAULT_SPACING = 24
MAX_WARM_UP = 4
#: The latest rule step an example's healing phase may come at.
MAX_HEAL_AFTER = 120

#: The action families a rule step draws from (the directive's aside).
ACTION_FAMILIES = tuple(f for f in FAMILIES if f not in DIRECTIVE_FAMILIES)
#: The order in which the other families are asked whether a level allows any
#: action: the cheapest to enumerate and most often enabled first.
_LEVEL_PROBES = ("client", "fetch", "metadata", "isr", "recovery", "network", "reassignment", "lifecycle")
#: Enablement levels, in order, until one allows an action: (the fault spacing
#: holds, the swarm holds).
_LEVELS = ((True, True), (False, True), (False, False))

#: Relative weight of an action class among the enabled classes of its family
#: (``model.ActionKind.family_weight``).
RULE_WEIGHTS: dict[type, int] = {k.cls: k.family_weight for k in ACTIONS}

#: Swarm testing: each example scales some class weights by a factor drawn from
#: the class's levels (the first, 1, is where shrinking goes). Leaving a fault out
#: (0) lets the faults kept come more often and combine instead of being diluted
#: by every other kind; emphasising one (4) makes it the example's theme; slow
#: restarts (1/4: start and unfence scaled 1 while the rest of the family is
#: scaled 4) keep a crashed or fenced broker out long enough for more to happen
#: meanwhile. Healthy replication (metadata, fetch, ISR expansion, produce) is
#: never scaled (``model.ActionKind.swarm``).
SWARM_LEVELS: dict[type, tuple[float, ...]] = {k.cls: k.swarm for k in ACTIONS if len(k.swarm) > 1}
SWARM_SCALE = 4  # weights are kept integral: every weight is multiplied by this


def swarm_weights(factors: dict[type, float]) -> dict[type, int]:
    """Every action class's weight in one example: RULE_WEIGHTS (1 when absent)
    times SWARM_SCALE times the class's drawn swarm factor (1 when absent)."""
    return {c: round(RULE_WEIGHTS[c] * SWARM_SCALE * factors.get(c, 1)) for c in ACTION_TYPES}


def catch_up(state: ClusterState, broker: int) -> ReplicateMetadata:
    """``broker`` applies every pending metadata record in one batch."""
    return ReplicateMetadata(broker, state.pending_metadata(broker))


#: A shut-down broker's way back, one phase at a time (see ``ReplicationMachine._restart``).
RESTART_PHASES = (
    lambda s, b: FenceBroker(b),
    lambda s, b: StartBroker(b),
    catch_up,
    lambda s, b: UnfenceBroker(b),
)

#: The coverage event of a run going on past a known disagreement (``Subject.known``),
#: followed by its signature.
KNOWN_EVENT = "known disagreement: "

#: Message class name -> the action delivering it (``model.ActionKind.receives``).
RECEIVERS: dict[str, type] = {k.receives: k.cls for k in ACTIONS if k.receives and k.receives != "any"}


class ReplicationMachine(RuleBasedStateMachine):
    """Model (and the implementation under test beside it) under one drawn Config;
    one rule per action family, each drawing only among the model's enabled
    actions of that family.

    ``subject`` (a ``check.subject.Subject``, set per subclass by ``machine_for``)
    says what is under test: the configurations drawn (its profile, rules,
    variants, unclean leader election; or its fixed config), the implementation
    compared and its SUT bugs, the fault budget, whether the properties are checked
    and whether a property failing detaches the implementation instead of failing
    the run (each detachment is counted as the event ``finding reached:
    <properties>``). ``run_stats`` accumulates what every example did.
    """

    subject: Subject = Subject()
    run_stats: RunStats = RunStats()  # replaced per subclass by machine_for
    #: Whether examples may end in a healing phase (a subclass without, to measure what it costs).
    heals: bool = True

    def __init__(self) -> None:
        super().__init__()
        self.config: Optional[Config] = None
        self.state: Optional[ClusterState] = None
        self.lockstep: Optional[LockStep] = None
        self._enabled_for: Optional[tuple] = None
        self.fault_spacing = 0
        self.weights: dict[type, int] = {}
        self._since_fault = 0
        self._enabled: dict[tuple[bool, bool, str], list[Action]] = {}
        self._level: Optional[int] = None
        self._finding_reported = False
        self._known_reported = 0
        self.heal_after: Optional[int] = None
        self.rule_steps = 0

    # ------------------------------------------------------------------ set-up

    @initialize(data=st.data())
    def setup(self, data: st.DataObject) -> None:
        config = self.subject.config or data.draw(configs(self.subject), label="config")
        self.begin(config, HypothesisDraws(data.draw))

    def draw_config(self, draws: Draws) -> Config:
        """A configuration of this machine's subject (its fixed one, or one drawn)."""
        return self.subject.config or draw_config(draws, self.subject)

    def begin(self, config: Config, draws: Draws) -> None:
        """Start an example under ``config``: the fault spacing, the warm-up writes
        and the swarm are drawn from ``draws``, the warm-up writes applied (the
        initial state checked first)."""
        if type(self).run_stats.started is None:
            type(self).run_stats.started = time.monotonic()
        self.config = config
        # A nemesis schedule: at least this many healthy actions between two faults,
        # so replication makes progress (commits data a fault can then threaten).
        # Shrinks to 0: faults anywhere.
        self.fault_spacing = draws.integer(0, MAX_FAULT_SPACING, "fault spacing")
        warm_up = draws.integer(0, MAX_WARM_UP, "warm-up writes")
        swarm = self._draw_swarm(draws)
        # Healing (liveness): in a share of examples the cluster heals after this
        # many rule steps (the directive Heal; shrinks towards no healing), and
        # each healing draws the next.
        self.rule_steps = 0
        self.heal_after = self._draw_heal(draws, 0)
        if currently_in_test_context():
            note(f"config: {self.config}; fault spacing: {self.fault_spacing}; warm-up writes: {warm_up}; "
                 f"swarm: {', '.join(f'{c.__name__} x{f:g}' for c, f in swarm.items() if f != 1) or 'none'}; "
                 f"heals: {'no' if self.heal_after is None else f'after {self.heal_after} rule steps'}")
        self.lockstep = LockStep(self.subject.with_config(config))
        self.state = self.lockstep.state
        self._check()
        for _ in range(warm_up):
            self._guarded(self._replicate_one_write)

    def _draw_swarm(self, draws: Draws) -> dict[type, float]:
        swarm = {c: draws.choice(levels, f"swarm {c.__name__}") for c, levels in SWARM_LEVELS.items()}
        self.weights = swarm_weights(swarm)
        self._enabled_for = None
        return swarm

    def reswarm(self, draws: Draws) -> None:
        """Draw the fault spacing and the swarm again mid-example: a search that
        branches from a state it reached (``check.explore``) goes on from it
        with another emphasis."""
        self.fault_spacing = draws.integer(0, MAX_FAULT_SPACING, "fault spacing")
        self._draw_swarm(draws)
        # so that the states a search reached are healed too, not only fresh examples'
        self.heal_after = self._draw_heal(draws, self.rule_steps)

    def _draw_heal(self, draws: Draws, now: int) -> Optional[int]:
        """The rule step the example heals at (``now`` + up to MAX_HEAL_AFTER), in a
        share of examples; None: it does not heal."""
        return now + draws.integer(0, MAX_HEAL_AFTER, "heal after") if self.heals and draws.boolean("heals") else None

    def act(self, family: str, draws: Draws) -> None:
        """One rule step of ``family`` (one of ``check.explore.FAMILIES``), its
        choices drawn from ``draws`` (for ``healing``, whether and when the
        example heals again); raises ``CheckFailed`` with the verdict of a failure."""
        self.rule_steps += 1
        self._guarded(lambda: self._do(family, draws))

    def _replicate_one_write(self) -> None:
        """Warm-up: the leader takes a write and every follower fetches it and then
        reports its new fetch offset, so the write is committed and acknowledged —
        data for later faults to threaten. Every action is in the trace."""
        assert self.state is not None and self.config is not None
        leader = self.state.partition.leader
        self._apply(Produce(leader, self.state.history.next_value))
        for _ in range(2):
            for follower in self.state.partition.replicas:
                if follower != leader:
                    self._exchange(SendFetch(follower))

    def _exchange(self, first: Action, hops: int = 2) -> None:
        """Apply ``first`` and deliver up to ``hops`` messages: the one it sends, then
        the reply, while the receiving actions are enabled."""
        sent = self._apply(first)
        for _ in range(hops):
            if sent is None:
                break
            receive = RECEIVERS[type(self.state.network.get(sent)).__name__](sent)  # type: ignore[union-attr]
            if why_not_enabled(self.state, receive) is not None:  # type: ignore[arg-type]
                break
            sent = self._apply(receive)

    # ------------------------------------------------------------ enablement

    def _allowed(self, action: Action, spaced: bool, swarm: bool = True) -> bool:
        assert self.state is not None
        if swarm and self.weights[type(action)] == 0:
            return False
        if spaced and isinstance(action, FAULTS):
            return False
        return keeps_fault_budget(self.state, action, self.subject.lossy_budget)

    def enabled(self, family: str) -> list[Action]:
        """The model's enabled actions of ``family`` allowed by the fault budget and
        the fault spacing; for ``healing``, the directive ``Heal`` once this
        example's healing is due (``heal_after`` rule steps; each healing draws
        the next, as does a search branching from a state, ``reswarm``).

        Levels: when no family has an allowed action, the fault spacing gives way
        (only faults can move on), then the swarm (only left-out classes can). A
        family's actions are computed when asked for, at the state's level: a
        caller that draws a family before its actions (``check.explore``) pays
        for the guards of the families it looks at, not for every family's."""
        if self.state is None:
            return []
        if family in DIRECTIVE_FAMILIES:
            due = self.heal_after is not None and self.rule_steps >= self.heal_after
            return [Heal()] if due else []
        key = (self.state, self._since_fault >= self.fault_spacing)
        if self._enabled_for != key:
            self._enabled, self._enabled_for, self._level = {}, key, None
        if self._level is not None:
            return self._enabled_at(self._level, family)
        for level in range(len(_LEVELS)):
            got = self._enabled_at(level, family)
            if got or any(self._enabled_at(level, f) for f in _LEVEL_PROBES if f != family):
                self._level = level
                return got
        self._level = len(_LEVELS) - 1
        return []

    def _enabled_at(self, level: int, family: str) -> list[Action]:
        """``family``'s allowed actions at an enablement level (``_LEVELS``). Kept by
        what decides them, (spaced, swarm, family): with the spacing already met,
        the first two levels are one, computed once."""
        spacing, swarm = _LEVELS[level]
        spaced = spacing and not self._enabled_for[1]  # type: ignore[index]
        got = self._enabled.get((spaced, swarm, family))
        if got is None:
            classes = frozenset(c for c in FAMILIES[family]
                                if not (swarm and self.weights[c] == 0) and not (spaced and c in FAULTS))
            got = [a for a in enabled_actions(self.state, classes - {ReplicateMetadata})  # type: ignore[arg-type]
                   if self._allowed(a, spaced, swarm)]
            if ReplicateMetadata in classes:
                got += [a for a in self._metadata_batches() if self._allowed(a, spaced, swarm)]
            self._enabled[(spaced, swarm, family)] = got
        return got

    def _metadata_batches(self) -> list[Action]:
        # One batch per broker, everything it has pending, instead of the model's
        # every count: _metadata_batch draws the size itself, and the counts were
        # most of the candidates the guards had to decide at every step.
        assert self.state is not None
        return [a for a in (catch_up(self.state, b) for b in self.state.config.brokers)
                if a.count > 0 and why_not_enabled(self.state, a) is None]

    def _do(self, family: str, draws: Draws) -> None:
        if family in DIRECTIVE_FAMILIES:
            self._apply(Heal())
            # faults may start again after it, and the example heal again later
            self.heal_after = self._draw_heal(draws, self.rule_steps)
            return
        if family == "metadata":
            self._apply(self._metadata_batch(draws))
            return
        action = draws.choice(self._prioritized(self._of_one_class(family, draws)), family)
        # A request may be carried through its exchange in the same rule, so a
        # healthy round trip costs one rule step and deep scenarios stay short:
        # 0 hops leaves the request in flight for any interleaving, 1 handles it and
        # leaves the reply in flight (a follower that has not yet heard the new HWM,
        # a leader whose proposal is pending), 2 completes the round trip.
        if isinstance(action, EXCHANGE_STARTERS):
            self._exchange(action, draws.integer(0, 2, "deliver hops"))
        elif isinstance(action, FenceBroker):
            # A fast leader failover (KAFKA-6361's setting): the broker the controller
            # elects may learn of its election at once and start taking writes.
            leader = self.state.partition.leader  # type: ignore[union-attr]
            self._apply(action)
            new = self.state.partition.leader  # type: ignore[union-attr]
            if new != leader and new != NO_LEADER and draws.boolean("failover at once"):
                self._apply_if_enabled(catch_up(self.state, new))
        elif isinstance(action, (UncleanShutdown, ControlledShutdown)):
            shutdowns = [action]
            if isinstance(action, UncleanShutdown) and draws.boolean("power outage"):
                shutdowns = self._outage(action)
            self._restart(shutdowns, draws.integer(0, len(RESTART_PHASES), "restart phases"))
        elif isinstance(action, Reassign):
            replicas = self.state.partition.replicas  # type: ignore[union-attr]
            self._apply(action)
            # An operator reverting a reassignment at once: the §6.5.4 remove-then-readd
            # when the first one removed a replica and completed. The leader's broker
            # may then apply removal and re-add in one metadata batch (it keeps the
            # replica and its follower state) while the re-added broker has not.
            if draws.boolean("revert at once"):
                self._apply_if_enabled(Reassign(replicas))
                leader = self.state.partition.leader  # type: ignore[union-attr]
                if leader != NO_LEADER and draws.boolean("leader catches up at once"):
                    self._apply_if_enabled(catch_up(self.state, leader))
        else:
            self._apply(action)

    def _of_one_class(self, family: str, draws: Draws) -> list[Action]:
        """The enabled actions of ``family`` of one action class, the class drawn."""
        actions = self.enabled(family)
        by_class: dict[type, list[Action]] = {}
        for a in actions:
            by_class.setdefault(type(a), []).append(a)
        if len(by_class) <= 1:
            return actions
        # Faults are rarer than the healthy path (the example's weights): a class
        # is drawn with probability proportional to its weight, benign (heavier)
        # classes first so shrinking moves towards them. A class left out by the
        # swarm is here only when nothing else can move on: weight it 1.
        classes = sorted(by_class, key=lambda c: -self.weights[c])
        weights = [max(1, self.weights[c]) for c in classes]
        pick = draws.integer(0, sum(weights) - 1, f"{family} action")
        for cls, w in zip(classes, weights):
            if pick < w:
                break
            pick -= w
        return by_class[cls]

    def _restart(self, shutdowns: list[Action], phases: int) -> None:
        """Apply ``shutdowns`` and then up to ``phases`` steps of the brokers' way back
        (RESTART_PHASES), each phase for every broker before the next phase, each
        step only if enabled: a crashed broker misses heartbeats and is fenced, its
        process restarts and registers, catches up with the metadata log and is
        unfenced. One rule step for what a supervisor does, so scenarios that need
        a restart mid-way stay short; every action is traced."""
        for shutdown in shutdowns:
            if isinstance(shutdown, UncleanShutdown) and not self._allowed(shutdown, spaced=False, swarm=False):
                shutdown = UncleanShutdown(shutdown.broker, False)  # the fault budget is spent
            self._apply_if_enabled(shutdown)
        for phase in RESTART_PHASES[:phases]:
            for shutdown in shutdowns:
                self._apply_if_enabled(phase(self.state, shutdown.broker))  # type: ignore[attr-defined]
        if phases == len(RESTART_PHASES) and self.weights[UncleanRecovery]:
            # Back from a crash that left the partition leaderless: the controller runs
            # unclean recovery as soon as its strategy allows (§5.3).
            self._apply_if_enabled(UncleanRecovery())

    def _outage(self, trigger: UncleanShutdown) -> list[Action]:
        """A power outage (the failure KIP-966's ELR is designed for): every replica
        still up crashes, in replica order, each losing its unflushed suffix (``_restart``
        keeps the lossy ones within the fault budget, §6.2), and ``trigger`` with them
        when it is not a replica."""
        assert self.state is not None
        replicas = self.state.partition.replicas
        out: list[Action] = [UncleanShutdown(b, True) for b in replicas
                             if why_not_enabled(self.state, UncleanShutdown(b, True)) is None]
        return out if trigger.broker in replicas else out + [trigger]

    def _apply_if_enabled(self, action: Action) -> None:
        if why_not_enabled(self.state, action) is None and self._allowed(action, spaced=False, swarm=False):  # type: ignore[arg-type]
            self._apply(action)

    def _prioritized(self, actions: list[Action]) -> list[Action]:
        """Actions of one class, the most consequential first and repeated, so they
        are drawn more often and shrinking moves towards them: a reassignment that
        adds or removes one replica, and actions aimed at the leader (its failure
        is what elections and truncation are about)."""
        assert self.state is not None
        leader = self.state.partition.leader
        out: list[Action] = []
        for a in actions:
            if isinstance(a, Reassign) and len(set(a.target) ^ set(self.state.partition.replicas)) == 1:
                out[:0] = [a, a]  # adding or removing one replica: the common reassignment
                continue
            if getattr(a, "broker", None) == leader or getattr(a, "leader", None) == leader:
                out[:0] = [a, a]
                continue
            out.append(a)
        return out

    def _metadata_batch(self, draws: Draws) -> Action:
        """A broker (the leader first, as in ``_prioritized``) and the size of the
        batch it applies: everything pending (brokers usually catch up at once),
        one record (a broker that sees a removal before the re-add, §6.5.4), or
        any count."""
        assert self.state is not None
        brokers = sorted({a.broker for a in self.enabled("metadata")},  # type: ignore[attr-defined]
                         key=lambda b: b != self.state.partition.leader)  # type: ignore[union-attr]
        broker = draws.choice(brokers, "metadata broker")
        pending = self.state.pending_metadata(broker)
        size = draws.choice(("all", "one", "some"), "batch")
        count = pending if size == "all" else 1 if size == "one" else \
            draws.integer(1, pending, "records")
        return ReplicateMetadata(broker, count)

    def _apply(self, action: Action) -> Optional[int]:
        """Apply one action through the lockstep check (the model, every property, the
        SUT), record it and report coverage; raises the failure of a verdict. Returns
        the id of the message it sent, if any."""
        assert self.state is not None and self.lockstep is not None
        before = self.state
        verdict = self.lockstep.step(action)
        self.state = self.lockstep.state
        self._since_fault = 0 if isinstance(action, FAULTS) else self._since_fault + 1
        stats = type(self).run_stats
        stats.steps += 1
        stats.family_counts[family_of(action)] += 1
        stats.action_counts[type(action).__name__] += 1
        names = list(events_between(before, self.state, action))
        if self.lockstep.detached and not self._finding_reported:
            names.append(f"finding reached: {', '.join(self.lockstep.detached)}")
            self._finding_reported = True
        if len(self.lockstep.known_met) > self._known_reported:
            names += [KNOWN_EVENT + s for s in self.lockstep.known_met[self._known_reported:]]
            self._known_reported = len(self.lockstep.known_met)
        # Hypothesis counts an event only inside a test (it raises elsewhere): a
        # machine driven by hand, as some tests do, still counts it here.
        in_test = currently_in_test_context()
        for name in names:
            if in_test:
                event(name)
            stats.event_counts[name] += 1
        if verdict is not None:
            self._fail(verdict)
        return before.network.next_id if self.state.network.next_id > before.network.next_id else None

    @property
    def trace(self) -> list[Action]:
        """Every action taken so far in this example."""
        return [] if self.lockstep is None else self.lockstep.trace

    def _check(self) -> None:
        if self.lockstep is not None and (verdict := self.lockstep.check()) is not None:
            self._fail(verdict)

    def _fail(self, verdict: Verdict) -> None:
        self._note_failure()
        raise failure_for(verdict)

    def _guarded(self, body: Any) -> None:
        """Run a rule's body; an exception of the harness itself becomes a harness
        error verdict (with the state and trace so far), so every failure of a run
        carries a verdict."""
        try:
            body()
        except (CheckFailed, HypothesisException):
            raise
        except Exception as e:
            assert self.state is not None
            self._fail(error_verdict(self.state, tuple(self.trace), e))

    def _note_failure(self) -> None:
        stats = type(self).run_stats
        if stats.first_failure_s is None and stats.started is not None:
            stats.first_failure_s = time.monotonic() - stats.started
            stats.first_failure_examples = stats.examples + 1

    # ------------------------------------------------------------------ rules

    @precondition(lambda self: self.enabled("lifecycle"))
    @rule(data=st.data())
    def lifecycle(self, data: st.DataObject) -> None:
        """Start, unfence, fence, controlled/unclean (lossy or not) shutdown, flush."""
        self.act("lifecycle", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("metadata"))
    @rule(data=st.data())
    def metadata(self, data: st.DataObject) -> None:
        """A broker applies a batch of metadata records (§2.3.2)."""
        self.act("metadata", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("fetch"))
    @rule(data=st.data())
    def fetch(self, data: st.DataObject) -> None:
        """Send a fetch, or deliver a fetch request or response."""
        self.act("fetch", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("isr"))
    @rule(data=st.data())
    def isr(self, data: st.DataObject) -> None:
        """ISR shrink/expand proposals and AlterPartition delivery (§2.9)."""
        self.act("isr", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("reassignment"))
    @rule(data=st.data())
    def reassignment(self, data: st.DataObject) -> None:
        """Start or cancel a reassignment (ch4)."""
        self.act("reassignment", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("recovery"))
    @rule(data=st.data())
    def recovery(self, data: st.DataObject) -> None:
        """Unclean recovery (§5.3) or legacy unclean leader election (ch7)."""
        self.act("recovery", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("network"))
    @rule(data=st.data())
    def network(self, data: st.DataObject) -> None:
        """Drop an in-flight fetch message."""
        self.act("network", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("healing"))
    @rule(data=st.data())
    def healing(self, data: st.DataObject) -> None:
        """Faults stop and the cluster heals; then every liveness goal must hold
        (``model.healing``, ``properties.liveness``)."""
        self.act("healing", HypothesisDraws(data.draw))

    @precondition(lambda self: self.enabled("client"))
    @rule(data=st.data())
    def client(self, data: st.DataObject) -> None:
        """Produce (acks=all), consume, ListOffsets."""
        self.act("client", HypothesisDraws(data.draw))

    def teardown(self) -> None:
        type(self).run_stats.examples += 1

    # -------------------------------------------------------------- invariants

    @invariant()
    def every_property_holds_and_sut_matches_model(self) -> None:
        """Checked after every action (also inside a rule's exchange); this covers
        the initial state."""
        self._check()


def machine_for(subject: Subject = Subject(), name: Optional[str] = None) -> type:
    """A ReplicationMachine subclass for ``subject`` (its own ``run_stats``), named
    ``name`` (default: ``ReplicationMachine_<subject label>``)."""
    label = name or "ReplicationMachine_" + "".join(c if c.isalnum() else "_" for c in subject.label)
    return type(label, (ReplicationMachine,), {"subject": subject, "run_stats": RunStats()})
