"""Recording machine runs in the store: a run's findings refined (reduced, with
their timelines: ``check.refine``) and written (``store.writer.CorpusWriter``).

``run_machine`` runs a machine class under Hypothesis, ``run_explorer`` under the
explorer (``check.explore``); both record the run, counterexamples first, before
they return or raise the failure.

Deferred reduction (a campaign's flaw targets): a run's counterexamples are
written at once as the search found them (with their timelines), and the run is
kept as ``Unreduced``; ``reduce_unreduced`` later writes them reduced and removes
the part holding them as found. A find is on disk from the moment it is made
either way, so nothing is lost when the reduction never comes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import attrs
from hypothesis.stateful import run_state_machine_as_test

from check.explore import Exploration, Explorer, ExploreResult
from check.refine import refine_all
from check.statistics import RunObserver
from check.finding import RunRecord
from check.refine import REDUCIBLE_KINDS
from store.fs import Location
from store.part import remove_part
from store.writer import CorpusWriter

#: The ``profile`` column of an explorer run's ``runs`` row (a Hypothesis run's
#: holds the Hypothesis settings profile).
EXPLORE_PROFILE = "explore"


@attrs.frozen
class Unreduced:
    """A run's counterexamples written as the search found them, waiting for
    reduction: ``record`` the run (its findings as found, before refinement),
    ``worker`` the worker that wrote them (the rows' ``worker``), ``part`` the
    corpus file holding exactly their rows, ``ids`` their counterexample ids.
    Plain data, picklable: a campaign hands it to any worker."""

    record: RunRecord
    worker: str
    part: Location
    ids: tuple[str, ...]


def record(writer: CorpusWriter, run: RunObserver, reduce_s: Optional[float] = None,
           deferred: Optional[list[Unreduced]] = None) -> list[dict[str, Any]]:
    """Record ``run`` with ``writer``: its findings refined (reduced within
    ``reduce_s`` seconds in all, when given), its counterexample rows written
    now, its ``runs`` row buffered (``CorpusWriter.record``); returns the
    counterexample rows. Interrupted while reducing (KeyboardInterrupt: Ctrl-C, a
    worker's SIGTERM), it writes the findings as the search kept them, then
    re-raises. With ``deferred`` (a list), findings a reduction applies to are
    written unreduced and the run is appended to it (``Unreduced``), when the
    write put exactly their rows in one part; otherwise they are reduced now."""
    done = run.record()
    if deferred is not None and any(f.kind in REDUCIBLE_KINDS for f in done.findings):
        rows = writer.record(attrs.evolve(done, findings=refine_all(done.findings)))
        ids = tuple(r["counterexample_id"] for r in rows)
        part = next((p for p, held in writer.parts if held == ids), None)
        if part is not None:
            deferred.append(Unreduced(done, writer.worker, part, ids))
        return rows
    try:
        found = refine_all(done.findings, reduce_s)
    except KeyboardInterrupt:
        writer.record(done)
        raise
    return writer.record(attrs.evolve(done, findings=found))


def reduce_unreduced(found: Unreduced, corpus_dir: Any, run_id: Optional[str],
                     reduce_s: float) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """Reduce ``found``'s findings within ``reduce_s`` seconds and write them, as
    its ``worker``, under ``run_id`` in the corpus at ``corpus_dir``; then remove
    the part holding them as found. Returns (the counterexample rows written,
    the ids removed with that part); nothing is written or removed when
    reduction changed none of them. Raises OSError when the reduced rows cannot
    be written (the writer has printed them; the found ones stay)."""
    refined = refine_all(found.record.findings, reduce_s)
    writer = CorpusWriter(corpus_dir, run_id=run_id, worker=found.worker)
    rows = writer.record(attrs.evolve(found.record, findings=refined), run_row_too=False)
    writer.close()
    if {r["counterexample_id"] for r in rows} == set(found.ids):
        return [], ()
    writer.flush()
    try:
        remove_part(found.part)
    except OSError:   # both stay: the reduced rows beside the found ones
        return rows, ()
    return rows, found.ids


def run_machine(machine_cls: type, settings: Any = None, corpus_dir: Path | str | None = None, *,
                writer: Optional[CorpusWriter] = None, test_id: Optional[str] = None,
                reduce_s: Optional[float] = None, deferred: Optional[list[Unreduced]] = None) -> None:
    """``run_state_machine_as_test(machine_cls, settings=settings)`` with the corpus:
    the final (shrunk) failure is written as counterexample rows — reduced first,
    within ``reduce_s`` seconds in all, when given — and a runs row either way;
    the failure is re-raised (``deferred``: see ``record``). Give ``writer`` (it
    writes the counterexample rows at once; the caller flushes the rest) or ``corpus_dir`` (flushed here; a failed
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
        record(writer, run, reduce_s, deferred)
        if own:
            writer.close()
            try:
                writer.flush()
            except OSError:  # printed and warned about by the writer
                pass


def run_explorer(machine_cls: type, seconds: float, seed: int, *, writer: Optional[CorpusWriter] = None,
                 test_id: Optional[str] = None, reduce_s: Optional[float] = None,
                 how: Exploration = Exploration(), deferred: Optional[list[Unreduced]] = None) -> ExploreResult:
    """One explorer run of ``machine_cls`` for ``seconds``, searching ``how``
    says (``check.explore.Exploration``), recorded as ``run_machine`` records a
    Hypothesis run: with ``writer``, the failure's counterexample rows — reduced
    first, within ``reduce_s`` seconds, when given — are written before this
    returns (``deferred``: see ``record``), and a ``runs`` row is buffered (``seed``: the run's seed,
    ``profile``: ``EXPLORE_PROFILE``). Returns what the search did, its
    ``verdict`` the failure found (None: none)."""
    run = RunObserver(machine_cls, test_id)
    run.seed, run.profile = str(seed), EXPLORE_PROFILE
    try:
        with run:
            result = Explorer(machine_cls, seed, guided=how.guided, unguided_share=how.unguided_share).run(
                seconds, shorten_s=how.shorten_s, shorten_bounded=how.shorten_bounded)
            if result.verdict is not None:
                run.found(result.verdict)
    finally:
        if writer is not None:
            record(writer, run, reduce_s, deferred)
    return result
