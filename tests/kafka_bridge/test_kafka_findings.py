"""What running Kafka's own controller in lockstep found in Kafka's code (README
"Kafka's own code in the loop": every disagreement and what it was).

Finding 5: a cancelled move can leave a broker that is no longer a replica as the
last known leader (LastKnownELR); the next election that tries it throws inside
Kafka's controller (``LeaderAcceptor`` asks ``PartitionRegistration.directory``
for a broker outside the replicas), so the request that triggered it — here a
broker's registration — fails. Every retry fails the same way; in a running
controller a non-API exception in an event fails the operation (and renounces
leadership), and the broker cannot register again.
"""

from __future__ import annotations

import pytest

from check.lockstep import LockStep
from check.subject import Subject
from model import KAFKA, Config, FenceBroker, Heal, UnfenceBroker, UpdateElrFeature
from reproducers.findings import finding

#: 6 actions; no lossy shutdown (within any fault budget): the story of finding 5's reproducer.
TRACE, CONFIG = finding(5).trace, finding(5).config


def verdicts(implementation, check_properties=False):
    lockstep = LockStep(Subject.at(CONFIG, implementation=implementation, check_properties=check_properties))
    return [lockstep.step(a) for a in TRACE]


def test_kafkas_controller_fails_electing_a_last_known_leader_outside_the_replicas():
    import kafka_bridge
    found = verdicts(kafka_bridge.implementation)
    assert found[:5] == [None] * 5
    v = found[5]
    assert v is not None and v.kind == "harness_error"
    assert "IllegalArgumentException from the SUT" in v.text
    assert "Replica 1 is not assigned to this partition" in v.text
    # where the model stands: the revert left 1, no longer a replica, as the last known leader
    p = v.state.partition
    assert (p.replicas, p.leader, p.last_known_elr) == ((2,), 1, frozenset())   # the model elected 1


def test_kafkas_builder_alone_elects_it_and_the_model_flags_the_state_first():
    """Kafka's PartitionChangeBuilder alone (under the SUT's controller, whose leader
    acceptor asks only whether a broker is unfenced) elects the last known leader
    1 outside the replicas, as the Kafka profile does; the model flags the state
    the revert made (finding 4, ValidPartitionMetadata) at step 4."""
    import kafka_bridge
    from sut import Cluster
    kafka_bridge.start()
    assert verdicts(lambda c: Cluster(c, components=kafka_bridge.BUILDER_COMPONENTS)) == [None] * len(TRACE)
    checked = verdicts(None, check_properties=True)
    assert checked[3] is not None and checked[3].kind == "property"
    assert "LastKnownELR [1] is not within replicas [2]" in checked[3].text


def test_a_run_detached_at_the_finding_goes_on_with_the_model():
    """The campaign's mode: the model's property failure at step 4 detaches Kafka's
    code, so the failure that follows is not reported as a new disagreement."""
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
