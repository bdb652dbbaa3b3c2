"""Apache Kafka's ``QuorumControllerTest`` (metadata module, 4.3.1) restated on the
Kafka profile: the tests about fencing brokers and the ISR, ELR and LastKnownELR
of one partition, including the unclean shutdown a broker registration reveals.

Most of the class exercises the controller itself (its event queue, snapshots,
features, topics, configs, bootstrap records): those are listed in
``NOT_EXPRESSIBLE`` with what the model lacks. Kafka's tests first register and
unfence every broker and create the topic; the model's initial state is that
point (every broker registered and unfenced, the partition created with
``assignment[0]`` as leader and every replica in the ISR).
"""

from __future__ import annotations

from model import KAFKA, NO_LEADER, Config

from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testConfigurationOperations": "configs (incrementalAlterConfigs on a broker resource)",
    "testDelayedConfigurationOperations": "configs, and the controller's commit of metadata offsets",
    "testElrEnabledByDefault": "features and configs (the ELR feature level, the cluster min.insync.replicas)",
    "testUncleanShutdownElrDisabled": "ELR disabled (metadata version 4.0-IV0; the Kafka profile always has the "
                                      "ELR), and a broker registering again while its previous session, expired, "
                                      "is not fenced yet (StartBroker needs the previous broker epoch fenced)",
    "testMinIsrUpdateWithElr": "configs (min.insync.replicas changed at run time) and several topics",
    "testBalancePartitionLeaders": "several partitions (the leader imbalance the controller balances is over "
                                   "a broker's partitions)",
    "testNoOpRecordWriteAfterTimeout": "the controller's NoOpRecords and the metadata log's high watermark (time)",
    "testRegisterBrokerKRaftVersions": "features (kraft.version) at broker registration",
    "testUnregisterBroker": "broker unregistration, topic creation and a replication factor of 1 on one broker",
    "testSnapshotSaveAndLoad": "controller snapshots",
    "testTimeouts": "the controller's event queue and timeouts",
    "testEarlyControllerResults": "the controller's event queue (results before commit)",
    "testConfigResourceExistenceChecker": "configs and topics",
    "testIsNodeIdRegisteredWithDynamicQuorum": "controller registration in a dynamic quorum",
    "testFatalMetadataReplayErrorOnActive": "the controller's fault handling on metadata replay",
    "testFatalMetadataErrorDuringSnapshotLoading": "controller snapshots and fault handling",
    "testFatalMetadataErrorDuringLogLoading": "the controller's metadata log loading and fault handling",
    "testInsertBootstrapRecordsToEmptyLog": "bootstrap metadata records and features",
    "testAppendRecords": "the controller's record batching (QuorumController.appendRecords)",
    "testAppendRecordsAtomically": "the controller's record batching (atomic batches)",
    "testActivationRecords33": "controller activation records (metadata version 3.3)",
    "testActivationRecords34": "controller activation records (metadata version 3.4)",
    "testActivationRecordsNonEmptyLog": "controller activation records",
    "testActivationRecordsPartialBootstrap": "controller activation records (partial bootstrap transaction)",
    "testActivationRecordsPartialTransaction": "controller activation records (partial transaction)",
    "testActivationRecordsPartialTransactionNoSupport": "controller activation records (transactions unsupported)",
}


def kafka_config(**fields: object) -> Config:
    return Config(profile=KAFKA, **fields)


def test_QuorumControllerTest_testFenceMultipleBrokers():
    """QuorumControllerTest.testFenceMultipleBrokers: five brokers, a topic of five
    partitions with five replicas each; brokers 2-5 are fenced (session expiry) and
    only 1 keeps heartbeating: every partition ends with ISR [1] and leader 1, and
    the leaders are imbalanced (some partition's preferred leader is fenced).

    One scenario per partition, its preferred leader rotating as Kafka's placement
    spreads them. Kafka runs this at metadata version 3.7 (no ELR); with the default
    MinISR of 1 the ELR stays empty under the Kafka profile too."""
    brokers = (1, 2, 3, 4, 5)
    preferred_is_leader = []
    for first in range(len(brokers)):
        assignment = brokers[first:] + brokers[:first]
        sc = Scenario(kafka_config(brokers=brokers, assignment=assignment, min_isr=1))
        for b in (2, 3, 4, 5):
            sc.fence(b)
        assert not sc.state.registration(1).fenced
        assert all(sc.state.registration(b).fenced for b in (2, 3, 4, 5))
        p = sc.partition
        assert (p.isr, p.leader, p.elr) == ({1}, 1, frozenset()), assignment
        preferred_is_leader.append(p.leader == p.replicas[0])
    assert not all(preferred_is_leader)  # arePartitionLeadersImbalanced


def test_QuorumControllerTest_testUncleanShutdownBrokerElrEnabled():
    """QuorumControllerTest.testUncleanShutdownBrokerElrEnabled: RF 3, MinISR 2, every
    broker fenced: no leader, empty ISR, two ELR members, the last leader as
    LastKnownELR. The last leader re-registers after an unclean shutdown: it leaves
    the ELR but stays the LastKnownELR. The other ELR member re-registers cleanly
    (previous broker epoch given): ELR and LastKnownELR unchanged. Once it is
    unfenced it is elected: ISR [it], ELR and LastKnownELR empty."""
    sc = Scenario(kafka_config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    for b in (2, 3, 1):  # Kafka's order of session expiries is not determined
        sc.fence(b)
    p = sc.partition
    assert (p.leader, p.isr) == (NO_LEADER, frozenset())
    assert len(p.elr) == 2 and len(p.last_known_elr) == 1
    (unclean_broker,) = last_known_elr = p.last_known_elr  # the last known leader
    assert unclean_broker in p.elr
    (next_leader,) = p.elr - {unclean_broker}

    sc.restart(unclean_broker, clean=False, unfence=False)  # registers without a previous broker epoch
    assert (sc.partition.elr, sc.partition.last_known_elr) == ({next_leader}, last_known_elr)

    sc.restart(next_leader, clean=True, unfence=False)  # registers with its previous broker epoch
    assert (sc.partition.elr, sc.partition.last_known_elr) == ({next_leader}, last_known_elr)

    sc.unfence(next_leader)
    assert not sc.state.registration(next_leader).fenced
    p = sc.partition
    assert (p.isr, p.elr, p.last_known_elr, p.leader) == ({next_leader}, frozenset(), frozenset(), next_leader)
