"""Kafka's own ``kafka.cluster.Partition`` as a leader, driven alone
(``kafka_bridge.partition``): where it agrees with the Kafka profile, and the
places its leader departed from the profile's model, each pinned on Kafka's side
and, where the model takes the same calls, on the model's (README, "Kafka's
Partition, driven alone"). All are now rules of the profile, and the model agrees
with Kafka's leader there: the expansion proposed inside the follower's fetch
(Rule.EXPAND_ISR_ON_FETCH), the ISR check removing every out-of-sync follower at
once (Rule.SHRINK_ALL_OUT_OF_SYNC), a follower at the leader's LEO never out of
sync (Rule.CAUGHT_UP_AT_LEADER_LEO), the HWM a fetch is answered with
(Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE), and the clock replica lag is measured on
(Rule.REPLICA_LAG_TIME: the model's time ``t`` is Kafka's ``CLOCK_BASE_MS + t``);
with the rule switched off (or under the chapters) the model still differs."""

from __future__ import annotations

import pytest

from kafka_bridge.partition import CLOCK_BASE_MS, KafkaPartition, KafkaPartitionError
from model import (CHAPTERS, KAFKA, PROFILES, rules_without, AlterPartitionRequest, Config, Rule, enabled_actions,
                   initial_state, is_caught_up, step)
from model.actions import (AdvanceTime, ProposeIsrExpand, ProposeIsrShrink, ProposeIsrShrinkMany, Produce, ReceiveAlterPartition,
                           ReceiveAlterPartitionResponse, ReceiveFetchRequest, ReceiveFetchResponse, SendFetch)
from sut.metadata import PartitionRegistration

EPOCHS = {1: 10, 2: 11, 3: 12}   # broker epochs


def leader(isr: frozenset[int] = frozenset({1, 2, 3}), min_isr: int = 2) -> KafkaPartition:
    """Broker 1 leading replicas [1, 2, 3] in leader epoch 1, partition epoch 1."""
    p = KafkaPartition(1, EPOCHS[1], min_isr)
    for b, epoch in EPOCHS.items():
        p.set_broker(b, epoch)
    assert p.make_leader(PartitionRegistration((1, 2, 3), isr, 1, 1, 1))
    return p


def fetch(p: KafkaPartition, follower: int, offset: int, last_fetched_epoch=1, leader_epoch: int = 1):
    return p.fetch(follower, EPOCHS[follower], leader_epoch, offset, last_fetched_epoch)


# ------------------------------------------------------------------ agreements

def test_the_hwm_is_the_lowest_leo_of_the_maximal_isr():
    p = leader()
    assert [p.append(v) for v in (1, 2)] == [0, 1]
    assert (p.log_end_offset, p.high_watermark, p.leader_epoch_start_offset) == (2, 0, 0)
    fetch(p, 2, 2)
    assert p.high_watermark == 0          # follower 3's LEO is not known yet
    fetch(p, 3, 1)
    assert p.high_watermark == 1
    fetch(p, 3, 2)
    assert p.high_watermark == 2


def test_a_pending_expansion_counts_in_the_maximal_isr():
    p = leader(isr=frozenset({1, 2}))
    p.append(1)
    fetch(p, 2, 1)
    assert p.high_watermark == 1
    fetch(p, 3, 1)                        # in sync: the expansion is proposed
    assert (p.isr, p.maximal_isr) == ({1, 2}, {1, 2, 3})
    p.append(2)
    fetch(p, 2, 2)
    assert p.high_watermark == 1          # waits for 3, in the Maximal ISR only
    p.answer(frozenset({1, 2, 3}), 1, 2)
    assert p.isr == {1, 2, 3}


def test_fetches_are_fenced_by_leader_epoch_and_answered_with_the_diverging_epoch():
    p = leader()
    p.append(1)
    with pytest.raises(KafkaPartitionError) as e:
        fetch(p, 2, 0, leader_epoch=0)
    assert e.value.error == "FENCED_LEADER_EPOCH"
    with pytest.raises(KafkaPartitionError) as e:
        fetch(p, 2, 0, leader_epoch=2)
    assert e.value.error == "UNKNOWN_LEADER_EPOCH"
    # a follower whose last fetched epoch 0 ended at its offset 3: epoch 0 is below
    # every epoch of the leader's, so it ends where the leader's first one starts (§3.2)
    assert fetch(p, 2, 3, last_fetched_epoch=0).diverging_epoch == (0, 0)
    assert fetch(p, 2, 3, last_fetched_epoch=1).diverging_epoch == (1, 1)


def test_an_acks_all_produce_below_min_isr_is_refused():
    p = leader(isr=frozenset({1}))
    with pytest.raises(KafkaPartitionError) as e:
        p.append(1)
    assert e.value.error == "NOT_ENOUGH_REPLICAS"
    assert p.log_end_offset == 0


def test_an_ineligible_replica_answer_rolls_the_expansion_back():
    p = leader(isr=frozenset({1, 2}))
    fetch(p, 3, 0, last_fetched_epoch=None)
    assert len(p.proposals) == 1
    p.answer_error("INELIGIBLE_REPLICA")
    assert (p.isr, p.maximal_isr, p.proposals) == ({1, 2}, {1, 2}, [])


def test_a_proposal_while_one_is_unanswered_is_refused_inside_the_call():
    """Kafka's broker keeps one AlterPartition per partition until its answer
    (``DefaultAlterPartitionManager.submit``: ``unsentIsrUpdates.putIfAbsent``, else
    the future fails with OperationNotAttemptedException before ``submit``
    returns), so a proposal meanwhile is rolled back (``handleAlterPartitionError``,
    OPERATION_NOT_ATTEMPTED) inside the call that made it: here inside follower 2's
    fetch, before ``updateFollowerFetchState`` recomputes the HWM. Leader 1's
    expansion of 2 is unanswered when a registration of partition epoch 2 (a
    reassignment step) commits ISR [1]; after two writes and the lag, 2's fetch at
    1 brings it in sync but not caught up: the HWM goes to the LEO, 2, not to 2's
    LEO, 1, as it would with the refused expansion in the Maximal ISR."""
    p = KafkaPartition(1, EPOCHS[1], 1)
    for b, epoch in EPOCHS.items():
        p.set_broker(b, epoch)
    assert p.make_leader(PartitionRegistration((1, 2), frozenset({1}), 1, 1, 1))
    fetch(p, 2, 0, last_fetched_epoch=None)
    assert [q.isr for q in p.proposals] == [((1, 10), (2, 11))] and p.maximal_isr == {1, 2}
    p.make_leader(PartitionRegistration((1, 2, 3), frozenset({1}), 1, 1, 2, adding=frozenset({3})))   # not a new leader
    assert (p.isr, p.maximal_isr, len(p.proposals)) == ({1}, {1}, 1)
    p.append(1)
    p.append(2)
    p.lag()
    fetch(p, 2, 1)
    assert not p.is_caught_up(2)
    assert (p.isr, p.maximal_isr, p.pending_isr, p.high_watermark) == ({1}, {1}, None, 2)
    assert [q.isr for q in p.proposals] == [((1, 10), (2, 11))]   # still the first, unanswered


# ------------------------------------------------- departure 1: the expansion, now a rule

def test_kafkas_leader_proposes_an_expansion_inside_the_followers_fetch():
    """``updateFollowerFetchState`` → ``maybeExpandIsr``: the AlterPartition is
    submitted by the fetch itself, naming every member's broker epoch (-1: follower 2
    has not fetched from this leader, ``addBrokerEpochToIsr``)."""
    p = leader(isr=frozenset({1, 2}))
    p.append(1)
    fetch(p, 3, 1)
    assert [(q.isr, q.leader_epoch, q.partition_epoch) for q in p.proposals] == [(((1, 10), (2, -1), (3, 12)), 1, 1)]


@pytest.mark.parametrize("profile", [KAFKA, CHAPTERS])
def test_the_models_kafka_profile_proposes_the_expansion_inside_the_fetch_too(profile: str):
    """The same in the model: follower 3, shrunk out, fetches after a write. Under
    Rule.EXPAND_ISR_ON_FETCH (found here) the fetch leaves Kafka's AlterPartition in
    flight, naming the same members, and ``ProposeIsrExpand`` is never enabled; the
    chapters send nothing until that step of their own. (Follower 2's broker epoch
    is its fetch's, 1: under Kafka's clock 2 fetched for 3 to be shrunk out alone;
    above, 2 never fetched from Kafka's leader, which names -1.)"""
    s = _shrunk_out_3(_model(profile))
    s = _fetch_round(step(s, Produce(1, 1)), 3)
    sent = [m for m in s.network.messages if isinstance(m, AlterPartitionRequest)]
    enabled = ProposeIsrExpand(1, 3) in enabled_actions(s)
    if profile == KAFKA:
        (req,) = sent
        named = dict(req.added_broker_epochs)
        assert (req.isr, sorted(named), named[2], enabled) == ({1, 2, 3}, [1, 2, 3], 1, False)
    else:
        assert (sent, enabled) == ([], True)


# ------------------------------------------------ the caught-up bookkeeping

def test_kafkas_caught_up_bookkeeping_is_the_models_on_one_clock():
    """``Replica.updateFetchStateOrThrow`` on Kafka's leader and in the model's
    Kafka profile (Rule.REPLICA_LAG_TIME), driven through the same calls at the
    same moments: follower 3 is shrunk out 30,001 ms after the start (2 at the
    LEO); at 31 s it fetches behind the leader's LEO (not caught up; the leader's
    LEO 2 recorded); at 32 s, after a write, it fetches at that recorded LEO: its
    last caught-up time becomes its previous fetch's, 31 s. Both keep the same
    four fields, and both find it out of sync once replica.lag.time.max.ms has
    passed since then."""
    p = leader()
    s = _model()
    fetch(p, 2, 0)
    s = _fetch_round(s, 2)
    s = _shrunk_out_3(s)
    _same_moment(p, s)
    p.maybe_shrink_isr()
    p.answer(frozenset({1, 2}), 1, 2)
    assert p.isr == s.replica(1).isr == {1, 2}

    def both() -> tuple:
        kafka = p.follower_state(3)
        model = s.replica(1).follower(3)
        at = (None if model.last_fetch_ms is None else CLOCK_BASE_MS + model.last_fetch_ms,
              None if model.last_caught_up_ms is None else CLOCK_BASE_MS + model.last_caught_up_ms)
        return ((kafka.log_end_offset, kafka.last_fetch_leader_log_end_offset, kafka.last_fetch_time_ms,
                 kafka.last_caught_up_time_ms, p.is_caught_up(3)),
                (model.fetch_offset, model.last_fetch_leader_leo, *at,
                 is_caught_up(s.now_ms, s.replica(1).leo, model)))

    for value in (1, 2):
        p.append(value)
        s = step(s, Produce(1, value))
    fetch(p, 2, 0)
    fetch(p, 2, 2)
    s = _fetch_round(_fetch_round(s, 2), 2)
    s = step(s, AdvanceTime(1_000 - 1))   # 31 s
    _same_moment(p, s)
    fetch(p, 3, 0)
    s = _fetch_round(s, 3)
    base = CLOCK_BASE_MS
    assert both() == ((0, 2, base + 31_000, base, False),) * 2
    p.append(3)
    s = step(s, Produce(1, 3))
    fetch(p, 2, 2)
    fetch(p, 2, 3)
    s = _fetch_round(_fetch_round(s, 2), 2)
    s = step(s, AdvanceTime(1_000))       # 32 s
    _same_moment(p, s)
    fetch(p, 3, 2)
    s = _fetch_round(s, 3)
    assert both() == ((2, 3, base + 32_000, base + 31_000, True),) * 2
    assert p.high_watermark == s.replica(1).hwm == 3   # reached before 3 caught up
    s = step(s, AdvanceTime(29_000))      # 61 s: 31 s + the lag, still caught up
    _same_moment(p, s)
    assert both()[0][-1] is both()[1][-1] is True
    s = step(s, AdvanceTime(1))
    _same_moment(p, s)
    assert both()[0][-1] is both()[1][-1] is False


def _same_moment(p: KafkaPartition, s) -> None:
    """Kafka's clock at the model's moment (model time ``t`` is ``CLOCK_BASE_MS + t``)."""
    p.set_now_ms(CLOCK_BASE_MS + s.now_ms)


def _shrunk_out_3(s):
    """The model's leader 1 shrinks 3 out: under Kafka's clock, once 3's caught-up
    time at the start has expired, 2 being caught up (at the leader's LEO, or its
    own fetch later); the chapters at once."""
    if s.config.follows(Rule.REPLICA_LAG_TIME):
        if s.replica(1).follower(2).fetch_offset != s.replica(1).leo:
            s = _fetch_round(s, 2)
        s = step(s, AdvanceTime(30_001 - s.now_ms))
    s = step(s, ProposeIsrShrink(1, 3))
    return _deliver(_deliver(s, ReceiveAlterPartition), ReceiveAlterPartitionResponse)


# ------------------------------------- departures 2 and 3: the ISR check, now rules

def _kafka_after_a_write_nobody_fetched() -> KafkaPartition:
    """Kafka's leader takes a write neither follower fetches; past
    replica.lag.time.max.ms its periodic ISR check runs."""
    p = leader()
    p.append(1)
    p.lag()
    p.maybe_shrink_isr()
    return p


def _kafka_at_the_leo() -> KafkaPartition:
    """Both followers fetch Kafka's leader's one write; ten times
    replica.lag.time.max.ms later its periodic ISR check runs."""
    p = leader()
    p.append(1)
    fetch(p, 2, 1)
    fetch(p, 3, 1)
    p.lag(10 * 30_000)
    p.maybe_shrink_isr()
    return p


def test_kafkas_periodic_isr_check_removes_every_lagging_follower_at_once():
    """``maybeShrinkIsr``: one AlterPartition without both followers that have not
    caught up within replica.lag.time.max.ms. The model's Kafka profile (Rule.
    SHRINK_ALL_OUT_OF_SYNC, found here) has no clock: its ISR check may find either
    follower, or both, out of sync, so Kafka's ISR [1] is one of its proposals, one
    step (``ProposeIsrShrinkMany``); with Kafka's clock (Rule.REPLICA_LAG_TIME) it is
    the only one; committed, the leader's ISR is [1] on both."""
    p = _kafka_after_a_write_nobody_fetched()
    assert [q.isr for q in p.proposals] == [((1, 10),)]
    s = step(step(_model(), Produce(1, 1)), AdvanceTime(30_001))
    assert _shrink_proposals(s) == {frozenset({1})} == _kafka_proposals(p)
    s = _deliver(_deliver(step(s, ProposeIsrShrinkMany(1, (2, 3))), ReceiveAlterPartition),
                 ReceiveAlterPartitionResponse)
    p.answer(frozenset({1}), 1, 2)
    assert p.isr == s.replica(1).isr == {1}


def test_a_follower_at_the_leaders_leo_is_never_out_of_sync():
    """``isCaughtUp``: however long since its last fetch, a follower at the
    leader's LEO stays in the ISR — until the next write, when it is at once out of
    sync (its last caught-up time is its last fetch's). The model's Kafka profile
    (Rule.CAUGHT_UP_AT_LEADER_LEO, found here) proposes no shrink while both
    followers are at the LEO, and after the write may propose Kafka's ISR [1]."""
    p = _kafka_at_the_leo()
    s = _at_the_leo(_model())
    s = step(s, AdvanceTime(10 * 30_000))
    assert _kafka_proposals(p) == set() == _shrink_proposals(s)
    p.append(2)
    p.maybe_shrink_isr()
    assert [q.isr for q in p.proposals] == [((1, 10),)]
    assert _kafka_proposals(p) == _shrink_proposals(step(s, Produce(1, 2)))


def _kafka_after_one_follower_caught_up_later() -> KafkaPartition:
    """Kafka's leader takes a write; follower 2 fetches behind it at once and at its
    LEO 10 s later, follower 3 never; a second write; 30,001 ms after the start its
    periodic ISR check runs."""
    p = leader()
    p.append(1)
    fetch(p, 2, 0)
    p.lag(10_000)
    fetch(p, 2, 1)
    p.append(2)
    p.set_now_ms(CLOCK_BASE_MS + 30_001)
    p.maybe_shrink_isr()
    return p


def test_kafkas_isr_check_finds_exactly_the_follower_whose_caught_up_time_expired():
    """``getOutOfSyncReplicas`` on Kafka's clock: 3 (caught up last at the start)
    is out of sync 30,001 ms after it, 2 (caught up at 10 s) is not, so Kafka
    proposes ISR [1, 2]. The model's Kafka profile with the same clock
    (Rule.REPLICA_LAG_TIME) proposes exactly that."""
    p = _kafka_after_one_follower_caught_up_later()
    s = _fetch_round(step(_model(), Produce(1, 1)), 2)
    s = _fetch_round(step(s, AdvanceTime(10_000)), 2)
    s = step(step(s, Produce(1, 2)), AdvanceTime(20_001))
    assert _kafka_proposals(p) == {frozenset({1, 2})} == _shrink_proposals(s)


@pytest.mark.parametrize("rule", [Rule.SHRINK_ALL_OUT_OF_SYNC, Rule.CAUGHT_UP_AT_LEADER_LEO, Rule.REPLICA_LAG_TIME])
@pytest.mark.parametrize("profile", [CHAPTERS, KAFKA])
def test_without_the_rule_the_model_differs_from_kafkas_isr_check(profile: str, rule: Rule):
    """The chapters, or the Kafka profile with the rule switched off (and the
    rules requiring it), still differ from Kafka's leader on the stories above:
    one AlterPartition removes one follower, so Kafka's ISR [1] is not a proposal
    (SHRINK_ALL_OUT_OF_SYNC); followers at the leader's LEO may be shrunk out,
    where Kafka's check finds none out of sync (CAUGHT_UP_AT_LEADER_LEO); without
    the clock the check may also find 2 out of sync, alone or with 3, at any
    moment (REPLICA_LAG_TIME)."""
    s = _model(profile, rules_without(PROFILES[KAFKA], rule) if profile == KAFKA else None)
    if rule is Rule.SHRINK_ALL_OUT_OF_SYNC:
        kafka = _kafka_proposals(_kafka_after_a_write_nobody_fetched())
        assert kafka == {frozenset({1})} and not kafka <= _shrink_proposals(step(s, Produce(1, 1)))
    elif rule is Rule.CAUGHT_UP_AT_LEADER_LEO:
        assert _kafka_proposals(_kafka_at_the_leo()) == set() != _shrink_proposals(_at_the_leo(s))
    else:
        s = _fetch_round(_fetch_round(step(s, Produce(1, 1)), 2), 2)
        kafka = _kafka_proposals(_kafka_after_one_follower_caught_up_later())
        assert kafka == {frozenset({1, 2})} != _shrink_proposals(step(s, Produce(1, 2)))


# ------------------------------------------- departure 4: the fetch answer, now a rule

def test_kafkas_fetch_answer_carries_the_hwm_from_before_the_fetch():
    """``fetchRecords`` reads (and takes the HWM) before ``updateFollowerFetchState``
    advances it: the fetch that moves the HWM to 1 is answered with 0."""
    p = leader()
    p.append(1)
    fetch(p, 2, 1)
    assert fetch(p, 3, 1).high_watermark == 0
    assert p.high_watermark == 1


def test_the_models_kafka_profile_answers_with_the_hwm_from_before_the_fetch_too():
    """The same fetches in the model, under Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE
    (found here): the answer carries the HWM from before the fetch, as Kafka's."""
    s = initial_state(Config(profile="kafka-4.4.0", brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    s = step(s, Produce(1, 1))
    for follower in (2, 3, 2):
        s = _fetch_round(s, follower)
    s = step(s, SendFetch(3))
    s = _deliver(s, ReceiveFetchRequest)
    (answer,) = s.network.messages
    assert (answer.hwm, s.replica(1).hwm) == (0, 1)


def _model(profile: str = KAFKA, rules=None):
    """The model's leader 1 of replicas [1, 2, 3], ISR all, MinISR 2 (``rules``:
    other than the profile's)."""
    chosen = {} if rules is None else {"rules": rules}
    return initial_state(Config(profile=profile, brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, **chosen))


def _at_the_leo(s):
    """One write, and both followers fetch it and then fetch at offset 1: the
    leader knows both at its LEO."""
    s = step(s, Produce(1, 1))
    for follower in (2, 3, 2, 3):
        s = _fetch_round(s, follower)
    r = s.replica(1)
    assert (r.leo, r.follower(2).fetch_offset, r.follower(3).fetch_offset) == (1, 1, 1)
    return s


def _shrink_proposals(s) -> set[frozenset[int]]:
    """Every ISR the model's leader may propose in one shrink now: one per enabled
    ``ProposeIsrShrink`` / ``ProposeIsrShrinkMany`` (the model's ISR check, which
    followers have lagged past replica.lag.time.max.ms being the run's choice)."""
    out = set()
    for a in enabled_actions(s):
        if isinstance(a, (ProposeIsrShrink, ProposeIsrShrinkMany)):
            (req,) = [m for m in step(s, a).network.messages if isinstance(m, AlterPartitionRequest)]
            out.add(req.isr)
    return out


def _kafka_proposals(p: KafkaPartition) -> set[frozenset[int]]:
    return {frozenset(b for b, _ in q.isr) for q in p.proposals}


def _deliver(s, kind):
    return step(s, next(a for a in enabled_actions(s) if isinstance(a, kind)))


def _fetch_round(s, follower: int):
    s = step(s, SendFetch(follower))
    return _deliver(_deliver(s, ReceiveFetchRequest), ReceiveFetchResponse)
