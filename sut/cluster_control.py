"""``ClusterControlManager``: the controller's broker registrations — broker
epochs and fencing (§1.2.2, §6.5.1, ch8)."""

from __future__ import annotations

from typing import Optional

from .bugs import Bug
from .errors import StaleBrokerEpochException


class BrokerRegistration:
    __slots__ = ("broker_id", "epoch", "fenced", "in_controlled_shutdown", "record_offset", "session",
                 "controlled_shutdown_offset", "reported_offset")

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.epoch: Optional[int] = None   # offset of the latest registration batch
        self.fenced = True
        self.in_controlled_shutdown = False   # §8.3; cleared by the next registration
        self.record_offset: Optional[int] = None   # offset of the latest RegisterBrokerRecord
        # a heartbeat session (BrokerHeartbeatManager) from the registration until it
        # expires: a controlled shutdown's fencing keeps it
        self.session = True
        # the heartbeat manager's (in the active controller's memory only): the log's end
        # (exclusive) a controlled shutdown waits for, and the metadata offset the
        # broker's heartbeats last reported (None: none since the registration or activation)
        self.controlled_shutdown_offset: Optional[int] = None
        self.reported_offset: Optional[int] = None

    def __repr__(self) -> str:
        return (f"BrokerRegistration({self.broker_id}, epoch={self.epoch}, fenced={self.fenced}, "
                f"in_controlled_shutdown={self.in_controlled_shutdown})")


class ClusterControlManager:
    def __init__(self, brokers: tuple[int, ...]) -> None:
        self.registrations: dict[int, BrokerRegistration] = {b: BrokerRegistration(b) for b in brokers}

    def registration(self, broker: int) -> BrokerRegistration:
        return self.registrations[broker]

    def is_unfenced(self, broker: int) -> bool:
        """Kafka's ``isActive``: false for an id no broker registered (the NoLeader a
        LastKnownELR can hold)."""
        reg = self.registrations.get(broker)
        return reg is not None and not reg.fenced

    def is_active(self, broker: int) -> bool:
        """Kafka's ``ClusterControlManager.isActive`` (the builder's acceptable leader):
        registered, unfenced and not in controlled shutdown."""
        reg = self.registrations.get(broker)
        return reg is not None and not reg.fenced and not reg.in_controlled_shutdown

    def can_register(self, broker: int) -> bool:
        """A new broker epoch is only handed out once the previous one is fenced (§6.5.1, §8.1)."""
        return self.registrations[broker].fenced

    def registration_is_clean(self, broker: int, previous_broker_epoch: Optional[int]) -> bool:
        """A broker restarts cleanly when its clean-shutdown marker names the broker
        epoch the controller still holds for it (§5.2). A broker never registered
        before has nothing to recover."""
        reg = self.registrations[broker]
        if reg.epoch is None:
            return True
        return previous_broker_epoch is not None and previous_broker_epoch == reg.epoch

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        """Kafka's ``ClusterControlManager.checkBrokerEpoch``: a request from a broker
        must carry the broker epoch of its registration (§6.5.1); raises
        ``StaleBrokerEpochException`` with Kafka's message."""
        registered = self.registrations[broker_id].epoch
        if registered == broker_epoch:
            return
        if registered is None:
            raise StaleBrokerEpochException(f"No broker registration found for broker id {broker_id}")
        raise StaleBrokerEpochException(f"Expected broker epoch {registered}, but got broker epoch {broker_epoch}")

    def register(self, broker: int, epoch: int) -> None:
        reg = self.registrations[broker]
        reg.epoch = epoch
        reg.fenced = True
        reg.in_controlled_shutdown = False
        reg.session = True
        self.forget_heartbeats(broker)

    def forget_heartbeats(self, broker: int) -> None:
        """The heartbeat manager starts the broker's state anew (Kafka's
        ``BrokerHeartbeatManager.register`` after ``remove``, as a RegisterBrokerRecord's
        replay does): no controlled shutdown offset, no metadata offset reported."""
        reg = self.registrations[broker]
        reg.controlled_shutdown_offset = reg.reported_offset = None

    def report(self, broker: int, metadata_offset: int) -> None:
        """A heartbeat from an unfenced broker reports the records it has applied
        (``BrokerHeartbeatManager.touch``)."""
        reg = self.registrations[broker]
        if not reg.fenced:
            reg.reported_offset = metadata_offset

    def lowest_active_offset(self, excluding: int, reports: Optional[dict[int, int]] = None,
                             fenced_too: bool = False) -> Optional[tuple[int, int]]:
        """(broker, reported offset) of the active broker other than ``excluding``
        (registered, unfenced, no controlled shutdown offset) that reported the lowest
        metadata offset, 0 for none reported (``BrokerHeartbeatManager.lowestActiveOffset``,
        Kafka's -1); None when no other broker is active. ``reports``: offsets the
        unfenced brokers among them report now (``report``, without keeping them).
        ``fenced_too``: fenced brokers counted as well (a mistake the controller
        switches on as a planted bug)."""
        reports = reports or {}
        active = [((reports[b] if b in reports and not reg.fenced else reg.reported_offset) or 0, b)
                  for b, reg in self.registrations.items()
                  if b != excluding and reg.epoch is not None and (fenced_too or not reg.fenced)
                  and reg.controlled_shutdown_offset is None]
        if not active:
            return None
        offset, broker = min(active)
        return broker, offset

    def renew_session(self, broker: int) -> None:
        """A heartbeat renews the broker's session, fenced or not."""
        self.registrations[broker].session = True

    def end_session(self, broker: int) -> None:
        self.registrations[broker].session = False

    def activate(self, bugs: frozenset = frozenset()) -> None:
        """A new active controller's heartbeat manager (``ClusterControlManager.activate``):
        a fresh session for each unfenced broker, none for a fenced one (with
        Bug.ACTIVATION_TRACKS_FENCED_BROKERS in ``bugs``: one for every registered
        broker)."""
        track_fenced = Bug.ACTIVATION_TRACKS_FENCED_BROKERS in bugs   # BUG when set
        for reg in self.registrations.values():
            reg.session = reg.epoch is not None and (not reg.fenced or track_fenced)
            reg.controlled_shutdown_offset = reg.reported_offset = None

    def fence(self, broker: int) -> None:
        reg = self.registrations[broker]
        reg.fenced = True
        reg.controlled_shutdown_offset = None   # a fenced broker leaves controlled shutdown (touch)

    def enter_controlled_shutdown(self, broker: int) -> None:
        self.registrations[broker].in_controlled_shutdown = True

    def unfence(self, broker: int) -> None:
        """The heartbeat that unfences renews the session too."""
        self.registrations[broker].fenced = False
        self.renew_session(broker)
