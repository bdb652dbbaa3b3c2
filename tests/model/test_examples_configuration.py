"""Topic configs changed at run time (IncrementalAlterConfigs): ``AlterMinIsr`` and
``AlterUncleanLeaderElection`` under the chapters' rules, on the model and mirrored
on the SUT (the folder's conftest). Kafka's rules for them are told in
``tests/kafka/test_rules.py`` and findings 6 and 7 in ``tests/kafka/test_findings.py``.
"""

from __future__ import annotations

import properties
from model import (MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE, AlterMinIsr, AlterUncleanLeaderElection,
                   ConfigRecord, Config, FenceBroker, PartitionChangeRecord, ReplicateMetadata, StartBroker,
                   UncleanLeaderElection, UncleanShutdown, why_not_enabled)

from scenario import Scenario

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)


def new_records(sc: Scenario, since: int) -> tuple:
    return sc.state.controller.metadata_log[since:]


def test_a_min_isr_change_is_a_config_record_and_a_partition_change():
    """The ConfigRecord, then one partition change (the partition epoch moves, the
    ELR and LastKnownELR are applied case G under the new MinISR). The leader acts
    on the new MinISR once it applied the record."""
    sc = Scenario(RF3)
    offset, epoch = len(sc.state.controller.metadata_log), sc.partition.partition_epoch
    sc.do(AlterMinIsr(1))
    assert new_records(sc, offset) == (ConfigRecord(MIN_INSYNC_REPLICAS, 1),
                                       PartitionChangeRecord(elr=frozenset(), last_known_elr=frozenset()))
    assert sc.partition.partition_epoch == epoch + 1 and sc.state.min_isr == 1
    assert sc.state.leader_min_isr(1) == 2              # not applied yet
    sc.do(ReplicateMetadata(1, 2))
    assert sc.state.leader_min_isr(1) == 1 and sc.replica(1).partition_epoch == epoch + 1


def test_a_min_isr_change_needs_a_new_value_within_the_target_replicas():
    sc = Scenario(RF3)
    assert "already 2" in why_not_enabled(sc.state, AlterMinIsr(2))
    for bad in (0, 4, True):
        assert "1..3" in why_not_enabled(sc.state, AlterMinIsr(bad))   # type: ignore[arg-type]
    assert why_not_enabled(sc.state, AlterMinIsr(3)) is None


def test_a_lowered_min_isr_lets_the_hwm_advance_on_a_smaller_isr():
    """MinISR 3 of 3: fencing follower 3 leaves ISR [1, 2] below it (3 joins the
    ELR) and an acks=all write is refused. MinISR lowered to 2: the ISR has MinISR
    members, so the ELR is emptied; once leader 1 applies the change, a write is
    appended and committed on [1, 2]."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3))
    sc.fence(3)
    assert sc.partition.elr == {3}
    sc.sync_metadata(1)
    sc.produce(1)
    assert sc.state.history.nacked == (1,)
    sc.do(AlterMinIsr(2))
    assert sc.partition.elr == set()
    sc.sync_metadata(1)
    sc.produce(1)
    sc.deliver_fetch(2)
    sc.deliver_fetch(2)
    assert [w.value for w in sc.state.history.acked] == [2] and sc.replica(1).hwm == 1


def test_a_raised_min_isr_keeps_the_elr_while_the_isr_is_below_it():
    """ISR [1], ELR [2] under MinISR 2. Raised to 3 the HWM stays frozen, so 2 is
    still complete and stays in the ELR; lowered to 1 the ISR has MinISR members
    and the ELR is emptied (§5.2.1 case G under the new MinISR)."""
    sc = Scenario(RF3)
    sc.fence(3)
    sc.fence(2)
    assert (sc.partition.isr, sc.partition.elr) == ({1}, {2})
    sc.do(AlterMinIsr(3))
    assert sc.partition.elr == {2}
    sc.do(AlterMinIsr(1))
    assert sc.partition.elr == set()


def test_a_stale_shrink_is_refused_after_a_min_isr_change():
    """The change moves the partition epoch: an AlterPartition the leader proposed
    before it applied the new MinISR is fenced (INVALID_UPDATE_VERSION)."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    sc.do(AlterMinIsr(2))
    resp = sc.shrink(1, 2)
    assert resp.error == "INVALID_UPDATE_VERSION" and sc.partition.isr == {1, 2}


def test_unclean_leader_election_switched_on_lets_the_controller_elect():
    """RF 2, MinISR 1: follower 2 is fenced, then leader 1 restarts uncleanly (no
    loss): ISR and ELR are empty, 1 only in the LastKnownELR. With
    unclean.leader.election.enable off nothing may lead; switched on (a
    ConfigRecord), the controller's unclean election takes the unfenced replica."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1))
    for action in (FenceBroker(2), UncleanShutdown(1, False), FenceBroker(1), StartBroker(1)):
        sc.do(action)
    sc.unfence(2)
    assert sc.partition.leader == -1 and not sc.partition.isr and not sc.partition.elr
    assert why_not_enabled(sc.state, UncleanLeaderElection()) is not None
    assert "already false" in why_not_enabled(sc.state, AlterUncleanLeaderElection(False))
    offset = len(sc.state.controller.metadata_log)
    sc.do(AlterUncleanLeaderElection(True))
    assert new_records(sc, offset) == (ConfigRecord(UNCLEAN_LEADER_ELECTION_ENABLE, True),)
    sc.do(UncleanLeaderElection())
    assert sc.partition.leader == 2 and sc.state.history.unclean_elections


def test_the_fault_budget_counts_from_the_lowest_min_isr_ever_in_force():
    """MinISR 2 lowered to 1 and raised back: a record may have been committed on
    one replica meanwhile, so one lossy shutdown is already past the budget. After
    a lossy shutdown, the search draws no MinISR change below it."""
    sc = Scenario(RF3)
    sc.do(AlterMinIsr(1))
    sc.do(AlterMinIsr(2))
    assert properties.budget_min_isr(sc.state) == 1
    sc.do(UncleanShutdown(3, True))
    assert not properties.within_fault_budget(sc.state)
    fresh = Scenario(RF3)
    fresh.do(UncleanShutdown(3, True))
    assert properties.within_fault_budget(fresh.state)
    assert not properties.keeps_fault_budget(fresh.state, AlterMinIsr(1))
    assert properties.keeps_fault_budget(fresh.state, AlterMinIsr(3))


def test_the_observation_shows_the_topic_configs_and_the_leaders_log_config():
    """What an engineer reads off the cluster: the controller's topic configs at once,
    a leader's log config once it applied the ConfigRecord; a follower shows none.
    (The folder's conftest compares the SUT's observation with it at every step.)"""
    from model import observe
    sc = Scenario(RF3)
    sc.do(AlterMinIsr(1))
    sc.do(AlterUncleanLeaderElection(True))
    o = observe(sc.state)
    assert (o.min_isr, o.unclean_leader_election) == (1, True)
    assert (o.brokers[0].replica.min_isr, o.brokers[1].replica.min_isr) == (2, None)
    sc.do(ReplicateMetadata(1, sc.state.pending_metadata(1)))
    assert observe(sc.state).brokers[0].replica.min_isr == 1
