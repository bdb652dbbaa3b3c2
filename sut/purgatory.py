"""What the clients of the cluster receive, and the produce requests waiting for it.

``ClientResponses`` collects the responses one action delivers to clients (a
write appended, acknowledged or failed); the cluster hands them out as the
action's ``model.Outcome``. ``DelayedProducePurgatory`` is one broker's acks=all
produce requests waiting for the HWM (Kafka: ``ReplicaManager``'s
``delayedProducePurgatory`` of ``DelayedProduce``, completed by
``Partition.tryCompleteDelayedRequests`` after the HWM moves, §2.6).

Neither keeps anything a real broker would not: no committed log, no record of
past acknowledgements (the ghost history lives in the model only).
"""

from __future__ import annotations

from typing import Callable, Optional


class ClientResponses:
    """The produce responses of the action being applied, in the order delivered."""

    def __init__(self) -> None:
        self.appended: list[tuple[int, int]] = []
        self.acknowledged: list[tuple[int, int]] = []
        self.failed: list[int] = []

    def take(self) -> tuple[tuple, tuple, tuple]:
        """(appended, acknowledged, failed) since the last take, as tuples; clears them."""
        out = (tuple(self.appended), tuple(self.acknowledged), tuple(self.failed))
        self.appended.clear()
        self.acknowledged.clear()
        self.failed.clear()
        return out


class DelayedProducePurgatory:
    """One broker's acks=all writes appended on its leader replica, waiting for the
    HWM to pass them: ``(value, offset)`` in arrival order."""

    def __init__(self, responses: ClientResponses) -> None:
        self.responses = responses
        self.waiting: list[tuple[int, int]] = []

    def rejected(self, value: int) -> None:
        """NOT_ENOUGH_REPLICAS: the write was not appended (§2.6)."""
        self.responses.failed.append(value)

    def watch(self, value: int, offset: int) -> None:
        """The write was appended at ``offset``; it waits for the HWM."""
        self.responses.appended.append((value, offset))
        self.waiting.append((value, offset))

    def check_and_complete(self, high_watermark: int) -> None:
        """The HWM moved: the waiting writes below it are acknowledged, in offset order."""
        done = sorted((w for w in self.waiting if w[1] < high_watermark), key=lambda w: w[1])
        if done:
            self.waiting = [w for w in self.waiting if w[1] >= high_watermark]
            self.responses.acknowledged.extend(done)

    def complete_as(self, completes: Callable[[int], Optional[int]]) -> None:
        """Each waiting write, in offset order, asks ``completes(offset + 1)`` whether
        it completes, as Kafka's ``DelayedProduce.tryComplete`` asks
        ``Partition.checkEnoughReplicasReachOffset`` for its required offset (the
        write's last offset + 1): None keeps it waiting, 0 (NONE) acknowledges it,
        any other error code fails it (NOT_ENOUGH_REPLICAS_AFTER_APPEND)."""
        waiting = []
        for value, offset in sorted(self.waiting, key=lambda w: w[1]):
            code = completes(offset + 1)
            if code is None:
                waiting.append((value, offset))
            elif code == 0:
                self.responses.acknowledged.append((value, offset))
            else:
                self.responses.failed.append(value)
        self.waiting = waiting

    def fail_all(self) -> None:
        """Every waiting write fails (NOT_LEADER_OR_FOLLOWER on a step-down or
        shutdown, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR falls below MinISR)."""
        self.responses.failed.extend(value for value, _ in self.waiting)
        self.waiting = []
