"""What the HTML report shows, gathered from a corpus with Spark: every
analysis's rows, the representatives' space-time diagrams and the plots, each
step timed (``ReportData``; rendered by ``spark_reports.report_html``)."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

import attrs

from . import analyses as A
from . import plots
from .corpus import Corpus, CorpusError, SchemaVersionError, empty_corpus, load_corpus
from .diagram import space_time_png

#: Columns of a representative fetched for its diagram.
_REP_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                "brokers", "replication_factor", "min_isr", "unclean_recovery", "unclean_leader_election",
                "config_json", "steps", "step_count", "final_state_json", "timeline", "found_at", "seed", "run_id")

#: ``overview`` of a corpus that could not be read: nothing.
_NO_OVERVIEW = dict(dict.fromkeys(("counterexamples", "rows", "signatures", "properties", "targets", "runs",
                                   "failed_runs", "examples", "steps_executed"), 0),
                    first_found=None, last_found=None, run_time_s=0.0)


@attrs.frozen(kw_only=True)
class ReportSettings:
    """How much the report shows: space-time diagrams for the ``max_diagrams``
    largest signatures; the ``lift_top`` rows per lift level with at least
    ``lift_min_steps`` failing steps; the ``motif_top`` ``motif_n``-grams per
    signature drawn; at most ``bucket_rows`` signature rows."""

    max_diagrams: int = 20
    lift_top: int = 25
    lift_min_steps: int = 2
    motif_n: int = 3
    motif_top: int = 5
    bucket_rows: int = 200


@attrs.frozen(kw_only=True)
class ReportData:
    """Everything the report shows (Spark ``Row``s, or dicts where noted).

    ``problem``: why there is no corpus to report on (None: there is).
    ``overview``: ``analyses.overview``'s dict. ``kill_matrix``: the wide kill
    matrix's rows, over ``target_names``. ``lift``: level (family, action,
    key_arg) -> its top rows. ``representatives``: signature -> its shortest
    member's row (``_REP_COLUMNS``), for the largest signatures; ``diagrams``:
    signature -> that row's space-time diagram (PNG bytes). ``figures``: plot
    name (lengths, ttf, coverage, kill) -> PNG bytes. ``campaign``: the
    campaign's targets (dicts of ``analyses.campaign_targets``; None: no
    campaign given) of ``run_id``. ``timings``: (step, seconds) in order, the
    total last. ``spark_version``, ``master``: the Spark session's.
    """

    corpus: Corpus
    problem: Optional[str]
    overview: dict
    kill_matrix: list
    target_names: list[str]
    buckets: list
    lift: dict[str, list]
    lengths: list
    time_to_failure: list
    coverage: list
    motifs: list
    representatives: dict[str, Any]
    diagrams: dict[str, bytes]
    figures: dict[str, bytes]
    campaign: Optional[list[dict]]
    run_id: Optional[str]
    timings: list[tuple[str, float]]
    spark_version: str
    master: str
    bucket_rows: int


class _Timer:
    """Times the report's steps: ``timer(name, fn)`` runs ``fn`` and records
    (name, seconds) once it returns."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._start = time.perf_counter()

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        value = fn()
        self.timings.append((name, time.perf_counter() - t0))
        return value

    def total(self) -> list[tuple[str, float]]:
        self.timings.append(("total", time.perf_counter() - self._start))
        return self.timings


def gather(spark: Any, corpus_dir: Any, corpus: Optional[Corpus], settings: ReportSettings,
           targets: Optional[Sequence[str]], run_id: Optional[str]) -> ReportData:
    """The report's contents for the corpus at ``corpus_dir`` (``corpus``: it
    already loaded, else loaded here). An unreadable corpus gives an empty
    report saying why (``problem``); ``SchemaVersionError`` propagates.
    ``targets``: a campaign's target labels (of campaign ``run_id``)."""
    timer = _Timer()
    corpus, problem = _load(spark, corpus_dir, corpus, timer)
    o = dict(_NO_OVERVIEW) if problem else timer("overview", lambda: A.overview(corpus))
    tables = _tables(corpus, o, problem, settings, timer)
    reps = timer("representatives", lambda: _representatives(corpus, tables["buckets"][:settings.max_diagrams])) \
        if o["counterexamples"] else {}
    diagrams = timer("diagrams", lambda: {sig: _safe_png(row) for sig, row in reps.items()})
    figures = timer("plots", lambda: _plots(tables))
    campaign = None if targets is None else timer(
        "campaign targets", lambda: [r.asDict() for r in A.campaign_targets(corpus, targets, run_id).collect()])
    return ReportData(corpus=corpus, problem=problem, overview=o, representatives=reps, diagrams=diagrams,
                      figures=figures, campaign=campaign, run_id=run_id, timings=timer.total(),
                      spark_version=spark.version, master=spark.sparkContext.master,
                      bucket_rows=settings.bucket_rows, **tables)


def _load(spark: Any, corpus_dir: Any, corpus: Optional[Corpus], timer: _Timer) -> tuple[Corpus, Optional[str]]:
    """(the corpus, None), or (an empty one, why) when there is nothing to read."""
    try:
        if corpus is None:
            corpus = timer("load", lambda: load_corpus(spark, corpus_dir))
    except SchemaVersionError:
        raise
    except CorpusError as exc:
        return empty_corpus(spark, corpus_dir, notes=(exc.problem,), missing=True, skipped=exc.skipped), str(exc)
    return corpus, None


def _tables(corpus: Corpus, o: dict, problem: Optional[str], settings: ReportSettings, timer: _Timer) -> dict:
    """The analyses' rows, keyed as ``ReportData``'s fields. Nothing to read: no
    Spark job at all; no counterexamples: only the runs' analyses."""
    has_ce = bool(o["counterexamples"])
    km_long = timer("kill matrix", lambda: A.kill_matrix(corpus).collect()) if has_ce else []
    target_names = A.target_labels((r.target_kind, r.target) for r in km_long)
    km_wide = timer("kill matrix (wide)", lambda: A.kill_matrix_wide(corpus, target_names).collect()) \
        if has_ce else []
    buckets = timer("signature buckets", lambda: A.signature_buckets(corpus).limit(
        max(settings.bucket_rows, settings.max_diagrams)).collect()) if has_ce else []
    lift = timer("action lift", lambda: _lift_rows(corpus, settings.lift_top, settings.lift_min_steps)) \
        if has_ce else {}
    lengths = timer("shrunk lengths", lambda: A.shrunk_length_distribution(corpus).collect()) if has_ce else []
    ttf = timer("time to failure", lambda: A.time_to_failure(corpus).collect()) if not problem else []
    cov = timer("protocol coverage", lambda: A.protocol_coverage(corpus).collect()) if o["runs"] else []
    top_sigs = [b.signature for b in buckets[:settings.max_diagrams]]
    motifs = timer("n-gram motifs", lambda: A.ngram_motifs(
        corpus, n=settings.motif_n, min_support=2, top_k=settings.motif_top).where(_in("signature", top_sigs))
        .collect()) if has_ce and top_sigs else []
    return dict(kill_matrix=km_wide, target_names=target_names, buckets=buckets, lift=lift, lengths=lengths,
                time_to_failure=ttf, coverage=cov, motifs=motifs)


def _plots(tables: dict) -> dict[str, bytes]:
    return {
        "lengths": plots.shrunk_length_plot([r.asDict() for r in tables["lengths"]]),
        "ttf": plots.time_to_failure_plot([r.asDict() for r in tables["time_to_failure"]]),
        "coverage": plots.coverage_plot([r.asDict() for r in tables["coverage"]]),
        "kill": plots.kill_matrix_plot([r.asDict() for r in tables["kill_matrix"]], tables["target_names"]),
    }


def _in(column: str, values: Sequence[str]):
    from pyspark.sql import functions as F
    return F.col(column).isin(list(values)) if values else F.lit(False)


def _lift_rows(corpus: Corpus, top: int, min_steps: int) -> dict:
    """The top ``top`` rows by increase per level (fail_steps >= min_steps), over
    all targets."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    lift = A.action_lift(corpus).where(F.col("fail_steps") >= F.lit(min_steps))
    w = Window.partitionBy("level").orderBy(F.desc_nulls_last("increase"), F.desc_nulls_last("lift"), "target", "item")
    rows = lift.withColumn("_r", F.row_number().over(w)).where(F.col("_r") <= top).drop("_r").collect()
    out: dict[str, list] = {"family": [], "action": [], "key_arg": []}
    for r in rows:
        out[r.level].append(r)
    for k in out:
        out[k].sort(key=lambda r: (-(r.increase if r.increase is not None else -1e9), r.target, r.item))
    return out


def _representatives(corpus: Corpus, buckets: Sequence) -> dict:
    ids = [b.representative for b in buckets]
    if not ids:
        return {}
    rows = corpus.counterexamples.where(_in("counterexample_id", ids)).select(*_REP_COLUMNS).collect()
    by_key: dict = {}
    for r in rows:  # an id is a content hash: the same counterexample found twice has one id
        by_key.setdefault((r.signature, r.counterexample_id), r)
    return {b.signature: by_key[(b.signature, b.representative)] for b in buckets
            if (b.signature, b.representative) in by_key}


def _safe_png(row: Any) -> bytes:
    try:
        return space_time_png(row)
    except Exception as exc:  # a diagram must never sink the report
        return plots._empty(f"diagram failed: {type(exc).__name__}: {exc}"[:120])
