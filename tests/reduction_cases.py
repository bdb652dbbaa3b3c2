"""A counterexample that only reduction in smaller configurations brings down to
its minimal scenario, shared by the reduction tests (tests/harness/test_reduce.py)
and the corpus export tests (tests/corpus/test_corpus_reduction.py)."""

from __future__ import annotations

from model import Config, FenceBroker, Produce, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata, SendFetch

BIG = Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3), min_isr=3, unclean_recovery="balanced",
             unclean_leader_election=True)
# HWM_ADVANCES_BELOW_MIN_ISR on RF 3 of 5: with 2 fenced, leader 1 takes a write
# below MinISR and commits it once follower 3 has fetched it. It cannot lose a step
# in its own configuration, and comes down to the 3-step minimal scenario on RF 2 of 3.
BIG_TRACE = (FenceBroker(2), ReplicateMetadata(1, 2), Produce(1, 1), SendFetch(3), ReceiveFetchRequest(1),
             ReceiveFetchResponse(2), SendFetch(3), ReceiveFetchRequest(3))
