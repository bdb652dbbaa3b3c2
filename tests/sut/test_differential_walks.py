"""Differential random walks: the SUT and the reference model take the same
seeded walk over ``model.enabled_actions``; after EVERY step the SUT's outcome and
observation must equal the model's, and the SUT must agree with the model on whether
each enabled action — and a sample of disabled ones — is enabled.

Two walk policies per configuration, 4,000 steps each:
- ``family``: ``check.random_walk.choose`` with policy "family" (a family
  uniformly, then an action of it);
- ``low-churn``: the "weighted" policy with faults and broker churn rarer still
  than the default weights, so replication, ISR changes, writes, divergence and
  reassignments make progress between faults.
Walks restart from the initial state every ``WALK`` steps (several seeds). The
configurations named ``kafka-…`` run under the Kafka profile.

Each step goes through the harness's lockstep check (``check.lockstep``); a
failure prints its verdict: a field-by-field diff of the first differing part
(or the enablement disagreement), the model state, the last steps, the seed.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

import model
from check.random_walk import DEFAULT_WEIGHTS, choose
from model import (KAFKA, AlterPartitionRequest, CancelReassignment, Config, ControlledShutdown, DropMessage,
                   FenceBroker, FetchResponse, Reassign, ReceiveFetchRequest, Rule, StartBroker, UncleanShutdown,
                   UnfenceBroker)

from difftools import expect_agreement, lockstep, probe_actions

CONFIGS = {
    "3b-rf3-min2-balanced": Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, unclean_recovery="balanced"),
    "3b-rf2-min1-none": Config(brokers=(1, 2, 3), assignment=(3, 1), min_isr=1, unclean_recovery="none"),
    "4b-rf3-min2-proactive": Config(brokers=(1, 2, 3, 4), assignment=(2, 4, 1), min_isr=2,
                                    unclean_recovery="proactive"),
    "4b-rf4-min3-manual-ule": Config(brokers=(0, 1, 2, 3), assignment=(3, 0, 1, 2), min_isr=3,
                                     unclean_recovery="manual", unclean_leader_election=True),
    "5b-rf4-min3-balanced": Config(brokers=(1, 2, 3, 4, 5), assignment=(1, 2, 3, 4), min_isr=3,
                                   unclean_recovery="balanced"),
    "5b-rf5-min2-proactive-ule": Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 3, 2, 1), min_isr=2,
                                        unclean_recovery="proactive", unclean_leader_election=True),
    "5b-rf2-min2-balanced": Config(brokers=(1, 2, 3, 4, 5), assignment=(4, 2), min_isr=2,
                                   unclean_recovery="balanced"),
    # The Kafka profile (model.KAFKA): the SUT follows Kafka 4.4.0's rules too.
    "kafka-3b-rf3-min2": Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA),
    "kafka-4b-rf4-min3-ule": Config(brokers=(0, 1, 2, 3), assignment=(3, 0, 1, 2), min_isr=3,
                                    unclean_leader_election=True, profile=KAFKA),
    "kafka-5b-rf5-min2-ule": Config(brokers=(1, 2, 3, 4, 5), assignment=(5, 4, 3, 2, 1), min_isr=2,
                                    unclean_leader_election=True, profile=KAFKA),
    "kafka-5b-rf2-min2": Config(brokers=(1, 2, 3, 4, 5), assignment=(4, 2), min_isr=2, profile=KAFKA),
}

STEPS_PER_POLICY = 4_000   # per configuration and policy: 8,000 steps per configuration
WALK = 500                 # steps before a walk restarts from the initial state
PROBES_PER_STEP = 6        # disabled-action candidates checked per step

LOW_CHURN = dict(DEFAULT_WEIGHTS)
LOW_CHURN.update({StartBroker: 1.0, UnfenceBroker: 1.5, FenceBroker: 0.08, ControlledShutdown: 0.08,
                  UncleanShutdown: 0.06, DropMessage: 0.15, Reassign: 0.1, CancelReassignment: 0.15})


def walk(config: Config, policy: str, seed: int, steps: int, stats: Counter) -> None:
    rng = random.Random(seed)
    probe_rng = random.Random(seed ^ 0x5EED)
    label = f"policy={policy} seed={seed} config={config!r}"
    ls = lockstep(config)
    for i in range(steps):
        if i and i % WALK == 0:
            stats["acked"] += len(ls.state.history.acked)
            ls = lockstep(config)
        enabled = model.enabled_actions(ls.state)
        expect_agreement(ls.probe(enabled), label)
        candidates = probe_actions(ls.state, probe_rng)
        for a in probe_rng.sample(candidates, min(PROBES_PER_STEP, len(candidates))):
            expect_agreement(ls.probe([a]), label)
            stats["probes"] += 1
            stats["probes disabled"] += a not in enabled
        if policy == "family":
            action = choose(enabled, rng, "family")
        else:
            action = choose(enabled, rng, "weighted", LOW_CHURN)
        first = ls.state.network.next_id
        expect_agreement(ls.step(action), label)
        stats[type(action).__name__] += 1
        if isinstance(action, ReceiveFetchRequest) and isinstance(ls.state.network.get(first), AlterPartitionRequest):
            stats["expansions inside a fetch"] += 1   # Rule.EXPAND_ISR_ON_FETCH
        stats["steps"] += 1
        stats["diverging responses"] += sum(
            1 for m in ls.state.network.messages
            if isinstance(m, FetchResponse) and m.diverging_epoch is not None and m.id == ls.state.network.next_id - 1)
    stats["acked"] += len(ls.state.history.acked)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["family", "low-churn"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_sut_matches_model_step_for_step(name: str, policy: str):
    config = CONFIGS[name]
    stats: Counter = Counter()
    seeds = 2
    for seed in range(seeds):
        walk(config, policy, 1000 * seed + len(name), STEPS_PER_POLICY // seeds, stats)
    assert stats["steps"] == STEPS_PER_POLICY
    # The walks reach the interesting parts of the protocol, not only churn: the
    # family policy is dominated by broker restarts, the low-churn one by the data path.
    assert stats["probes disabled"] > stats["probes"] // 2
    if policy == "family":
        expected = ("StartBroker", "UnfenceBroker", "FenceBroker", "ControlledShutdown", "UncleanShutdown",
                    "ReplicateMetadata", "Reassign", "Produce", "SendFetch")
    else:
        expansion = ("expansions inside a fetch" if config.follows(Rule.EXPAND_ISR_ON_FETCH)
                     else "ProposeIsrExpand")
        expected = ("Produce", "SendFetch", "ReceiveFetchRequest", "ReceiveFetchResponse", "ReplicateMetadata",
                    "ProposeIsrShrink", expansion, "ReceiveAlterPartition",
                    "ReceiveAlterPartitionResponse", "FenceBroker", "StartBroker", "UnfenceBroker", "Consume",
                    "ListOffsets")
        assert stats["acked"] >= 50, stats
    missing = [cls for cls in expected if not stats[cls]]
    assert not missing, f"never taken: {missing}; {stats}"
