"""A tiny driver for hand-written scenarios against the reference model.

A ``Scenario`` wraps a ``ClusterState`` and moves it only through the model's
public ``step``; every action taken is recorded in ``trace``. The helpers bundle
the usual action sequences and return the messages involved, so tests can
assert on what went over the wire:

    sc = Scenario(Config(brokers=(1, 2, 3), assignment=(1, 2, 3)))
    sc.produce(1, 2)                       # two acks=all writes to leader 1
    req, resp = sc.deliver_fetch(2)        # SendFetch + ReceiveFetchRequest + ReceiveFetchResponse
    sc.shrink(1, 3)                        # ProposeIsrShrink + AlterPartition round trip
    sc.sync_metadata(2)                    # broker 2 applies every pending metadata record

Nothing here decides protocol behaviour: a helper raises ``ActionNotEnabled``
exactly when the model refuses one of its actions.

Every step is checked: ``checked_step`` (which ``Scenario.do`` uses, and which the
example tests that drive ``ClusterState`` values directly call instead of
``model.step``) asserts that the new state satisfies every property of
``properties.ALL``. States beyond the fault budget or after an unguarded election
are fine: the properties that are not promised there exempt themselves.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

import properties
from model import (REPLICA_LAG_TIME_MAX_MS, Action, AdvanceTime, AlterPartitionRequest, AlterPartitionResponse, BrokerStatus, ClusterState, Config,
                   ControlledShutdown, FenceBroker, FetchRequest, FetchResponse, Message, PartitionMetadata,
                   ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, Produce, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, Replica,
                   ReplicateMetadata, Rule, SendFetch, StartBroker, UncleanShutdown, UnfenceBroker, initial_state,
                   step)
from model.shutdown import let_go_steps


def checked_step(state: ClusterState, action: Action, trace: Sequence[Action] = ()) -> ClusterState:
    """``model.step`` (raises ActionNotEnabled as it does), then assert that the new
    state violates no property; the failure lists the violations, the action and
    the last actions of ``trace`` (the actions before this one, when known)."""
    new_state = step(state, action)
    violations = properties.check_all(new_state)
    if violations:
        lines = [f"{len(violations)} property violation(s) after {action!r}:"]
        lines += [f"  {v}" for v in violations]
        if trace:
            lines.append(f"after the last {min(len(trace), 30)} of {len(trace)} actions:")
            lines += [f"  {a!r}" for a in list(trace)[-30:]]
        raise AssertionError("\n".join(lines))
    return new_state


class Scenario:
    """A state plus the trace of actions that produced it from ``initial_state``."""

    def __init__(self, config: Config, check_properties: bool = True) -> None:
        self.state: ClusterState = initial_state(config)
        self.trace: list[Action] = []
        self.check_properties = check_properties
        assert properties.check_all(self.state) == (), properties.check_all(self.state)

    # ------------------------------------------------------------------ core

    def do(self, action: Action) -> ClusterState:
        """Apply one action through ``model.step`` (raises ActionNotEnabled) and
        assert that the new state satisfies every property (``checked_step``),
        unless the scenario was made with ``check_properties=False`` (a story
        that shows a property failing)."""
        self.state = checked_step(self.state, action, self.trace) if self.check_properties else \
            step(self.state, action)
        self.trace.append(action)
        return self.state

    def do_sending(self, action: Action, kind: type) -> Message:
        """Apply ``action`` and return the one message of type ``kind`` it put in
        flight (under Rule.EXPAND_ISR_ON_FETCH a fetch's answer may come with an
        AlterPartition)."""
        next_id = self.state.network.next_id
        self.do(action)
        sent = [self.state.network.get(i) for i in range(next_id, self.state.network.next_id)]
        assert sent, f"{action!r} sent no message"
        ours = [m for m in sent if isinstance(m, kind)]
        assert len(ours) == 1, f"{action!r} sent {sent!r}, expected one {kind.__name__}"
        return ours[0]

    # ----------------------------------------------------------------- views

    @property
    def partition(self) -> PartitionMetadata:
        """The controller's partition registration."""
        return self.state.partition

    def replica(self, broker: int) -> Optional[Replica]:
        return self.state.replica(broker)

    def in_flight(self, kind: type = object, **fields: object) -> list[Message]:
        """In-flight messages of type ``kind`` whose attributes equal ``fields``."""
        return [m for m in self.state.network.messages
                if isinstance(m, kind) and all(getattr(m, k) == v for k, v in fields.items())]

    # --------------------------------------------------------------- clients

    def produce(self, broker: int, count: int = 1) -> None:
        """``count`` acks=all writes to ``broker`` (each with the next unique value)."""
        for _ in range(count):
            self.do(Produce(broker, self.state.history.next_value))

    # -------------------------------------------------------------- metadata

    def sync_metadata(self, broker: int) -> None:
        """The broker applies every committed metadata record it lacks, as one batch
        (no-op when it is up to date)."""
        pending = self.state.pending_metadata(broker)
        if pending:
            self.do(ReplicateMetadata(broker, pending))

    def sync_all(self) -> None:
        """Every running or starting broker applies every pending metadata record."""
        for b in self.state.brokers:
            if b.status in (BrokerStatus.STARTING, BrokerStatus.RUNNING):
                self.sync_metadata(b.id)

    # ------------------------------------------------------------- lifecycle

    def fence(self, broker: int) -> None:
        """The controller fences ``broker`` (its session expired, §2.8)."""
        self.do(FenceBroker(broker))

    def unfence(self, broker: int) -> None:
        """A started broker catches up with the metadata log and is unfenced by its
        heartbeat (§8.1)."""
        self.sync_metadata(broker)
        self.do(UnfenceBroker(broker))

    def stop(self, broker: int, *, clean: bool = True, lossy: bool = False) -> None:
        """A controlled shutdown (``clean``), else an unclean one (``lossy``: losing
        the unflushed suffix); the controller then fences the broker if it has not.
        Under Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS a leader that others
        must hear about first asks (``BeginControlledShutdown``), and the brokers it
        waits for apply the metadata log, one at a time, until it is let go."""
        for action in let_go_steps(self.state, broker) if clean else ():
            self.do(action)
        self.do(ControlledShutdown(broker) if clean else UncleanShutdown(broker, lossy))
        if not self.state.registration(broker).fenced:
            self.fence(broker)

    def restart(self, broker: int, *, clean: bool = True, lossy: bool = False, unfence: bool = True) -> None:
        """``stop`` (unless the broker is already offline), register again, and, with
        ``unfence``, catch up and be unfenced."""
        if self.state.broker(broker).status not in (BrokerStatus.OFFLINE_CLEAN, BrokerStatus.OFFLINE_DIRTY):
            self.stop(broker, clean=clean, lossy=lossy)
        self.do(StartBroker(broker))
        if unfence:
            self.unfence(broker)

    # ----------------------------------------------------------------- fetch

    def send_fetch(self, follower: int) -> FetchRequest:
        return self.do_sending(SendFetch(follower), FetchRequest)  # type: ignore[return-value]

    def receive_fetch_request(self, req: FetchRequest) -> FetchResponse:
        return self.do_sending(ReceiveFetchRequest(req.id), FetchResponse)  # type: ignore[return-value]

    def receive_fetch_response(self, resp: FetchResponse) -> None:
        self.do(ReceiveFetchResponse(resp.id))

    def deliver_fetch(self, follower: int) -> tuple[FetchRequest, FetchResponse]:
        """One full fetch round trip for ``follower``; returns the request and response."""
        req = self.send_fetch(follower)
        resp = self.receive_fetch_request(req)
        self.receive_fetch_response(resp)
        return req, resp

    def fetch_proposing(self, follower: int) -> Optional[AlterPartitionRequest]:
        """One fetch round trip of ``follower``; the AlterPartition its leader sent
        while serving it (Rule.EXPAND_ISR_ON_FETCH: Kafka's
        ``updateFollowerFetchState`` → ``maybeExpandIsr``), or None."""
        req = self.send_fetch(follower)
        resp = self.receive_fetch_request(req)
        sent = [m for m in self.in_flight(AlterPartitionRequest) if req.id < m.id < resp.id]
        self.receive_fetch_response(resp)
        assert len(sent) <= 1
        return sent[0] if sent else None  # type: ignore[return-value]

    # ------------------------------------------------------------------- ISR

    def lag_out(self, leader: int, *followers: int) -> None:
        """Under Rule.REPLICA_LAG_TIME, let time pass until every one of
        ``followers`` has not caught up with ``leader`` for longer than
        replica.lag.time.max.ms (Kafka's tests: ``time.sleep(replicaLagTimeMaxMs
        + 1)``): to the latest of their caught-up times' expiry. A no-op without the
        rule, or when they are out of sync already."""
        if not self.state.config.follows(Rule.REPLICA_LAG_TIME):
            return
        r = self.replica(leader)
        assert r is not None
        expiries = [fs.last_caught_up_ms + REPLICA_LAG_TIME_MAX_MS + 1 for f, fs in r.followers
                    if f in followers and fs.last_caught_up_ms is not None]
        if expiries and max(expiries) > self.state.now_ms:
            self.do(AdvanceTime(max(expiries) - self.state.now_ms))

    def catch_up(self, leader: int, *followers: int) -> None:
        """Each of ``followers`` fetches, at least once and at most three times,
        until ``leader`` has heard it at its LEO: caught up now
        (Rule.REPLICA_LAG_TIME, ``ReplicaState.isCaughtUp``). Raises
        AssertionError when one does not get there."""
        for f in followers:
            for _ in range(3):
                self.deliver_fetch(f)
                r = self.replica(leader)
                assert r is not None
                fs = r.follower(f)
                if fs is not None and fs.fetch_offset == r.leo:
                    break
            else:
                raise AssertionError(f"follower {f} did not reach leader {leader}'s LEO")

    def lag_behind(self, leader: int, *removed: int) -> None:
        """Set up ``leader``'s ISR check to find exactly ``removed`` out of sync once
        time passes beyond their last caught-up times (``lag_out``, which
        ``alter_isr`` runs; Rule.REPLICA_LAG_TIME): a moment after those times the
        other ISR followers fetch up to the leader's LEO, so caught up later; then
        the leader takes a write none of them has fetched (when its ISR has MinISR
        members to accept it): a follower at the leader's LEO is never out of sync
        (Rule.CAUGHT_UP_AT_LEADER_LEO)."""
        r = self.replica(leader)
        assert r is not None
        times = [fs.last_caught_up_ms for f, fs in r.followers if f in removed and fs.last_caught_up_ms is not None]
        if times and max(times) >= self.state.now_ms:
            self.do(AdvanceTime(max(times) - self.state.now_ms + 1))
        self.catch_up(leader, *sorted(r.isr - {leader, *removed}))
        r = self.replica(leader)
        assert r is not None
        if len(r.isr) >= self.state.config.min_isr:
            self.produce(leader)

    def alter_isr(self, propose: Action) -> AlterPartitionResponse:
        """``propose`` (ProposeIsrShrink / ProposeIsrShrinkMany / ProposeIsrExpand),
        then the controller handles the AlterPartition request and the leader its
        response. A shrink lets time pass first until the followers it removes are
        out of sync (``lag_out``)."""
        if isinstance(propose, ProposeIsrShrink):
            self.lag_out(propose.leader, propose.follower)
        elif isinstance(propose, ProposeIsrShrinkMany):
            self.lag_out(propose.leader, *propose.followers)
        req = self.do_sending(propose, AlterPartitionRequest)
        resp = self.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
        self.do(ReceiveAlterPartitionResponse(resp.id))
        return resp  # type: ignore[return-value]

    def shrink(self, leader: int, follower: int) -> AlterPartitionResponse:
        return self.alter_isr(ProposeIsrShrink(leader, follower))

    def expand(self, leader: int, follower: int) -> AlterPartitionResponse:
        """``leader`` adds ``follower`` to its ISR and the controller answers. Under
        Rule.EXPAND_ISR_ON_FETCH the proposal is the one a fetch of ``follower``
        sent (still in flight), else made by one more fetch round."""
        if not self.state.config.follows(Rule.EXPAND_ISR_ON_FETCH):
            return self.alter_isr(ProposeIsrExpand(leader, follower))
        req = self._expansion_in_flight(leader, follower)
        if req is None:
            self.deliver_fetch(follower)
            req = self._expansion_in_flight(leader, follower)
            assert req is not None, f"a fetch of {follower} made leader {leader} propose no expansion"
        resp = self.do_sending(ReceiveAlterPartition(req.id), AlterPartitionResponse)
        self.do(ReceiveAlterPartitionResponse(resp.id))
        return resp  # type: ignore[return-value]

    def _expansion_in_flight(self, leader: int, follower: int) -> Optional[AlterPartitionRequest]:
        for m in self.in_flight(AlterPartitionRequest, src=leader):
            r = self.replica(leader)
            if follower in m.isr and r is not None and follower not in r.isr:  # type: ignore[attr-defined]
                return m  # type: ignore[return-value]
        return None


# ------------------------------------------- state-passing helpers (checked steps)

def with_shutdowns_let_go(config: Config, trace: Sequence[Action]) -> tuple[Action, ...]:
    """``trace`` with each ControlledShutdown preceded by its
    ``model.shutdown.let_go_steps``: a trace written before
    Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS, as it runs under it
    (unchanged without the rule)."""
    state, out = initial_state(config), []
    for action in trace:
        extra = let_go_steps(state, action.broker) if isinstance(action, ControlledShutdown) else []
        for a in [*extra, action]:
            state = step(state, a)
            out.append(a)
    return tuple(out)


def only_new_message(before: ClusterState, after: ClusterState, kind: type) -> int:
    """Id of the single message of type ``kind`` that ``after`` has and ``before`` had not."""
    old = {m.id for m in before.network.messages}
    new = [m for m in after.network.messages if m.id not in old and isinstance(m, kind)]
    assert len(new) == 1, f"expected one new {kind.__name__}, got {new}"
    return new[0].id


def send_fetch(state: ClusterState, follower: int) -> tuple[ClusterState, int]:
    """SendFetch; returns the state and the FetchRequest's message id."""
    after = checked_step(state, SendFetch(follower))
    return after, only_new_message(state, after, FetchRequest)


def receive_fetch_request(state: ClusterState, req_id: int) -> tuple[ClusterState, int]:
    """The leader handles the request; returns the state and the FetchResponse's id."""
    after = checked_step(state, ReceiveFetchRequest(req_id))
    return after, only_new_message(state, after, FetchResponse)


def deliver_fetch(state: ClusterState, follower: int) -> ClusterState:
    """One complete fetch round trip: SendFetch, ReceiveFetchRequest, ReceiveFetchResponse."""
    state, req = send_fetch(state, follower)
    state, resp = receive_fetch_request(state, req)
    return checked_step(state, ReceiveFetchResponse(resp))


def sync_all(state: ClusterState, broker: int) -> ClusterState:
    """The broker replicates every metadata record it has not applied, as one batch."""
    pending = state.pending_metadata(broker)
    return checked_step(state, ReplicateMetadata(broker, pending)) if pending else state


def assert_partition(state: ClusterState, *, leader: int, isr: Iterable[int], elr: Iterable[int] = (),
                      last_known_elr: Iterable[int] = (), leader_epoch: Optional[int] = None,
                      partition_epoch: Optional[int] = None) -> None:
    """The controller's partition registration."""
    p = state.partition
    got = (p.leader, set(p.isr), set(p.elr), set(p.last_known_elr))
    assert got == (leader, set(isr), set(elr), set(last_known_elr)), \
        f"(leader, ISR, ELR, LastKnownELR) = {got}"
    if leader_epoch is not None:
        assert p.leader_epoch == leader_epoch
    if partition_epoch is not None:
        assert p.partition_epoch == partition_epoch


def assert_replica(state: ClusterState, broker: int, *, leo: int, hwm: int) -> None:
    r = state.replica(broker)
    assert r is not None, f"broker {broker} hosts no replica"
    assert (r.leo, r.hwm) == (leo, hwm), f"replica {broker}: (LEO, HWM) = {(r.leo, r.hwm)}"
