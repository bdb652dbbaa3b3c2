"""The machine's enablement probes (``check.lockstep.probe_actions``) reach the
guards a run drawing only the model's enabled actions never tries: an
implementation that enables what the protocol forbids is caught at the step after
which it would, before it takes it."""

from __future__ import annotations

import pytest

from check.lockstep import LockStep, probe_actions
from check.subject import Subject
from model import (ACTION_TYPES, AdvanceTime, Config, ControlledShutdown, DropMessage, Heal, ProposeIsrShrinkMany, Reassign,
                   ReceiveAlterPartition, ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse,
                   ReplicateMetadata, SendFetch, UncleanShutdown, initial_state, step)
from sut import Cluster

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)


class _Lax(Cluster):
    """A SUT that enables one action class the model refuses (``lax``: its guard's
    name), whatever the state."""

    lax = ""

    def why_not_enabled(self, action):   # type: ignore[no-untyped-def]
        if type(action).__name__ == self.lax:
            return None
        return super().why_not_enabled(action)


@pytest.mark.parametrize("lax, steps", [
    ("Flush", ()),                                                    # nothing unflushed
    ("ProposeIsrShrink", ()),                                         # a follower proposing to its leader
    ("AlterMinIsr", ()),                                              # an unchanged or out-of-range MinISR
    ("AlterUncleanLeaderElection", ()),                               # already off
    ("AlterClusterMinIsr", ()),                                       # no cluster-level default (chapters)
    ("FailOverController", ()),                                       # no failover (chapters)
    ("ResendRegistration", ()),                                       # no amended registration (chapters)
    ("ReceiveFetchRequest", (SendFetch(2), UncleanShutdown(1, False))),   # delivered to a stopped leader
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_guard_the_implementation_drops_is_caught_by_the_probes(lax, steps):
    implementation = type("Lax" + lax, (_Lax,), {"lax": lax})
    lockstep = LockStep(Subject.at(RF3, implementation=implementation, check_properties=False))
    verdicts = [lockstep.step(a) for a in steps] or [lockstep.check()]
    verdict = next(v for v in verdicts if v is not None)
    assert f"enablement of {lax}(" in verdict.text


def test_the_probes_cover_every_class_but_those_drawn_by_their_arguments():
    """Every action class is probed but the ones whose arguments a run draws only
    among the enabled (a reassignment target, a metadata count, a wait, a drop, a
    healing directive, a several-follower shrink outside Kafka's rules, the
    shutdowns, refused only when the broker is down as for the restart probed),
    and a message's delivery, probed while one is in flight to a broker that is not
    running."""
    state = initial_state(RF3)
    left = {AdvanceTime, DropMessage, Heal, ProposeIsrShrinkMany, Reassign, ReplicateMetadata, UncleanShutdown,
            ControlledShutdown}
    deliveries = {ReceiveFetchRequest, ReceiveFetchResponse, ReceiveAlterPartition, ReceiveAlterPartitionResponse}
    assert set(ACTION_TYPES) - {type(a) for a in probe_actions(state)} == left | deliveries
    state = step(step(state, SendFetch(2)), UncleanShutdown(1, False))
    assert ReceiveFetchRequest in {type(a) for a in probe_actions(state)}
