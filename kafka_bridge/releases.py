"""The Kafka releases the bridge's Java shims are built for, and how each shim's
source is adapted to a release older than the pinned one (``model.KAFKA_RELEASE``).

The shims are written against the pinned release. Kafka's internal APIs they
call moved or changed signature during 4.x; each such change is one entry of
``SOURCE_CHANGES`` (the first release with the change, the text there, the text
before it), read in the releases' published jars. A shim is built only from
the first release its source compiles against (``SHIMS``): the controller's from
4.0.0 (3.9.0 has no ``eligible.leader.replicas.version`` feature: its ELR needs
an unstable metadata version), the replica's (``kafka.cluster.Partition`` over
``UnifiedLog``) and the follower's fetcher over it (``AbstractFetcherThread``)
from 4.1.0 (4.0.x's ``UnifiedLog`` is core's Scala class: another API, a shim of
its own, not written; 4.1.x's ``Partition.makeLeader`` and ``makeFollower`` take
the ZooKeeper-era ``LeaderAndIsrRequest.PartitionState``, which the bridge's Python
side makes as ReplicaManager does: ``PARTITION_REGISTRATION_SINCE``).
``write_sources(release, folder)`` writes a release's adapted sources;
``make kafka-jars KAFKA_VERSION=X`` compiles them against release X's jars into
``.kafka/X/lib`` (``main``, run by the Makefile, writes the sources first).
"""

from __future__ import annotations

import sys
from pathlib import Path

from model import KAFKA_RELEASE as PINNED   # the release the shims are written against
from model import KAFKA_RELEASES as RELEASES   # those they are built for (from the controller shim's first)
from model import kafka_release_error, release_number

__all__ = ["CONTROLLER_SHIMS", "EPOCH_ENTRY_RECORD_SINCE", "FETCHER_SHIM", "JAVA", "LATEST_EPOCH_OPTIONAL_SINCE",
           "PARTITION_REGISTRATION_SINCE", "PARTITION_SHIM", "PINNED", "RELEASES", "SHIMS", "SOURCE_CHANGES",
           "API_CHANGES", "has_api_change",
           "UnknownRelease", "adapt", "check", "has_partition", "main", "release", "shims", "write_sources"]

JAVA = Path(__file__).resolve().parent / "java"
CONTROLLER_SHIMS = (Path("org/apache/kafka/controller/ReplicheckControllerFixture.java"),
                    Path("org/apache/kafka/controller/ReplicheckControllerShim.java"))
PARTITION_SHIM = Path("kafka/cluster/ReplicheckPartitionShim.java")
FETCHER_SHIM = Path("kafka/server/ReplicheckFetcherShim.java")   # Kafka's fetcher, over the Partition shim
#: Each shim source and the first release it compiles against.
SHIMS = {CONTROLLER_SHIMS[0]: (4, 0, 0), CONTROLLER_SHIMS[1]: (4, 0, 0), PARTITION_SHIM: (4, 1, 0),
         FETCHER_SHIM: (4, 1, 0)}
#: The controller requests whose Java call changed: name -> (the first release with
#: the change, what changed). The shims' sources are adapted to it (``SOURCE_CHANGES``),
#: and the JUnit reproducers write the call of their release (``kafka_bridge.junit``).
API_CHANGES = {
    "createTopics": ((4, 3, 0), "ReplicationControlManager.createTopics takes a boolean"),
    "incrementalAlterConfigs": ((4, 3, 0), "ConfigurationControlManager.incrementalAlterConfigs takes a second "
                                           "boolean"),
    "updateFeatures": ((4, 1, 0), "ConfigurationControlManager.updateFeatures takes the claimed epoch"),
}


def has_api_change(version: tuple[int, ...], change: str) -> bool:
    """Whether release ``version`` (a release number) has the ``API_CHANGES`` entry ``change``."""
    return version >= API_CHANGES[change][0]


#: (first release with the change, the shims' text there, the text before it).
SOURCE_CHANGES = (
    # LogContext moved to clients' internals
    ((4, 4, 0), "org.apache.kafka.common.utils.internals.LogContext", "org.apache.kafka.common.utils.LogContext"),
    # the AlterPartitionManager interface moved from core's Scala to server's Java
    ((4, 4, 0), "org.apache.kafka.server.partition.AlterPartitionManager", "kafka.server.AlterPartitionManager"),
    # UnifiedLog.closeHandlers was renamed closeQuietly
    ((4, 4, 0), "log.closeQuietly()", "log.closeHandlers()"),
    # LogManager.shutdown trims the active segment's indexes before closing a log
    ((4, 4, 0), "        log.prepareActiveSegmentForClose();   // LogManager.shutdown, since 4.4.0\n", ""),
    # the record classes moved to clients' internals
    ((4, 3, 0), "org.apache.kafka.common.record.internal.", "org.apache.kafka.common.record."),
    # the replica's Partition: AlterPartitionListener moved to server's Java, appendRecordsToLeader
    # took the transaction version, LogReadInfo became a record (accessors, not fields)
    ((4, 2, 0), "org.apache.kafka.server.partition.AlterPartitionListener", "kafka.cluster.AlterPartitionListener"),
    ((4, 2, 0), "VerificationGuard.SENTINEL, (short) 0)", "VerificationGuard.SENTINEL)"),
    ((4, 2, 0), "info.fetchedData().records", "info.fetchedData.records"),
    ((4, 2, 0), "info.divergingEpoch()", "info.divergingEpoch"),
    ((4, 2, 0), "info.highWatermark()", "info.highWatermark"),
    ((4, 2, 0), "entries.get(i).epoch(), entries.get(i).startOffset()",
     "entries.get(i).epoch, entries.get(i).startOffset"),
    # createTopics and incrementalAlterConfigs took a "forwarded" flag (false: a request
    # to the controller itself, as before)
    (API_CHANGES["createTopics"][0], "request, Set.of(TOPIC), false)", "request, Set.of(TOPIC))"),
    (API_CHANGES["incrementalAlterConfigs"][0], "incrementalAlterConfigs(Map.of(resource, ops), false, false)",
     "incrementalAlterConfigs(Map.of(resource, ops), false)"),
    # a reassignment may say whether it changes the replication factor (before: it may)
    ((4, 1, 0), "            .setAllowReplicationFactorChange(true)\n", ""),
    # updateFeatures took the controller's epoch
    (API_CHANGES["updateFeatures"][0], "Map.of(feature, type), false, ReplicheckControllerFixture.CLAIM_EPOCH)",
     "Map.of(feature, type), false)"),
)
#: From this release on, Kafka's ``EpochEntry`` is a Java record (``epoch()``,
#: ``startOffset()``); before, a class of public fields. And from this one on,
#: ``LeaderEpochFileCache.latestEpoch`` is an ``Optional<Integer>``; before, an
#: ``OptionalInt``. The bridge's Python side reads either (``epoch_cache``).
EPOCH_ENTRY_RECORD_SINCE = (4, 2, 0)
LATEST_EPOCH_OPTIONAL_SINCE = (4, 1, 0)
#: From this release on, ``Partition.makeLeader`` and ``makeFollower`` take the KRaft
#: ``PartitionRegistration`` (and whether the partition is new); before, the ZooKeeper-era
#: ``LeaderAndIsrRequest.PartitionState`` ReplicaManager made of it
#: (``PartitionRegistration.toLeaderAndIsrPartitionState``).
PARTITION_REGISTRATION_SINCE = (4, 2, 0)


class UnknownRelease(ValueError):
    """A release the bridge is not built for: the message names the allowed ones."""


def release(version: str) -> tuple[int, ...]:
    """``"4.3.1"`` as ``(4, 3, 1)`` (``model.release_number``); raises
    ``UnknownRelease`` for anything else."""
    number = release_number(version)
    if number is None:
        raise UnknownRelease(f"kafka version {version!r}: not a release number X.Y.Z")
    return number


def check(version: str) -> str:
    """``version`` when the bridge can run Kafka's code of it; raises
    ``UnknownRelease`` naming the releases it can."""
    why = kafka_release_error(version)
    if why is not None:
        raise UnknownRelease(why)
    return version


def shims(version: str) -> tuple[Path, ...]:
    """The shim sources (relative to ``kafka_bridge/java``) built for ``version``."""
    return tuple(path for path, since in SHIMS.items() if release(version) >= since)


def has_partition(version: str) -> bool:
    """Whether Kafka's ``Partition`` runs as the brokers' replica on ``version``."""
    return PARTITION_SHIM in shims(version)


def adapt(text: str, version: str) -> str:
    """A shim's source ``text`` adapted to ``version`` (``SOURCE_CHANGES``)."""
    for since, new, old in SOURCE_CHANGES:
        if release(version) < since:
            text = text.replace(new, old)
    return text


def write_sources(version: str, folder: Path) -> list[Path]:
    """Write the shims built for ``version``, adapted, under ``folder``; returns
    the files written. Raises ``UnknownRelease`` (``check``)."""
    written = []
    for path in shims(check(version)):
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(adapt((JAVA / path).read_text(), version))
        written.append(target)
    return written


def main(argv: list[str]) -> None:
    """The Makefile's step before Maven: ``VERSION FOLDER`` writes VERSION's shim
    sources into FOLDER; exits with one line naming an unknown VERSION."""
    try:
        write_sources(argv[0], Path(argv[1]))
    except UnknownRelease as e:
        sys.exit(f"KAFKA_VERSION: {e}")
