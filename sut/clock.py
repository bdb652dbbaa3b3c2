"""``ManualTime``: the brokers' clock (Kafka's ``Time``), moved only by the
driver (``AdvanceTime``). Replica lag (replica.lag.time.max.ms) is measured on
it; it starts at 0 ms."""

from __future__ import annotations

#: Kafka's replica.lag.time.max.ms default (ReplicationConfigs), in ms.
REPLICA_LAG_TIME_MAX_MS = 30_000


class ManualTime:
    """A clock that moves only when told (Kafka's ``MockTime`` without auto-tick)."""

    __slots__ = ("now_ms",)

    def __init__(self) -> None:
        self.now_ms = 0

    def milliseconds(self) -> int:
        return self.now_ms

    def sleep(self, ms: int) -> None:
        """Move the clock ``ms`` (> 0) milliseconds on."""
        self.now_ms += ms
