"""Recording machine runs in the store: a run's findings refined (reduced, with
their timelines: ``check.refine``) and written (``store.writer.CorpusWriter``).

``run_machine`` runs a machine class under Hypothesis, ``run_explorer`` under the
explorer (``check.explore``); both record the run, counterexamples first, before
they return or raise the failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import attrs
from hypothesis.stateful import run_state_machine_as_test

from check.explore import Exploration, Explorer, ExploreResult
from check.refine import refine_all
from check.statistics import RunObserver
from store.writer import CorpusWriter

#: The ``profile`` column of an explorer run's ``runs`` row (a Hypothesis run's
#: holds the Hypothesis settings profile).
EXPLORE_PROFILE = "explore"


def record(writer: CorpusWriter, run: RunObserver, reduce_s: Optional[float] = None) -> list[dict[str, Any]]:
    """Record ``run`` with ``writer``: its findings refined (reduced within
    ``reduce_s`` seconds in all, when given), its counterexample rows written
    now, its ``runs`` row buffered (``CorpusWriter.record``); returns the
    counterexample rows. Interrupted while reducing (KeyboardInterrupt: Ctrl-C, a
    worker's SIGTERM), it writes the findings as the search kept them, then
    re-raises."""
    done = run.record()
    try:
        found = refine_all(done.findings, reduce_s)
    except KeyboardInterrupt:
        writer.record(done)
        raise
    return writer.record(attrs.evolve(done, findings=found))


def run_machine(machine_cls: type, settings: Any = None, corpus_dir: Path | str | None = None, *,
                writer: Optional[CorpusWriter] = None, test_id: Optional[str] = None,
                reduce_s: Optional[float] = None) -> None:
    """``run_state_machine_as_test(machine_cls, settings=settings)`` with the corpus:
    the final (shrunk) failure is written as counterexample rows — reduced first,
    within ``reduce_s`` seconds in all, when given — and a runs row either way;
    the failure is re-raised. Give ``writer`` (it writes the counterexample rows at
    once; the caller flushes the rest) or ``corpus_dir`` (flushed here; a failed
    write is printed and warned about, never raised over the run's own outcome)."""
    own = writer is None
    if own:
        if corpus_dir is None:
            raise ValueError("run_machine needs corpus_dir or writer")
        writer = CorpusWriter(corpus_dir)
    assert writer is not None
    run = RunObserver(machine_cls, test_id, settings)
    try:
        with run:
            run_state_machine_as_test(machine_cls, settings=settings)
    finally:
        record(writer, run, reduce_s)
        if own:
            writer.close()
            try:
                writer.flush()
            except OSError:  # printed and warned about by the writer
                pass


def run_explorer(machine_cls: type, seconds: float, seed: int, *, writer: Optional[CorpusWriter] = None,
                 test_id: Optional[str] = None, reduce_s: Optional[float] = None,
                 how: Exploration = Exploration()) -> ExploreResult:
    """One explorer run of ``machine_cls`` for ``seconds``, searching ``how``
    says (``check.explore.Exploration``), recorded as ``run_machine`` records a
    Hypothesis run: with ``writer``, the failure's counterexample rows — reduced
    first, within ``reduce_s`` seconds, when given — are written before this
    returns, and a ``runs`` row is buffered (``seed``: the run's seed,
    ``profile``: ``EXPLORE_PROFILE``). Returns what the search did, its
    ``verdict`` the failure found (None: none)."""
    run = RunObserver(machine_cls, test_id)
    run.seed, run.profile = str(seed), EXPLORE_PROFILE
    try:
        with run:
            result = Explorer(machine_cls, seed, guided=how.guided, unguided_share=how.unguided_share).run(
                seconds, shorten_s=how.shorten_s)
            if result.verdict is not None:
                run.found(result.verdict)
    finally:
        if writer is not None:
            record(writer, run, reduce_s)
    return result
