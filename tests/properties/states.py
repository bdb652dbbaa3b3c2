"""Builders of hand-made states for the property tests.

Every state starts from ``model.initial_state(Config(...))``, is advanced through
``model.step`` to get real logs, HWMs and history, and is then changed with
``attrs.evolve`` through the small helpers below:

- ``with_replica(state, broker, **changes)``: evolve a broker's replica.
- ``with_broker(state, broker, **changes)``: evolve a broker (status, image, ...).
- ``with_registration(state, broker, **changes)``: evolve the controller's registration.
- ``with_partition(state, **changes)``: change the controller's partition
  registration *through its metadata log*: the change is committed as a
  ``PartitionChangeRecord`` (bumping the partition epoch, and the leader epoch
  when the leader changes) so the controller's partition stays the log's result
  and brokers that have not applied the record stay a consistent prefix. Pass
  ``sync=True`` to let every running broker apply it (replicas keep acting on
  their old epochs, which is allowed: they lag). ``raw=True`` instead replaces
  ``controller.partition`` alone (for EpochMonotonicity / consistency tests).
- ``with_history(state, **changes)``: evolve the ghost history.
- ``append_metadata(state, record)``: append a raw record to the metadata log.
"""

from __future__ import annotations

from typing import Iterable

import attrs

from model import (NO_LEADER_CHANGE, Action, BrokerStatus, ClusterState, Config, FenceBroker, FetchRequest,
                   FetchResponse, PartitionChangeRecord, Produce, ReceiveFetchRequest, ReceiveFetchResponse,
                   Record, ReplicateMetadata, SendFetch, StartBroker, UncleanShutdown, initial_state, merge,
                   step)

RF3_MIN2 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2)


# ------------------------------------------------------------------ driving the model

def run(state: ClusterState, *actions: Action) -> ClusterState:
    """Apply ``actions`` in order through ``model.step``."""
    for a in actions:
        state = step(state, a)
    return state


def produce(state: ClusterState, leader: int, n: int = 1) -> ClusterState:
    for _ in range(n):
        state = step(state, Produce(leader, state.history.next_value))
    return state


def deliver_fetch(state: ClusterState, follower: int) -> ClusterState:
    """SendFetch, ReceiveFetchRequest, ReceiveFetchResponse for ``follower``."""
    req = state.network.next_id
    state = step(state, SendFetch(follower))
    assert isinstance(state.network.get(req), FetchRequest)
    resp = state.network.next_id
    state = step(state, ReceiveFetchRequest(req))
    assert isinstance(state.network.get(resp), FetchResponse)
    return step(state, ReceiveFetchResponse(resp))


def replicate(state: ClusterState, followers: Iterable[int], rounds: int = 3) -> ClusterState:
    """Fetch rounds (data, fetch offsets, HWM) for ``followers``."""
    followers = tuple(followers)
    for _ in range(rounds):
        for f in followers:
            state = deliver_fetch(state, f)
    return state


def sync(state: ClusterState, broker: int) -> ClusterState:
    """The broker applies every metadata record it lacks (no-op when up to date)."""
    pending = state.pending_metadata(broker)
    return step(state, ReplicateMetadata(broker, pending)) if pending else state


def replicated(n: int = 2, config: Config = RF3_MIN2) -> ClusterState:
    """Leader 1 (leader epoch 1) wrote ``n`` acks=all records, fully replicated:
    every replica has LEO = HWM = n, the True HWM is n and all n writes are acked.
    Values are 1..n, all in leader epoch 1."""
    s = initial_state(config)
    s = produce(s, config.assignment[0], n)
    s = replicate(s, [b for b in config.assignment if b != config.assignment[0]])
    assert s.history.true_hwm == n and len(s.history.acked) == n
    assert all(s.replica(b).hwm == n for b in config.assignment)
    return s


def leaderless_after_unclean_restarts(config: Config = RF3_MIN2) -> ClusterState:
    """Brokers 3, 2, 1 fenced in turn (ISR empties into the ELR), then 1 and 2 shut
    down uncleanly (not lossy) and restart: their empty broker epochs move them from
    the ELR to the LastKnownELR (§5.3.1). Result: no leader, ISR = ELR = [] and
    LastKnownELR = [1, 2]."""
    s = replicated(1, config)
    s = run(s, FenceBroker(3), FenceBroker(2), FenceBroker(1),
            UncleanShutdown(1, lossy=False), UncleanShutdown(2, lossy=False),
            StartBroker(1), StartBroker(2))
    return s


# --------------------------------------------------------------------------- evolvers

def with_broker(state: ClusterState, broker: int, **changes: object) -> ClusterState:
    i = state.config.position(broker)
    b = attrs.evolve(state.brokers[i], **changes)
    return attrs.evolve(state, brokers=state.brokers[:i] + (b,) + state.brokers[i + 1:])


def with_replica(state: ClusterState, broker: int, **changes: object) -> ClusterState:
    r = state.replica(broker)
    assert r is not None, f"broker {broker} hosts no replica"
    return with_broker(state, broker, replica=attrs.evolve(r, **changes))


def with_log(state: ClusterState, broker: int, log: Iterable[Record], **changes: object) -> ClusterState:
    """Replace a replica's log; the HWM and flushed offset are capped by the new LEO
    unless given."""
    log = tuple(log)
    r = state.replica(broker)
    assert r is not None
    changes.setdefault("hwm", min(r.hwm, len(log)))
    changes.setdefault("flushed", min(r.flushed, len(log)))
    return with_replica(state, broker, log=log, **changes)


def with_registration(state: ClusterState, broker: int, **changes: object) -> ClusterState:
    i = state.config.position(broker)
    regs = state.controller.registrations
    reg = attrs.evolve(regs[i], **changes)
    return attrs.evolve(state, controller=attrs.evolve(state.controller,
                                                       registrations=regs[:i] + (reg,) + regs[i + 1:]))


def append_metadata(state: ClusterState, record: object) -> ClusterState:
    """Append a raw record to the controller's metadata log; the controller's
    partition becomes ``merge(partition, record)``."""
    ctrl = state.controller
    part = merge(ctrl.partition, record)  # type: ignore[arg-type]
    return attrs.evolve(state, controller=attrs.evolve(
        ctrl, metadata_log=ctrl.metadata_log + (record,), partition=part))


def _frozen(value: object) -> object:
    return frozenset(value) if isinstance(value, (set, frozenset, list)) else value


def with_partition(state: ClusterState, *, raw: bool = False, sync: bool = False,
                   **changes: object) -> ClusterState:
    """Change the controller's partition registration (see the module docstring).

    ``changes`` are PartitionMetadata fields; sets/lists become frozensets
    (``replicas`` becomes a tuple). Committed as one PartitionChangeRecord unless
    ``raw``; ``leader_epoch`` / ``partition_epoch`` can only be set with ``raw``.
    """
    changes = {k: (tuple(v) if k == "replicas" else _frozen(v)) for k, v in changes.items()}
    p = state.partition
    if raw:
        return attrs.evolve(state, controller=attrs.evolve(state.controller, partition=attrs.evolve(p, **changes)))
    if {"leader_epoch", "partition_epoch"} & changes.keys():
        raise ValueError("epochs follow from the change record; use raw=True to force them")
    leader = changes.pop("leader", NO_LEADER_CHANGE)
    if leader == p.leader:
        leader = NO_LEADER_CHANGE
    rec = PartitionChangeRecord(leader=leader, **changes)  # type: ignore[arg-type]
    state = append_metadata(state, rec)
    if sync:
        for b in state.brokers:
            if b.status in (BrokerStatus.RUNNING, BrokerStatus.STARTING):
                state = _apply_metadata(state, b.id)
    return state


def _apply_metadata(state: ClusterState, broker: int) -> ClusterState:
    """Advance a broker's metadata offset and image to the end of the log without
    reconciling its replica (hand-built: the replica keeps its epochs)."""
    b = state.broker(broker)
    image = b.image
    for rec in state.controller.metadata_log[b.metadata_offset:]:
        image = merge(image, rec)
    return with_broker(state, broker, metadata_offset=len(state.controller.metadata_log), image=image)


def with_history(state: ClusterState, **changes: object) -> ClusterState:
    return attrs.evolve(state, history=attrs.evolve(state.history, **changes))

