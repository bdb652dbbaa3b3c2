"""Apache Kafka's own code in the loop (the ``kafka`` extra: JPype and the jars of
``model.KAFKA_RELEASE``, fetched by ``make kafka-jars``; or of another release
chosen before the JVM starts, ``use``, see ``releases``).

``implementation(config)`` builds the implementation "kafka": the SUT's
Kafka-shaped brokers with Kafka's components put in place of ours
(``COMPONENTS``): Kafka's controller request handling,
``org.apache.kafka.controller.ClusterControlManager`` and
``ReplicationControlManager`` (see ``controller``), whose every partition change
Kafka's own ``PartitionChangeBuilder`` decides; and every broker's replica,
``kafka.cluster.Partition`` over Kafka's ``UnifiedLog`` and its
``org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache`` (see
``replica`` and ``partition``), and every follower's fetcher, Kafka's
``kafka.server.AbstractFetcherThread`` (see ``fetcher``). What stays the SUT's is
the brokers' plumbing: the network, the metadata replay, the produce purgatory. It is
compared in lockstep with the model under the Kafka profile through the same
interface as any implementation.

On a release older than the first the ``Partition`` shim is built for
(``releases.SHIMS``), the implementation "kafka" is Kafka's controller and epoch
cache under the SUT's replicas (``CONTROLLER_COMPONENTS``): ``components()``.

Two smaller compositions tell a disagreement's source apart: ``CONTROLLER_COMPONENTS``
(Kafka's controller and epoch cache under the SUT's ``Partition``) and
``BUILDER_COMPONENTS`` (Kafka's ``PartitionChangeBuilder`` alone under the SUT's
controller, with Kafka's epoch cache).
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

from model import KAFKA, KAFKA_RELEASE, PROFILES, Config

from sut import Cluster
from sut.components import Components

from .change_builder import KafkaPartitionChangeBuilder
from .controller import KafkaQuorumController, KafkaRejected
from .epoch_cache import KafkaLeaderEpochFileCache
from .fetcher import KafkaFetcherThread
from .jvm import KafkaUnavailable, lib_dir, start, unavailable, use, version
from .releases import check, has_partition
from .replica import KafkaReplica

#: Kafka's parts put in place of the SUT's: the implementation "kafka". Kafka's controller,
#: Kafka's ``Partition`` (over Kafka's ``UnifiedLog`` and its epoch cache) as every
#: broker's replica (``replica.KafkaReplica``), and Kafka's ``AbstractFetcherThread`` as
#: every follower's fetcher (``fetcher.KafkaFetcherThread``).
COMPONENTS = Components(controller=KafkaQuorumController, epoch_cache=KafkaLeaderEpochFileCache,
                        partition=KafkaReplica, fetcher=KafkaFetcherThread)
#: Kafka's controller, with Kafka's epoch cache in the SUT's replicas.
CONTROLLER_COMPONENTS = Components(controller=KafkaQuorumController, epoch_cache=KafkaLeaderEpochFileCache)
#: Kafka's PartitionChangeBuilder and epoch cache under the SUT's controller.
BUILDER_COMPONENTS = Components(change_builder=KafkaPartitionChangeBuilder, epoch_cache=KafkaLeaderEpochFileCache)

__all__ = ["BUILDER_COMPONENTS", "COMPONENTS", "CONTROLLER_COMPONENTS", "KafkaLeaderEpochFileCache",
           "KafkaPartitionChangeBuilder", "KafkaQuorumController", "KafkaRejected", "KafkaReplica",
           "KafkaUnavailable", "components", "implementation", "implementation_of", "lib_dir", "not_applicable",
           "start", "unavailable", "use", "version"]


def not_applicable(config: Config) -> Optional[str]:
    """Why the implementation "kafka" cannot be compared with the model under
    ``config`` (None: it can). Kafka's code follows every rule of the Kafka profile
    and none of the model's variants, so the config must be the whole profile."""
    if config.profile != KAFKA or config.rules != PROFILES[KAFKA]:
        return (f"Kafka's own code follows every rule of the {KAFKA} profile: the config must be "
                f"Config(profile={KAFKA!r}) with all its rules (a rule switched off is the model's alone)")
    if config.variants:
        return "Kafka's own code implements none of the model's variants"
    return None


def components() -> Components:
    """Kafka's parts in the implementation "kafka" on the release this process runs
    (``version()``): ``COMPONENTS``, or ``CONTROLLER_COMPONENTS`` on a release
    without the ``Partition`` shim."""
    return COMPONENTS if has_partition(version()) else CONTROLLER_COMPONENTS


def _build(config: Config, bugs: frozenset, release: str):
    """The implementation "kafka" on Kafka ``release``'s classes (``implementation``)."""
    why = not_applicable(config)
    if why is not None:
        raise ValueError(f"implementation kafka: {why}")
    use(release)
    start()
    return Cluster(config, bugs, components=components())


def implementation(config: Config, bugs: frozenset = frozenset()):
    """The implementation "kafka" for ``config``, on the pinned release's classes
    (``model.KAFKA_RELEASE``): a ``sut.Cluster`` whose controller is Kafka's
    ``ClusterControlManager`` and ``ReplicationControlManager`` and whose every
    replica is Kafka's ``Partition`` (``components()``). The SUT's ``bugs`` reach
    only the SUT's parts left (the metadata replay, the network). Raises ValueError
    when ``not_applicable(config)`` or when this process runs another release's
    classes (``use``), ``KafkaUnavailable`` when Kafka's classes cannot be loaded."""
    return _build(config, bugs, KAFKA_RELEASE)


def implementation_of(release: str) -> Callable[..., Cluster]:
    """The factory of the implementation "kafka@X" on Kafka ``release``'s classes, as
    ``implementation`` builds it (the pinned release's is ``implementation``, the
    same one each time for every other). Raises ``releases.UnknownRelease`` for a
    release the bridge is not built for."""
    return implementation if check(release) == KAFKA_RELEASE else _release_factory(release)


@functools.cache
def _release_factory(release: str) -> Callable[..., Cluster]:
    def build(config: Config, bugs: frozenset = frozenset()) -> Cluster:
        return _build(config, bugs, release)
    return build
