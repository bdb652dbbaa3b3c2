"""What a campaign is, as one value: ``Campaign`` — its targets (each naming its
``check.subject.Subject``), its budget and workers, its seed, where its rows go
and how it searches. Built once at a front door (``replicheck fuzz``), handed to
the runner (``campaign.runner.run_campaign``) and the scheduler
(``campaign.scheduler.Scheduler``); every work unit carries its share of it.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import attrs

from .targets import Target
from .unit import ENGINES, EXPLORE
from .workers import check_workers

#: Kept back at the end of the search for the last units' run, shrinking and reduction.
FINISH_S = 20.0


def check_budget(budget_s: float, workers: int, seed: Optional[int]) -> None:
    """ValueError naming the first bad argument: ``budget_s`` a finite number of
    seconds > 0, ``workers`` an integer >= 1, ``seed`` an integer >= 0 or None."""
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not math.isfinite(budget_s) \
            or budget_s <= 0:
        raise ValueError(f"budget must be a finite number of seconds > 0, got {budget_s!r}")
    check_workers(workers)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be an integer >= 0 or None, got {seed!r}")


def _targets(value: Any) -> tuple[Target, ...]:
    targets = tuple(value)
    labels = [t.label for t in targets]
    if not labels:
        raise ValueError("a campaign needs at least one target")
    if len(set(labels)) != len(labels):
        raise ValueError(f"campaign targets must be unique, got {labels}")
    return targets


@attrs.frozen
class Campaign:
    """A campaign.

    targets: its targets (labels unique; ValueError when empty or repeated).
    budget_s: seconds of search (the Spark report's time is the front door's).
    workers: local worker processes (an integer >= 1), or with a ``master`` how
      many units run at once (None: the executors' cores).
    seed: the campaign's seed (None: fresh random runs; see ``campaign.runner``
      for what it makes reproducible).
    corpus_dir, run_id: where, and under which id, its rows are written (None:
      nothing is written); a folder every worker writes, or a URI (``store.fs``).
    engine: how units search (``campaign.unit.ENGINES``).
    master: a Spark master URL to run the units as Spark tasks
      (``campaign.spark_pool``); None: local worker processes.
    finish_s: seconds kept back at the end for the last units' run, shrinking and
      reduction.
    log_path: where the workers' output goes (None: discarded).
    known: the signatures of disagreements the campaign knows (``campaign.known``):
      its runs go on past them, and they fail no target.

    ValueError names a bad ``budget_s``, ``workers`` (None only with a
    ``master``), ``seed`` or ``engine``."""

    targets: tuple[Target, ...] = attrs.field(converter=_targets)
    budget_s: float
    workers: Optional[int] = None
    seed: Optional[int] = None
    corpus_dir: Optional[str] = None
    run_id: Optional[str] = None
    engine: str = EXPLORE
    master: Optional[str] = None
    finish_s: float = FINISH_S
    log_path: Optional[str] = None
    known: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)

    def __attrs_post_init__(self) -> None:
        check_budget(self.budget_s, self.workers if self.workers is not None or self.master is None else 1,
                     self.seed)
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")

    @property
    def implementations(self) -> tuple[str, ...]:
        """The implementations its targets put under test, by name, once each."""
        return tuple(dict.fromkeys(t.name for t in self.targets if t.kind == "implementation"))
