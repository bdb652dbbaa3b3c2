"""What running Kafka's own controller in lockstep found in Kafka's code (README
"Kafka's own code in the loop": every disagreement and what it was).

Finding 5: a cancelled move can leave a broker that is no longer a replica as the
last known leader (LastKnownELR); the next election that tries it throws inside
Kafka's controller (``LeaderAcceptor`` asks ``PartitionRegistration.directory``
for a broker outside the replicas), so the request that triggered it — here a
broker's registration — fails. In a running controller a non-API exception in an
event is a fault: the active controller renounces, and the next one meets the
same state (Rule.LEADER_ACCEPTOR_READS_DIRECTORY). Every retry fails over again:
the broker never registers.
"""

from __future__ import annotations

import pytest

from check.lockstep import LockStep
from check.subject import Subject
from model import KAFKA, NO_LEADER, Config, FenceBroker, Heal, StartBroker, UnfenceBroker, UpdateElrFeature
from properties.liveness import met_by
from reproducers.findings import finding

#: 6 actions; no lossy shutdown (within any fault budget): the story of finding 5's reproducer.
TRACE, CONFIG = finding(5).trace, finding(5).config


def verdicts(implementation, check_properties=False):
    lockstep = LockStep(Subject.at(CONFIG, implementation=implementation, check_properties=check_properties))
    return [lockstep.step(a) for a in TRACE]


def test_kafkas_controller_faults_on_a_last_known_leader_outside_the_replicas_at_every_retry():
    """Kafka's controller throws at the registration of 2, as the model's Kafka profile
    says it does: the registration writes nothing, the controller fails over, and 2
    stays down; its next attempt faults the same way, and healing never brings it
    back (the liveness goal BrokersStarted is missed)."""
    import kafka_bridge
    lockstep = LockStep(Subject.at(CONFIG, implementation=kafka_bridge.implementation, check_properties=False))
    assert [lockstep.step(a) for a in (*TRACE, StartBroker(2))] == [None] * (len(TRACE) + 1)
    assert lockstep.last_outcome.controller_fault == "Replica 1 is not assigned to this partition."
    assert lockstep.state.history.controller_faults == ("Replica 1 is not assigned to this partition.",) * 2
    p = lockstep.state.partition
    assert (p.replicas, p.leader, p.last_known_elr) == ((2,), NO_LEADER, {1})   # as before the registration
    assert lockstep.step(Heal()) is None        # Kafka's controller faults at every attempt of the healing too
    assert len(lockstep.state.history.controller_faults) > 2 and met_by(lockstep.state)["BrokersStarted"] is None


def test_kafkas_builder_under_the_suts_acceptor_faults_the_same_way_and_the_model_flags_the_state_first():
    """Kafka's PartitionChangeBuilder alone, under the SUT's controller, whose leader
    acceptor restates Kafka's (the directory lookup throws for a broker outside the
    replicas), faults at the same step; the model flags the state the revert made
    (finding 4, ValidPartitionMetadata) at step 4."""
    import kafka_bridge
    from sut import Cluster
    kafka_bridge.start()
    assert verdicts(lambda c: Cluster(c, components=kafka_bridge.BUILDER_COMPONENTS)) == [None] * len(TRACE)
    checked = verdicts(None, check_properties=True)
    assert checked[3] is not None and checked[3].kind == "property"
    assert "LastKnownELR [1] is not within replicas [2]" in checked[3].text


def test_a_run_detached_at_the_finding_goes_on_with_the_model():
    """The campaign's mode: the model's property failure at step 4 detaches Kafka's
    code, and the model goes on alone (to the controller's fault at step 6)."""
    import kafka_bridge
    lockstep = LockStep(Subject.at(CONFIG, implementation=kafka_bridge.implementation, detach_at_findings=True))
    assert [lockstep.step(a) for a in TRACE] == [None] * len(TRACE)
    assert lockstep.detached == ("ValidPartitionMetadata",) and lockstep.implementation is None


@pytest.mark.parametrize("detach", [False, True])
def test_detaching_needs_a_property_failure(detach):
    """Without one the comparison stays on: a wrong mapping is still a disagreement."""
    from check.lockstep import LockStep as L
    import kafka_bridge
    from kafka_bridge.change_builder import KafkaPartitionChangeBuilder
    from sut import Cluster
    from sut.components import Components

    class OffByOne(KafkaPartitionChangeBuilder):
        def __init__(self, *args):
            super().__init__(*args)
            self.min_isr += 1

    kafka_bridge.start()
    parts = Components(change_builder=OffByOne, epoch_cache=kafka_bridge.KafkaLeaderEpochFileCache)
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    lockstep = L(Subject.at(config, implementation=lambda c: Cluster(c, components=parts), detach_at_findings=detach))
    from test_kafka_in_the_loop import SHRINK_3
    found = [lockstep.step(a) for a in SHRINK_3]
    assert found[-1] is not None and found[-1].kind == "divergence" and lockstep.detached == ()


#: Finding 9: after a downgrade of the ELR feature the partition's ELR is emptied and healing brings no leader.
OFFLINE = (FenceBroker(1), UpdateElrFeature(False), FenceBroker(2), UnfenceBroker(2), UnfenceBroker(1), Heal())


@pytest.mark.parametrize("detach", [False, True])
def test_a_liveness_goal_the_model_misses_after_healing_detaches_too(detach):
    """Kafka's code agrees at every step of finding 9's story and of its healing; the
    goals the model misses after healing are a liveness verdict, or, in the
    campaign's mode, the finding the run is detached at."""
    import kafka_bridge
    config = Config(brokers=(1, 2, 3), assignment=(1,), min_isr=1, profile=KAFKA)
    lockstep = LockStep(Subject.at(config, implementation=kafka_bridge.implementation, detach_at_findings=detach))
    found = [lockstep.step(a) for a in OFFLINE]
    assert found[:-1] == [None] * (len(OFFLINE) - 1)
    if detach:
        assert found[-1] is None and "LeaderElected" in lockstep.detached and lockstep.implementation is None
    else:
        assert found[-1].kind == "liveness" and "LeaderElected" in found[-1].text and lockstep.detached == ()
