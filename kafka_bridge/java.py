"""Apache Kafka's classes, loaded once the JVM is up (``jvm.start``), and the
small Java values built from Python ones."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from .jvm import start, version
from .releases import has_partition, release

#: The one topic's id and name: any fixed ones (nothing here reads them).
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
TOPIC_NAME = "replicheck"


def _immediate_scheduler() -> Any:
    """A ``org.apache.kafka.server.util.Scheduler`` running each task at once, on the
    caller's thread: the epoch cache's asynchronous checkpoint flush (after a
    truncation) then happens before the step returns, deterministically."""
    from jpype import JImplements, JOverride

    @JImplements("org.apache.kafka.server.util.Scheduler")
    class ImmediateScheduler:
        @JOverride
        def startup(self) -> None:
            pass

        @JOverride
        def shutdown(self) -> None:
            pass

        @JOverride
        def schedule(self, name: Any, task: Any, delay: Any, period: Any) -> Any:
            task.run()
            return None

        # The interface's default methods: a proxy must answer them itself.
        @JOverride
        def scheduleOnce(self, name: Any, task: Any, delay: Any = 0) -> Any:
            task.run()
            return None

        @JOverride
        def resizeThreadPool(self, threads: Any) -> None:
            pass

    return ImmediateScheduler()


class Kafka:
    """Kafka's classes, loaded once the JVM is up."""

    def __init__(self) -> None:
        start()
        #: the release whose classes run (one per process): where their APIs differ
        self.release = release(version())
        from jpype import JArray, JClass, JInt, JLong
        self.JArray, self.JInt = JArray, JInt
        self.Integer = JClass("java.lang.Integer")
        self.ArrayList = JClass("java.util.ArrayList")
        self.RegistrationBuilder = JClass("org.apache.kafka.metadata.PartitionRegistration$Builder")
        self.Uuid = JClass("org.apache.kafka.common.Uuid")
        self.UNASSIGNED = JClass("org.apache.kafka.common.DirectoryId").UNASSIGNED
        self.LeaderRecoveryState = JClass("org.apache.kafka.metadata.LeaderRecoveryState")
        self.RECOVERED = self.LeaderRecoveryState.RECOVERED
        self.metadata_version = JClass("org.apache.kafka.server.common.MetadataVersion").latestProduction()
        self.Builder = JClass("org.apache.kafka.controller.PartitionChangeBuilder")
        self.Election = JClass("org.apache.kafka.controller.PartitionChangeBuilder$Election")
        self.topic_id = self.Uuid.fromString(TOPIC_ID)
        # storage: the leader epoch cache
        self.File = JClass("java.io.File")
        self.TopicPartition = JClass("org.apache.kafka.common.TopicPartition")
        self.LeaderEpochFileCache = JClass("org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache")
        self.LeaderEpochCheckpointFile = JClass("org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile")
        self.LogDirFailureChannel = JClass("org.apache.kafka.storage.internals.log.LogDirFailureChannel")
        self.EpochEntry = JClass("org.apache.kafka.storage.internals.log.EpochEntry")
        self.topic_partition = self.TopicPartition(TOPIC_NAME, 0)
        self.scheduler = _immediate_scheduler()
        # the controller's managers, through the bridge's shim (kafka_bridge/java)
        self.JLong = JLong
        self.ControllerShim = JClass("org.apache.kafka.controller.ReplicheckControllerShim")
        self.ControllerFixture = JClass("org.apache.kafka.controller.ReplicheckControllerFixture")
        self.Errors = JClass("org.apache.kafka.common.protocol.Errors")
        self.ApiException = JClass("org.apache.kafka.common.errors.ApiException")
        metadata = "org.apache.kafka.common.metadata."
        self.RegisterBrokerRecord = JClass(metadata + "RegisterBrokerRecord")
        self.PartitionRecord = JClass(metadata + "PartitionRecord")
        self.PartitionChangeRecord = JClass(metadata + "PartitionChangeRecord")
        self.ConfigRecord = JClass(metadata + "ConfigRecord")
        self.ClearElrRecord = JClass(metadata + "ClearElrRecord")
        self.FeatureLevelRecord = JClass(metadata + "FeatureLevelRecord")
        #: a ConfigRecord's resourceType for a broker-level or cluster-level config
        self.broker_resource_type = JClass("org.apache.kafka.common.config.ConfigResource$Type").BROKER.id()
        #: the records that change a broker's registration
        self.registration_records = frozenset(JClass(metadata + name) for name in (
            "RegisterBrokerRecord", "BrokerRegistrationChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord"))
        self.Long = JClass("java.lang.Long")
        self.ApiException = JClass("org.apache.kafka.common.errors.ApiException")
        if has_partition(version()):
            # the broker's replica of the partition, through the bridge's shim (kafka_bridge/java),
            # on the releases it is built for (releases.SHIMS)
            self.PartitionShim = JClass("kafka.cluster.ReplicheckPartitionShim")
            self.FetcherShim = JClass("kafka.server.ReplicheckFetcherShim")
            self.LeaderAndIsr = JClass("org.apache.kafka.metadata.LeaderAndIsr")
            self.UnexpectedAppendOffsetException = JClass(
                "org.apache.kafka.server.storage.log.UnexpectedAppendOffsetException")
            self.Option = JClass("scala.Option")

    def ints(self, xs: Iterable[int]) -> Any:
        return self.JArray(self.JInt)(list(xs))

    def longs(self, xs: Iterable[int]) -> Any:
        return self.JArray(self.JLong)(list(xs))

    def triples(self, flat: Any) -> tuple[tuple[int, int, int], ...]:
        """A Java ``long[]`` of 3n values as n triples (the shim's flat records), read
        at once through the array's buffer rather than element by element."""
        values = memoryview(flat).cast("B").cast("q").tolist() if len(flat) else []
        return tuple(zip(values[0::3], values[1::3], values[2::3]))

    def error_name(self, code: int) -> Optional[str]:
        """Kafka's error name for an error code (None for NONE): the SUT's error strings."""
        error = self.Errors.forCode(code)
        return None if error == self.Errors.NONE else str(error.name())

    def int_list(self, xs: Iterable[int]) -> Any:
        out = self.ArrayList()
        for x in xs:
            out.add(self.Integer(x))
        return out


_KAFKA: Optional[Kafka] = None


def kafka() -> Kafka:
    """Kafka's classes (the JVM is started on first use; ``KafkaUnavailable`` if it cannot be)."""
    global _KAFKA
    if _KAFKA is None:
        _KAFKA = Kafka()
    return _KAFKA


