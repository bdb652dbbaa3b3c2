"""Kafka's own ``org.apache.kafka.controller.PartitionChangeBuilder`` deciding the
SUT controller's partition changes.

``KafkaPartitionChangeBuilder`` is built and used as ``sut.change_builder.
PartitionChangeBuilder`` is: the SUT's ``ReplicationControlManager`` sets the
targets of a change (ISR, replicas, adding, removing) and calls ``build_change``;
here the targets go to Kafka's builder (release ``model.KAFKA_RELEASE``) over a
``PartitionRegistration`` made from the SUT's, and Kafka's
``PartitionChangeRecord`` comes back as the SUT's. Elections (clean, ELR, last
known leader, unclean), the ELR and LastKnownELR rules and reassignment
completion are then Kafka's code's decisions.

Mapping (Kafka's ``ReplicationControlManager`` sets the builder up the same way):
isAcceptableLeader is the SUT controller's "unfenced"; MinISR the config's; ELR
on as the SUT controller's feature level says; the metadata version ``MetadataVersion.latestProduction()``; an unclean
election allowed (``Election.UNCLEAN``) when the change allows one and
``Config.unclean_leader_election`` is on, ``Election.PREFERRED`` for a preferred
election, else ``Election.ONLINE``; replicas back
from an unclean shutdown are ``setUncleanShutdownReplicas``. Directories are all
``DirectoryId.UNASSIGNED`` (the model has one log directory per broker); the
leader recovery state goes both ways by name (``LeaderRecoveryState``), the
change's target (``setTargetLeaderRecoveryState``) being the SUT builder's.

Only the changes ``build_change`` makes are Kafka's; the chapters' paths and
the SUT's own ``build()`` (cancelling a reassignment, the legacy unclean
election, unclean recovery) stay the SUT's.
"""

from __future__ import annotations

from typing import Any, Optional

from sut.change_builder import PartitionChangeBuilder
from sut.metadata import PartitionChangeRecord, PartitionRegistration

from .java import kafka


def recovery_state_name(value: int) -> Optional[str]:
    """A ``PartitionChangeRecord.leaderRecoveryState`` byte as the model's name
    (RECOVERED or RECOVERING); None for -1, Kafka's "no change"."""
    return None if value == -1 else str(kafka().LeaderRecoveryState.of(value).name())


def recovery_state(name: str) -> Any:
    """The model's leader recovery state name as Kafka's ``LeaderRecoveryState``."""
    return kafka().LeaderRecoveryState.valueOf(name)


def change_record_of(m: Any) -> PartitionChangeRecord:
    """Kafka's ``PartitionChangeRecord`` message as the SUT's: the fields Kafka left
    unset (null) stay None, and Kafka's leader -2 is NO_LEADER_CHANGE too, as is
    the leader recovery state -1; the directories are dropped (the model has one
    log directory per broker)."""
    def members(values: Optional[Any]) -> Optional[frozenset[int]]:
        return None if values is None else frozenset(int(v) for v in values)
    replicas = m.replicas()
    return PartitionChangeRecord(
        leader=int(m.leader()), isr=members(m.isr()), elr=members(m.eligibleLeaderReplicas()),
        last_known_elr=members(m.lastKnownElr()),
        replicas=None if replicas is None else tuple(int(r) for r in replicas),
        adding=members(m.addingReplicas()), removing=members(m.removingReplicas()),
        leader_recovery_state=recovery_state_name(int(m.leaderRecoveryState())))


def in_replica_order(members: frozenset[int], replicas: tuple[int, ...]) -> list[int]:
    """``members`` in the order of ``replicas``, then those outside the replicas in
    id order. Kafka compares ISRs as lists (``targetIsr.equals(partition.isr)``),
    so the registration's and the targets' must be listed alike; and Kafka's own
    code can leave a leader outside the replicas in the ISR (a last known leader
    elected after a reverted move, finding 4's state), which must reach it too."""
    return [r for r in replicas if r in members] + sorted(members - frozenset(replicas))


def registration_of(p: PartitionRegistration) -> Any:
    """The SUT's ``PartitionRegistration`` ``p`` as Kafka's: directories all
    ``DirectoryId.UNASSIGNED``, ISR members outside the replicas kept
    (``in_replica_order``)."""
    k = kafka()
    return (k.RegistrationBuilder()
            .setReplicas(k.ints(p.replicas))
            .setDirectories(k.JArray(k.Uuid)([k.UNASSIGNED] * len(p.replicas)))
            .setIsr(k.ints(in_replica_order(p.isr, p.replicas)))
            .setRemovingReplicas(k.ints(r for r in p.replicas if r in p.removing))
            .setAddingReplicas(k.ints(r for r in p.replicas if r in p.adding))
            .setElr(k.ints(sorted(p.elr)))
            .setLastKnownElr(k.ints(sorted(p.last_known_elr)))
            .setLeader(k.Integer(p.leader))
            .setLeaderRecoveryState(recovery_state(p.leader_recovery_state))
            .setLeaderEpoch(k.Integer(p.leader_epoch))
            .setPartitionEpoch(k.Integer(p.partition_epoch))
            .build())


class KafkaPartitionChangeBuilder(PartitionChangeBuilder):
    """``sut.change_builder.PartitionChangeBuilder`` whose ``build_change`` is Kafka's
    ``PartitionChangeBuilder.build`` (see the module doc)."""

    def registration(self) -> Any:
        """The SUT's partition registration as Kafka's ``PartitionRegistration``."""
        return registration_of(self.partition)

    def build_change(self, unclean_shutdown: frozenset[int] = frozenset(),
                     unclean: bool = True, preferred: bool = False) -> Optional[PartitionChangeRecord]:
        """Kafka's record for the targets (None: Kafka's builder made none);
        ``preferred``: ``Election.PREFERRED``."""
        k = kafka()
        acceptable = self.is_acceptable_leader
        builder = k.Builder(self.registration(), k.topic_id, 0, lambda broker: bool(acceptable(int(broker))),
                            k.metadata_version, self.min_isr, self.elr_enabled)
        order = self.target_replicas
        builder.setTargetReplicas(k.int_list(order))
        builder.setTargetIsr(k.int_list(in_replica_order(self.target_isr, order)))
        builder.setTargetAdding(k.int_list(r for r in order if r in self.target_adding))
        builder.setTargetRemoving(k.int_list(r for r in order if r in self.target_removing))
        if unclean_shutdown:
            builder.setUncleanShutdownReplicas(k.int_list(sorted(unclean_shutdown)))
        builder.setElection(k.Election.PREFERRED if preferred else
                            k.Election.UNCLEAN if unclean and self.unclean_leader_election else k.Election.ONLINE)
        builder.setTargetLeaderRecoveryState(recovery_state(self.target_leader_recovery_state))
        builder.setDefaultDirProvider(lambda broker: k.UNASSIGNED)
        built = builder.build()
        if not built.isPresent():
            return None
        record = change_record_of(built.get().message())
        return None if record.is_empty() else record
