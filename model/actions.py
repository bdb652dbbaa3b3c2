"""The closed family of actions (the TLA+ ``Next`` relation, one class per action),
and the action registry.

Each action is a frozen attrs value whose repr reads as a scenario step, e.g.
``FenceBroker(broker=2)``. ``ACTIONS`` describes each class once (its family,
whether it is a fault, the message it sends or delivers, its broker fields, its
default weights, its diagram tag); ``FAMILIES``, ``ACTION_TYPES``, the machine's
weights and faults, the random walk's weights, reduction's broker renaming, the
trace codec and the reports' action vocabulary and step tags are derived from it.
"""

from __future__ import annotations

from typing import Optional, Union

import attrs


# broker lifecycle and faults (ch8, §5.1)
@attrs.frozen
class StartBroker:
    """BrokerRegistration of an offline broker whose previous epoch is fenced (§6.5.1)."""
    broker: int


@attrs.frozen
class ResendRegistration:
    """A running broker sends its registration again, with its incarnation id (its
    lifecycle manager retries one whose answer did not come, and re-registers when
    its log directories or supported features change): the controller amends the
    registration it holds, broker epoch, fencing and controlled shutdown kept
    (``ClusterControlManager.registerBroker``). Enabled only under
    Rule.REGISTRATION_AMENDED: the chapters' registration is a new broker epoch."""
    broker: int


@attrs.frozen
class UnfenceBroker:
    """Heartbeat with wantFence=false (§8.1); may elect an ELR member (§2.8)."""
    broker: int


@attrs.frozen
class FenceBroker:
    """The broker's session expires (missed heartbeats): the controller fences it,
    with §2.8 election rules. Under Rule.FENCED_BROKER_SESSION_EXPIRES also a
    broker its controlled shutdown fenced, whose session still runs: the fencing's
    partition change again (``model.controller.expire_session``)."""
    broker: int


@attrs.frozen
class BeginControlledShutdown:
    """The broker asks to shut down (§8.3: a heartbeat with wantShutDown). The
    controller answers as Kafka's BrokerHeartbeatManager.calculateNextBrokerState
    does for an unfenced broker: one that leads enters controlled shutdown (its
    leadership and ISR membership move away, it stays unfenced); one that leads
    nothing is fenced at once (SHUTDOWN_NOW). The broker keeps running until
    ``ControlledShutdown``."""
    broker: int


@attrs.frozen
class ControlledShutdown:
    """Leadership moved away and fenced, log flushed, marker written (§5.2, §8.3):
    the whole sequence, or its end after ``BeginControlledShutdown``."""
    broker: int


@attrs.frozen
class UncleanShutdown:
    """Abrupt termination (§5.1.1); ``lossy`` discards the unflushed log suffix."""
    broker: int
    lossy: bool


@attrs.frozen
class FailOverController:
    """The active controller resigns (``QuorumController.renounce``) and a standby,
    which has replayed the whole metadata log, becomes active (``claim``,
    ``ClusterControlManager.activate``): the committed metadata is what it was;
    the heartbeat sessions, kept in memory only, are rebuilt from the
    registrations: an unfenced broker's starts afresh, a fenced broker has none
    until its next heartbeat. Requests in flight to the old controller are sent
    again to the new one (the broker's channel to the controller retries), so the
    network keeps them. Enabled only under Rule.CONTROLLER_FAILOVER: the chapters'
    controller is one replicated state machine, whose failover changes nothing
    they hold."""


@attrs.frozen
class FailOverFromSnapshot:
    """The active controller resigns and a controller that restarted becomes
    active: at its start it loaded the quorum's latest metadata snapshot, taken at
    the committed log's end (a quiet cluster's periodic snapshot, ``SnapshotEmitter.
    maybeEmit``), through ``QuorumController.handleLoadSnapshot``, which replays
    every snapshot record at the snapshot's last offset. The snapshot is the
    metadata image written with the options of its features: a partition's ELR and
    LastKnownELR only while the ELR feature is on (Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED;
    ``PartitionRegistration.toRecord``, ``ImageWriterOptions``). The heartbeat
    sessions are rebuilt as for ``FailOverController``; the log and the brokers'
    images stay as they are."""


@attrs.frozen
class Flush:
    """The broker flushes its replica's log to disk."""
    broker: int


@attrs.frozen
class WriteEpochCheckpoint:
    """The log's scheduler runs the leader-epoch checkpoint's write a truncation
    scheduled (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER, ``LeaderEpochFileCache.
    writeIfDirExists``): the file holds the cache. Enabled while one is scheduled."""
    broker: int


# metadata propagation (§2.3.2)
@attrs.frozen
class ReplicateMetadata:
    """The broker applies its next ``count`` metadata records as ONE materialized batch."""
    broker: int
    count: int


# replication (§2.2, ch3)
@attrs.frozen
class SendFetch:
    follower: int


@attrs.frozen
class ReceiveFetchRequest:
    msg: int


@attrs.frozen
class ReceiveFetchResponse:
    msg: int


# ISR changes (§2.9, §6.5)
@attrs.frozen
class ProposeIsrShrink:
    leader: int
    follower: int


def _sorted_ids(ids: object) -> tuple:
    """Broker ids as a sorted tuple: one action per set of followers."""
    return tuple(sorted(ids))  # type: ignore[call-overload]


@attrs.frozen
class ProposeIsrShrinkMany:
    """One AlterPartition removing two or more ``followers`` (kept sorted) at once:
    Kafka's periodic ISR check finding them all out of sync (only under
    Rule.SHRINK_ALL_OUT_OF_SYNC; ``ProposeIsrShrink`` is the check finding one)."""
    leader: int
    followers: tuple[int, ...] = attrs.field(converter=_sorted_ids)


@attrs.frozen
class ProposeIsrExpand:
    leader: int
    follower: int


@attrs.frozen
class AdvanceTime:
    """The brokers' clock moves ``ms`` milliseconds on (Kafka's ``Time``; only
    under Rule.REPLICA_LAG_TIME, ``model.clock``): followers not caught up within
    replica.lag.time.max.ms since become out of sync."""
    ms: int


@attrs.frozen
class ReceiveAlterPartition:
    msg: int


@attrs.frozen
class ReceiveAlterPartitionResponse:
    msg: int


# reassignment (ch4)
@attrs.frozen
class Reassign:
    """AlterPartitionReassignments to ``target`` (ordered broker ids)."""
    target: tuple[int, ...] = attrs.field(converter=tuple)


@attrs.frozen
class CancelReassignment:
    pass


# unclean recovery (§5.3) and legacy unclean leader election (ch7)
@attrs.frozen
class UncleanRecovery:
    pass


@attrs.frozen
class UncleanLeaderElection:
    pass


@attrs.frozen
class ElectPreferredLeader:
    """ElectLeaders with ElectionType.PREFERRED — an operator's request, or the
    controller's periodic leader balancing (``auto.leader.rebalance.enable``), one
    code path in Kafka (``ReplicationControlManager.electLeader``,
    ``PartitionChangeBuilder.electPreferredLeader``): a partition change in which
    the first replica becomes leader when it is a valid leader (an unfenced ISR
    member). Enabled when the first replica does not lead and the change writes
    something (Kafka otherwise answers ELECTION_NOT_NEEDED or
    PREFERRED_LEADER_NOT_AVAILABLE); under Kafka's rules the change also
    completes a reassignment that can complete, whoever leads after it."""
    pass


# dynamic topic configuration (IncrementalAlterConfigs)
@attrs.frozen
class AlterMinIsr:
    """IncrementalAlterConfigs setting the topic's ``min.insync.replicas`` to
    ``min_isr`` (Kafka's ``ConfigurationControlManager.incrementalAlterConfig``):
    a ``ConfigRecord``, then the ELR and LastKnownELR cleared (KIP-966's
    ``ClearElrRecord``, Kafka 4.0.0). Enabled for a new value in 1..the size of
    the target replica set."""
    min_isr: int


@attrs.frozen
class AlterClusterMinIsr:
    """IncrementalAlterConfigs setting the cluster-level ``min.insync.replicas``
    (resource BROKER with the empty name: the default of every topic without its
    own) to ``min_isr``. The topic was created with its own MinISR, which
    overrides the default, so its MinISR does not change; under
    Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR (Kafka 4.0.0) its ELR and LastKnownELR
    are cleared all the same (a ``ClearElrRecord`` with no topic name,
    ``ReplicationControlManager.replayClearAllElrs``). Enabled only under that
    rule (the chapters have no cluster-level default), for any value in 1..the
    size of the target replica set, the one in force included (Kafka writes a
    BROKER resource's ``ConfigRecord`` even when unchanged)."""
    min_isr: int


@attrs.frozen
class AlterUncleanLeaderElection:
    """IncrementalAlterConfigs setting the topic's ``unclean.leader.election.enable``
    (ch7) to ``enable``: a ``ConfigRecord``; the controller's next unclean election
    (``UncleanLeaderElection``, Kafka's periodic ``electUnclean``) and partition
    changes read it. Enabled for a new value."""
    enable: bool


@attrs.frozen
class UpdateElrFeature:
    """UpdateFeatures setting ``eligible.leader.replicas.version`` to 1
    (``enabled``, an upgrade) or 0 (a safe downgrade), Rule.ELR_FEATURE_LEVEL
    (``QuorumController.updateFeatures``, ``ConfigurationControlManager.updateFeatures``):
    a ``FeatureLevelRecord``, after the cluster-level ``min.insync.replicas`` an
    upgrade writes when there is none. Partition registrations are left as they are;
    the controller's next changes read the new level. Enabled for a new level."""
    enabled: bool


# network faults
@attrs.frozen
class DropMessage:
    msg: int


# clients (§2.5–§2.7, §6.4.2)
@attrs.frozen
class Produce:
    """acks=all produce of ``value`` to a broker whose replica presumes leadership."""
    broker: int
    value: int


@attrs.frozen
class Consume:
    """A consumer reads up to the HWM from the current leader."""
    pass


@attrs.frozen
class ListOffsets:
    """A client asks the current leader for the HWM."""
    pass


# healing (ch9's liveness scenarios)
@attrs.frozen
class Heal:
    """Faults stop and the cluster heals: the deterministic, bounded healing
    schedule of ``model.healing`` (brokers restart and are unfenced, metadata
    catches up, every message is delivered, fair fetch rounds, ISR expansions,
    the recoveries the configuration enables), after which the liveness goals
    (``properties.liveness``) must hold. A directive the check draws and expands
    (``model.healing.apply``): never among ``enabled_actions``, and ``step``
    refuses it."""
    pass


Action = Union[
    StartBroker, ResendRegistration, UnfenceBroker, FenceBroker, BeginControlledShutdown, ControlledShutdown, UncleanShutdown, FailOverController,
    FailOverFromSnapshot, Flush,
    WriteEpochCheckpoint,
    ReplicateMetadata, SendFetch, ReceiveFetchRequest, ReceiveFetchResponse,
    ProposeIsrShrink, ProposeIsrShrinkMany, ProposeIsrExpand, AdvanceTime, ReceiveAlterPartition,
    ReceiveAlterPartitionResponse,
    Reassign, CancelReassignment, ElectPreferredLeader, UncleanRecovery, UncleanLeaderElection, AlterMinIsr,
    AlterClusterMinIsr, AlterUncleanLeaderElection, UpdateElrFeature, DropMessage,
    Produce, Consume, ListOffsets, Heal,
]

@attrs.frozen
class ActionKind:
    """What the framework knows of one action class, beside its guard and effect
    (``model.step``): the one place a new action is described.

    family: the harness's family (one machine rule per family). fault: it
      disturbs a healthy partition (crash, fencing, reassignment, message loss, a
      leader giving up on a follower): the machine spaces faults apart.
    sends: the message class it always sends (a request, or the response to the
      message it delivers), else None. receives: the message class it delivers
      (its ``msg`` field), "any" for any message in flight, else None.
      may_send: a message class it sends before ``sends`` under some rule (a
      leader's fetch answer comes after the AlterPartition it proposed serving
      the fetch, Rule.EXPAND_ISR_ON_FETCH; a leader answered NOT_CONTROLLER sends
      its proposal again, Rule.ALTER_PARTITION_ERRORS_KEEP_PENDING), else None.
    broker_fields: its fields holding broker ids (a tuple of them for ``Reassign`` and
      ``ProposeIsrShrinkMany``).
    weight: its default weight for the random walk's ``weighted`` policy (across
      all classes). family_weight: its weight among the enabled classes of its
      family in the machine. swarm: the machine's swarm-testing levels for it (the
      first, 1, is where shrinking goes; 0 leaves it out of an example).
    tag: how a space-time diagram (``spark_reports.diagram``) labels a step of
      it, e.g. ``"md+{count}"``: a ``str.format`` template over its fields and,
      for a client's read, over its ``Outcome``'s (``consumed``,
      ``list_offsets``; drawn only where the outcome was recorded). A bool
      field's format spec ``A|B`` reads A when the field is true, else B; a list
      field's spec is the separator between its items. None: the step is not
      labelled (the diagram draws the message it sends or delivers, or the
      write it makes).
    """

    cls: type
    family: str
    fault: bool = False
    sends: Optional[str] = None
    receives: Optional[str] = None
    may_send: Optional[str] = None
    broker_fields: tuple[str, ...] = ()
    weight: float = 1.0
    family_weight: int = 1
    swarm: tuple[float, ...] = (1,)
    tag: Optional[str] = None

    @property
    def name(self) -> str:
        return self.cls.__name__


_RARE = (1, 0, 4)         # swarm: as is, left out, or the example's theme
_SLOW = (1, 0.25)         # swarm: restarts slowed (the rest of the family scaled up)

#: Every action, in family order. Weights: Flush is as rare as a fault in the
#: machine (Kafka leaves flushing to the OS by default, so a crash usually finds
#: records unflushed); faults are rare and the data path frequent in the walk.
ACTIONS: tuple[ActionKind, ...] = (
    ActionKind(StartBroker, "lifecycle", broker_fields=("broker",), weight=3.0, family_weight=6, swarm=_SLOW,
               tag="start"),
    # Not swarmed, as ProposeIsrShrinkMany: only the Kafka profile amends a registration.
    ActionKind(ResendRegistration, "lifecycle", broker_fields=("broker",), weight=0.1, tag="re-register"),
    ActionKind(UnfenceBroker, "lifecycle", broker_fields=("broker",), weight=3.0, family_weight=6, swarm=_SLOW,
               tag="unfence"),
    ActionKind(FenceBroker, "lifecycle", fault=True, broker_fields=("broker",), weight=0.15, swarm=_RARE, tag="FENCED"),
    ActionKind(BeginControlledShutdown, "lifecycle", fault=True, broker_fields=("broker",), weight=0.1, swarm=_RARE,
               tag="wants shutdown"),
    ActionKind(ControlledShutdown, "lifecycle", fault=True, broker_fields=("broker",), weight=0.15, swarm=_RARE,
               tag="shutdown"),
    ActionKind(UncleanShutdown, "lifecycle", fault=True, broker_fields=("broker",), weight=0.1, swarm=_RARE,
               tag="{lossy:CRASH lossy|crash}"),
    # Not swarmed, as ProposeIsrShrinkMany: only the Kafka profile has sessions to lose.
    ActionKind(FailOverController, "lifecycle", fault=True, weight=0.1, tag="CONTROLLER FAILOVER"),
    # Not swarmed, as FailOverController: only the Kafka profile fails over.
    ActionKind(FailOverFromSnapshot, "lifecycle", fault=True, weight=0.1, tag="CONTROLLER FAILOVER (snapshot)"),
    ActionKind(Flush, "lifecycle", broker_fields=("broker",), weight=2.0, swarm=_RARE, tag="flush"),
    # Not swarmed, as FailOverController: only the Kafka profile schedules the write. Rare
    # on purpose: what it guards against lives in the moments before it runs.
    ActionKind(WriteEpochCheckpoint, "lifecycle", broker_fields=("broker",), weight=0.5,
               tag="epoch checkpoint written"),
    ActionKind(ReplicateMetadata, "metadata", broker_fields=("broker",), weight=5.0, tag="md+{count}"),
    ActionKind(SendFetch, "fetch", sends="FetchRequest", broker_fields=("follower",), weight=6.0, family_weight=2),
    ActionKind(ReceiveFetchRequest, "fetch", sends="FetchResponse", receives="FetchRequest",
               may_send="AlterPartitionRequest", weight=6.0, family_weight=3),
    ActionKind(ReceiveFetchResponse, "fetch", receives="FetchResponse", weight=6.0, family_weight=3),
    ActionKind(ProposeIsrShrink, "isr", fault=True, sends="AlterPartitionRequest",
               broker_fields=("leader", "follower"), weight=0.6, swarm=_RARE, tag="ISR−{follower}"),
    # Not swarmed: a swarm level of its own would be one more draw in every example,
    # the chapters' too, where it is never enabled.
    ActionKind(ProposeIsrShrinkMany, "isr", fault=True, sends="AlterPartitionRequest",
               broker_fields=("leader", "followers"), weight=0.3, tag="ISR−{followers:,}"),
    ActionKind(ProposeIsrExpand, "isr", sends="AlterPartitionRequest", broker_fields=("leader", "follower"),
               weight=3.0, family_weight=3, tag="ISR+{follower}"),
    # Not swarmed, as ProposeIsrShrinkMany: only the Kafka profile has a clock.
    ActionKind(AdvanceTime, "isr", weight=1.0, family_weight=2),
    ActionKind(ReceiveAlterPartition, "isr", sends="AlterPartitionResponse", receives="AlterPartitionRequest",
               weight=4.0, family_weight=3),
    ActionKind(ReceiveAlterPartitionResponse, "isr", receives="AlterPartitionResponse",
               may_send="AlterPartitionRequest", weight=4.0, family_weight=3),
    # The family's main action: the deep scenarios take several moves in a row (a
    # removal, then the re-add, §6.5.4), and the operator's other requests share the
    # family: at weight 1 each, two moves in a row became six times rarer when three
    # joined it (benchmarks/search_tail.py).
    ActionKind(Reassign, "reassignment", fault=True, broker_fields=("target",), weight=0.15, family_weight=3,
               swarm=_RARE, tag="reassign→{target}"),
    ActionKind(CancelReassignment, "reassignment", fault=True, weight=0.3, swarm=_RARE, tag="cancel reassignment"),
    # An operator's request (or the controller's leader balancing), as a move is. Not a
    # fault: the leader it deposes stays an ISR member and a follower.
    ActionKind(ElectPreferredLeader, "reassignment", weight=0.15, swarm=_RARE, tag="preferred leader"),
    # An operator's request to the controller, as a move is: in the same family, so a
    # walk over families does not spend a share of its own on it. A fault: it can
    # empty the ELR a leaderless partition waits on.
    ActionKind(AlterMinIsr, "reassignment", fault=True, weight=0.15, swarm=_RARE, tag="min.insync.replicas={min_isr}"),
    # Not swarmed, as ProposeIsrShrinkMany: only the Kafka profile has a cluster-level default.
    ActionKind(AlterClusterMinIsr, "reassignment", fault=True, weight=0.15,
               tag="cluster min.insync.replicas={min_isr}"),
    # Not a fault: it disturbs nothing by itself; turned on, it lets the unclean election in.
    ActionKind(AlterUncleanLeaderElection, "reassignment", weight=0.15, swarm=_RARE,
               tag="unclean.leader.election.enable={enable:true|false}"),
    # Not swarmed, as AlterClusterMinIsr: only the Kafka profile has feature levels. Not a
    # fault: it disturbs nothing by itself; the partition changes after it read the level.
    ActionKind(UpdateElrFeature, "reassignment", weight=0.15,
               tag="eligible.leader.replicas.version={enabled:1|0}"),
    ActionKind(UncleanRecovery, "recovery", weight=2.0, swarm=_RARE, tag="UNCLEAN RECOVERY"),
    ActionKind(UncleanLeaderElection, "recovery", weight=2.0, swarm=_RARE, tag="UNCLEAN LEADER ELECTION"),
    ActionKind(DropMessage, "network", fault=True, receives="any", weight=0.3, swarm=_RARE),
    ActionKind(Produce, "client", broker_fields=("broker",), weight=4.0, family_weight=3),
    ActionKind(Consume, "client", weight=1.5, family_weight=2, swarm=_RARE, tag="consume → {consumed}"),
    ActionKind(ListOffsets, "client", weight=1.5, family_weight=2, swarm=_RARE, tag="ListOffsets → {list_offsets}"),
    # A directive, not a protocol step: weight 0 keeps it out of every walk.
    ActionKind(Heal, "healing", weight=0.0, tag="HEAL"),
)

#: The families of directives the check expands instead of stepping the model.
DIRECTIVE_FAMILIES = ("healing",)

#: Action class -> its ``ActionKind``.
KINDS: dict[type, ActionKind] = {k.cls: k for k in ACTIONS}

#: Family -> its action classes, in ``ACTIONS`` order.
FAMILIES: dict[str, tuple[type, ...]] = {}
for _k in ACTIONS:
    FAMILIES[_k.family] = FAMILIES.get(_k.family, ()) + (_k.cls,)

ACTION_TYPES: tuple[type, ...] = tuple(k.cls for k in ACTIONS)


def kind_of(action: object) -> ActionKind:
    """The ``ActionKind`` of an action; raises ValueError for a non-action."""
    kind = KINDS.get(type(action))
    if kind is None:
        raise ValueError(f"not a replicheck action: {action!r}; allowed: {[t.__name__ for t in ACTION_TYPES]}")
    return kind


def family_of(action: object) -> str:
    """The family name of an action; raises ValueError for a non-action."""
    return kind_of(action).family


#: What ``model`` exports of this module: every action class and the registry.
__all__ = [k.name for k in ACTIONS] + ["ACTIONS", "ACTION_TYPES", "Action", "ActionKind", "DIRECTIVE_FAMILIES",
                                        "FAMILIES", "KINDS", "family_of", "kind_of"]
