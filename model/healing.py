"""Healing: what the cluster does once faults stop, as one deterministic, fair,
bounded schedule of the model's own actions (the liveness scenarios of chapter 9:
"clusters may experience failures but are allowed to recover").

From any state, ``schedule(state)`` runs ``rounds(config)`` rounds. A round, in
this order (each action only where its guard passes, so the schedule never
forces a step the protocol forbids):

1. every broker that asked to shut down (``BeginControlledShutdown``) stops
   (``ControlledShutdown``: the shutdown it began ends; it restarts next round),
   the controller fences every broker that is down but still registered as
   unfenced (its session expires: no heartbeat), and every broker that is down
   restarts and registers (``StartBroker``);
2. every running or starting broker catches up with the metadata log
   (``ReplicateMetadata`` of every pending record) and, once it has replicated its
   own registration, is unfenced (``UnfenceBroker``: it heartbeats);
3. every message in flight is delivered, oldest first (AlterPartition requests
   and responses, fetch responses and requests);
4. every follower fetches, and the request and its response are delivered (a
   fair fetch round), and every leader proposes every replica its guard lets it
   add to the ISR (``ProposeIsrExpand``; under Rule.EXPAND_ISR_ON_FETCH the fetch
   itself proposes it), delivered at once;
5. the controller runs unclean recovery or unclean leader election where the
   configuration enables them and the partition is leaderless (§5.3, ch7);
6. the brokers catch up with the metadata log again.

Faults stop: no fencing of a live broker, no new shutdown, no shrink, no reassignment
request or cancellation, no dropped message; clients stop writing. The clock is
left alone: no healing step waits on it (an expansion needs a follower at the
leader's HWM, not time).

The bound. ``rounds(config)`` is ``2 * len(brokers) + 4``. A broker needs one round
to restart and register and the next to replicate its registration and be
unfenced (§8.1); a leader needs a round to be elected once a replica is
unfenced, and a follower one fetch round to reach the leader's LEO, a second for
the HWM to pass it and its expansion to commit, and a third for the new HWM to
reach it; a reassignment adds one expansion per adding replica and the
completion's metadata round. ``benchmarks/healing_cost.py`` measures, on random
prefixes of many configurations, the round by which every liveness goal held:
the bound is twice the worst seen (docs: Liveness).
"""

from __future__ import annotations

from typing import Iterator, Sequence

from .actions import (Action, ControlledShutdown, FenceBroker, Heal, ProposeIsrExpand, ReceiveAlterPartition, ReceiveAlterPartitionResponse,
                      ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch, StartBroker,
                      UncleanLeaderElection, UncleanRecovery, UnfenceBroker)
from .config import Config
from .initial import initial_state
from .state import (AlterPartitionRequest, AlterPartitionResponse, BrokerStatus, ClusterState, FetchRequest,
                    FetchResponse)
from .step import step, why_not_enabled

_OFFLINE = (BrokerStatus.OFFLINE_CLEAN, BrokerStatus.OFFLINE_DIRTY)


def rounds(config: Config) -> int:
    """The bound: how many rounds a healing phase runs (module doc)."""
    return 2 * len(config.brokers) + 4


def _deliveries(state: ClusterState, kinds: tuple[type, ...]) -> list[Action]:
    receive = {AlterPartitionRequest: ReceiveAlterPartition, AlterPartitionResponse: ReceiveAlterPartitionResponse,
               FetchRequest: ReceiveFetchRequest, FetchResponse: ReceiveFetchResponse}
    return [receive[type(m)](m.id) for m in state.network.messages if isinstance(m, kinds)]


def _lifecycle(state: ClusterState) -> list[Action]:
    down = [b.id for b in state.brokers if b.status in _OFFLINE]
    stopping = [ControlledShutdown(b.id) for b in state.brokers if b.shutting_down]
    return stopping + [FenceBroker(b) for b in down] + [StartBroker(b) for b in down]


def _catch_up(state: ClusterState) -> list[Action]:
    return [ReplicateMetadata(b.id, state.pending_metadata(b.id)) for b in state.brokers
            if state.pending_metadata(b.id) > 0]


def _unfence(state: ClusterState) -> list[Action]:
    return [UnfenceBroker(b.id) for b in state.brokers]


def _fetches(state: ClusterState) -> list[Action]:
    return [SendFetch(b.id) for b in state.brokers]


def _expansions(state: ClusterState) -> list[Action]:
    return [ProposeIsrExpand(leader, follower) for leader in state.config.brokers
            for follower in state.config.brokers if follower != leader]


def _recovery(state: ClusterState) -> list[Action]:
    return [UncleanRecovery(), UncleanLeaderElection()]


#: One round: each entry gives the candidates of one phase, computed on the state
#: the phase starts from; a candidate runs only if its guard passes then.
ROUND = (
    _lifecycle,
    _catch_up,
    _unfence,
    lambda s: _deliveries(s, (AlterPartitionRequest,)),
    lambda s: _deliveries(s, (AlterPartitionResponse,)),
    lambda s: _deliveries(s, (FetchResponse, FetchRequest)),
    _fetches,
    lambda s: _deliveries(s, (FetchRequest,)),
    lambda s: _deliveries(s, (FetchResponse,)),
    _expansions,
    lambda s: _deliveries(s, (AlterPartitionRequest,)),
    lambda s: _deliveries(s, (AlterPartitionResponse,)),
    _catch_up,
    _recovery,
    _catch_up,
    _unfence,
)


def schedule(state: ClusterState, max_rounds: int | None = None) -> Iterator[tuple[int, Action, ClusterState]]:
    """The healing phase from ``state``: ``(round, action, state after it)`` for
    every action it takes, rounds numbered from 0, ``max_rounds`` rounds (default
    ``rounds(state.config)``). Pure and deterministic: the same state always heals
    the same way."""
    for number in range(rounds(state.config) if max_rounds is None else max_rounds):
        for phase in ROUND:
            for action in phase(state):
                if why_not_enabled(state, action) is None:
                    state = step(state, action)
                    yield number, action, state


def heal(state: ClusterState) -> ClusterState:
    """The state the healing phase ends in (``schedule``)."""
    for _, _, state in schedule(state):
        pass
    return state


def apply(state: ClusterState, action: Action) -> ClusterState:
    """``step``, with the directive ``Heal`` expanded (``heal``): what a trace that
    may hold a healing phase does to the model. Raises ActionNotEnabled as
    ``step`` does."""
    return heal(state) if isinstance(action, Heal) else step(state, action)


def expand(trace: Sequence[Action], config: Config, keep_last: bool = False) -> tuple[Action, ...]:
    """``trace`` from ``initial_state(config)`` with each healing phase (``Heal``)
    replaced by the actions it takes (``schedule``: deterministic given the
    state, so the expanded trace takes the model, and an implementation, the
    same way); ``keep_last`` keeps a final ``Heal`` as it is (a liveness failure
    is judged at its end). Raises ActionNotEnabled as ``step`` does."""
    state, out, last = initial_state(config), [], len(trace) - 1
    for i, action in enumerate(trace):
        if not isinstance(action, Heal):
            state = step(state, action)
            out.append(action)
        elif keep_last and i == last:
            out.append(action)
        else:
            for _, healing, state in schedule(state):
                out.append(healing)
    return tuple(out)
