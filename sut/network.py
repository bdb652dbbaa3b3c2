"""``InMemoryNetwork``: messages in flight between brokers and the controller,
each with a unique, increasing id; any one may be delivered (or, for fetches,
lost) next. Messages are the wire format (the ``model`` message types)."""

from __future__ import annotations

from typing import Callable, Optional

from model import FetchRequest, FetchResponse, Message


class InMemoryNetwork:
    def __init__(self) -> None:
        self.in_flight: dict[int, Message] = {}   # insertion (= id) order
        self.next_id = 1

    def send(self, build: Callable[[int], Message]) -> Message:
        """Assign the next id, build the message with it and put it in flight."""
        msg_id = self.next_id
        self.next_id += 1
        msg = build(msg_id)
        self.in_flight[msg_id] = msg
        return msg

    def get(self, msg_id: object) -> Optional[Message]:
        try:
            return self.in_flight.get(msg_id)  # type: ignore[arg-type]
        except TypeError:  # unhashable id: no such message
            return None

    def take(self, msg_id: int) -> Message:
        """Remove a message from the network for delivery (or loss)."""
        return self.in_flight.pop(msg_id)

    def fetch_outstanding(self, follower: int, broker_epoch: Optional[int], leader_epoch: int) -> bool:
        """Whether ``follower``'s fetch session (its broker epoch and leader epoch)
        has a request or its response still in flight (one fetch at a time)."""
        for m in self.in_flight.values():
            if type(m) is FetchRequest:
                if m.src == follower and m.broker_epoch == broker_epoch and m.leader_epoch == leader_epoch:
                    return True
            elif type(m) is FetchResponse:
                if m.dst == follower and m.broker_epoch == broker_epoch and m.request_leader_epoch == leader_epoch:
                    return True
        return False
