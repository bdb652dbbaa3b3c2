"""Controlled shutdown as a state of its own (§8.3): a broker's heartbeat asks to
shut down (``BeginControlledShutdown``); the controller moves a leader's
leadership and ISR membership away and keeps it unfenced (in controlled
shutdown), or fences a broker that leads nothing at once (SHUTDOWN_NOW); the
broker runs on until ``ControlledShutdown``. On the model and mirrored on the
SUT (the folder's conftest); Kafka's own code deciding it is in
``tests/kafka/test_replication_control_manager.py``."""

from __future__ import annotations

from model import (BeginControlledShutdown, BrokerStatus, Config, ControlledShutdown, ControlledShutdownRecord,
                   ElectPreferredLeader, FenceBrokerRecord, PartitionChangeRecord, ProposeIsrExpand, StartBroker,
                   UnfenceBroker, why_not_enabled)

from scenario import Scenario

RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1)


def test_a_leader_asking_to_shut_down_hands_its_leadership_over_and_stays_unfenced():
    """Leader 1 asks: the registration change comes first, then the partition change
    electing 2 with 1 out of the ISR. Broker 1 runs on, unfenced; it is no leader
    candidate (the preferred election refuses it) and cannot rejoin the ISR."""
    sc = Scenario(RF3)
    since = len(sc.state.controller.metadata_log)
    sc.do(BeginControlledShutdown(1))
    assert sc.state.controller.metadata_log[since:] == (
        ControlledShutdownRecord(1), PartitionChangeRecord(leader=2, isr=frozenset({2, 3})))
    reg = sc.state.registration(1)
    assert (reg.fenced, reg.in_controlled_shutdown) == (False, True)
    assert sc.state.broker(1).status == BrokerStatus.RUNNING
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in why_not_enabled(sc.state, ElectPreferredLeader())
    assert "already shutting down" in why_not_enabled(sc.state, BeginControlledShutdown(1))
    # 1 follows 2, caught up: the chapters' leader proposes it (it does not read the
    # registration), and the controller refuses it back into the ISR.
    sc.sync_all()
    sc.catch_up(2, 1)
    assert why_not_enabled(sc.state, ProposeIsrExpand(2, 1)) is None
    assert sc.expand(2, 1).error == "INELIGIBLE_REPLICA"
    assert 1 not in sc.partition.isr


def test_a_broker_leading_nothing_is_fenced_at_once_and_never_unfenced_again():
    """Follower 3 asks: SHUTDOWN_NOW, the fencing as a session expiry writes it (3 out
    of the ISR, and the fence record). Its heartbeats carry wantShutDown, so it stays fenced
    until it stops; restarted, it registers cleanly and is unfenced as usual."""
    sc = Scenario(RF3)
    since = len(sc.state.controller.metadata_log)
    sc.do(BeginControlledShutdown(3))
    assert set(sc.state.controller.metadata_log[since:]) == {
        PartitionChangeRecord(isr=frozenset({1, 2})), FenceBrokerRecord(3)}
    assert sc.state.registration(3).fenced and not sc.state.registration(3).in_controlled_shutdown
    sc.sync_metadata(3)
    assert "shutting down" in why_not_enabled(sc.state, UnfenceBroker(3))
    sc.do(ControlledShutdown(3))
    assert sc.state.broker(3).status == BrokerStatus.OFFLINE_CLEAN
    sc.do(StartBroker(3))
    sc.unfence(3)
    reg = sc.state.registration(3)
    assert (reg.fenced, reg.in_controlled_shutdown) == (False, False)


def test_the_shutdown_ends_fenced_and_the_restart_clears_the_controlled_shutdown():
    """Leader 1 in controlled shutdown stops: fenced, clean marker written; its next
    registration clears the controlled shutdown, and once back in the ISR it may
    lead again."""
    sc = Scenario(RF3)
    sc.do(BeginControlledShutdown(1))
    sc.do(ControlledShutdown(1))
    reg = sc.state.registration(1)
    assert (reg.fenced, reg.in_controlled_shutdown) == (True, True)
    assert sc.state.broker(1).clean_shutdown_epoch == reg.broker_epoch
    sc.sync_metadata(2)
    sc.restart(1)
    assert not sc.state.registration(1).in_controlled_shutdown
    sc.sync_all()
    sc.catch_up(2, 1)
    sc.expand(2, 1)
    sc.sync_all()
    assert 1 in sc.partition.isr
    assert why_not_enabled(sc.state, ElectPreferredLeader()) is None


def test_a_broker_in_controlled_shutdown_is_no_leader_candidate_even_in_the_elr():
    """RF 2, MinISR 2: leader 1 in controlled shutdown leaves the ISR for the ELR
    (the ISR fell below MinISR); once 2 is fenced too the ISR is empty and the ELR
    [1, 2] holds an unfenced member, 1 -- which the controller does not elect. The
    partition stays leaderless until 2 is unfenced, and 2 is elected."""
    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2))
    sc.do(BeginControlledShutdown(1))
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (2, {2}, {1})
    sc.fence(2)
    assert (sc.partition.leader, sc.partition.isr, sc.partition.elr) == (-1, set(), {1, 2})
    assert not sc.state.registration(1).fenced
    sc.unfence(2)
    assert sc.partition.leader == 2
