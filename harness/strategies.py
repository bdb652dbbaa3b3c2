"""Hypothesis strategies for run configurations."""

from __future__ import annotations

from hypothesis import strategies as st

from model import UNCLEAN_RECOVERY_STRATEGIES, Config, Variant


@st.composite
def configs(draw: st.DrawFn, variants: frozenset[Variant] = frozenset(),
            unclean_leader_election: bool | None = None) -> Config:
    """A Config: 3–5 brokers, replication factor 2..brokers (a spare broker gives
    reassignment headroom), MinISR 1..RF, any unclean recovery strategy. Shrinks
    towards 3 brokers, RF 2, MinISR 1, strategy "none"."""
    n = draw(st.integers(3, 5), label="brokers")
    rf = draw(st.integers(2, n), label="replication factor")
    min_isr = draw(st.integers(1, rf), label="MinISR")
    strategy = draw(st.sampled_from(UNCLEAN_RECOVERY_STRATEGIES), label="unclean recovery")
    ule = draw(st.booleans(), label="unclean leader election") if unclean_leader_election is None \
        else unclean_leader_election
    brokers = tuple(range(1, n + 1))
    return Config(brokers=brokers, assignment=brokers[:rf], min_isr=min_isr, unclean_recovery=strategy,
                  unclean_leader_election=ule, variants=variants)
