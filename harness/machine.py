"""The stateful harness: a Hypothesis RuleBasedStateMachine that drives the
reference model (and the SUT beside it) through interleavings of every action
family, checking every property and the SUT's snapshot after every step."""

from __future__ import annotations

from typing import Optional

from hypothesis import event, note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import properties
from model import (Action, ClusterState, Config, UncleanShutdown, Variant, enabled_actions, family_of,
                   initial_state, step)

from .coverage import events_between
from .failures import PropertyViolated, SutDiverged
from .strategies import configs


class ReplicationMachine(RuleBasedStateMachine):
    """Model (and SUT) under one drawn Config; one rule per action family, each
    drawing only among the model's enabled actions of that family.

    Class attributes select the run: ``variants`` (protocol flaws switched into
    the model), ``bugs`` (SUT bugs), ``compare_sut`` (apply every action to
    ``sut.Cluster`` too and compare snapshots), ``lossy_budget`` (lossy unclean
    shutdowns allowed per run; None: MinISR - 1, the fault budget of §6.2),
    ``unclean_leader_election`` (None: drawn).
    """

    variants: frozenset[Variant] = frozenset()
    bugs: frozenset = frozenset()
    compare_sut: bool = False
    lossy_budget: Optional[int] = None
    unclean_leader_election: Optional[bool] = None

    def __init__(self) -> None:
        super().__init__()
        self.config: Optional[Config] = None
        self.state: Optional[ClusterState] = None
        self.cluster = None
        self.trace: list[Action] = []
        self._enabled_for: Optional[ClusterState] = None
        self._enabled: dict[str, list[Action]] = {}

    # ------------------------------------------------------------------ set-up

    @initialize(data=st.data())
    def setup(self, data: st.DataObject) -> None:
        self.config = data.draw(configs(self.variants, self.unclean_leader_election), label="config")
        note(f"config: {self.config}")
        self.state = initial_state(self.config)
        if self.compare_sut:
            from sut import Cluster  # the SUT is only needed when compared
            self.cluster = Cluster(self.config, bugs=self.bugs)

    # ------------------------------------------------------------ enablement

    def budget(self) -> int:
        assert self.config is not None
        return self.config.min_isr - 1 if self.lossy_budget is None else self.lossy_budget

    def _allowed(self, action: Action) -> bool:
        if isinstance(action, UncleanShutdown) and action.lossy:
            assert self.state is not None
            return self.state.history.lossy_shutdowns < self.budget()
        return True

    def enabled(self, family: str) -> list[Action]:
        """The model's enabled actions of ``family`` allowed by the fault budget."""
        if self.state is None:
            return []
        if self._enabled_for is not self.state:
            by_family: dict[str, list[Action]] = {}
            for a in enabled_actions(self.state):
                if self._allowed(a):
                    by_family.setdefault(family_of(a), []).append(a)
            self._enabled, self._enabled_for = by_family, self.state
        return self._enabled.get(family, [])

    def _do(self, family: str, data: st.DataObject) -> None:
        action = data.draw(st.sampled_from(self.enabled(family)), label=family)
        assert self.state is not None
        before = self.state
        self.state = step(before, action)
        self.trace.append(action)
        if self.cluster is not None:
            self.cluster.apply(action)
        for name in events_between(before, self.state, action):
            event(name)

    # ------------------------------------------------------------------ rules

    @precondition(lambda self: self.enabled("lifecycle"))
    @rule(data=st.data())
    def lifecycle(self, data: st.DataObject) -> None:
        """Start, unfence, fence, controlled/unclean (lossy or not) shutdown, flush."""
        self._do("lifecycle", data)

    @precondition(lambda self: self.enabled("metadata"))
    @rule(data=st.data())
    def metadata(self, data: st.DataObject) -> None:
        """A broker applies a batch of metadata records (§2.3.2)."""
        self._do("metadata", data)

    @precondition(lambda self: self.enabled("fetch"))
    @rule(data=st.data())
    def fetch(self, data: st.DataObject) -> None:
        """Send a fetch, or deliver a fetch request or response."""
        self._do("fetch", data)

    @precondition(lambda self: self.enabled("isr"))
    @rule(data=st.data())
    def isr(self, data: st.DataObject) -> None:
        """ISR shrink/expand proposals and AlterPartition delivery (§2.9)."""
        self._do("isr", data)

    @precondition(lambda self: self.enabled("reassignment"))
    @rule(data=st.data())
    def reassignment(self, data: st.DataObject) -> None:
        """Start or cancel a reassignment (ch4)."""
        self._do("reassignment", data)

    @precondition(lambda self: self.enabled("recovery"))
    @rule(data=st.data())
    def recovery(self, data: st.DataObject) -> None:
        """Unclean recovery (§5.3) or legacy unclean leader election (ch7)."""
        self._do("recovery", data)

    @precondition(lambda self: self.enabled("network"))
    @rule(data=st.data())
    def network(self, data: st.DataObject) -> None:
        """Drop an in-flight fetch message."""
        self._do("network", data)

    @precondition(lambda self: self.enabled("client"))
    @rule(data=st.data())
    def client(self, data: st.DataObject) -> None:
        """Produce (acks=all), consume, ListOffsets."""
        self._do("client", data)

    # -------------------------------------------------------------- invariants

    @invariant()
    def every_property_holds(self) -> None:
        if self.state is None:
            return
        violations = properties.check_all(self.state)
        if violations:
            raise PropertyViolated(violations, self.state, tuple(self.trace))

    @invariant()
    def sut_matches_model(self) -> None:
        if self.cluster is None or self.state is None:
            return
        snapshot = self.cluster.snapshot()
        if snapshot != self.state:
            raise SutDiverged(self.state, snapshot, tuple(self.trace))


def machine_for(variants: frozenset[Variant] = frozenset(), bugs: frozenset = frozenset(),
                compare_sut: Optional[bool] = None, lossy_budget: Optional[int] = None,
                unclean_leader_election: Optional[bool] = None, name: Optional[str] = None) -> type:
    """A ReplicationMachine subclass for one run selection. ``compare_sut`` defaults
    to True unless variants are on (a variant run checks the properties on the
    model; the SUT implements the correct protocol)."""
    if compare_sut is None:
        compare_sut = not variants
    label = name or "ReplicationMachine" + "".join(
        f"_{x.name if hasattr(x, 'name') else x}" for x in sorted(variants | frozenset(bugs), key=str))
    return type(label, (ReplicationMachine,), {
        "variants": frozenset(variants), "bugs": frozenset(bugs), "compare_sut": compare_sut,
        "lossy_budget": lossy_budget, "unclean_leader_election": unclean_leader_election,
    })
