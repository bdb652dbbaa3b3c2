"""Hypothesis strategies for run configurations."""

from __future__ import annotations

from hypothesis import strategies as st

from model import CHAPTERS, PROFILES, UNCLEAN_RECOVERY_STRATEGIES, Config, Rule, Variant


@st.composite
def configs(draw: st.DrawFn, variants: frozenset[Variant] = frozenset(),
            unclean_leader_election: bool | None = None, profile: str = CHAPTERS,
            rules: frozenset[Rule] | None = None) -> Config:
    """A Config: 3–5 brokers, replication factor 2..brokers (a spare broker gives
    reassignment headroom), MinISR 1..RF, any unclean recovery strategy the
    rules allow (none under Rule.LAST_KNOWN_LEADER: Kafka has no
    unclean.recovery.strategy). ``rules`` default to the profile's. Shrinks
    towards 3 brokers, RF 2, MinISR 1, strategy "none"."""
    rules = PROFILES[profile] if rules is None else rules
    n = draw(st.integers(3, 5), label="brokers")
    rf = draw(st.integers(2, n), label="replication factor")
    min_isr = draw(st.integers(1, rf), label="MinISR")
    strategies = ("none",) if Rule.LAST_KNOWN_LEADER in rules else UNCLEAN_RECOVERY_STRATEGIES
    strategy = draw(st.sampled_from(strategies), label="unclean recovery")
    ule = draw(st.booleans(), label="unclean leader election") if unclean_leader_election is None \
        else unclean_leader_election
    brokers = tuple(range(1, n + 1))
    return Config(brokers=brokers, assignment=brokers[:rf], min_isr=min_isr, unclean_recovery=strategy,
                  unclean_leader_election=ule, variants=variants, profile=profile, rules=rules)
