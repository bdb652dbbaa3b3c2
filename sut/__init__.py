"""replicheck's implementation under test: a second, independent implementation
of the KRaft-era partition replication protocol, written the way Kafka's broker
and controller are written (mutable objects with Kafka's names), with a
catalogue of switchable implementation mistakes (``sut.bugs``).

``Cluster(config, bugs=frozenset())``, an implementation under test as
``check.lockstep`` expects one: ``apply(action) -> model.Outcome``,
``is_enabled(action)``, ``observe() -> model.Observation``.
"""

from .bugs import DOCS, Bug, BugDoc
from .cluster import Cluster

__all__ = ["Bug", "BugDoc", "Cluster", "DOCS"]
