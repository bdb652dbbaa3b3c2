"""What the HTML report shows, gathered from a corpus with Spark: every
analysis's rows, the representatives' space-time diagrams and the plots, each
step timed (``ReportData``; rendered by ``spark_reports.report_html``)."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, Sequence

import attrs

from . import analyses as A
from . import plots
from .corpus import Corpus, CorpusError, SchemaVersionError, empty_corpus, load_corpus
from .diagram import space_time_png

#: Columns of a representative fetched for its diagram.
_REP_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                "brokers", "replication_factor", "min_isr", "unclean_recovery", "unclean_leader_election",
                "config_json", "steps", "step_count", "final_state_json", "timeline", "found_at", "seed", "run_id",
                "test_id")

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
    (name, seconds) once it returns; ``timer.record(name, seconds)`` records a
    step timed elsewhere."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._start = time.perf_counter()

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        value = fn()
        self.record(name, time.perf_counter() - t0)
        return value

    def record(self, name: str, seconds: float) -> None:
        self.timings.append((name, seconds))

    def total(self) -> list[tuple[str, float]]:
        """The steps in ``_STEPS``' order, the total (wall clock since the
        timer was made) last."""
        order = {name: i for i, name in enumerate(_STEPS)}
        self.timings.sort(key=lambda t: order.get(t[0], len(order)))
        self.timings.append(("total", time.perf_counter() - self._start))
        return self.timings


#: The report's steps, in the order their timings are listed.
_STEPS = ("load", "overview", "kill matrix", "kill matrix (wide)", "signature buckets", "action lift",
          "shrunk lengths", "time to failure", "protocol coverage", "n-gram motifs", "representatives",
          "diagrams", "plots", "campaign targets")


class _Jobs:
    """The report's Spark jobs, run at once from a thread each (py4j calls
    release the GIL; Spark's scheduler takes jobs from any thread): a small
    corpus's jobs are many and short, and one at a time they leave cores idle
    between their stages. ``start`` runs a step once the steps it needs are
    done; ``get`` waits for one and records its time when the report uses it."""

    def __init__(self, pool: ThreadPoolExecutor, timer: _Timer) -> None:
        self._pool = pool
        self._timer = timer
        self._jobs: dict[str, Future] = {}

    def start(self, name: str, fn: Callable[..., Any], *needs: str) -> None:
        """Run ``fn(*results of needs)`` in a thread of its own (``needs``:
        names of steps started before)."""
        before = [self._jobs[n] for n in needs]

        def timed() -> tuple[Any, float]:
            args = [f.result()[0] for f in before]
            t0 = time.perf_counter()
            return fn(*args), time.perf_counter() - t0
        self._jobs[name] = self._pool.submit(timed)

    def get(self, name: str, default: Any, used: bool = True) -> Any:
        """Step ``name``'s value, waited for (its error raised here), and its
        time recorded; ``default`` when it is not ``used`` (a job started
        before it was known whether the report needs it: its value, or error,
        is dropped) or was not started."""
        if not used or name not in self._jobs:
            return default
        value, seconds = self._jobs[name].result()
        self._timer.record(name, seconds)
        return value


def gather(spark: Any, corpus_dir: Any, corpus: Optional[Corpus], settings: ReportSettings,
           targets: Optional[Sequence[str]], run_id: Optional[str], threads: int = len(_STEPS)) -> ReportData:
    """The report's contents for the corpus at ``corpus_dir`` (``corpus``: it
    already loaded, else loaded here). An unreadable corpus gives an empty
    report saying why (``problem``); ``SchemaVersionError`` propagates, as
    does any analysis's error. ``targets``: a campaign's target labels (of
    campaign ``run_id``). The analyses' Spark jobs run at once in up to
    ``threads`` threads (>= 1; the contents do not depend on it), the
    diagrams and plots are drawn in this thread meanwhile (pyplot is not
    thread-safe)."""
    timer = _Timer()
    corpus, problem = _load(spark, corpus_dir, corpus, timer)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="replicheck-report")
    try:
        jobs = _Jobs(pool, timer)
        if problem is None:   # nothing to read: no Spark job for the tables
            _start_analyses(jobs, corpus, settings)
        if targets is not None:
            jobs.start("campaign targets", lambda: [r.asDict() for r in
                                                    A.campaign_targets(corpus, targets, run_id).collect()])
        o = jobs.get("overview", dict(_NO_OVERVIEW))
        tables, reps = _tables(jobs, o)
        diagrams = timer("diagrams", lambda: {sig: _safe_png(row) for sig, row in reps.items()})
        tables.update(_late_tables(jobs, o, problem, tables["buckets"][:settings.max_diagrams]))
        figures = timer("plots", lambda: _plots(tables))
        campaign = jobs.get("campaign targets", None)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
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


def _start_analyses(jobs: _Jobs, corpus: Corpus, settings: ReportSettings) -> None:
    """Start every analysis the report may show, the ones on its critical path
    (the signature buckets, then the representatives drawn from them) first."""
    jobs.start("overview", lambda: A.overview(corpus))
    jobs.start("signature buckets", lambda: A.signature_buckets(corpus).limit(
        max(settings.bucket_rows, settings.max_diagrams)).collect())
    jobs.start("representatives", lambda b: _representatives(corpus, b[:settings.max_diagrams]),
               "signature buckets")
    jobs.start("kill matrix", lambda: A.kill_matrix(corpus).collect())
    jobs.start("kill matrix (wide)", lambda km: _wide(corpus, km), "kill matrix")
    jobs.start("action lift", lambda: _lift_rows(corpus, settings.lift_top, settings.lift_min_steps))
    jobs.start("shrunk lengths", lambda: A.shrunk_length_distribution(corpus).collect())
    jobs.start("time to failure", lambda: A.time_to_failure(corpus).collect())
    jobs.start("protocol coverage", lambda: A.protocol_coverage(corpus).collect())
    jobs.start("n-gram motifs", lambda b: _motifs(corpus, settings, [r.signature for r in b[:settings.max_diagrams]]),
               "signature buckets")


def _wide(corpus: Corpus, km_long: list) -> tuple[list, list[str]]:
    """The wide kill matrix's rows and its target labels."""
    target_names = A.target_labels((r.target_kind, r.target) for r in km_long)
    return A.kill_matrix_wide(corpus, target_names).collect(), target_names


def _motifs(corpus: Corpus, settings: ReportSettings, top_sigs: list[str]) -> list:
    return A.ngram_motifs(corpus, n=settings.motif_n, min_support=2, top_k=settings.motif_top) \
        .where(_in("signature", top_sigs)).collect() if top_sigs else []


def _tables(jobs: _Jobs, o: dict) -> tuple[dict, dict]:
    """The signature buckets, kill matrix and representatives (the diagrams'
    input), keyed as ``ReportData``'s fields, and the representatives. Nothing
    to read: no Spark job at all; no counterexamples: only the runs' analyses."""
    has_ce = bool(o["counterexamples"])
    jobs.get("kill matrix", [], has_ce)
    km_wide, target_names = jobs.get("kill matrix (wide)", ([], []), has_ce)
    buckets = jobs.get("signature buckets", [], has_ce)
    reps = jobs.get("representatives", {}, has_ce)
    return dict(kill_matrix=km_wide, target_names=target_names, buckets=buckets), reps


def _late_tables(jobs: _Jobs, o: dict, problem: Optional[str], top: Sequence) -> dict:
    """The other analyses' rows, keyed as ``ReportData``'s fields (``top``:
    the signature buckets drawn, whose motifs are shown)."""
    has_ce = bool(o["counterexamples"])
    return dict(lift=jobs.get("action lift", {}, has_ce), lengths=jobs.get("shrunk lengths", [], has_ce),
                time_to_failure=jobs.get("time to failure", [], not problem),
                coverage=jobs.get("protocol coverage", [], bool(o["runs"])),
                motifs=jobs.get("n-gram motifs", [], has_ce and bool(top)))


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
