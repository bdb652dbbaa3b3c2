"""Errors raised by the reference model."""


class ActionNotEnabled(Exception):
    """Raised by ``step`` when an action is not enabled in the given state.

    ``action`` is the rejected action; ``reason`` says, in protocol terms, which
    precondition failed (e.g. "broker 2 is fenced").
    """

    def __init__(self, action: object, reason: str) -> None:
        super().__init__(f"{action!r} is not enabled: {reason}")
        self.action = action
        self.reason = reason


class ControllerFault(Exception):
    """Raised inside a controller event whose handling throws in Kafka's controller
    (Rule.LEADER_ACCEPTOR_READS_DIRECTORY): not an API error answered to the
    requester but a fault, on which Kafka's ``QuorumController`` renounces
    (``handleEventException``). ``model.step`` catches it: the event writes nothing
    and the active controller fails over. The message is Kafka's exception's."""
