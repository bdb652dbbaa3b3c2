"""The one lockstep check: the reference model and an implementation under test
take the same actions, and after every step, in one fixed order:

1. the model takes the action (``model.step``; a refusal is the caller's to
   handle, as ``ActionNotEnabled``), any other model exception is a harness error;
2. every property (``properties.check_all``) is checked on the model state;
3. the implementation takes the action: refusing it, or raising, is a failure;
4. its outcome (``model.Outcome``: produce responses, records consumed, the
   ListOffsets answer, the messages sent) must equal the model's;
5. its observable projection (``model.Observation``) must equal the model's;
6. it must agree with the model on the enablement of the probe actions (an
   implementation that would take a forbidden step is caught before it takes it).

An implementation is any object built from a ``model.Config`` with
``apply(action) -> model.Outcome`` (raising ``model.ActionNotEnabled`` when the
action is not enabled), ``is_enabled(action) -> bool`` and ``observe() ->
model.Observation``; it keeps no ghost history (that is the model's).

Each step returns ``None`` or a ``Verdict``: a value saying what failed, with the
report a Kafka engineer reads, the signature template the corpus dedups on, the
model state and the trace. The machine, replay, reduction, the corpus and the
test helpers all check through ``LockStep``; nothing else compares the model with
an implementation.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, Iterable, Optional, Sequence

import attrs

import properties
from model import (Action, ActionNotEnabled, AlterClusterMinIsr, AlterMinIsr, ElectPreferredLeader, FailOverController, FailOverFromSnapshot, ResendRegistration, AlterPartitionRequest, AlterPartitionResponse,
                   AlterUncleanLeaderElection, UpdateElrFeature, BeginControlledShutdown, BrokerStatus, CancelReassignment, ClusterState, Config, Consume,
                   FenceBroker, FetchRequest, FetchResponse, Flush, WriteEpochCheckpoint, Heal, ListOffsets, Observation, Outcome, Produce,
                   ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, Rule, SendFetch,
                   StartBroker, UncleanLeaderElection, UncleanRecovery, UnfenceBroker, initial_state, observe, outcome,
                   step, why_not_enabled)
from model.healing import expand, schedule
from properties.liveness import check_liveness

from .describe import diff
from .implementations import factory
from .subject import Subject
from .verdict import (Verdict, divergence_verdict, error_verdict, liveness_verdict, property_verdict,
                      refusal_verdict)

# ------------------------------------------------------------------ enablement probes

def probe_actions(state: ClusterState) -> list[Action]:
    """Actions whose enablement the model's guards decide for the implementation to
    agree on: per broker the lifecycle (restarts, fencing, a flush) and client
    actions (controlled shutdown's start included), per replica its ISR proposals (a leader's to every other broker, a
    follower's to its leader: the implementation must refuse those; under
    Rule.SHRINK_ALL_OUT_OF_SYNC a leader's shrinks of every pair of followers and
    of all of them at once), the delivery of a message to a broker that is not
    running, the topic configs the model refuses (the MinISR in force, one past the
    target replicas, unclean leader election as it is), and the controller-level
    recoveries and elections (preferred-leader election included) and reads. An action the model enables is checked when a run draws
    it (the implementation must then take it); the probes look for what the
    implementation would take and the model refuses, at the cost of a guard each,
    so the cases a run never draws are probed and the rest is not."""
    brokers = state.config.brokers
    many = state.config.follows(Rule.SHRINK_ALL_OUT_OF_SYNC)
    out: list[Action] = []
    for b in brokers:
        out += [StartBroker(b), UnfenceBroker(b), FenceBroker(b), BeginControlledShutdown(b), Flush(b), WriteEpochCheckpoint(b), SendFetch(b),
                Produce(b, state.history.next_value), ResendRegistration(b)]
        replica = state.broker(b).replica
        if replica is None:
            continue
        if replica.role.value == "leader":
            others = [f for f in brokers if f != b]
            out += [ProposeIsrExpand(b, f) for f in others]
            out += [ProposeIsrShrink(b, f) for f in others]
            if many:
                out += [ProposeIsrShrinkMany(b, pair) for pair in itertools.combinations(others, 2)]
                out += [ProposeIsrShrinkMany(b, tuple(others))] if len(others) > 2 else []
        elif replica.leader in brokers:
            out += [ProposeIsrExpand(b, replica.leader), ProposeIsrShrink(b, replica.leader)]
    running = {b.id for b in state.brokers if b.status is BrokerStatus.RUNNING}
    out += [_RECEIVE[type(m)](m.id) for m in state.network.messages if getattr(m, "dst", None) not in running
            and not isinstance(m, AlterPartitionRequest)]
    out += [AlterMinIsr(state.min_isr), AlterMinIsr(len(state.partition.target_replicas) + 1),
            AlterClusterMinIsr(len(state.partition.target_replicas) + 1),
            AlterUncleanLeaderElection(state.unclean_leader_election), UpdateElrFeature(state.elr_enabled)]
    out += [UncleanRecovery(), UncleanLeaderElection(), ElectPreferredLeader(), CancelReassignment(), Consume(),
            ListOffsets(), FailOverController(), FailOverFromSnapshot()]
    return out


#: The action delivering a message of each kind.
_RECEIVE = {FetchRequest: ReceiveFetchRequest, FetchResponse: ReceiveFetchResponse,
            AlterPartitionRequest: ReceiveAlterPartition, AlterPartitionResponse: ReceiveAlterPartitionResponse}


def enablement_disagreements(state: ClusterState, implementation: Any,
                             actions: Optional[Iterable[Action]] = None) -> tuple[str, ...]:
    """The actions (default ``probe_actions``) on whose enablement the
    implementation and the model disagree. It must refuse what the model refuses,
    and accept what it accepts: an implementation that enables a step the protocol
    forbids (say, an ISR expansion before the LESO) shows no state difference until
    it takes that step, which a run drawing only the model's enabled actions never
    would."""
    out = []
    for action in probe_actions(state) if actions is None else actions:
        model_ok = why_not_enabled(state, action) is None
        if implementation.is_enabled(action) != model_ok:
            out.append(f"enablement of {action!r}: model={'enabled' if model_ok else 'refused'} "
                       f"sut={'refused' if model_ok else 'enabled'}")
    return tuple(out)


def replay_into(implementation: Any, config: Config, trace: Sequence[Action]) -> None:
    """``implementation`` takes ``trace``'s actions from ``config``'s initial state
    (``apply`` only, nothing compared), a ``Heal`` as the actions of its healing
    schedule (``model.healing.expand``)."""
    for action in expand(trace, config):
        implementation.apply(action)


# ---------------------------------------------------------------------- the check

class LockStep:
    """The model and the implementation ``subject`` names (``check.implementations.
    factory``: none when the subject compares none), taking the same actions from
    the initial state of ``subject.config`` (ValueError when it has none).

    ``step(action)`` applies the action to both and checks (see the module doc);
    ``check()`` checks the current state (the initial one, say); ``probe(actions)``
    checks that the implementation agrees on the enablement of ``actions``. Each
    returns None or the ``Verdict``; after a verdict the lockstep is spent
    (stepping it further is undefined). ``resumed`` branches it from a state it
    reached.

    probes: check the enablement of ``probe_actions`` after every step (the
    machine does; the default). The subject's ``check_properties`` (off for an
    implementation whose profile has known findings, or for tests that compare the
    implementation only) and ``detach_at_findings`` (a property failing, or a
    liveness goal after healing, is not a verdict: the implementation is detached
    there, ``detached`` names the failed properties, and the model goes on alone — once the model shows a finding,
    what follows is the finding's consequence, not a new disagreement to look
    for) decide what a property failure does. A state already checked is not
    checked again.
    """

    def __init__(self, subject: Subject, probes: bool = True) -> None:
        if subject.config is None:
            raise ValueError("a lockstep needs a subject with a config (Subject.at(config))")
        self.subject = subject
        self.config: Config = subject.config
        self.state: ClusterState = initial_state(self.config)
        self.trace: list[Action] = []
        self._factory = factory(subject)
        self.implementation = None if self._factory is None else self._factory(self.config)
        self.probes = probes
        self.check_properties = subject.check_properties
        #: the properties whose failure detached the implementation (empty: attached)
        self.detached: tuple[str, ...] = ()
        #: the signature of the known disagreement that detached it (``Subject.known``)
        self.known_met: tuple[str, ...] = ()
        self._checked: Optional[ClusterState] = None
        #: The implementation's outcome and observation of the last step (None when
        #: it did not give them in that step): what replay's timeline records.
        self.last_outcome: Optional[Outcome] = None
        self.last_observed: Optional[Observation] = None

    def resumed(self, state: ClusterState, trace: Iterable[Action], detached: tuple[str, ...] = (),
                known_met: tuple[str, ...] = ()) -> "LockStep":
        """A new lockstep of this one's subject at ``state``, which this lockstep
        reached (and checked) by ``trace`` from the initial state, say earlier in
        its run: the implementation is built again and takes the trace's actions
        (``apply`` only, nothing compared: they were, on the way there).
        ``detached``, ``known_met``: the findings and known disagreements it was
        detached at by then (the implementation is then left out). No deep copy:
        cheap when the implementation is large, and possible when it cannot be
        copied (Kafka's ``Partition`` over its files)."""
        other = copy.copy(self)
        other.state, other.trace, other._checked = state, list(trace), state
        other.last_outcome = other.last_observed = None
        other.detached, other.known_met = detached, known_met
        other.check_properties = self.subject.check_properties and not detached
        other.implementation = None
        if not (detached or known_met) and self._factory is not None:
            other.implementation = self._factory(self.config)
            replay_into(other.implementation, self.config, other.trace)
        return other

    @property
    def compares(self) -> bool:
        """Whether an implementation is compared with the model (until detached)."""
        return self._factory is not None

    def probe(self, actions: Iterable[Action]) -> Optional[Verdict]:
        """An enablement verdict when the implementation and the model disagree on
        whether any of ``actions`` is enabled in the current state, else None."""
        if self.implementation is None:
            return None
        disagreements = enablement_disagreements(self.state, self.implementation, actions)
        if not disagreements:
            return None
        return self._unless_known(divergence_verdict(self.state, None, tuple(self.trace), disagreements,
                                                      "enablement"))

    def step(self, action: Action) -> Optional[Verdict]:
        """Apply ``action`` to the model (raises ActionNotEnabled as ``model.step``
        does, the lockstep unchanged) and the implementation, then check. The
        directive ``Heal`` runs the healing phase (``_heal``)."""
        if isinstance(action, Heal):
            return self._heal()
        before = self.state
        self.last_outcome = self.last_observed = None   # until this step's implementation gives them
        try:
            new_state = step(before, action)
        except ActionNotEnabled:
            raise
        except Exception as e:  # a model crash is a harness error of this step
            self.trace.append(action)
            return error_verdict(before, tuple(self.trace), e)
        self.trace.append(action)
        return self._advance(before, new_state, action)

    def _advance(self, before: ClusterState, new_state: ClusterState, action: Action) -> Optional[Verdict]:
        """The model took ``action`` from ``before`` to ``new_state``: check the
        properties, then the implementation taking it."""
        self.state = new_state
        found = self._check_properties()
        if found is not None or self.implementation is None:
            return found
        return self._unless_known(self._apply(before, action))

    def _heal(self) -> Optional[Verdict]:
        """The healing phase (``model.healing.schedule``, computed on the model:
        deterministic), each of its actions taken by the model and the
        implementation and checked as any step; then, unless the run went past a
        finding, the liveness goals (``properties.liveness``). The trace records
        the one directive; a verdict during healing names the round and action."""
        self.trace.append(Heal())
        done: list[tuple[int, Action]] = []
        state = self.state
        try:
            for number, action, after in schedule(state):
                done.append((number, action))
                verdict = self._advance(state, after, action)
                if verdict is not None:
                    return attrs.evolve(verdict, text=f"{verdict.text}\n\nduring healing, round {number}: {action!r}")
                state = after
        except Exception as e:  # a model crash while healing
            return error_verdict(state, tuple(self.trace), e)
        finally:
            self.last_outcome = self.last_observed = None   # the directive has no outcome of its own
        violations = () if self.detached or not self.subject.check_properties else check_liveness(self.state)
        if violations and self.subject.detach_at_findings:
            # a goal the model itself misses, the implementation agreeing at every step: a finding
            self._detach(violations)
            return None
        return liveness_verdict(violations, self.state, tuple(self.trace), tuple(done)) if violations else None

    def _apply(self, before: ClusterState, action: Action) -> Optional[Verdict]:
        """The implementation takes ``action``: its refusal, exception, outcome and
        observation judged against the model's."""
        try:
            got = self.last_outcome = self.implementation.apply(action)
        except ActionNotEnabled as e:
            return refusal_verdict(self.state, tuple(self.trace), action, e.reason)
        except Exception as e:
            return error_verdict(self.state, tuple(self.trace), e, " from the SUT")
        expected = outcome(before, self.state, action)
        if got != expected:
            return divergence_verdict(self.state, None, tuple(self.trace),
                                       tuple(diff(expected, got, root="outcome")), "outcome")
        return self._check_implementation()

    def _unless_known(self, verdict: Optional[Verdict]) -> Optional[Verdict]:
        """``verdict``, unless it is a disagreement the subject knows
        (``Subject.known``, by signature): then the implementation is detached
        (``known_met`` names it) and the model goes on alone, its properties
        still checked (this state's were, before the implementation was)."""
        if verdict is None or verdict.signature not in self.subject.known:
            return verdict
        self.known_met += (verdict.signature,)
        self.implementation = None
        return None

    def check(self) -> Optional[Verdict]:
        """Check the current state (properties, then the implementation)."""
        return self._check_properties() or \
            (None if self.implementation is None else self._unless_known(self._check_implementation()))

    def _check_properties(self) -> Optional[Verdict]:
        if self._checked is self.state or not self.check_properties:
            return None
        only = self.subject.only_properties
        violations = properties.check_all(self.state) if only is None else properties.check_some(self.state, only)
        if violations and self.subject.detach_at_findings:
            self._detach(violations)
            return None
        if violations:
            return property_verdict(violations, self.state, tuple(self.trace))
        if self.implementation is None:
            self._checked = self.state
        return None

    def _detach(self, violations: tuple) -> None:
        """A finding under ``detach_at_findings``: the implementation is left out, and
        the properties too, from here on (``detached`` names what failed)."""
        self.detached = tuple(sorted({v.property for v in violations}))
        self.implementation = None
        self.check_properties = False

    def _check_implementation(self) -> Optional[Verdict]:
        if self._checked is self.state:
            return None
        expected, observed = observe(self.state), self.implementation.observe()
        self.last_observed = observed
        if observed != expected:
            return divergence_verdict(self.state, observed, tuple(self.trace),
                                       tuple(diff(expected, observed, root="observed")))
        if self.probes:
            disagreements = enablement_disagreements(self.state, self.implementation)
            if disagreements:
                return divergence_verdict(self.state, observed, tuple(self.trace), disagreements, "enablement")
        self._checked = self.state
        return None
