"""Helpers shared by the corpus tests: Hypothesis budgets for finding
counterexamples fast, hand-made counterexamples (no search), and running pytest
in a subprocess on a generated test file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Iterable

from hypothesis import HealthCheck, Phase, Verbosity, settings

from check.finding import Finding, Search, findings
from check.refine import refine_all
from check.replay import replay
from check.subject import Subject
from store.rows import counterexample_rows
from store.writer import CorpusWriter
from model import (Config, Produce, ProposeIsrExpand, ProposeIsrShrink, ReceiveAlterPartition,
                   ReceiveAlterPartitionResponse, Variant)
from sut import Cluster
from processes import child_env

ROOT = Path(__file__).resolve().parents[2]

#: Generation only: a counterexample as found (tens of steps), usually within a few
#: hundred examples (a generous budget: the run stops at the first failure).
FIND = settings(max_examples=1000, stateful_step_count=60, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False,
                phases=(Phase.explicit, Phase.reuse, Phase.generate), verbosity=Verbosity.quiet)
#: With shrinking (no explain phase, which traces coverage and is slow), on short runs.
SHRINK = settings(FIND, stateful_step_count=10, phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink))

HWM_CONFIG = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
                    variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR}))
#: The leader shrinks the ISR to itself below MinISR and still commits a write
#: (HWM_ADVANCES_BELOW_MIN_ISR): the ELR member 2 lacks the committed offset 0.
HWM_TRACE = (Produce(1, 1), ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2))
#: With PRODUCE_IGNORES_MIN_ISR the SUT takes a write the model refuses (ISR below MinISR).
PRODUCE_CONFIG = Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2)
PRODUCE_TRACE = (ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2), Produce(1, 1))


class ExpandsOutOfSyncFollowers(Cluster):
    """The bundled SUT, except that a running leader with no AlterPartition in flight
    may propose any replica outside its ISR, in sync or not: an implementation
    (``machine_for(Subject(implementation=ExpandsOutOfSyncFollowers))``) that enables an ISR
    expansion the model refuses, which no state shows until the step is taken, and
    which the machine finds within a few examples as soon as a follower lags."""

    def why_not_enabled(self, action: object):
        reason = super().why_not_enabled(action)
        if reason is None or not isinstance(action, ProposeIsrExpand) or self._known(action.leader):
            return reason
        leader = self._running_leader(action.leader)
        # enabled where the only refusal is the follower's sync (Partition.why_not_expand's last check)
        return None if leader is not None and reason == leader.is_follower_in_sync(action.follower) else reason


def findings_for(trace: Iterable, config: Config, bugs: frozenset = frozenset(),
                 test_id: str = "hand::made") -> list[Finding]:
    """The findings of a hand-written failing trace, as a run would find them."""
    result = replay(tuple(trace), Subject.at(config, bugs=bugs))
    assert result.verdict is not None, "the hand-written trace must fail"
    return list(findings(result.verdict, result.subject, Search(test_id)))


def rows_for(trace: Iterable, config: Config, bugs: frozenset = frozenset(), test_id: str = "hand::made",
             run_id: str = "handmade", worker: str = "main") -> list[dict]:
    """Counterexample rows of a hand-written failing trace, as a run would record
    them (with their timelines)."""
    return counterexample_rows(refine_all(findings_for(trace, config, bugs, test_id)), run_id=run_id, worker=worker)


def write_corpus(root: Path, rows: list[dict], run_id: str = "handmade", worker: str = "main") -> Path:
    writer = CorpusWriter(root, run_id=run_id, worker=worker)
    writer.add_counterexamples(rows)
    (path,) = writer.flush()
    return path


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a nested pytest: none of this run's xdist, pytest or
    corpus variables."""
    env = {k: v for k, v in child_env().items() if not k.startswith("REPLICHECK_") and k != "HYPOTHESIS_PROFILE"}
    env.update(extra)
    return env


def run_pytest(cwd: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 400) -> subprocess.CompletedProcess:
    """``python -m pytest -p pytest_replicheck.plugin ARGS`` in ``cwd`` (outside the
    project, so neither its conftest nor its corpus is involved)."""
    cmd = [sys.executable, "-m", "pytest", "-p", "pytest_replicheck.plugin", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout)
