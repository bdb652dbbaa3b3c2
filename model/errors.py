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
