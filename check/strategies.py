"""The machine's choices, drawn by Hypothesis or by a plain random generator.

Every choice the machine makes (a configuration, an action, how far an
exchange goes, …) goes through a ``Draws``: ``HypothesisDraws`` draws from
Hypothesis (the stateful tests, the campaign's machine runs: shrinkable, in the
example database), ``RandomDraws`` from a ``random.Random`` (``check.explore``:
no Hypothesis engine, so a search may branch from any state it reached). The
same policy code runs under both, so the explorer and the machine explore the
same space the same way.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Protocol, Sequence, TypeVar

from hypothesis import strategies as st

from model import PROFILES, UNCLEAN_RECOVERY_STRATEGIES, Config, Rule

from .subject import Subject

T = TypeVar("T")


class Draws(Protocol):
    """A source of choices; ``label`` names the choice (Hypothesis shows it in a
    failing example's notes)."""

    def integer(self, lo: int, hi: int, label: str) -> int:
        """An integer in ``lo..hi`` (both included); shrinks towards ``lo``."""
        ...

    def choice(self, options: Sequence[T], label: str) -> T:
        """One of ``options`` (non-empty); shrinks towards the first."""
        ...

    def boolean(self, label: str) -> bool:
        """True or False; shrinks towards False."""
        ...


def draw_nothing_from_local_source() -> None:
    """Make Hypothesis draw no constant found in the project's own source.

    Hypothesis (6.131 on) draws, now and then, an integer or string taken from
    the source of every local module imported so far. Which modules are imported
    depends on what ran before in the process (pytest-xdist's worksteal hands
    each worker other tests), so a derandomized run, or a seeded campaign, drew
    other examples in another process, and any literal added anywhere in the
    project moved every stream. Hypothesis has no setting for it: the pool it
    reads (``providers._get_local_constants``) is made empty. Hypothesis's own
    built-in constants (boundaries, nasty floats) still come. Called when this
    module is imported, before any draw of ours; idempotent."""
    from hypothesis.internal.conjecture import providers
    if getattr(providers, "_get_local_constants", None) is None:
        return  # a Hypothesis without the pool: nothing to pin
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()  # drawn before the pin: forget the local part


draw_nothing_from_local_source()


class HypothesisDraws:
    """``Draws`` from Hypothesis: ``draw`` is a ``DataObject``'s ``draw`` or a
    composite strategy's ``draw`` function."""

    __slots__ = ("_draw",)

    def __init__(self, draw: Callable[..., Any]) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self._draw(st.integers(lo, hi), label=label)

    def choice(self, options: Sequence[T], label: str) -> T:
        return self._draw(st.sampled_from(options), label=label)

    def boolean(self, label: str) -> bool:
        return self._draw(st.booleans(), label=label)


class RandomDraws:
    """``Draws`` from ``rng`` (uniform), for searches without Hypothesis."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T], label: str) -> T:
        return options[self.rng.randrange(len(options))]

    def boolean(self, label: str) -> bool:
        return self.rng.random() < 0.5


def draw_config(draws: Draws, subject: Subject = Subject()) -> Config:
    """A Config of ``subject``'s (its variants, profile, rules — default the
    profile's — and unclean leader election, None: drawn): 3–5 brokers,
    replication factor 2..brokers (a spare broker gives reassignment headroom),
    MinISR 1..RF, any unclean recovery strategy the rules allow (none under
    Rule.LAST_KNOWN_LEADER: Kafka has no unclean.recovery.strategy). Shrinks
    towards 3 brokers, RF 2, MinISR 1, strategy "none"."""
    profile = subject.profile
    rules = PROFILES[profile] if subject.rules is None else subject.rules
    n = draws.integer(3, 5, "brokers")
    rf = draws.integer(2, n, "replication factor")
    min_isr = draws.integer(1, rf, "MinISR")
    strategies = ("none",) if Rule.LAST_KNOWN_LEADER in rules else UNCLEAN_RECOVERY_STRATEGIES
    strategy = draws.choice(strategies, "unclean recovery")
    ule = draws.boolean("unclean leader election") if subject.unclean_leader_election is None \
        else subject.unclean_leader_election
    brokers = tuple(range(1, n + 1))
    return Config(brokers=brokers, assignment=brokers[:rf], min_isr=min_isr, unclean_recovery=strategy,
                  unclean_leader_election=ule, variants=subject.variants, profile=profile, rules=rules)


@st.composite
def configs(draw: st.DrawFn, subject: Subject = Subject()) -> Config:
    """``draw_config`` as a Hypothesis strategy."""
    return draw_config(HypothesisDraws(draw), subject)
