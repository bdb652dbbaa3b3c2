"""Shared helpers of the SUT tests: a field-by-field diff of two model states,
the harness's lockstep of the model and the SUT set up for them, and the
``model.step`` drop-in that mirrors scenario tests on the SUT."""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

import attrs

import model
from model import ActionNotEnabled, ClusterState, Config
from check.describe import diff as report_diff
from check.lockstep import LockStep
from check.subject import Subject
from check.verdict import Verdict


def diff(sut_state: object, model_state: object, limit: int = 12) -> list[str]:
    """``check.describe.diff`` with the SUT's state first, as these tests hold them."""
    return report_diff(model_state, sut_state, limit)


class Divergence(AssertionError):
    pass


def lockstep(config: Config, bugs: Iterable = frozenset(), implementation=None) -> LockStep:
    """The harness's lockstep of the model and a SUT ``Cluster`` with ``bugs`` (or
    the implementation ``implementation`` builds from the config), comparing the
    implementation only: the properties and the automatic enablement probes are
    the machine's business, the SUT tests probe their own candidates
    (``LockStep.probe``)."""
    return LockStep(Subject.at(config, bugs=bugs, implementation=implementation, compare=True, check_properties=False),
                    probes=False)


def expect_agreement(verdict: Optional[Verdict], headline: str = "") -> None:
    """Raises ``Divergence`` with the verdict's report when there is one."""
    if verdict is not None:
        raise Divergence((headline + "\n" if headline else "") + verdict.text)


def probe_actions(state: ClusterState, rng) -> list:
    """Candidate actions around ``state``, mostly NOT enabled: every action class
    of the registry (``model.ACTIONS``; not the directives) with every combination of its fields'
    candidate values (``_candidate_values``): its own broker (the first of its
    ``broker_fields``) every broker and an unknown one, the brokers it names
    besides every broker, metadata counts out of range, message ids of every
    kind (and ones not in flight), random reassignment targets (some invalid),
    clock steps of 0 ms (never enabled) and 1 ms, MinISR values 0 to
    one past the broker count. A Produce carries the model's
    next value only: which values are valid is the model's bookkeeping, not the
    implementation's. A field with no candidates here is a KeyError naming it."""
    values = _candidate_values(state, rng)
    out: list = []
    for kind in model.ACTIONS:
        if kind.family in model.DIRECTIVE_FAMILIES:   # the check expands a directive; no broker sees it
            continue
        combos: list[dict] = [{}]
        for f in attrs.fields(kind.cls):
            if f.name not in values:
                raise KeyError(f"probe_actions has no candidate values for {kind.name}.{f.name}: add them to "
                               f"_candidate_values")
            own = bool(kind.broker_fields) and f.name == kind.broker_fields[0]
            combos = [dict(c, **{f.name: v}) for c in combos for v in values[f.name](c, own)]
        out += [kind.cls(**c) for c in combos]
    return out


def _candidate_values(state: ClusterState, rng) -> dict[str, Callable[[dict, bool], Sequence]]:
    """Action field name -> its candidate values around ``state``, given the
    fields chosen before it and whether it is the action's own broker."""
    brokers = list(state.config.brokers)
    unknown = max(brokers) + 1
    ids = [m.id for m in state.network.messages] + [0, state.network.next_id]
    targets = [tuple(rng.sample(brokers, rng.randint(0, len(brokers)))) for _ in range(3)] + [
        tuple(state.partition.replicas), (brokers[0], brokers[0]), (unknown,)]

    def broker(chosen: dict, own: bool) -> list:
        return brokers + [unknown] if own else brokers

    def followers(chosen: dict, own: bool) -> list:
        others = tuple(f for f in brokers if f != chosen["leader"])
        return [others, others[:1], brokers, *zip(others, others[1:])]

    def counts(chosen: dict, own: bool) -> list:
        if chosen["broker"] not in brokers:   # an unknown broker has no metadata to apply
            return []
        pending = state.pending_metadata(chosen["broker"])
        return sorted({0, 1, pending, pending + 1})

    return {"broker": broker, "leader": broker, "follower": broker, "followers": followers, "count": counts,
            "lossy": lambda chosen, own: [True, False], "value": lambda chosen, own: [state.history.next_value],
            "msg": lambda chosen, own: ids, "target": lambda chosen, own: targets, "ms": lambda chosen, own: [0, 1],
            "min_isr": lambda chosen, own: list(range(len(brokers) + 2)), "enable": lambda chosen, own: [True, False],
            "enabled": lambda chosen, own: [True, False]}


class MirroredStep:
    """A drop-in for ``model.step`` (and ``model.why_not_enabled``) that mirrors
    every step on the SUT (or the implementation ``implementation`` builds): the
    hook that runs scenario tests written against the model on the SUT too, e.g. ``monkeypatch.setattr(scenario, "step", MirroredStep())``.

    It keeps one ``LockStep`` per model state it has produced (states reached from
    ``initial_state`` through it). Stepping from the newest state of a lockstep
    steps it in place; stepping from an older one forks a lockstep there
    (``LockStep.resumed``), so tests that branch from an old state work. After each step the SUT's outcome and
    observation must equal the model's; a refusal by the model must be a refusal by
    the SUT. States it has not seen (hand-built) are stepped on the model only;
    ``unmirrored`` counts them. A test whose config the implementation cannot be
    compared under (``not_applicable``: a variant, for the SUT) is skipped, saying why.
    """

    def __init__(self, implementation=None, not_applicable=None) -> None:
        self.implementation = implementation   # a factory Config -> implementation (None: the bundled SUT)
        # config -> why the implementation cannot be compared under it (None: it can)
        self.not_applicable = not_applicable or (
            lambda config: "the SUT implements the correct protocol: no variant" if config.variants else None)
        # state -> (a lockstep that reached it, the trace that did); the lockstep may
        # have stepped on since (linear tests step in place)
        self.locksteps: dict[ClusterState, tuple[LockStep, tuple]] = {}
        self.steps = self.refusals = self.unmirrored = 0

    def _lockstep_for(self, state: ClusterState) -> Optional[LockStep]:
        """A lockstep at ``state``: the one that reached it, or one resumed there
        when that one stepped on."""
        found = self.locksteps.get(state)
        if found is None and (why := self.not_applicable(state.config)) is not None:
            import pytest
            pytest.skip(f"not mirrored: {why}")
        if found is None and state == model.initial_state(state.config):
            found = self.locksteps[state] = (lockstep(state.config, implementation=self.implementation), ())
        if found is None:
            return None
        ls, trace = found
        if len(ls.trace) != len(trace):
            ls = ls.resumed(state, trace, ls.detached)
            self.locksteps[state] = (ls, trace)
        return ls

    def why_not_enabled(self, state: ClusterState, action: object) -> Optional[str]:
        found = self._lockstep_for(state)
        if found is not None:
            expect_agreement(found.probe([action]))
        return model.why_not_enabled(state, action)

    def __call__(self, state: ClusterState, action: object) -> ClusterState:
        found = self._lockstep_for(state)
        if found is None:
            self.unmirrored += 1
            return model.step(state, action)
        try:
            verdict = found.step(action)   # a refused action leaves the lockstep as it was
        except ActionNotEnabled:
            expect_agreement(found.probe([action]))
            self.refusals += 1
            raise
        expect_agreement(verdict)
        self.locksteps[found.state] = (found, tuple(found.trace))
        self.steps += 1
        return found.state
