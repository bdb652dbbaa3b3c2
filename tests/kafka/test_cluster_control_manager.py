"""Apache Kafka's ``ClusterControlManagerTest`` (metadata module, 4.3.1) restated
on the Kafka profile: a broker's registration again, by the same incarnation (an
amendment) or a new one (a new broker epoch), while its previous incarnation's
heartbeat session runs or after it expired, and the sessions a new active
controller starts (``activate``).

Kafka's tests call ``registerBroker`` with a chosen incarnation id; here the same
incarnation registering again is ``ResendRegistration``, a new one is a process
restart (``StartBroker``), which Kafka refuses while the previous incarnation's
session is valid (DuplicateBrokerRegistrationException) and the model does not
offer until that session has expired (``FenceBroker``: the retry that succeeds).
Broker epochs are metadata-log offsets in both; Kafka's tests pick them by hand,
so they are compared relatively.
"""

from __future__ import annotations

import pytest

from model import KAFKA, BeginControlledShutdown, Config, FailOverController, FenceBroker, ResendRegistration, \
    StartBroker, UncleanShutdown, why_not_enabled

from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testReplay": "replaying hand-made registration records (listeners, racks) into a standby's manager",
    "testReplayRegisterBrokerRecord": "listeners, features and directories of a registration record",
    "testReplayBrokerRegistrationChangeRecord": "a registration change record made by hand (fenced and unfenced "
                                                "by the record alone, without the partition changes)",
    "testRegistrationWithIncorrectClusterId": "cluster ids",
    "testRegisterBrokerRecordVersion": "metadata versions of the registration record",
    "testUnregister": "broker unregistration (UnregisterBroker)",
    "testPlaceReplicas": "replica placement for topic creation",
    "testRegistrationsToRecords": "snapshots of the registrations",
    "testRegistrationWithUnsupportedFeature": "feature ranges a broker supports",
    "testRegistrationWithUnsupportedKraftVersion": "feature ranges a broker supports (kraft.version)",
    "testRegistrationWithUnsupportedMetadataVersion": "feature ranges a broker supports (metadata.version)",
    "testRegisterControlWithUnsupportedMetadataVersion": "controller registration",
    "testRegisterWithDuplicateDirectoryId": "log directories",
    "testHasOnlineDir": "log directories",
    "testDefaultDir": "log directories",
    "testReRegistrationWithCleanShutdownDetection": "its shutdown handler is a stub writing a partition change "
                                                    "for any unclean registration; the model's controller writes "
                                                    "one only for a broker in the ISR or ELR (the real handler is "
                                                    "restated with ReplicationControlManagerTest)",
}


def _scenario() -> Scenario:
    return Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA))


@pytest.mark.parametrize("new_incarnation", [False, True], ids=["same-incarnation", "new-incarnation"])
def test_ClusterControlManagerTest_testReRegistrationAndBrokerEpoch(new_incarnation: bool):
    """ClusterControlManagerTest.testReRegistrationAndBrokerEpoch: broker 3 registers
    (fenced, no session yet counted against a new incarnation), then registers
    again: with the same incarnation id the registration is amended and keeps its
    broker epoch; with a new one (a restart) it gets a new broker epoch, the
    offset of its new record."""
    sc = _scenario()
    sc.restart(3, unfence=False)
    epoch = sc.state.registration(3).broker_epoch
    if new_incarnation:
        sc.do(UncleanShutdown(3, False))
        sc.do(StartBroker(3))
        assert sc.state.registration(3).broker_epoch > epoch
    else:
        sc.do(ResendRegistration(3))
        assert sc.state.registration(3).broker_epoch == epoch
    assert sc.state.registration(3).fenced


def test_ClusterControlManagerTest_testBrokerContactTimesAreUpdatedOnClusterControlActivation():
    """ClusterControlManagerTest.testBrokerContactTimesAreUpdatedOnClusterControlActivation:
    a registration fenced (3, registered and not yet unfenced) and others unfenced;
    the controller activates: a session (a contact time) for each unfenced broker,
    none for the fenced one."""
    sc = _scenario()
    sc.restart(3, unfence=False)
    sc.do(FailOverController())
    assert [sc.state.registration(b).session for b in (1, 2, 3)] == [True, True, False]


def test_ClusterControlManagerTest_testDuplicateBrokerRegistrationWithActiveOldBroker():
    """ClusterControlManagerTest.testDuplicateBrokerRegistrationWithActiveOldBroker:
    broker 1 is unfenced with a valid session; a new incarnation's registration is
    refused while that session lasts and accepted once it has expired."""
    sc = _scenario()
    sc.do(UncleanShutdown(1, False))   # the old incarnation is gone; its session runs on
    assert why_not_enabled(sc.state, StartBroker(1)) == "broker 1's previous broker epoch is not fenced yet (§6.5.1)"
    epoch = sc.state.registration(1).broker_epoch
    sc.do(FenceBroker(1))              # the session expires
    sc.do(StartBroker(1))
    assert sc.state.registration(1).broker_epoch > epoch


def test_ClusterControlManagerTest_testDuplicateBrokerRegistrationWithInactiveBroker():
    """ClusterControlManagerTest.testDuplicateBrokerRegistrationWithInactiveBroker:
    broker 3 is fenced with no session (registered, then a controller activated),
    broker 1 in controlled shutdown, unfenced, with its session: a new incarnation
    of 3 registers at once; one of 1 is refused while its session lasts."""
    sc = _scenario()
    sc.restart(3, unfence=False)
    sc.do(BeginControlledShutdown(1))
    sc.do(FailOverController())
    assert (sc.state.registration(3).session, sc.state.registration(1).in_controlled_shutdown) == (False, True)
    epoch = sc.state.registration(3).broker_epoch
    sc.do(UncleanShutdown(3, False))
    sc.do(StartBroker(3))
    assert sc.state.registration(3).broker_epoch > epoch
    sc.do(UncleanShutdown(1, False))
    assert why_not_enabled(sc.state, StartBroker(1)) == "broker 1's previous broker epoch is not fenced yet (§6.5.1)"
