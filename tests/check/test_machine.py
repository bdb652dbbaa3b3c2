"""The machine passes against the correct reference model and SUT (or, under
``pytest --implementation NAME``, the implementation NAME: see
``pytest_replicheck.plugin.machine_under_test``), and its compound steps and swarm
weights do what they say."""

import pytest

from check.machine import machine_for
from check.lockstep import LockStep
from check.machine import ReplicationMachine, swarm_weights
from check.scenarios import commit_one_on_rf2
from check.subject import Subject
from pytest_replicheck.plugin import machine_under_test
from model import (ACTION_TYPES, KAFKA, NO_LEADER, BrokerStatus, Config, FenceBroker, FetchResponse, ReceiveFetchRequest,
                   Reassign, ReplicateMetadata, SendFetch, StartBroker, UncleanRecovery, UncleanShutdown,
                   UnfenceBroker)

ModelOnly = machine_for(Subject(compare=False), name="ModelOnlyMachine")
TestModelOnly = ModelOnly.TestCase

# The bundled SUT; `pytest ...::TestModelAndSut --implementation NAME` puts NAME here instead.
ModelAndSut = machine_under_test("ModelAndSutMachine")
TestModelAndSut = ModelAndSut.TestCase

# The bundled SUT under Kafka's rules, detached at the profile's findings (property
# violations of Kafka's design, docs: Findings under the Kafka profile): the SUT's code
# that runs only under Kafka's rules is in the default suite's machine too.
ModelAndSutKafka = machine_for(Subject(compare=True, profile=KAFKA, detach_at_findings=True),
                               name="ModelAndSutKafkaMachine")
TestModelAndSutKafkaProfile = ModelAndSutKafka.TestCase


def _machine(config: Config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2),
             **scale: float) -> ReplicationMachine:
    """A model-only machine placed in ``config``'s initial state, without Hypothesis."""
    m = machine_for(Subject(compare=False), name="Probe")()
    m.config, m.lockstep = config, LockStep(Subject.at(config, compare=False))
    m.state = m.lockstep.state
    m.weights = swarm_weights({c: scale[c.__name__] for c in ACTION_TYPES if c.__name__ in scale})
    return m


def test_restart_phases_bring_a_crashed_broker_back_in_order():
    m = _machine()
    m._restart([UncleanShutdown(3, False)], 4)
    assert [type(a) for a in m.trace] == [UncleanShutdown, FenceBroker, StartBroker, ReplicateMetadata, UnfenceBroker]
    assert m.state.broker(3).status is BrokerStatus.RUNNING
    assert not m.state.registration(3).fenced


def test_restart_with_no_phases_leaves_the_broker_down():
    m = _machine()
    m._restart([UncleanShutdown(3, False)], 0)
    assert m.trace == [UncleanShutdown(3, False)]
    assert m.state.broker(3).status is BrokerStatus.OFFLINE_DIRTY


def test_one_hop_handles_the_request_and_leaves_the_reply_in_flight():
    m = _machine()
    m._exchange(SendFetch(2), 1)
    assert [type(a) for a in m.trace] == [SendFetch, ReceiveFetchRequest]
    assert [type(msg) for msg in m.state.network.messages] == [FetchResponse]


def test_a_class_the_swarm_leaves_out_is_not_drawn():
    assert any(isinstance(a, FenceBroker) for a in _machine().enabled("lifecycle"))
    left_out = _machine(FenceBroker=0)
    assert left_out.enabled("lifecycle")
    assert not any(isinstance(a, FenceBroker) for a in left_out.enabled("lifecycle"))


def test_the_metadata_family_offers_one_batch_per_broker_with_records_pending_and_running():
    m = _machine()
    m._apply(FenceBroker(1))          # a record for every broker to apply
    m._apply(UncleanShutdown(3, False))
    pending = {b: m.state.pending_metadata(b) for b in (1, 2, 3)}
    assert pending[1] > 0 and pending[2] > 0 and pending[3] > 0
    # broker 3 is down: its records wait; every running broker's whole backlog is one batch
    assert m.enabled("metadata") == [ReplicateMetadata(1, pending[1]), ReplicateMetadata(2, pending[2])]
    m._apply(ReplicateMetadata(2, pending[2]))
    assert m.enabled("metadata") == [ReplicateMetadata(1, pending[1])]


def test_one_replica_reassignments_come_first():
    m = _machine()
    moves = m._prioritized([Reassign((1,)), Reassign((1, 2))])
    assert moves[0] == Reassign((1, 2))


class _Scripted:
    """A stand-in for the machine's ``Draws``: returns the given values in order."""

    def __init__(self, *values):
        self.values = list(values)

    def integer(self, lo, hi, label):
        return self.values.pop(0)

    choice = boolean = lambda self, *args: self.values.pop(0)


_RF2_MIN2_BALANCED = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, unclean_recovery="balanced")


def _committed_unflushed(m: ReplicationMachine) -> None:
    """Leader 1 commits value 1 on [1, 2] (HWM 1) without flushing it."""
    for action in commit_one_on_rf2():
        m._apply(action)
    assert m.state.history.committed and m.state.broker(1).replica.flushed == 0


def test_a_power_outage_crashes_every_replica_lossy_in_replica_order_within_the_budget():
    m = _machine()  # RF 3, MinISR 2: one lossy shutdown allowed
    shutdowns = m._outage(UncleanShutdown(2, False))
    assert shutdowns == [UncleanShutdown(1, True), UncleanShutdown(2, True), UncleanShutdown(3, True)]
    m._restart(shutdowns, 0)
    assert m.trace == [UncleanShutdown(1, True), UncleanShutdown(2, False), UncleanShutdown(3, False)]
    assert m.state.history.lossy_shutdowns == 1


def test_a_power_outage_started_outside_the_replica_set_crashes_that_broker_too():
    m = _machine(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    assert m._outage(UncleanShutdown(3, False)) == [UncleanShutdown(1, True), UncleanShutdown(2, True),
                                                    UncleanShutdown(3, False)]


def test_the_controller_recovers_at_once_when_the_crashed_replicas_are_back():
    m = _machine(_RF2_MIN2_BALANCED)
    _committed_unflushed(m)
    m._restart(m._outage(UncleanShutdown(1, False)), 4)
    assert m.trace[-1] == UncleanRecovery()
    # Correct balanced recovery elects 2, which kept value 1; 1 lost it (§5.3.2).
    assert m.state.partition.leader == 2


def test_no_recovery_at_once_when_the_swarm_leaves_recovery_out():
    m = _machine(_RF2_MIN2_BALANCED, UncleanRecovery=0)
    _committed_unflushed(m)
    m._restart(m._outage(UncleanShutdown(1, False)), 4)
    assert UncleanRecovery() not in m.trace and m.state.partition.leader == NO_LEADER


def test_a_reverted_reassignment_lets_the_leader_apply_removal_and_readd_in_one_batch():
    m = _machine(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    m._do("reassignment", _Scripted(0, Reassign((1,)), True, True))   # the class drawn first: Reassign
    assert m.trace == [Reassign((1,)), Reassign((1, 2)), ReplicateMetadata(1, 2)]
    # The re-added broker has applied neither record: two are pending for it.
    assert m.state.pending_metadata(2) == 2


def _eager_enabled(m: ReplicationMachine) -> dict[str, list]:
    """The oracle: every family's allowed actions at once, the first level (fault
    spacing, then swarm, giving way) at which any family has one."""
    from check.machine import FAULTS, ACTION_FAMILIES
    from model import enabled_actions, family_of
    from properties import keeps_fault_budget
    spaced_now = m._since_fault < m.fault_spacing
    allowed: list = []
    for spaced, swarm in ((spaced_now, True), (False, True), (False, False)):
        def ok(a, spaced=spaced, swarm=swarm):
            return not (swarm and m.weights[type(a)] == 0) and not (spaced and isinstance(a, FAULTS)) \
                and keeps_fault_budget(m.state, a, m.subject.lossy_budget)
        allowed = [a for a in enabled_actions(m.state) if not isinstance(a, ReplicateMetadata) and ok(a)]
        allowed += [a for a in m._metadata_batches() if ok(a)]
        if allowed:
            break
    return {f: [a for a in allowed if family_of(a) == f] for f in ACTION_FAMILIES}


@pytest.mark.parametrize("seed", range(6))
def test_each_familys_actions_computed_when_asked_are_those_of_every_family_at_once(seed):
    """``enabled(family)`` computes one family at a time (the explorer draws a
    family first); whatever order the families are asked in, each gets what
    computing every family at the state's level would give it."""
    import random
    from check.machine import ACTION_FAMILIES, SWARM_LEVELS
    from model import enabled_actions, step
    rng = random.Random(seed)
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2)
    m = _machine(config)
    compared = 0
    for _ in range(150):
        m.weights = swarm_weights({c: rng.choice(levels) for c, levels in SWARM_LEVELS.items()})
        m._enabled_for = None
        m.fault_spacing, m._since_fault = rng.randint(0, 3), rng.randint(0, 3)
        expected = _eager_enabled(m)
        m._enabled_for = None
        order = list(ACTION_FAMILIES)
        rng.shuffle(order)
        assert {f: m.enabled(f) for f in order} == expected
        compared += 1
        every = enabled_actions(m.state)
        if not every:
            break
        m.state = step(m.state, rng.choice(every))
    assert compared > 20


def test_every_family_is_asked_when_a_level_is_judged():
    from check.machine import _LEVEL_PROBES, ACTION_FAMILIES
    assert sorted(_LEVEL_PROBES) == sorted(ACTION_FAMILIES)


def test_the_fault_spacing_then_the_swarm_give_way_when_nothing_else_can_move(monkeypatch):
    """No state the walks reach has only faults enabled (a client can always read),
    so the levels' fall-back is driven with the model's enumeration narrowed to
    two faults. Spaced out, they come at the next level, where the swarm still
    holds (the one it leaves out stays out); with both left out, both come at the
    last level. The level is settled whichever family is asked first."""
    import check.machine as machine
    faults = (FenceBroker(1), UncleanShutdown(1, False))
    monkeypatch.setattr(machine, "enabled_actions",
                        lambda state, classes=None: tuple(a for a in faults if classes is None or type(a) in classes))
    one_left_out = _machine(UncleanShutdown=0)
    assert one_left_out._metadata_batches() == []
    one_left_out.fault_spacing, one_left_out._since_fault = 3, 0          # faults are spaced out now
    assert one_left_out.enabled("client") == []
    assert one_left_out.enabled("lifecycle") == [FenceBroker(1)]
    both_left_out = _machine(FenceBroker=0, UncleanShutdown=0)
    both_left_out.fault_spacing, both_left_out._since_fault = 3, 0
    assert both_left_out.enabled("lifecycle") == list(faults) and both_left_out.enabled("client") == []
