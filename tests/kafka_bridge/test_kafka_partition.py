"""Kafka's own ``kafka.cluster.Partition`` as a leader, driven alone
(``kafka_bridge.partition``): where it agrees with the Kafka profile, and the four
places its leader departed from the profile's model, each pinned on Kafka's side
and, where the model takes the same calls, on the model's (README, "Kafka's
Partition, driven alone"). The fourth, the HWM a fetch is answered with, is now a
rule of the profile (Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE)."""

from __future__ import annotations

import pytest

from kafka_bridge.partition import KafkaPartition, KafkaPartitionError
from model import Config, enabled_actions, initial_state, step
from model.actions import (ProposeIsrExpand, ProposeIsrShrink, Produce, ReceiveAlterPartition,
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


# ------------------------------------------------------------------ departures

def test_kafkas_leader_proposes_an_expansion_inside_the_followers_fetch():
    """``updateFollowerFetchState`` → ``maybeExpandIsr``: the AlterPartition is
    submitted by the fetch itself, naming every member's broker epoch (-1: follower 2
    has not fetched from this leader, ``addBrokerEpochToIsr``)."""
    p = leader(isr=frozenset({1, 2}))
    p.append(1)
    fetch(p, 3, 1)
    assert [(q.isr, q.leader_epoch, q.partition_epoch) for q in p.proposals] == [(((1, 10), (2, -1), (3, 12)), 1, 1)]


def test_the_models_kafka_profile_proposes_the_expansion_in_a_step_of_its_own():
    """The same fetches in the model leave no AlterPartition in flight: the
    expansion is ``ProposeIsrExpand``, a later step (the departure above)."""
    s = initial_state(Config(profile="kafka-4.4.0", brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2))
    s = step(s, ProposeIsrShrink(1, 3))
    s = _deliver(_deliver(s, ReceiveAlterPartition), ReceiveAlterPartitionResponse)
    s = step(s, Produce(1, 1))
    for follower in (2, 3, 3):
        s = _fetch_round(s, follower)
    assert (s.replica(1).isr, s.network.messages) == ({1, 2}, ())
    assert ProposeIsrExpand(1, 3) in enabled_actions(s)


def test_kafkas_periodic_isr_check_removes_every_lagging_follower_at_once():
    """``maybeShrinkIsr``: one AlterPartition without both followers that have not
    caught up within replica.lag.time.max.ms; the model removes one per step."""
    p = leader()
    p.append(1)
    p.lag()
    p.maybe_shrink_isr()
    assert [q.isr for q in p.proposals] == [((1, 10),)]


def test_a_follower_at_the_leaders_leo_is_never_out_of_sync():
    """``isCaughtUp``: however long since its last fetch, a follower at the
    leader's LEO stays in the ISR — until the next write, when it is at once out of
    sync (its last caught-up time is its last fetch's)."""
    p = leader()
    p.append(1)
    fetch(p, 2, 1)
    fetch(p, 3, 1)
    p.lag(10 * 30_000)
    p.maybe_shrink_isr()
    assert p.proposals == []
    p.append(2)
    p.maybe_shrink_isr()
    assert [q.isr for q in p.proposals] == [((1, 10),)]


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


def _deliver(s, kind):
    return step(s, next(a for a in enabled_actions(s) if isinstance(a, kind)))


def _fetch_round(s, follower: int):
    s = step(s, SendFetch(follower))
    return _deliver(_deliver(s, ReceiveFetchRequest), ReceiveFetchResponse)
