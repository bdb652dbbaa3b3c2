"""Implementations written against the lockstep's interface alone (``apply``
returning the ``model.Outcome``, ``is_enabled``, ``observe``), the bundled SUT
behind them as their engine: ``Faithful`` passes every check; ``LateAcks``
acknowledges each write one action late; ``LateAcksAndLost`` also says no write
after the first was appended (a second disagreement, behind the first). Shared
by the tests of pluggable implementations and of known disagreements."""

from __future__ import annotations

import attrs

from model import (Action, Config, Observation, Outcome, Produce, ReceiveFetchRequest, ReceiveFetchResponse,
                   SendFetch)
from sut import Cluster


class Faithful:
    """Every call passed through to an engine."""

    def __init__(self, config: Config) -> None:
        self.engine = Cluster(config)

    def apply(self, action: Action) -> Outcome:
        return self.engine.apply(action)

    def is_enabled(self, action: Action) -> bool:
        return self.engine.is_enabled(action)

    def observe(self) -> Observation:
        return self.engine.observe()


class LateAcks(Faithful):
    """Delivers the acknowledgements of each action with the next action's outcome."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.held: tuple = ()

    def apply(self, action: Action) -> Outcome:
        out = self.engine.apply(action)
        held, self.held = self.held, out.acknowledged
        return attrs.evolve(out, acknowledged=held)


RF2 = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1)
#: A write replicated to follower 2; its second fetch (offset 1) lets leader 1's HWM
#: pass the write, which acknowledges it (step 6).
COMMIT_ONE = (Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), SendFetch(2),
              ReceiveFetchRequest(3))


class LateAcksAndLost(LateAcks):
    """LateAcks, and every write after the first is appended nowhere (its
    outcome says it was not)."""

    def apply(self, action: Action) -> Outcome:
        out = super().apply(action)
        if isinstance(action, Produce) and action.value > 1:
            return attrs.evolve(out, appended=())
        return out
