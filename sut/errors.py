"""Kafka's error codes (``org.apache.kafka.common.protocol.Errors``) and the
exceptions its controller throws (``org.apache.kafka.common.errors``), for the
errors the SUT answers with on the wire (Fetch, AlterPartition, produce
completion) and the refusals of its controller.

A message carries an error by its name (``Errors.X.name``), as the model's
messages do; the numeric code and the default message are Kafka's.
"""

from __future__ import annotations

import enum
from typing import Optional


class Errors(enum.Enum):
    """``Errors``: each member's value is (code, default message); ``NONE`` is
    success (Kafka's ``Errors.NONE``, code 0)."""

    def __init__(self, code: int, message: Optional[str]) -> None:
        self.code = code
        self.message = message

    NONE = 0, None
    OFFSET_OUT_OF_RANGE = 1, "The requested offset is not within the range of offsets maintained by the server."
    NOT_LEADER_OR_FOLLOWER = 6, ("For requests intended only for the leader, this error indicates that the broker "
                                 "is not the current leader. For requests intended for any replica, this error "
                                 "indicates that the broker is not a replica of the topic partition.")
    NOT_CONTROLLER = 41, "This is not the correct controller for this cluster."
    INVALID_REPLICA_ASSIGNMENT = 39, "Replica assignment is invalid."
    INVALID_REQUEST = 42, ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")
    FENCED_LEADER_EPOCH = 74, "The leader epoch in the request is older than the epoch on the broker."
    UNKNOWN_LEADER_EPOCH = 75, "The leader epoch in the request is newer than the epoch on the broker."
    STALE_BROKER_EPOCH = 77, "Broker epoch has changed."
    NO_REASSIGNMENT_IN_PROGRESS = 85, "No partition reassignment is in progress."
    INVALID_UPDATE_VERSION = 95, "The given update version was invalid."
    INELIGIBLE_REPLICA = 107, "The new ISR contains at least one ineligible replica."
    NEW_LEADER_ELECTED = 108, ("The AlterPartition request successfully updated the partition state but the "
                               "leader has changed.")

    def __repr__(self) -> str:
        return f"Errors.{self.name}({self.code})"


class ApiException(Exception):
    """``ApiException``: a refusal with its message; ``error`` is the code
    ``ApiError.fromThrowable`` maps the exception to."""

    error = Errors.NONE

    def __init__(self, message: Optional[str] = None) -> None:
        super().__init__(message or self.error.message)


class StaleBrokerEpochException(ApiException):
    error = Errors.STALE_BROKER_EPOCH


class InvalidReplicaAssignmentException(ApiException):
    error = Errors.INVALID_REPLICA_ASSIGNMENT


class NoReassignmentInProgressException(ApiException):
    error = Errors.NO_REASSIGNMENT_IN_PROGRESS


class ControllerFault(Exception):
    """A controller event threw an exception that is not an ``ApiException``: Kafka's
    ``QuorumController`` takes it for a fault and renounces (``handleEventException``).
    Raised by the leader acceptor (Rule.LEADER_ACCEPTOR_READS_DIRECTORY) and, from
    Kafka's own managers, by the bridge; ``Cluster`` fails the controller over. The
    message is Kafka's exception's."""
