"""``Cluster``: the SUT's entry point, an implementation under test as
``check.lockstep`` expects one. It wires a controller, the brokers, the network
and the clients (produce responses, the consumer's position), boots the cluster
(registration, unfencing, partition creation, metadata replication — the model's
initial state is where this ends), applies actions by delegating to the
components and returns their ``model.Outcome``, and gives its
``model.Observation`` (``observe.py``). Whether an action is enabled is decided
by the ``Enablement`` mixin (``enablement.py``). It keeps no ghost history.
"""

from __future__ import annotations

from model import (ActionNotEnabled, AdvanceTime, ElectPreferredLeader, AlterClusterMinIsr, AlterMinIsr, AlterPartitionResponse, AlterUncleanLeaderElection, UpdateElrFeature,
                   BeginControlledShutdown, CancelReassignment, Config, Consume, ControlledShutdown, DropMessage,
                   FailOverController, FailOverFromSnapshot, FenceBroker, Flush, WriteEpochCheckpoint, ResendRegistration, ListOffsets, ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany,
                   Produce, Reassign, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                   ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch, StartBroker,
                   UncleanLeaderElection, UncleanRecovery, UncleanShutdown, UnfenceBroker, Heal)
from model import ListOffsetsResult, Observation, Outcome

from . import observe as _observe
from .broker import BrokerServer
from .bugs import Bug
from .clock import ManualTime
from .errors import ControllerFault
from .components import PYTHON, Components
from .enablement import Enablement, Reason
from .metadata import MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE
from .network import InMemoryNetwork
from .purgatory import ClientResponses


class Cluster(Enablement):
    """One partition on a KRaft cluster, implemented with mutable objects.

    ``apply(action)`` raises ``ActionNotEnabled`` exactly when the action is not
    enabled, else returns its ``model.Outcome``; ``observe()`` returns the
    ``model.Observation``.
    A cluster holds no closures: ``copy.deepcopy`` gives an independent branch.
    The SUT implements the correct protocol: ``config.variants`` (protocol
    flaws of the model) are not implemented; its mistakes are ``sut.bugs``.
    """

    # action class -> (guard method, effect method)
    _DISPATCH: dict[type, tuple[str, str]] = {
        StartBroker: ("_g_start", "_e_start"),
        UnfenceBroker: ("_g_unfence", "_e_unfence"),
        FenceBroker: ("_g_fence", "_e_fence"),
        FailOverController: ("_g_fail_over", "_e_fail_over"),
        FailOverFromSnapshot: ("_g_fail_over_from_snapshot", "_e_fail_over_from_snapshot"),
        ResendRegistration: ("_g_resend_registration", "_e_resend_registration"),
        BeginControlledShutdown: ("_g_begin_controlled_shutdown", "_e_begin_controlled_shutdown"),
        ControlledShutdown: ("_g_controlled_shutdown", "_e_controlled_shutdown"),
        UncleanShutdown: ("_g_unclean_shutdown", "_e_unclean_shutdown"),
        Flush: ("_g_flush", "_e_flush"),
        WriteEpochCheckpoint: ("_g_write_epoch_checkpoint", "_e_write_epoch_checkpoint"),
        ReplicateMetadata: ("_g_replicate", "_e_replicate"),
        SendFetch: ("_g_send_fetch", "_e_send_fetch"),
        ReceiveFetchRequest: ("_g_receive_fetch_request", "_e_receive_fetch_request"),
        ReceiveFetchResponse: ("_g_receive_fetch_response", "_e_receive_fetch_response"),
        ProposeIsrShrink: ("_g_shrink", "_e_shrink"),
        ProposeIsrShrinkMany: ("_g_shrink_many", "_e_shrink_many"),
        ProposeIsrExpand: ("_g_expand", "_e_expand"),
        AdvanceTime: ("_g_advance_time", "_e_advance_time"),
        ReceiveAlterPartition: ("_g_receive_alter", "_e_receive_alter"),
        ReceiveAlterPartitionResponse: ("_g_receive_alter_response", "_e_receive_alter_response"),
        Reassign: ("_g_reassign", "_e_reassign"),
        CancelReassignment: ("_g_cancel", "_e_cancel"),
        UncleanRecovery: ("_g_unclean_recovery", "_e_unclean_recovery"),
        UncleanLeaderElection: ("_g_unclean_election", "_e_unclean_election"),
        ElectPreferredLeader: ("_g_preferred_election", "_e_preferred_election"),
        AlterMinIsr: ("_g_alter_min_isr", "_e_alter_min_isr"),
        AlterClusterMinIsr: ("_g_alter_cluster_min_isr", "_e_alter_cluster_min_isr"),
        AlterUncleanLeaderElection: ("_g_alter_unclean", "_e_alter_unclean"),
        UpdateElrFeature: ("_g_update_elr_feature", "_e_update_elr_feature"),
        DropMessage: ("_g_drop", "_e_drop"),
        Produce: ("_g_produce", "_e_produce"),
        Consume: ("_g_consume", "_e_consume"),
        ListOffsets: ("_g_list_offsets", "_e_list_offsets"),
        Heal: ("_g_heal", "_e_heal"),
    }

    def __init__(self, config: Config, bugs: frozenset = frozenset(), components: Components = PYTHON) -> None:
        """``components``: the parts another implementation puts in place of the
        SUT's (``sut.components``; ``kafka_bridge`` puts Kafka's). Raises TypeError
        for a config that is not a ``model.Config`` and ValueError naming unknown bugs."""
        if not isinstance(config, Config):
            raise TypeError(f"Cluster needs a model.Config, got {type(config).__name__}")
        bugs = frozenset(bugs)
        unknown = [b for b in bugs if not isinstance(b, Bug)]
        if unknown:
            raise ValueError(f"unknown bug(s) {unknown!r}; allowed: {[b.name for b in Bug]}")
        self.config = config
        self.bugs = bugs
        self.network = InMemoryNetwork()
        self.responses = ClientResponses()
        self.consumer_position = 0   # the consumer's next offset
        self.time = ManualTime()      # the brokers' clock, moved by AdvanceTime
        self.controller = components.controller(config, self.network, bugs, components.change_builder)
        self.brokers: dict[int, BrokerServer] = {
            b: BrokerServer(b, config, self.controller, self.network, self.responses, bugs, components, self.time)
            for b in config.brokers}
        self._bootstrap()

    # ------------------------------------------------------------------ boot

    def _bootstrap(self) -> None:
        """Every broker registers (broker epochs 0..n-1), catches up with the
        metadata log and is unfenced by its heartbeat; the controller creates the
        partition (leader = first assigned replica); every broker applies it."""
        order = self.config.brokers
        for b in order:
            self.brokers[b].startup()
        for b in order:
            broker = self.brokers[b]
            broker.replicate_metadata(broker.pending_metadata())
            broker.heartbeat()
        self.controller.replication.create_partition(self.config.assignment)
        for b in order:
            broker = self.brokers[b]
            broker.replicate_metadata(broker.pending_metadata())

    # ------------------------------------------------------------------- API

    def _handler(self, action: object) -> tuple[str, str]:
        handler = self._DISPATCH.get(type(action))
        if handler is None:
            raise TypeError(f"not a replicheck action: {action!r}")
        return handler

    def _g_heal(self, action: object) -> Reason:
        # A directive of the check (model.healing): it hands the cluster the
        # healing schedule's actions one by one, never the directive itself.
        return "Heal is a directive: the check expands it into the healing schedule's actions"

    def _e_heal(self, action: object) -> None:  # never reached: the guard refuses
        raise AssertionError("Heal is never applied")

    def why_not_enabled(self, action: object) -> Reason:
        """Why ``action`` is not enabled now, or None. TypeError for a non-action."""
        try:
            return getattr(self, self._handler(action)[0])(action)
        except ControllerFault:   # the guard's dry run of the change faults: the event runs, and faults
            return None

    def is_enabled(self, action: object) -> bool:
        return self.why_not_enabled(action) is None

    def apply(self, action: object) -> Outcome:
        """Apply ``action`` and return what it visibly did; raises ActionNotEnabled
        (with the reason) when it is not enabled."""
        guard, effect = self._handler(action)
        reason = getattr(self, guard)(action)
        if reason is not None:
            raise ActionNotEnabled(action, reason)
        first_id = self.network.next_id
        self.responses.take()
        try:
            result = getattr(self, effect)(action) or {}
        except ControllerFault as fault:   # the event wrote nothing; QuorumController renounces
            self.controller.fail_over()
            result = {"controller_fault": str(fault)}
        appended, acknowledged, failed = self.responses.take()
        return Outcome(appended=appended, acknowledged=acknowledged, failed=failed,
                       sent=tuple(m for m in self.network.in_flight.values() if m.id >= first_id), **result)

    def observe(self) -> Observation:
        """The observable projection (``observe.py``)."""
        return _observe.observation(self)

    # ------------------------------------------------------------ lifecycle

    def _e_start(self, a: StartBroker) -> None:
        self.brokers[a.broker].startup()

    def _e_unfence(self, a: UnfenceBroker) -> None:
        self.brokers[a.broker].heartbeat()

    def _e_fence(self, a: FenceBroker) -> None:
        self.controller.expire_session(a.broker)

    def _e_resend_registration(self, a: ResendRegistration) -> None:
        self.controller.amend_registration(a.broker)

    def _e_fail_over(self, a: FailOverController) -> None:
        self.controller.fail_over()

    def _e_fail_over_from_snapshot(self, a: FailOverFromSnapshot) -> None:
        self.controller.fail_over_from_snapshot()

    def _e_begin_controlled_shutdown(self, a: BeginControlledShutdown) -> None:
        self.brokers[a.broker].begin_controlled_shutdown()

    def _e_controlled_shutdown(self, a: ControlledShutdown) -> None:
        self.controller.report_metadata_offsets(self.heartbeat_offsets())
        self.brokers[a.broker].controlled_shutdown()

    def _e_unclean_shutdown(self, a: UncleanShutdown) -> None:
        # the broker's last heartbeat reported what it had applied
        self.controller.report_metadata_offsets({a.broker: self.brokers[a.broker].image.offset})
        self.brokers[a.broker].unclean_shutdown(a.lossy)

    def _e_flush(self, a: Flush) -> None:
        self.brokers[a.broker].flush()

    def _e_write_epoch_checkpoint(self, a: WriteEpochCheckpoint) -> None:
        self.brokers[a.broker].write_epoch_checkpoint()

    def _e_replicate(self, a: ReplicateMetadata) -> None:
        self.brokers[a.broker].replicate_metadata(a.count)

    # ---------------------------------------------------------------- fetch

    def _e_send_fetch(self, a: SendFetch) -> None:
        b = self.brokers[a.follower]
        assert b.replica_manager.fetcher is not None and b.lifecycle.broker_epoch is not None
        b.replica_manager.fetcher.send_fetch(b.lifecycle.broker_epoch)

    def _e_receive_fetch_request(self, a: ReceiveFetchRequest) -> None:
        req = self.network.take(a.msg)
        self.brokers[req.dst].replica_manager.handle_fetch_request(req)  # type: ignore[arg-type]

    def _e_receive_fetch_response(self, a: ReceiveFetchResponse) -> None:
        resp = self.network.take(a.msg)
        self.brokers[resp.dst].replica_manager.handle_fetch_response(resp)  # type: ignore[arg-type]

    def _e_drop(self, a: DropMessage) -> None:
        self.network.take(a.msg)

    # ------------------------------------------------------------------ ISR

    def _e_shrink(self, a: ProposeIsrShrink) -> None:
        self.brokers[a.leader].replica_manager.maybe_shrink_isr(frozenset({a.follower}))

    def _e_shrink_many(self, a: ProposeIsrShrinkMany) -> None:
        self.brokers[a.leader].replica_manager.maybe_shrink_isr(frozenset(a.followers))

    def _e_expand(self, a: ProposeIsrExpand) -> None:
        self.brokers[a.leader].replica_manager.maybe_expand_isr(a.follower)

    def _e_advance_time(self, a: AdvanceTime) -> None:
        self.time.sleep(a.ms)

    def _e_receive_alter(self, a: ReceiveAlterPartition) -> None:
        req = self.network.take(a.msg)
        self.controller.handle_alter_partition(req)  # type: ignore[arg-type]

    def _e_receive_alter_response(self, a: ReceiveAlterPartitionResponse) -> None:
        resp = self.network.take(a.msg)
        assert isinstance(resp, AlterPartitionResponse)
        self.brokers[resp.dst].replica_manager.handle_alter_partition_response(
            resp.request_id, resp.error, resp.isr, resp.leader_epoch, resp.partition_epoch)

    # --------------------------------------------------------- reassignment

    def _e_reassign(self, a: Reassign) -> None:
        self.controller.alter_partition_reassignments(a.target)

    def _e_cancel(self, a: CancelReassignment) -> None:
        self.controller.cancel_partition_reassignment()

    # ------------------------------------------------------------- recovery

    def _e_unclean_recovery(self, a: UncleanRecovery) -> None:
        self.controller.unclean_recovery(self._log_info)

    def _e_unclean_election(self, a: UncleanLeaderElection) -> None:
        self.controller.unclean_leader_election()

    def _e_preferred_election(self, a: ElectPreferredLeader) -> None:
        self.controller.elect_preferred_leader()

    # -------------------------------------------------------- configuration

    def _e_alter_min_isr(self, a: AlterMinIsr) -> None:
        self.controller.incremental_alter_configs(MIN_INSYNC_REPLICAS, a.min_isr)

    def _e_alter_cluster_min_isr(self, a: AlterClusterMinIsr) -> None:
        self.controller.incremental_alter_configs(MIN_INSYNC_REPLICAS, a.min_isr, cluster_default=True)

    def _e_alter_unclean(self, a: AlterUncleanLeaderElection) -> None:
        self.controller.incremental_alter_configs(UNCLEAN_LEADER_ELECTION_ENABLE, a.enable)

    def _e_update_elr_feature(self, a: UpdateElrFeature) -> None:
        self.controller.update_elr_feature(a.enabled)

    # -------------------------------------------------------------- clients

    def _e_produce(self, a: Produce) -> None:
        self.brokers[a.broker].replica_manager.append_records(a.value)

    def _e_consume(self, a: Consume) -> dict:
        p, _ = self._current_leader()
        assert p is not None
        records = tuple(p.log.read(self.consumer_position, p.log.high_watermark))
        self.consumer_position += len(records)
        return {"consumed": records}

    def _e_list_offsets(self, a: ListOffsets) -> dict:
        p, _ = self._current_leader()
        assert p is not None
        return {"list_offsets": ListOffsetsResult(p.broker_id, p.leader_epoch, p.fetch_offset_for_timestamp())}
