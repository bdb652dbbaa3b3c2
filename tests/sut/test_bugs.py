"""Every bug of the catalogue (``sut.bugs``) is a real, reachable code path: for
each, a short hand-written action sequence after which the buggy SUT's
outcome or observation differs from the model's (or it refuses an action the model takes, or
enables one the model refuses), while the correct SUT matches the model after
every step.

Scenarios drive three things in lock-step (``Trio``): the model, the correct
SUT and the buggy SUT. Message ids are taken from the model's network, so the
scenarios read as the protocol does ("deliver 3's fetch", "the controller
handles the AlterPartition").
"""

from __future__ import annotations

from typing import Callable, Optional

import pytest

import model
from model import (AlterClusterMinIsr, AlterMinIsr, AlterPartitionRequest, AlterPartitionResponse, BeginControlledShutdown,
                   Config, ControlledShutdown, ElectPreferredLeader, FailOverController, FailOverFromSnapshot, FenceBroker, FetchRequest, FetchResponse, ListOffsets,
                   ProposeIsrExpand, ProposeIsrShrink, Produce, Reassign, ReceiveAlterPartition, ResendRegistration,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                   SendFetch, StartBroker, UncleanRecovery, UncleanShutdown, UnfenceBroker, UpdateElrFeature,
                   WriteEpochCheckpoint)
from model.profile import rules_error
from sut import DOCS, Bug

from difftools import expect_agreement, lockstep

C3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_recovery="balanced")
C3_MIN1 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1, unclean_recovery="balanced")
#: Kafka's profile with unclean.leader.election.enable: a fencing elects uncleanly.
KAFKA_ULE = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_leader_election=True,
                   profile=model.KAFKA)
#: RF 3 under the Kafka profile, MinISR 1: a leader alone in the ISR takes writes.
KAFKA_MIN1 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1, profile=model.KAFKA)
C4 = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, unclean_recovery="balanced")
#: RF 2 of 3 brokers, with the one Kafka rule the code path of EPOCH_ASSIGN_KEEPS_LATER_OFFSETS needs.
C3_UNWRITTEN = Config(brokers=(1, 2, 3), assignment=(2, 3), min_isr=2, rules=DOCS[Bug.EPOCH_ASSIGN_KEEPS_LATER_OFFSETS].needs)


class Trio:
    """The model, the correct SUT and the buggy SUT, driven together: two
    locksteps (``difftools.lockstep``) taking the same actions."""

    def __init__(self, config: Config, bug: Bug) -> None:
        self.good = lockstep(config)
        self.bad = lockstep(config, {bug})
        self.bug = bug
        self.detected: Optional[str] = None

    @property
    def state(self) -> model.ClusterState:
        return self.good.state

    @property
    def trace(self) -> list:
        return self.good.trace

    # -------------------------------------------------------------- driving

    def do(self, action) -> None:
        """An action the model takes: the correct SUT must match it exactly; the
        buggy SUT takes it too until it has been caught (it differs, or refuses)."""
        expect_agreement(self.good.step(action), "the correct SUT differs")
        if not self.detected:
            self._judge(self.bad.step(action))

    def attempt(self, action) -> None:
        """An action the model (and the correct SUT) refuse here; a buggy SUT that
        enables it is caught."""
        assert model.why_not_enabled(self.state, action) is not None, f"the model takes {action!r}"
        expect_agreement(self.good.probe([action]), "the correct SUT differs")
        if not self.detected:
            self._judge(self.bad.probe([action]))

    def _judge(self, verdict) -> None:
        if verdict is not None:
            self.detected = verdict.text

    # ------------------------------------------------------------- helpers

    def _new(self, kind: type):
        msg = self.state.network.get(self.state.network.next_id - 1)
        assert isinstance(msg, kind), msg
        return msg

    def send_fetch(self, follower: int) -> int:
        self.do(SendFetch(follower))
        return self._new(FetchRequest).id

    def serve(self, request_id: int) -> int:
        """The leader handles a fetch request; returns the response id."""
        self.do(ReceiveFetchRequest(request_id))
        return self._new(FetchResponse).id

    def fetch(self, follower: int) -> None:
        """One fetch round trip."""
        self.do(ReceiveFetchResponse(self.serve(self.send_fetch(follower))))

    def propose(self, leader: int, follower: int, expand: bool) -> int:
        self.do(ProposeIsrExpand(leader, follower) if expand else ProposeIsrShrink(leader, follower))
        return self._new(AlterPartitionRequest).id

    def controller_handles(self, request_id: int) -> int:
        self.do(ReceiveAlterPartition(request_id))
        return self._new(AlterPartitionResponse).id

    def alter_isr(self, leader: int, follower: int, expand: bool) -> None:
        self.do(ReceiveAlterPartitionResponse(self.controller_handles(self.propose(leader, follower, expand))))

    def sync(self, broker: int) -> None:
        pending = self.state.pending_metadata(broker)
        if pending:
            self.do(ReplicateMetadata(broker, pending))

    def produce(self, broker: int) -> None:
        self.do(Produce(broker, self.state.history.next_value))

    def restart_uncleanly(self, broker: int, lossy: bool = False) -> None:
        """Crash, (fenced already or now), register again with an empty broker epoch,
        catch up with the metadata and be unfenced."""
        self.do(UncleanShutdown(broker, lossy))
        if not self.state.registration(broker).fenced:
            self.do(FenceBroker(broker))
        self.do(StartBroker(broker))
        self.sync(broker)
        self.do(UnfenceBroker(broker))


# ------------------------------------------------------------------ scenarios

def _lagging_new_leader(t: Trio) -> None:
    """§3.1 / §6.4.1: leader 1 commits A (HWM 1) but the responses carrying HWM 1
    stay in flight; it writes B and is fenced; 2 leads epoch 2 with HWM 0 < LESO 1."""
    t.produce(1)
    t.fetch(2)
    t.fetch(3)
    t.serve(t.send_fetch(2))
    t.serve(t.send_fetch(3))           # leader HWM 1; followers still at HWM 0
    t.produce(1)                       # B, never replicated
    t.do(FenceBroker(1))               # leader 2, epoch 2
    t.sync(2)


def epoch_cache_not_truncated(t: Trio) -> None:
    # Follower 2 holds X from epoch 2 that leader 3 (epoch 3) never had: it truncates X,
    # and its next fetch must carry last fetched epoch 1, not 2.
    t.produce(1)
    t.fetch(2)
    t.fetch(3)                         # A (epoch 1) everywhere
    t.do(FenceBroker(1))               # leader 2, epoch 2
    t.sync(2)
    t.produce(2)                       # X (epoch 2) on 2 only
    t.do(FenceBroker(2))               # ISR [3] below MinISR: 3 leads epoch 3, 2 joins the ELR
    t.sync(3)
    t.sync(2)
    t.fetch(2)                         # diverging epoch (1, 1): 2 truncates to 1
    t.send_fetch(2)


def end_offset_for_epoch_off_by_one(t: Trio) -> None:
    t.produce(1)
    t.fetch(2)
    t.fetch(3)
    t.do(FenceBroker(1))               # leader 2 epoch 2, cache [1=>0, 2=>1]
    t.sync(2)
    t.sync(3)
    t.serve(t.send_fetch(3))           # 3 is merely behind: epoch 1 ends at 1 = its fetch offset


def follower_hwm_updated_before_truncation(t: Trio) -> None:
    _lagging_new_leader(t)
    t.sync(1)                          # 1 follows 2 with [A, B], HWM 1
    t.fetch(1)                         # diverging (1, 1) with leader HWM 0: 1 keeps HWM 1


def truncate_to_leader_offset(t: Trio) -> None:
    # §3.3 case E: follower 2 = [A(1), X(2)], leader 3 = [A(1), B(1), C(3)]; the
    # diverging epoch is (1, 2) but 2's own epoch 1 ends at 1.
    t.produce(1)
    t.fetch(2)
    t.fetch(3)
    t.produce(1)
    t.fetch(3)                         # 3 = [A, B]
    t.do(FenceBroker(1))               # leader 2, epoch 2
    t.sync(2)
    t.produce(2)                       # 2 = [A, X]
    t.do(FenceBroker(2))               # leader 3, epoch 3
    t.sync(3)
    t.produce(3)                       # 3 = [A, B, C]
    t.sync(2)
    t.fetch(2)


def hwm_from_isr_not_maximal_isr(t: Trio) -> None:
    t.alter_isr(1, 3, expand=False)    # ISR [1, 2]
    t.fetch(3)                         # 3 fetched in epoch 1 at the HWM: eligible
    t.propose(1, 3, expand=True)       # Maximal ISR [1, 2, 3], pending
    t.produce(1)
    t.fetch(2)
    t.serve(t.send_fetch(2))           # 2 at offset 1; 3 still at 0: the HWM must stay 0


def stale_leader_epoch_accepted_in_fetch(t: Trio) -> None:
    req = t.send_fetch(2)              # sent in epoch 1
    t.do(Reassign((1, 2)))             # removing 3 completes at once: epoch 2, leader 1
    t.sync(1)
    t.serve(req)                       # must be FENCED_LEADER_EPOCH


def stale_alter_partition_response_applied(t: Trio) -> None:
    t.do(Reassign((1, 2, 4)))          # replicas [1, 2, 3, 4], adding 4, removing 3
    t.sync(1)
    t.sync(4)
    t.fetch(4)
    t.alter_isr(1, 4, expand=True)     # completes the reassignment: the answer is in epoch 2


def pending_isr_not_rolled_back_on_error(t: Trio) -> None:
    req = t.propose(1, 2, expand=False)
    t.do(FenceBroker(3))               # partition epoch moves on
    t.do(ReceiveAlterPartitionResponse(t.controller_handles(req)))   # INVALID_UPDATE_VERSION


def _isr_down_to_leader(t: Trio) -> None:
    t.do(FenceBroker(3))               # ISR [1, 2]
    t.do(FenceBroker(2))               # ISR [1] < MinISR: ELR [2]


def elr_not_cleared_at_min_isr(t: Trio) -> None:
    _isr_down_to_leader(t)
    t.do(UnfenceBroker(3))
    t.sync(1)
    t.fetch(3)
    t.controller_handles(t.propose(1, 3, expand=True))   # ISR [1, 3] reaches MinISR: ELR emptied


def unclean_registration_keeps_elr(t: Trio) -> None:
    _isr_down_to_leader(t)
    t.do(UncleanShutdown(2, False))
    t.do(StartBroker(2))               # empty broker epoch: ELR -> LastKnownELR


def out_of_sync_follower_state_not_reset(t: Trio) -> None:
    t.alter_isr(1, 3, expand=False)    # ISR [1, 2]
    t.fetch(3)                         # 3 fetched in epoch 1
    t.do(Reassign((1, 3)))             # removing 2 completes (MinISR 1): epoch 2, leader 1
    t.sync(1)                          # the marker of 3's epoch-1 fetch must be cleared


def reassignment_completes_without_adding_in_isr(t: Trio) -> None:
    t.do(Reassign((1, 2, 4)))          # adding 4, removing 3
    t.sync(1)
    t.controller_handles(t.propose(1, 3, expand=False))  # final ISR [1, 2] lacks 4: no completion


def alter_partition_ignores_broker_epoch(t: Trio) -> None:
    # §6.5.1 case 3: 3 fetched, then restarted uncleanly; the leader proposes it with
    # the broker epoch of its previous life.
    t.alter_isr(1, 3, expand=False)
    t.fetch(3)
    t.restart_uncleanly(3)
    t.controller_handles(t.propose(1, 3, expand=True))   # INELIGIBLE_REPLICA


def unclean_recovery_picks_first_candidate(t: Trio) -> None:
    t.produce(1)
    t.fetch(3)                         # only 3 holds A
    t.do(FenceBroker(1))
    t.do(FenceBroker(2))
    t.do(FenceBroker(3))               # no leader, ISR [], ELR [2, 3]
    t.restart_uncleanly(2)             # LastKnownELR [2]
    t.restart_uncleanly(3)             # LastKnownELR [2, 3], both answer
    t.do(UncleanRecovery())            # 3 has (epoch 1, LEO 1) > 2's (-1, 0)


def metadata_batch_last_delta_only(t: Trio) -> None:
    _isr_down_to_leader(t)
    t.sync(1)                          # both changes in one batch


def produce_ignores_min_isr(t: Trio) -> None:
    _isr_down_to_leader(t)
    t.sync(1)
    t.produce(1)                       # NOT_ENOUGH_REPLICAS


def min_isr_change_not_applied_to_log(t: Trio) -> None:
    t.alter_isr(1, 3, expand=False)    # ISR [1, 2]
    t.do(AlterMinIsr(3))
    t.sync(1)                          # the leader's log config: MinISR 3
    t.produce(1)                       # NOT_ENOUGH_REPLICAS (ISR 2 < 3)


def list_offsets_ignores_leso(t: Trio) -> None:
    _lagging_new_leader(t)
    t.do(ListOffsets())                # HWM 0 < LESO 1: "unknown"


def isr_expansion_ignores_leso(t: Trio) -> None:
    t.produce(1)
    t.fetch(2)                         # 2 = [A]
    t.do(FenceBroker(1))               # leader 2 epoch 2, LESO 1, HWM 0
    t.sync(2)
    t.sync(3)
    t.alter_isr(2, 3, expand=False)    # ISR [2]
    t.fetch(3)                         # 3 fetched at offset 0 = HWM, below the LESO
    t.attempt(ProposeIsrExpand(2, 3))


def controlled_shutdown_without_flush(t: Trio) -> None:
    t.produce(1)
    t.do(ControlledShutdown(1))


def pending_writes_kept_on_step_down(t: Trio) -> None:
    t.produce(1)                       # waiting for the HWM
    t.do(FenceBroker(1))
    t.sync(1)                          # 1 becomes a follower: the write fails


def epoch_assign_keeps_later_offsets(t: Trio) -> None:
    # 2 leads epoch 1 at offset 0, 3 leads epoch 2 without writing (its cache keeps
    # 2 -> 0, Rule.EPOCH_CACHE_KEEPS_UNWRITTEN_EPOCH), 2 leads again, epochs skipped
    # in one metadata batch: assigning its new epoch at 0 must drop its 1 -> 0.
    t.do(FenceBroker(2))               # leader 3
    t.sync(3)
    t.do(FenceBroker(3))               # leaderless: 3 is the ISR's last member
    t.do(UnfenceBroker(2))             # 2 elected from the ELR
    t.sync(2)                          # every change at once: leader again
    t.sync(3)                          # 3 follows, its last fetched epoch the one it led
    t.serve(t.send_fetch(3))           # the leader's End Offset for that epoch


def controlled_shutdown_broker_elected(t: Trio) -> None:
    t.alter_isr(1, 3, expand=False)           # ISR [1, 2]
    t.do(BeginControlledShutdown(1))           # leader 2, ISR [2], ELR [1] (below MinISR)
    t.do(FenceBroker(2))                       # ISR empty: 1 is no acceptable leader, nobody leads


def leader_stays_recovering(t: Trio) -> None:
    t.do(FenceBroker(3))
    t.sync(3)
    t.do(UnfenceBroker(3))             # 3 back, out of the ISR
    t.do(FenceBroker(2))               # ISR [1], ELR [2]
    t.do(FenceBroker(1))               # no ISR or ELR member is acceptable: 3 elected uncleanly, RECOVERING
    t.sync(3)
    t.sync(2)
    t.do(UnfenceBroker(2))
    t.sync(3)
    t.sync(2)
    t.serve(t.send_fetch(2))           # 3 proposes [2, 3], marked RECOVERED by a correct leader


def cluster_min_isr_overrides_topic(t: Trio) -> None:
    t.do(AlterClusterMinIsr(1))        # the default lowered; the topic keeps its own MinISR 2
    t.sync(1)                          # the buggy leader takes 1 as its log's MinISR


def fencing_ignores_elr_feature(t: Trio) -> None:
    t.do(UpdateElrFeature(False))      # eligible.leader.replicas.version=0
    t.do(FenceBroker(3))               # ISR [1, 2]: at MinISR, no ELR either way
    t.do(FenceBroker(2))               # ISR [1] below MinISR: the buggy change puts 2 in the ELR


def epoch_checkpoint_writes_truncation_snapshot(t: Trio) -> None:
    t.produce(1)
    t.fetch(2)
    t.fetch(3)
    t.do(FenceBroker(1))               # 2 leads epoch 2: its entry (2, 1)
    t.sync(2)
    t.do(FenceBroker(2))               # 3 leads epoch 3
    t.sync(2)
    t.sync(3)
    t.fetch(2)                         # 2 truncates (2, 1) away: a write scheduled (the buggy one of [(1, 0)])
    t.produce(3)
    t.fetch(2)                         # 2 assigns (3, 1) and writes it at once
    t.attempt(WriteEpochCheckpoint(2)) # nothing left to write; the buggy write would put back [(1, 0)]


def amended_registration_fences(t: Trio) -> None:
    t.do(ResendRegistration(1))        # leader 1 registers again: the buggy record fences it


def activation_tracks_fenced_brokers(t: Trio) -> None:
    t.do(FenceBroker(3))               # 3's session expires: fenced, no session
    t.do(FailOverController())         # the buggy controller starts a session for 3 all the same


def snapshot_options_from_metadata_version(t: Trio) -> None:
    t.do(FenceBroker(3))               # ISR [1, 2]
    t.do(FenceBroker(2))               # ISR [1], ELR [2]
    t.do(FailOverFromSnapshot())       # the buggy snapshot leaves ELR [2] out, the feature on


def fenced_broker_holds_controlled_shutdown(t: Trio) -> None:
    t.do(FenceBroker(3))                    # 3's session expires
    t.do(BeginControlledShutdown(1))        # leader 1 asks to shut down: leadership to 2
    t.sync(2)                               # the one active broker applies the move
    t.do(ControlledShutdown(1))             # the buggy controller waits for fenced 3 all the same


def preferred_election_ignores_isr(t: Trio) -> None:
    t.produce(1)
    t.do(FenceBroker(1))               # leader 2, ISR [2, 3]; 1 holds an unreplicated write
    t.sync(1)
    t.do(UnfenceBroker(1))             # back, not yet in the ISR
    t.attempt(ElectPreferredLeader())  # 1 is not an ISR member: no preferred election


SCENARIOS: dict[Bug, tuple[Config, Callable[[Trio], None]]] = {
    Bug.EPOCH_ASSIGN_KEEPS_LATER_OFFSETS: (C3_UNWRITTEN, epoch_assign_keeps_later_offsets),
    Bug.EPOCH_CACHE_NOT_TRUNCATED: (C3, epoch_cache_not_truncated),
    Bug.END_OFFSET_FOR_EPOCH_OFF_BY_ONE: (C3, end_offset_for_epoch_off_by_one),
    Bug.FOLLOWER_HWM_UPDATED_BEFORE_TRUNCATION: (C3, follower_hwm_updated_before_truncation),
    Bug.TRUNCATE_TO_LEADER_OFFSET: (C3_MIN1, truncate_to_leader_offset),
    Bug.HWM_FROM_ISR_NOT_MAXIMAL_ISR: (C3, hwm_from_isr_not_maximal_isr),
    Bug.STALE_LEADER_EPOCH_ACCEPTED_IN_FETCH: (C3, stale_leader_epoch_accepted_in_fetch),
    Bug.PRODUCE_IGNORES_MIN_ISR: (C3, produce_ignores_min_isr),
    Bug.LIST_OFFSETS_IGNORES_LESO: (C3, list_offsets_ignores_leso),
    Bug.STALE_ALTER_PARTITION_RESPONSE_APPLIED: (C4, stale_alter_partition_response_applied),
    Bug.PENDING_ISR_NOT_ROLLED_BACK_ON_ERROR: (C3, pending_isr_not_rolled_back_on_error),
    Bug.OUT_OF_SYNC_FOLLOWER_STATE_NOT_RESET: (C3_MIN1, out_of_sync_follower_state_not_reset),
    Bug.ISR_EXPANSION_IGNORES_LESO: (C3, isr_expansion_ignores_leso),
    Bug.ELR_NOT_CLEARED_AT_MIN_ISR: (C3, elr_not_cleared_at_min_isr),
    Bug.UNCLEAN_REGISTRATION_KEEPS_ELR: (C3, unclean_registration_keeps_elr),
    Bug.REASSIGNMENT_COMPLETES_WITHOUT_ADDING_IN_ISR: (C4, reassignment_completes_without_adding_in_isr),
    Bug.ALTER_PARTITION_IGNORES_BROKER_EPOCH: (C3, alter_partition_ignores_broker_epoch),
    Bug.UNCLEAN_RECOVERY_PICKS_FIRST_CANDIDATE: (C3, unclean_recovery_picks_first_candidate),
    Bug.METADATA_BATCH_LAST_DELTA_ONLY: (C3, metadata_batch_last_delta_only),
    Bug.CONTROLLED_SHUTDOWN_WITHOUT_FLUSH: (C3, controlled_shutdown_without_flush),
    Bug.PENDING_WRITES_KEPT_ON_STEP_DOWN: (C3, pending_writes_kept_on_step_down),
    Bug.MIN_ISR_CHANGE_NOT_APPLIED_TO_LOG: (C3, min_isr_change_not_applied_to_log),
    Bug.PREFERRED_ELECTION_IGNORES_ISR: (C3, preferred_election_ignores_isr),
    Bug.CONTROLLED_SHUTDOWN_BROKER_ELECTED: (C3, controlled_shutdown_broker_elected),
    Bug.LEADER_STAYS_RECOVERING: (KAFKA_ULE, leader_stays_recovering),
    Bug.CLUSTER_MIN_ISR_OVERRIDES_TOPIC: (KAFKA_ULE, cluster_min_isr_overrides_topic),
    Bug.ACTIVATION_TRACKS_FENCED_BROKERS: (KAFKA_ULE, activation_tracks_fenced_brokers),
    Bug.AMENDED_REGISTRATION_FENCES: (KAFKA_ULE, amended_registration_fences),
    Bug.FENCING_IGNORES_ELR_FEATURE: (KAFKA_ULE, fencing_ignores_elr_feature),
    Bug.EPOCH_CHECKPOINT_WRITES_TRUNCATION_SNAPSHOT: (KAFKA_MIN1, epoch_checkpoint_writes_truncation_snapshot),
    Bug.FENCED_BROKER_HOLDS_CONTROLLED_SHUTDOWN: (KAFKA_ULE, fenced_broker_holds_controlled_shutdown),
    Bug.SNAPSHOT_OPTIONS_FROM_METADATA_VERSION: (KAFKA_ULE, snapshot_options_from_metadata_version),
}


def test_the_catalogue_is_large_and_documented():
    assert len(Bug) >= 12
    for bug in Bug:
        doc = DOCS[bug]
        assert doc.rule and doc.section.startswith("§") and doc.where.startswith("sut/"), bug


@pytest.mark.parametrize("bug", list(Bug), ids=[b.name for b in Bug])
def test_the_rules_a_bug_needs_can_be_in_force_together(bug: Bug):
    """A search for the bug runs under its ``needs`` alone: each rule comes with the
    rules it requires, or the campaign's first run fails on the config."""
    assert rules_error(DOCS[bug].needs) is None


@pytest.mark.parametrize("bug", list(Bug), ids=[b.name for b in Bug])
def test_every_bug_is_caught_by_its_scenario(bug: Bug):
    assert bug in SCENARIOS, f"no scenario for {bug!r}"
    config, scenario = SCENARIOS[bug]
    t = Trio(config, bug)
    scenario(t)
    assert t.detected, f"{bug!r} went unnoticed through {t.trace}"


@pytest.mark.parametrize("bug", list(Bug), ids=[b.name for b in Bug])
def test_each_bug_lives_in_the_code_path_its_documentation_names(bug: Bug):
    """The guard ``Bug.X`` appears in the file the catalogue names."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / DOCS[bug].where.split()[0]
    assert f"Bug.{bug.name}" in path.read_text(), f"{bug!r} is not guarded in {path}"


def test_a_min_isr_the_log_never_applied_shows_in_the_leaders_observation():
    """The leader's log config is observed: the bug is caught where the leader applies
    the ConfigRecord, before any write shows its effect."""
    config, _ = SCENARIOS[Bug.MIN_ISR_CHANGE_NOT_APPLIED_TO_LOG]
    t = Trio(config, Bug.MIN_ISR_CHANGE_NOT_APPLIED_TO_LOG)
    t.alter_isr(1, 3, expand=False)
    t.do(AlterMinIsr(3))
    assert t.detected is None
    t.sync(1)
    assert t.detected is not None and "min_isr" in t.detected, t.detected
