"""Shared helpers of the SUT tests: a field-by-field diff of two model states
and a lock-step driver of the model and the SUT."""

from __future__ import annotations

from collections import deque
from typing import Iterable, Optional


import model
from model import ActionNotEnabled, ClusterState, Config
from harness.report import diff as report_diff
from sut import Cluster


def diff(sut_state: object, model_state: object, limit: int = 12) -> list[str]:
    """``harness.report.diff`` with the SUT's state first, as these tests hold them."""
    return report_diff(model_state, sut_state, limit)


class Divergence(AssertionError):
    pass


class LockStep:
    """Drives the model and a SUT ``Cluster`` through the same actions and checks
    the snapshot after every step."""

    def __init__(self, config: Config, bugs: Iterable = frozenset(), label: str = "") -> None:
        self.config = config
        self.state: ClusterState = model.initial_state(config)
        self.cluster = Cluster(config, frozenset(bugs))
        self.trail: deque = deque(maxlen=20)
        self.label = label
        self.steps = 0
        self.check()

    def report(self, headline: str) -> str:
        lines = [headline, f"{self.label} config={self.config!r} step={self.steps}",
                 f"last {len(self.trail)} actions (oldest first):"]
        lines += [f"  {a!r}" for a in self.trail]
        return "\n".join(lines)

    def check(self) -> None:
        snap = self.cluster.snapshot()
        if snap != self.state:
            d = diff(snap, self.state)
            raise Divergence(self.report("SUT snapshot differs from the model:\n  " + "\n  ".join(d)))

    def step(self, action: object, check: bool = True) -> None:
        self.trail.append(action)
        self.steps += 1
        self.state = model.step(self.state, action)
        try:
            self.cluster.apply(action)
        except ActionNotEnabled as exc:
            raise Divergence(self.report(f"SUT refused an enabled action: {exc}")) from exc
        if check:
            self.check()

    def agree_on_enablement(self, action: object) -> Optional[str]:
        """None when model and SUT agree whether ``action`` is enabled, else a report."""
        m = model.why_not_enabled(self.state, action) is None
        s = self.cluster.is_enabled(action)
        if m != s:
            return self.report(f"enablement of {action!r}: model={m} sut={s}")
        return None


def probe_actions(state: ClusterState, rng) -> list:
    """Candidate actions around ``state``, mostly NOT enabled: every action class
    for every broker (and an unknown one), metadata counts out of range, a wrong
    produce value, message ids of every kind (and ones not in flight), random
    reassignment targets (some invalid)."""
    from model import (CancelReassignment, Consume, ControlledShutdown, DropMessage, FenceBroker, Flush,
                       ListOffsets, ProposeIsrExpand, ProposeIsrShrink, Produce, Reassign,
                       ReceiveAlterPartition, ReceiveAlterPartitionResponse, ReceiveFetchRequest,
                       ReceiveFetchResponse, ReplicateMetadata, SendFetch, StartBroker, UncleanLeaderElection,
                       UncleanRecovery, UncleanShutdown, UnfenceBroker)
    brokers = list(state.config.brokers)
    unknown = max(brokers) + 1
    nv = state.history.next_value
    out: list = []
    for b in brokers + [unknown]:
        out += [StartBroker(b), UnfenceBroker(b), FenceBroker(b), ControlledShutdown(b),
                UncleanShutdown(b, True), UncleanShutdown(b, False), Flush(b), SendFetch(b),
                Produce(b, nv), Produce(b, nv + 1)]
        if b in brokers:
            pending = state.pending_metadata(b)
            out += [ReplicateMetadata(b, c) for c in sorted({0, 1, pending, pending + 1})]
        for f in brokers:
            out += [ProposeIsrShrink(b, f), ProposeIsrExpand(b, f)]
    for i in [m.id for m in state.network.messages] + [0, state.network.next_id]:
        out += [ReceiveFetchRequest(i), ReceiveFetchResponse(i), ReceiveAlterPartition(i),
                ReceiveAlterPartitionResponse(i), DropMessage(i)]
    for _ in range(3):
        out.append(Reassign(tuple(rng.sample(brokers, rng.randint(0, len(brokers))))))
    out += [Reassign(tuple(state.partition.replicas)), Reassign((brokers[0], brokers[0])),
            Reassign((unknown,)), CancelReassignment(), UncleanRecovery(), UncleanLeaderElection(),
            Consume(), ListOffsets()]
    return out


class MirroredStep:
    """A drop-in for ``model.step`` (and ``model.why_not_enabled``) that mirrors
    every step on the SUT: the hook that runs scenario tests written against the
    model on the SUT too, e.g. ``monkeypatch.setattr(scenario, "step", MirroredStep())``.

    It keeps one SUT ``Cluster`` per model state it has produced (states reached
    from ``initial_state`` through it); stepping from a state deep-copies that
    cluster, so tests that branch from an old state work. After each step the
    SUT's snapshot must equal the model's new state; a refusal by the model must
    be a refusal by the SUT. States it has not seen (hand-built) are stepped on
    the model only; ``unmirrored`` counts them.
    """

    def __init__(self) -> None:
        self.clusters: dict[ClusterState, Cluster] = {}
        self.steps = self.refusals = self.unmirrored = 0

    def _cluster_for(self, state: ClusterState) -> Optional[Cluster]:
        cluster = self.clusters.get(state)
        if cluster is None and state == model.initial_state(state.config):
            cluster = self.clusters[state] = Cluster(state.config)
        return cluster

    def why_not_enabled(self, state: ClusterState, action: object) -> Optional[str]:
        reason = model.why_not_enabled(state, action)
        cluster = self._cluster_for(state)
        if cluster is not None and cluster.is_enabled(action) != (reason is None):
            raise Divergence(f"enablement of {action!r}: model={reason is None} sut={cluster.is_enabled(action)}")
        return reason

    def __call__(self, state: ClusterState, action: object) -> ClusterState:
        import copy
        cluster = self._cluster_for(state)
        try:
            new = model.step(state, action)
        except ActionNotEnabled:
            if cluster is not None:
                if cluster.is_enabled(action):
                    raise Divergence(f"the SUT enables {action!r}, which the model refuses") from None
                self.refusals += 1
            raise
        if cluster is None:
            self.unmirrored += 1
            return new
        cluster = copy.deepcopy(cluster)
        cluster.apply(action)
        snap = cluster.snapshot()
        if snap != new:
            raise Divergence(f"SUT snapshot differs from the model after {action!r}:\n  " + "\n  ".join(diff(snap, new)))
        self.clusters[new] = cluster
        self.steps += 1
        return new
