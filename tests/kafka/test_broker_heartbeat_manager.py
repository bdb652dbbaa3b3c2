"""Apache Kafka's ``BrokerHeartbeatManagerTest`` (metadata module, 4.3.1) restated
on the Kafka profile: what a heartbeat asking to shut down is answered
(``calculateNextBrokerState``) and the controlled shutdown offset it waits for
(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS).

Kafka's tests drive the heartbeat manager alone, with metadata offsets and
leaderships picked by hand; here the offsets are the brokers' metadata logs as
they apply them, the leaderships one partition's, and an answer is whether the
model takes the step: ``ControlledShutdown`` enabled is SHUTDOWN_NOW, refused
while its broker waits is CONTROLLED_SHUTDOWN.
"""

from __future__ import annotations

from model import KAFKA, AlterMinIsr, BeginControlledShutdown, Config, ControlledShutdown, FenceBroker, \
    why_not_enabled

from scenario import Scenario

NOT_EXPRESSIBLE = {
    "testHasValidSession": "session contact times and broker epochs picked by hand (the model's session is whether "
                           "one runs, not when it was last renewed)",
    "testMetadataOffsetComparator": "the heartbeat manager's ordering of its active set",
    "testUsableBrokerIterator": "replica placement (usable brokers and their racks)",
    "testTouchThrowsExceptionUnlessRegistered": "broker ids that never registered",
}

#: Four brokers, the partition on three: broker 4 leads nothing.
CONFIG = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)


def _waits(sc: Scenario, broker: int) -> bool:
    why = why_not_enabled(sc.state, ControlledShutdown(broker))
    assert why is None or "controlled shutdown waits for" in why, why
    return why is not None


def test_BrokerHeartbeatManagerTest_testCalculateNextBrokerState():
    """BrokerHeartbeatManagerTest.testCalculateNextBrokerState, on one partition:
    an unfenced broker that leads asking to shut down enters controlled shutdown
    (UNFENCED -> CONTROLLED_SHUTDOWN), one that leads nothing goes at once
    (UNFENCED -> SHUTDOWN_NOW); a broker in controlled shutdown stays so while an
    active broker's reported offset is below its controlled shutdown offset
    (Kafka: broker 1 at 98 below broker 5's 99), and goes once that broker is
    fenced (``manager.fence(1)``: here its session expires); a fenced broker asking
    to shut down goes at once (FENCED -> SHUTDOWN_NOW)."""
    sc = Scenario(CONFIG)
    sc.do(BeginControlledShutdown(1))                  # leader 1: UNFENCED -> CONTROLLED_SHUTDOWN
    assert sc.partition.leader == 2 and sc.state.registration(1).controlled_shutdown_offset is not None
    sc.sync_metadata(2)
    sc.sync_metadata(4)
    assert _waits(sc, 1)                               # 3 has not applied the batch: still CONTROLLED_SHUTDOWN
    assert _waits(sc, 2)                               # leader 2: its first heartbeat would only begin
    assert not _waits(sc, 4)                           # 4 leads nothing: UNFENCED -> SHUTDOWN_NOW
    sc.fence(3)                                        # Kafka's manager.fence(1): the lagging broker leaves the active set
    assert not _waits(sc, 1)                           # CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW
    assert not _waits(sc, 3)                           # a fenced broker: FENCED -> SHUTDOWN_NOW
    sc.do(ControlledShutdown(1))
    sc.do(ControlledShutdown(3))
    assert sc.state.registration(1).fenced and sc.state.registration(3).fenced


def test_BrokerHeartbeatManagerTest_testControlledShutdownOffsetIsOnlyUpdatedOnce():
    """BrokerHeartbeatManagerTest.testControlledShutdownOffsetIsOnlyUpdatedOnce: the
    offset is the one the heartbeat that began the controlled shutdown set; records
    written later (a MinISR change) do not move it, so the broker goes once the
    others have applied the batch, not the later records. (Kafka's test updates it a
    second time by hand; here the broker's later heartbeats do, and the same holds.)"""
    sc = Scenario(CONFIG)
    sc.do(BeginControlledShutdown(1))
    awaited = sc.state.registration(1).controlled_shutdown_offset
    assert awaited == len(sc.state.controller.metadata_log)
    for b in (2, 3, 4):
        sc.sync_metadata(b)
    sc.do(AlterMinIsr(1))
    assert len(sc.state.controller.metadata_log) > awaited
    assert why_not_enabled(sc.state, BeginControlledShutdown(1)) == "broker 1 is already shutting down"
    assert sc.state.registration(1).controlled_shutdown_offset == awaited
    assert not _waits(sc, 1)                           # the later records need not reach anyone
    sc.do(FenceBroker(4))
    assert sc.state.registration(1).controlled_shutdown_offset == awaited
