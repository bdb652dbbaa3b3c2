"""``Enablement``: whether an action is enabled, decided from the SUT's own
objects (broker lifecycle states, controller registrations and partition, the
hosted replicas, fetchers, the network and the consumer's position). Mixed into
``Cluster``; each ``_g_<action>`` returns None when enabled, else the reason.

The reasons need not read like the model's; whether there is one must agree. A
Produce may carry any value: that values are unique and increasing is the
model's bookkeeping (its ghost history), which the harness's probes respect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from model import (NO_LEADER, AdvanceTime, ElectPreferredLeader, AlterClusterMinIsr, AlterMinIsr, AlterPartitionRequest, AlterUncleanLeaderElection, AlterPartitionResponse, CancelReassignment, Config, UpdateElrFeature,
                   Consume,
                   BeginControlledShutdown, ControlledShutdown, DropMessage, FailOverController, FailOverFromSnapshot, FenceBroker, ResendRegistration, FetchRequest, FetchResponse, Flush, WriteEpochCheckpoint, ListOffsets,
                   ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, Produce, Reassign, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                   Rule, SendFetch, StartBroker, UncleanLeaderElection, UncleanRecovery, UncleanShutdown,
                   UnfenceBroker)

from .lifecycle import ACTIVE, OFFLINE
from .errors import ApiException, Errors
from .partition import Partition, ReplicaRole
from .replication_control import validate_manual_partition_assignment

if TYPE_CHECKING:
    from .broker import BrokerServer
    from .controller import QuorumController
    from .network import InMemoryNetwork

Reason = Optional[str]


class Enablement:
    config: Config
    brokers: "dict[int, BrokerServer]"
    controller: "QuorumController"
    network: "InMemoryNetwork"
    consumer_position: int

    def _log_info(self, broker: int) -> Optional[tuple[int, int]]:
        return self.brokers[broker].replica_log_info()

    def _known(self, broker: object) -> Reason:
        if broker not in self.config.brokers:
            return f"unknown broker {broker!r}; brokers are {self.config.brokers}"
        return None

    def _g_active(self, broker: object) -> Reason:
        if (e := self._known(broker)):
            return e
        state = self.brokers[broker].lifecycle.state  # type: ignore[index]
        return None if state in ACTIVE else f"broker {broker} is {state.value}"

    def _running_leader(self, broker: int) -> Optional[Partition]:
        b = self.brokers[broker]
        if not b.lifecycle.is_running:
            return None
        return b.replica_manager.leader_partition()

    def _current_leader(self) -> tuple[Optional[Partition], Reason]:
        """The controller's leader, running and acting as leader in the controller's
        leader epoch (where clients are routed)."""
        reg = self.controller.replication.partition
        assert reg is not None
        if reg.leader == NO_LEADER:
            return None, "the partition has no leader"
        p = self._running_leader(reg.leader)
        if p is None or p.leader_epoch != reg.leader_epoch:
            return None, f"leader {reg.leader} is not yet acting in leader epoch {reg.leader_epoch}"
        return p, None

    def _g_start(self, a: StartBroker) -> Reason:
        if (e := self._known(a.broker)):
            return e
        broker = self.brokers[a.broker]
        if broker.lifecycle.state not in OFFLINE:
            return f"broker {a.broker} is {broker.lifecycle.state.value}, not offline"
        if not self.controller.cluster.can_register(a.broker):
            return f"the controller still holds an unfenced registration of broker {a.broker} (§6.5.1)"
        return None

    def _g_unfence(self, a: UnfenceBroker) -> Reason:
        if (e := self._g_active(a.broker)):
            return e
        if self.brokers[a.broker].lifecycle.wants_shutdown:
            return f"broker {a.broker} is shutting down: its heartbeats carry wantShutDown"
        if not self.controller.can_unfence(a.broker, self.brokers[a.broker].image.offset):
            return f"the controller does not unfence broker {a.broker} (already unfenced, or behind its registration)"
        return None

    def _g_fence(self, a: FenceBroker) -> Reason:
        if (e := self._known(a.broker)):
            return e
        if self.controller.cluster.is_unfenced(a.broker):
            return None
        session = self.controller.cluster.registration(a.broker).session
        if not (session and self.config.follows(Rule.FENCED_BROKER_SESSION_EXPIRES)):
            return f"broker {a.broker} is already fenced"
        return None

    def _g_resend_registration(self, a: ResendRegistration) -> Reason:
        if not self.config.follows(Rule.REGISTRATION_AMENDED):
            return "a broker registers once per broker epoch under the chapters"
        return self._g_active(a.broker)

    def _g_fail_over(self, a: FailOverController) -> Reason:
        if not self.config.follows(Rule.CONTROLLER_FAILOVER):
            return "the controller never fails over under the chapters"
        return None

    def _g_fail_over_from_snapshot(self, a: FailOverFromSnapshot) -> Reason:
        if not self.config.follows(Rule.SNAPSHOT_WRITES_ELR_ONLY_WHEN_ENABLED):
            return "a snapshot holds what the log holds unless the ELR is written only when enabled"
        return None

    def _g_begin_controlled_shutdown(self, a: BeginControlledShutdown) -> Reason:
        if (e := self._known(a.broker)):
            return e
        b = self.brokers[a.broker]
        if not b.lifecycle.is_running:
            return f"broker {a.broker} is {b.lifecycle.state.value}, not running"
        if b.lifecycle.wants_shutdown:
            return f"broker {a.broker} is already shutting down"
        if not self.controller.cluster.is_unfenced(a.broker):
            return f"broker {a.broker} is fenced: it would be let go at once (ControlledShutdown)"
        return None

    def _g_controlled_shutdown(self, a: ControlledShutdown) -> Reason:
        if (e := self._g_active(a.broker)):
            return e
        return self.controller.controlled_shutdown_wait(a.broker, self.heartbeat_offsets())

    def heartbeat_offsets(self) -> dict[int, int]:
        """The metadata offset (records applied) each running broker's heartbeats
        report: read as current, as the model reads them."""
        return {b: s.image.offset for b, s in self.brokers.items() if s.lifecycle.state in ACTIVE}

    def _g_unclean_shutdown(self, a: UncleanShutdown) -> Reason:
        if not isinstance(a.lossy, bool):
            return f"lossy must be True or False, got {a.lossy!r}"
        return self._g_active(a.broker)

    def _g_flush(self, a: Flush) -> Reason:
        if (e := self._g_active(a.broker)):
            return e
        p = self.brokers[a.broker].replica_manager.partition
        if p is None or p.log.recovery_point >= p.log.log_end_offset:
            return f"broker {a.broker} has nothing unflushed"
        return None

    def _g_write_epoch_checkpoint(self, a: WriteEpochCheckpoint) -> Reason:
        if (e := self._g_active(a.broker)):
            return e
        if not self.config.follows(Rule.EPOCH_CHECKPOINT_WRITTEN_LATER):
            return "the chapters' epoch cache is written with every change (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER)"
        p = self.brokers[a.broker].replica_manager.partition
        if p is None or not p.log.epoch_checkpoint_scheduled:
            return f"broker {a.broker} has no epoch checkpoint write scheduled"
        return None

    def _g_replicate(self, a: ReplicateMetadata) -> Reason:
        if (e := self._g_active(a.broker)):
            return e
        pending = self.brokers[a.broker].pending_metadata()
        if not isinstance(a.count, int) or not 1 <= a.count <= pending:
            return f"count must be in 1..{pending}, got {a.count!r}"
        return None

    def _g_send_fetch(self, a: SendFetch) -> Reason:
        if (e := self._known(a.follower)):
            return e
        b = self.brokers[a.follower]
        p = b.replica_manager.partition
        if not b.lifecycle.is_running or p is None or p.role is not ReplicaRole.FOLLOWER:
            return f"broker {a.follower} hosts no running follower"
        fetcher = b.replica_manager.fetcher
        if fetcher is None:
            return f"follower {a.follower} knows no leader"
        if (e := fetcher.why_not_fetch()):
            return e
        if fetcher.has_outstanding_fetch(b.lifecycle.broker_epoch):
            return f"follower {a.follower} already has a fetch in flight"
        return None

    def _message(self, msg_id: object, kind: type) -> tuple[object, Reason]:
        m = self.network.get(msg_id)
        if m is None or not isinstance(m, kind):
            return None, f"no {kind.__name__} with id {msg_id!r} in flight"
        return m, None

    def _g_delivery(self, msg_id: object, kind: type) -> Reason:
        m, e = self._message(msg_id, kind)
        if e:
            return e
        dst = m.dst  # type: ignore[attr-defined]
        if not self.brokers[dst].lifecycle.is_running:
            return f"recipient broker {dst} is not running"
        return None

    def _g_receive_fetch_request(self, a: ReceiveFetchRequest) -> Reason:
        return self._g_delivery(a.msg, FetchRequest)

    def _g_receive_fetch_response(self, a: ReceiveFetchResponse) -> Reason:
        return self._g_delivery(a.msg, FetchResponse)

    def _g_drop(self, a: DropMessage) -> Reason:
        # AlterPartition is retried until answered: losing it is only a delay.
        m = self.network.get(a.msg)
        if m is None or not isinstance(m, (FetchRequest, FetchResponse)):
            return f"no fetch message with id {a.msg!r} in flight"
        return None

    def _g_leader_idle(self, leader: object) -> tuple[Optional[Partition], Reason]:
        if (e := self._known(leader)):
            return None, e
        p = self._running_leader(leader)  # type: ignore[arg-type]
        if p is None:
            return None, f"broker {leader} does not host a running leader"
        return p, p.alter_partition_in_flight()

    def _g_shrink(self, a: ProposeIsrShrink) -> Reason:
        p, e = self._g_leader_idle(a.leader)
        if e:
            return e
        if a.follower == a.leader or a.follower not in p.in_sync_replicas:  # type: ignore[union-attr]
            return f"{a.follower} is not a follower in leader {a.leader}'s ISR"
        if (why := p.is_follower_out_of_sync(a.follower)):  # type: ignore[union-attr]
            return why
        return self._check_finds(p, {a.follower})  # type: ignore[arg-type]

    def _check_finds(self, p: Partition, followers: set[int]) -> Reason:
        """With the clock, the ISR check removes exactly the followers it finds out
        of sync now (``getOutOfSyncReplicas``)."""
        if not self.config.follows(Rule.REPLICA_LAG_TIME):
            return None
        found = p.out_of_sync_replicas()
        if found != followers:
            return f"the ISR check finds {sorted(found)} out of sync now, not {sorted(followers)}"
        return None

    def _g_advance_time(self, a: AdvanceTime) -> Reason:
        if not self.config.follows(Rule.REPLICA_LAG_TIME):
            return "the clock does not move without Kafka's lag-time rule"
        if not isinstance(a.ms, int) or a.ms < 1:
            return f"ms must be a positive number of milliseconds, got {a.ms!r}"
        return None

    def _g_shrink_many(self, a: ProposeIsrShrinkMany) -> Reason:
        """Kafka's ``maybeShrinkIsr`` removes every follower it finds out of sync in
        one AlterPartition; the chapters' leader one per proposal."""
        if not self.config.follows(Rule.SHRINK_ALL_OUT_OF_SYNC):
            return "one follower per shrink proposal"
        p, e = self._g_leader_idle(a.leader)
        if e:
            return e
        assert p is not None
        if len(a.followers) < 2 or len(set(a.followers)) != len(a.followers):
            return f"not two or more distinct followers: {a.followers!r}"
        for f in a.followers:
            if f == a.leader or f not in p.in_sync_replicas:
                return f"{f} is not a follower in leader {a.leader}'s ISR"
            if (why := p.is_follower_out_of_sync(f)):
                return why
        return self._check_finds(p, set(a.followers))

    def _g_expand(self, a: ProposeIsrExpand) -> Reason:
        if self.config.follows(Rule.EXPAND_ISR_ON_FETCH):
            return "expansions are proposed inside the follower's fetch"
        if (e := self._known(a.leader)):
            return e
        p = self._running_leader(a.leader)  # type: ignore[arg-type]
        if p is None:
            return f"broker {a.leader} does not host a running leader"
        return p.why_not_expand(a.follower)  # type: ignore[arg-type]

    def _g_receive_alter_response(self, a: ReceiveAlterPartitionResponse) -> Reason:
        return self._g_delivery(a.msg, AlterPartitionResponse)

    def _g_receive_alter(self, a: ReceiveAlterPartition) -> Reason:
        return self._message(a.msg, AlterPartitionRequest)[1]

    def _g_reassign(self, a: Reassign) -> Reason:
        """AlterPartitionReassignments: a target Kafka's controller accepts
        (``validateManualPartitionAssignment``) with at least MinISR replicas that
        changes the replicas (Kafka: their order too), while no move is in progress."""
        reg = self.controller.replication.partition
        assert reg is not None
        if reg.is_reassigning:
            return (f"a reassignment of {list(reg.replicas)} (adding {sorted(reg.adding)}, removing "
                    f"{sorted(reg.removing)}) is in progress")
        try:
            validate_manual_partition_assignment(a.target, self.controller.cluster.registrations)
        except ApiException as e:
            return f"{e.error.name}: {e}"
        target = a.target
        min_isr = self.controller.replication.min_isr
        if len(target) < min_isr:
            return f"the target has {len(target)} replica(s), fewer than min.insync.replicas={min_isr}"
        if self.config.follows(Rule.REASSIGNMENT_REPLICA_ORDER):
            unchanged = target == reg.replicas
        else:
            unchanged = frozenset(target) == frozenset(reg.replicas)
        return f"the replicas are already {list(reg.replicas)}" if unchanged else None

    def _g_cancel(self, a: CancelReassignment) -> Reason:
        """Cancelling (``cancelPartitionReassignment``): a move in progress whose revert
        the controller allows. The controller is asked first, with no move in progress
        too: Kafka's own refusal then decides (the bridge's controller asks Kafka's)."""
        if self.controller.replication.can_cancel_reassignment():
            return None
        reg = self.controller.replication.partition
        if reg is None or not reg.is_reassigning:
            return f"{Errors.NO_REASSIGNMENT_IN_PROGRESS.name}: {Errors.NO_REASSIGNMENT_IN_PROGRESS.message}"
        return ("the revert would leave the ISR below min.insync.replicas (§4.5), or need an unclean leader "
                "election that is disabled")

    def _g_unclean_recovery(self, a: UncleanRecovery) -> Reason:
        if not self.controller.replication.recovery_candidates(self._log_info):
            return f"unclean recovery ({self.config.unclean_recovery}) cannot run now (§5.3.1)"
        return None

    def _g_preferred_election(self, a: ElectPreferredLeader) -> Reason:
        why = self.controller.replication.preferred_election_refused()
        return None if why is None else f"ElectLeaders(PREFERRED) writes nothing: {why}"

    def _g_unclean_election(self, a: UncleanLeaderElection) -> Reason:
        if self.controller.replication.unclean_leader_election_candidate() is None:
            return "legacy unclean leader election is disabled or not possible (ch7)"
        return None

    def _min_isr_out_of_range(self, min_isr: object) -> Reason:
        """A MinISR outside 1..the target replica set's size (the replicas not being
        removed): larger is an operator's mistake the model does not draw."""
        reg = self.controller.replication.partition
        size = 0 if reg is None else len([r for r in reg.replicas if r not in reg.removing])
        if isinstance(min_isr, bool) or not isinstance(min_isr, int) or not 1 <= min_isr <= size:
            return f"min.insync.replicas must be in 1..{size}, got {min_isr!r}"
        return None

    def _g_alter_min_isr(self, a: AlterMinIsr) -> Reason:
        """IncrementalAlterConfigs of ``min.insync.replicas``: a new value, at most the
        target replica set's size (larger is an operator's mistake the model does not
        draw; Kafka writes nothing for an unchanged value)."""
        if (e := self._min_isr_out_of_range(a.min_isr)):
            return e
        if a.min_isr == self.controller.replication.min_isr:
            return f"min.insync.replicas is already {a.min_isr}"
        return None

    def _g_alter_cluster_min_isr(self, a: AlterClusterMinIsr) -> Reason:
        """IncrementalAlterConfigs of the cluster-level ``min.insync.replicas``: only
        where the profile has such a default (Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR),
        any value up to the target replica set's size, the one in force included."""
        if not self.config.follows(Rule.CLUSTER_MIN_ISR_CLEARS_EVERY_ELR):
            return "no cluster-level min.insync.replicas under the chapters"
        return self._min_isr_out_of_range(a.min_isr)

    def _g_alter_unclean(self, a: AlterUncleanLeaderElection) -> Reason:
        """IncrementalAlterConfigs of ``unclean.leader.election.enable``: a new value."""
        if not isinstance(a.enable, bool):
            return f"unclean.leader.election.enable must be true or false, got {a.enable!r}"
        if a.enable == self.controller.replication.unclean_leader_election_enable:
            return f"unclean.leader.election.enable is already {str(a.enable).lower()}"
        return None

    def _g_update_elr_feature(self, a: UpdateElrFeature) -> Reason:
        """UpdateFeatures of ``eligible.leader.replicas.version``: only where the
        profile has feature levels (Rule.ELR_FEATURE_LEVEL), to a new level."""
        if not self.config.follows(Rule.ELR_FEATURE_LEVEL):
            return "no feature levels under the chapters"
        if not isinstance(a.enabled, bool):
            return f"enabled must be true or false, got {a.enabled!r}"
        if a.enabled == self.controller.replication.elr_enabled:
            return f"eligible.leader.replicas.version is already {int(a.enabled)}"
        return None

    def _g_produce(self, a: Produce) -> Reason:
        if (e := self._known(a.broker)):
            return e
        if self._running_leader(a.broker) is None:  # type: ignore[arg-type]
            return f"broker {a.broker} does not host a running leader"
        return None

    def _g_consume(self, a: Consume) -> Reason:
        p, e = self._current_leader()
        if e:
            return e
        if p.log.high_watermark <= self.consumer_position:  # type: ignore[union-attr]
            return "nothing new below the HWM"
        return None

    def _g_list_offsets(self, a: ListOffsets) -> Reason:
        return self._current_leader()[1]
