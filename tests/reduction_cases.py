"""Counterexamples that only reduction in smaller configurations, or with steps
re-based or merged, brings down, shared by the reduction tests (tests/check/test_reduce.py) and the corpus
export tests (tests/corpus/test_corpus_reduction.py)."""

from __future__ import annotations

from model import (Config, ControlledShutdown, FenceBroker, ListOffsets, Produce, ProposeIsrExpand, ProposeIsrShrink,
                   Reassign, ReceiveAlterPartition, ReceiveAlterPartitionResponse, ReceiveFetchRequest,
                   ReceiveFetchResponse, ReplicateMetadata, SendFetch, StartBroker, UnfenceBroker, Variant)

BIG = Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3), min_isr=3, unclean_recovery="balanced",
             unclean_leader_election=True)
# HWM_ADVANCES_BELOW_MIN_ISR on RF 3 of 5: with 2 fenced, leader 1 takes a write
# below MinISR and commits it once follower 3 has fetched it. It cannot lose a step
# in its own configuration, and comes down to the 3-step minimal scenario on RF 2 of 3.
BIG_TRACE = (FenceBroker(2), ReplicateMetadata(1, 2), Produce(1, 1), SendFetch(3), ReceiveFetchRequest(1),
             ReceiveFetchResponse(2), SendFetch(3), ReceiveFetchRequest(3))

# NO_MAXIMAL_ISR on RF 3 (MinISR 1), as Hypothesis shrank it: leader 1 takes a write,
# drops follower 2 from the ISR and proposes it back on its fetch at offset 0; follower
# 3's fetch at offset 1 advances the HWM on the committed ISR [1, 3] while [1, 2, 3] is
# pending, and the controller accepts 2 without the record. Carried over to RF 2 the
# write before the shrink is committed at once (ISR [1]) and the expansion is refused:
# only with the write moved after the proposal does it fail there, as the 8-step
# minimal scenario does.
MAXIMAL_RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1)
MAXIMAL_TRACE = (SendFetch(2), ReceiveFetchRequest(1), Produce(1, 1), SendFetch(3), ProposeIsrShrink(1, 2),
                 ReceiveAlterPartition(4), ReceiveFetchRequest(3), ReceiveFetchResponse(6),
                 ReceiveAlterPartitionResponse(5), ProposeIsrExpand(1, 2), ReceiveAlterPartition(7),
                 SendFetch(3), ReceiveFetchRequest(9))

# NO_FETCH_RESPONSE_VALIDATION on RF 3 (MinISR 1): value 1 is committed; follower 2
# fetches at offset 1 and, before the answer (value 2) arrives, is removed (target
# [1, 3]) and re-added, recreating its replica empty; the stale answer puts value 2 at
# offset 0. Without replica 3 the targets must lose broker 3 too ([1], [1, 2]): kept,
# [1, 3] would reassign 3 in instead of removing 2.
RESPONSE_RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=1)
RESPONSE_TRACE = (Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
                  SendFetch(3), ReceiveFetchRequest(3), ReceiveFetchResponse(4),
                  SendFetch(2), ReceiveFetchRequest(5), ReceiveFetchResponse(6),
                  SendFetch(3), ReceiveFetchRequest(7), Reassign((1, 3)), Reassign((1, 2, 3)), Produce(1, 2),
                  SendFetch(2), ReplicateMetadata(2, 1), ReceiveFetchRequest(9), ReplicateMetadata(2, 1),
                  ReceiveFetchResponse(10))

# LIST_OFFSETS_BEFORE_LESO on RF 3 (MinISR 3), as a campaign stored it: fetch rounds,
# a write, follower 2 shrunk out and proposed back, two fencings, two ListOffsets.
# It is 1-minimal when a removal that changes how many metadata records a later
# ReplicateMetadata finds pending is refused: the first removal of any fetch round
# or proposal did so. With the catch-ups re-based it comes down to the minimal
# scenario's 10 steps, MinISR 2 without replica 2.
LESO_RF3 = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=3,
                  variants=frozenset({Variant.LIST_OFFSETS_BEFORE_LESO}))
LESO_TRACE = (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), SendFetch(3), ReceiveFetchRequest(3),
              ReceiveFetchResponse(4), SendFetch(2), ReceiveFetchRequest(5), ReceiveFetchResponse(6), SendFetch(3),
              ReceiveFetchRequest(7), ReceiveFetchResponse(8), Produce(1, 1), SendFetch(3), ReceiveFetchRequest(9),
              ReceiveFetchResponse(10), SendFetch(3), ReceiveFetchRequest(11), ProposeIsrShrink(1, 2),
              ReceiveAlterPartition(13), ReceiveAlterPartitionResponse(14), ProposeIsrExpand(1, 2), SendFetch(2),
              ReplicateMetadata(3, 1), ReceiveFetchRequest(16), ReceiveAlterPartition(15), ReceiveFetchResponse(17),
              FenceBroker(1), ReceiveAlterPartitionResponse(18), SendFetch(2), ReceiveFetchRequest(19),
              ReceiveFetchResponse(20), UnfenceBroker(1), ReplicateMetadata(3, 4), ReplicateMetadata(2, 4),
              ListOffsets(), FenceBroker(2), ReplicateMetadata(3, 2), ListOffsets())

# ISR_JOIN_WITHOUT_LESO on RF 2 of 3 (MinISR 2), as a campaign stored it: restarts,
# a reassignment through (1, 2, 3) and back, brokers catching up on metadata in
# pieces. No single step can go; two pieces of one broker's catch-up merged into
# one, more can (33 steps, against 41 without merging).
LESO_JOIN = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2, variants=frozenset({Variant.ISR_JOIN_WITHOUT_LESO}))
LESO_JOIN_TRACE = (
    ControlledShutdown(1), StartBroker(1), ReplicateMetadata(1, 4), ReplicateMetadata(2, 4), UnfenceBroker(1),
    ReplicateMetadata(3, 3), ReplicateMetadata(2, 1), ReplicateMetadata(1, 1), ReplicateMetadata(3, 1), SendFetch(1),
    ReceiveFetchRequest(1), ReplicateMetadata(3, 1), ProposeIsrExpand(2, 1), ReceiveAlterPartition(3),
    ReplicateMetadata(2, 1), ReplicateMetadata(1, 1), ReplicateMetadata(3, 1), Produce(2, 1), ControlledShutdown(2),
    StartBroker(2), ReplicateMetadata(2, 4), UnfenceBroker(2), ReplicateMetadata(1, 4), ReplicateMetadata(3, 4),
    ControlledShutdown(2), StartBroker(2), ReplicateMetadata(2, 3), UnfenceBroker(2), ReplicateMetadata(3, 1),
    ReplicateMetadata(2, 1), ReplicateMetadata(3, 3), ControlledShutdown(1), StartBroker(1), ReplicateMetadata(1, 8),
    UnfenceBroker(1), ReplicateMetadata(2, 5), Reassign((1, 2, 3)), ReplicateMetadata(3, 6), ReplicateMetadata(2, 1),
    SendFetch(3), ReceiveFetchRequest(5), ReceiveFetchResponse(6), SendFetch(3), ReceiveFetchRequest(7),
    ProposeIsrExpand(2, 3), ReceiveAlterPartition(9), Reassign((1, 2)), ReplicateMetadata(2, 2),
    ReplicateMetadata(3, 2), FenceBroker(2), UnfenceBroker(2), ReplicateMetadata(3, 3), ReplicateMetadata(1, 7),
    SendFetch(1), ReceiveFetchRequest(11), ProposeIsrExpand(3, 1), ReceiveAlterPartition(13))
