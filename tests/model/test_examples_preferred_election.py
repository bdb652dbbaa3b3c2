"""Preferred-leader election (ElectLeaders with ElectionType.PREFERRED, or the
controller's leader balancing): on the model and mirrored on the SUT (the
folder's conftest). Kafka's own code deciding it is in
``tests/kafka_bridge/test_kafka_in_the_loop.py``."""

from __future__ import annotations

from model import Config, ElectPreferredLeader, Produce, PartitionChangeRecord, why_not_enabled

from scenario import Scenario

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1)


def _preferred_back_in_the_isr() -> Scenario:
    """Leader 1 fenced (2 leads, epoch 2), unfenced, caught up, and back in the ISR."""
    sc = Scenario(RF3)
    sc.fence(1)
    sc.sync_metadata(2)
    sc.unfence(1)
    sc.sync_metadata(1)
    sc.catch_up(2, 1)
    sc.expand(2, 1)
    sc.sync_metadata(2)
    return sc


def test_the_preferred_replica_is_elected_once_it_is_back_in_the_isr():
    """Broker 1 (the first replica) led, was fenced and is an ISR member again: the
    preferred election makes it leader in a new leader epoch, with one partition
    change that touches nothing else."""
    sc = _preferred_back_in_the_isr()
    p = sc.partition
    assert (p.leader, p.isr) == (2, {1, 2, 3})
    offset = len(sc.state.controller.metadata_log)
    sc.do(ElectPreferredLeader())
    assert sc.state.controller.metadata_log[offset:] == (PartitionChangeRecord(leader=1),)
    assert (sc.partition.leader, sc.partition.leader_epoch, sc.partition.partition_epoch) == \
        (1, p.leader_epoch + 1, p.partition_epoch + 1)
    assert sc.partition.isr == p.isr
    # The new leader takes writes once it applied the change; the old one stepped down.
    sc.sync_metadata(1)
    sc.sync_metadata(2)
    sc.produce(1)
    assert [r.epoch for r in sc.replica(1).log] == [p.leader_epoch + 1]
    assert "ELECTION_NOT_NEEDED" in why_not_enabled(sc.state, ElectPreferredLeader())


def test_no_preferred_election_while_the_preferred_replica_cannot_lead():
    """Out of the ISR, or fenced, the preferred replica is not elected: Kafka answers
    PREFERRED_LEADER_NOT_AVAILABLE and writes nothing; leading, ELECTION_NOT_NEEDED."""
    sc = Scenario(RF3)
    assert "ELECTION_NOT_NEEDED" in why_not_enabled(sc.state, ElectPreferredLeader())
    sc.fence(1)
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    sc.sync_metadata(2)
    sc.unfence(1)    # unfenced, still out of the ISR
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    assert why_not_enabled(sc.state, Produce(2, sc.state.history.next_value)) is None
