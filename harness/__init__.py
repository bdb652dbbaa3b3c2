"""The stateful harness: the Hypothesis state machine pairing the reference
model with the SUT, failure reports, protocol coverage and plain random walks."""

from .failures import PropertyViolated, SutDiverged
from .machine import ReplicationMachine, machine_for
from .strategies import configs

__all__ = ["PropertyViolated", "ReplicationMachine", "SutDiverged", "configs", "machine_for"]
