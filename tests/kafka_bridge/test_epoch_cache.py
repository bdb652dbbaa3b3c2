"""Kafka's own ``LeaderEpochFileCache`` (``kafka_bridge.KafkaLeaderEpochFileCache``)
against the SUT's (``sut.epoch_cache``): the same writes give the same entries and
the same answers to every lookup of §3.2, and Kafka's checkpoint file holds what
the cache holds."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sut.epoch_cache import EpochEntry, LeaderEpochFileCache

OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("assign"), st.integers(0, 6), st.integers(0, 10)),
    st.tuples(st.just("truncate"), st.integers(-1, 12), st.just(0)),
    st.tuples(st.just("clear"), st.just(0), st.just(0)),
), max_size=12)


def answers(cache, leo: int) -> tuple:
    return (cache.entries(), cache.latest_epoch(), [cache.epoch_for_offset(o) for o in range(12)],
            [cache.end_offset_for(e, leo) for e in range(-1, 8)])


@settings(max_examples=150, deadline=None, database=None)
@given(OPERATIONS, st.integers(0, 12))
def test_kafkas_cache_answers_as_the_suts_after_any_writes(operations, leo):
    from kafka_bridge import KafkaLeaderEpochFileCache
    ours, kafkas = LeaderEpochFileCache(), KafkaLeaderEpochFileCache()
    for op, a, b in operations:
        for cache in (ours, kafkas):
            if op == "assign":
                cache.assign(a, b)
            elif op == "truncate":
                cache.truncate_from_end(a)
            else:
                cache.clear()
        assert answers(kafkas, leo) == answers(ours, leo), operations
        assert kafkas.checkpoint() == [tuple(e) for e in kafkas.entries()]


def test_a_copy_has_a_checkpoint_file_of_its_own():
    from kafka_bridge import KafkaLeaderEpochFileCache
    cache = KafkaLeaderEpochFileCache()
    cache.assign(1, 0)
    cache.assign(3, 4)
    branch = copy.deepcopy(cache)
    branch.truncate_from_end(2)
    assert cache.entries() == (EpochEntry(1, 0), EpochEntry(3, 4)) and cache.checkpoint() == [(1, 0), (3, 4)]
    assert branch.entries() == (EpochEntry(1, 0),) and branch.checkpoint() == [(1, 0)]


def test_a_negative_entry_is_refused_as_the_suts_cache_refuses_it():
    from kafka_bridge import KafkaLeaderEpochFileCache
    for cache in (LeaderEpochFileCache(), KafkaLeaderEpochFileCache()):
        with pytest.raises(ValueError, match=r"invalid epoch entry \(-1, 0\)"):
            cache.assign(-1, 0)
