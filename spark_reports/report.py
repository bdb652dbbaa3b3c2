"""The HTML report: one self-contained ``index.html`` (CSS inline, plots and
space-time diagrams as inline base64 PNG) over a corpus directory."""

from __future__ import annotations

import base64
import datetime as dt
import html
import os
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from harness.schema import SCHEMA_VERSION

from . import analyses as A
from . import plots
from .corpus import Corpus, CorpusError, SchemaVersionError, empty_corpus, load_corpus
from .diagram import space_time_png

#: Columns of a representative fetched for its diagram.
_REP_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                "brokers", "replication_factor", "min_isr", "unclean_recovery", "unclean_leader_election",
                "config_json", "steps", "step_count", "final_state_json", "timeline", "found_at", "seed", "run_id")


def _spark_for(master: Optional[str]):
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    from ._session import session
    return session(master or "local[*]")


def _esc(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if v != v:
            return ""
        if v == 0 or 1e-3 <= abs(v) < 1e6:
            return f"{v:,.3f}".rstrip("0").rstrip(".")
        return f"{v:.3g}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, (list, tuple)):
        return html.escape(", ".join(str(x) for x in v))
    return html.escape(str(v))


def _table(rows: Sequence, columns: Sequence[str], headers: Optional[Sequence[str]] = None,
           cls: str = "", cell: Optional[Callable[[str, Any, Any], str]] = None, empty: str = "no rows") -> str:
    if not rows:
        return f'<p class="empty">{html.escape(empty)}</p>'
    head = "".join(f"<th>{html.escape(h).replace('_', '_<wbr>')}</th>" for h in (headers or columns))
    body = []
    for r in rows:
        tds = []
        for c in columns:
            v = r[c]
            content = cell(c, v, r) if cell else None
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            tds.append(f'<td class="{"num" if num else ""}">{content if content is not None else _esc(v)}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _anchor(signature: str) -> str:
    import hashlib
    return "sig-" + hashlib.sha1(signature.encode()).hexdigest()[:12]


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1400px;color:#222;
padding:0 16px}
h1{font-size:1.6em;margin-bottom:0} h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:2em}
h3{margin-bottom:4px} .meta{color:#666;font-size:.9em} .note{background:#fff4e5;border-left:4px solid #f0a030;
padding:8px 12px;margin:8px 0} .error{background:#fdecea;border-left:4px solid #c0392b;padding:8px 12px}
table{border-collapse:collapse;font-size:.82em;margin:8px 0} th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top} th{background:#f4f4f4;position:sticky;top:0} td.num{text-align:right;
font-variant-numeric:tabular-nums} tr:nth-child(even) td{background:#fafafa} .empty{color:#888;font-style:italic}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95em} img{max-width:100%;
border:1px solid #eee} .steps{font-family:ui-monospace,monospace;font-size:.78em;color:#333;line-height:1.5}
.kill td.hit{font-weight:600} .small{font-size:.85em;color:#555} nav a{margin-right:12px}
details summary{cursor:pointer;color:#1f5fa8} .scroll{overflow-x:auto;max-width:100%}
"""


def _kill_cell(maximum: int):
    def cell(col: str, v: Any, r: Any) -> Optional[str]:
        if col in ("property", "total") or not isinstance(v, int):
            return None
        if v == 0:
            return '<span style="color:#bbb">0</span>'
        alpha = 0.15 + 0.75 * (v / maximum if maximum else 0)
        return f'<span style="background:rgba(192,57,43,{alpha:.2f});padding:1px 4px;border-radius:3px">{v:,}</span>'
    return cell


def build_report(corpus_dir: Any, out_dir: Any, master: Optional[str] = None, *, spark: Any = None,
                 max_diagrams: int = 20, lift_top: int = 25, lift_min_steps: int = 2, motif_n: int = 3,
                 motif_top: int = 5, bucket_rows: int = 200, targets: Optional[Sequence[str]] = None,
                 run_id: Optional[str] = None, corpus: Optional[Corpus] = None) -> Path:
    """Write ``out_dir/index.html`` for the corpus at ``corpus_dir`` and return its path.

    ``master``: a Spark master URL (default: the active session, else
    ``local[*]``); ``spark``: a session to use instead; ``corpus``: the corpus
    already loaded (``load_corpus``) from ``corpus_dir``. A missing or empty
    corpus, or one with only passing runs, gives a valid report that says so.
    Every file or folder of the corpus that could not be read is skipped
    (``Corpus.skipped``) and listed in the report, with why; everything else is
    reported. A remote corpus holding rows of a newer schema version raises
    ``SchemaVersionError``. Raises ``OSError`` when ``out_dir`` cannot be
    created or written.
    Diagrams are drawn for the ``max_diagrams`` largest signatures. ``targets``:
    a fuzz campaign's target labels (``campaign_targets``; of campaign
    ``run_id`` when given): the report then has a section of them, naming those
    that did not run.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spark = spark or _spark_for(master)
    timings: list[tuple[str, float]] = []
    t_all = time.perf_counter()

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        value = fn()
        timings.append((name, time.perf_counter() - t0))
        return value

    problem: Optional[str] = None
    try:
        if corpus is None:
            corpus = timed("load", lambda: load_corpus(spark, corpus_dir))
    except SchemaVersionError:
        raise
    except CorpusError as exc:
        problem = str(exc)
        corpus = empty_corpus(spark, corpus_dir, notes=(exc.problem,), missing=True, skipped=exc.skipped)

    if problem:  # nothing to read: no Spark job at all
        o = dict.fromkeys(("counterexamples", "rows", "signatures", "properties", "targets", "runs", "failed_runs",
                           "examples", "steps_executed"), 0)
        o.update(first_found=None, last_found=None, run_time_s=0.0)
    else:
        o = timed("overview", lambda: A.overview(corpus))
    has_ce = bool(o["counterexamples"])
    km_long = timed("kill matrix", lambda: A.kill_matrix(corpus).collect()) if has_ce else []
    target_names = A.target_labels((r.target_kind, r.target) for r in km_long)
    km_wide = timed("kill matrix (wide)", lambda: A.kill_matrix_wide(corpus, target_names).collect()) if has_ce else []
    buckets = timed("signature buckets", lambda: A.signature_buckets(corpus).limit(max(bucket_rows, max_diagrams))
                    .collect()) if has_ce else []
    lift = timed("action lift", lambda: _lift_rows(corpus, lift_top, lift_min_steps)) if has_ce else {}
    lengths = timed("shrunk lengths", lambda: A.shrunk_length_distribution(corpus).collect()) if has_ce else []
    ttf = timed("time to failure", lambda: A.time_to_failure(corpus).collect()) if not problem else []
    cov = timed("protocol coverage", lambda: A.protocol_coverage(corpus).collect()) if o["runs"] else []
    top_sigs = [b.signature for b in buckets[:max_diagrams]]
    motifs = timed("n-gram motifs", lambda: A.ngram_motifs(corpus, n=motif_n, min_support=2, top_k=motif_top)
                   .where(_in("signature", top_sigs)).collect()) if has_ce and top_sigs else []
    reps = timed("representatives", lambda: _representatives(corpus, buckets[:max_diagrams])) if has_ce else {}
    diagrams = timed("diagrams", lambda: {sig: _safe_png(row) for sig, row in reps.items()})
    figs = timed("plots", lambda: {
        "lengths": plots.shrunk_length_plot([r.asDict() for r in lengths]),
        "ttf": plots.time_to_failure_plot([r.asDict() for r in ttf]),
        "coverage": plots.coverage_plot([r.asDict() for r in cov]),
        "kill": plots.kill_matrix_plot([r.asDict() for r in km_wide], target_names),
    })
    campaign = None if targets is None else timed(
        "campaign targets", lambda: [r.asDict() for r in A.campaign_targets(corpus, targets, run_id).collect()])
    timings.append(("total", time.perf_counter() - t_all))

    doc = _render(corpus, problem, o, km_wide, target_names, buckets, lift, lengths, ttf, cov, motifs, reps, diagrams,
                  figs, timings, spark, bucket_rows, campaign, run_id)
    path = out / "index.html"
    tmp = out / ".index.html.tmp"
    tmp.write_text(doc, encoding="utf-8")
    os.replace(tmp, path)
    return path


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


def _safe_png(row: Any) -> Optional[bytes]:
    try:
        return space_time_png(row)
    except Exception as exc:  # a diagram must never sink the report
        return plots._empty(f"diagram failed: {type(exc).__name__}: {exc}"[:120])


def _steps_text(row: Any) -> str:
    import json
    parts = []
    for s in row["steps"] or []:
        try:
            args = json.loads(s["args_json"] or "{}")
        except ValueError:
            args = {}
        a = ", ".join(f"{k}={v}" for k, v in args.items())
        parts.append(f'<span title="{html.escape(s["family"] or "")}">{s["idx"]}:&nbsp;'
                     f'{html.escape(s["action"])}({html.escape(a)})</span>')
    return " · ".join(parts)


def _campaign_section(campaign: list[dict], run_id: Optional[str]) -> list[str]:
    """The campaign's targets, those that did not run named first."""
    missing = [r["target"] for r in campaign if not r["ran"]]
    parts = [f"<h2 id='campaign'>Campaign targets</h2><p class='small'>Every target of the campaign"
             f"{' <code>' + html.escape(run_id) + '</code>' if run_id else ''}: its machine runs, examples and "
             f"counterexamples in this corpus.</p>"]
    if missing:
        parts.append(f"<p class='error'><b>{len(missing)} target(s) did not run:</b> "
                     f"{html.escape(', '.join(missing))}</p>")
    else:
        parts.append("<p class='small'>Every target ran.</p>")
    rows = [dict(r, ran="yes" if r["ran"] else "did not run") for r in campaign]
    parts.append(_table(rows, ["target", "ran", "runs", "examples", "failed_runs", "counterexamples"],
                        ["target", "ran", "runs", "examples", "failed runs", "counterexamples"], empty="no targets"))
    return parts


def _render(corpus, problem, o, km_wide, target_names, buckets, lift, lengths, ttf, cov, motifs, reps, diagrams,
            figs, timings, spark, bucket_rows, campaign=None, run_id=None) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>replicheck report</title>"
             f"<style>{_CSS}</style></head><body>",
             "<h1>replicheck — counterexample corpus report</h1>",
             f"<p class='meta'>corpus <code>{html.escape(corpus.path)}</code> · generated {now} · reader schema "
             f"v{SCHEMA_VERSION}, newest file v{corpus.newest_schema_version} · Spark {html.escape(spark.version)} "
             f"on <code>{html.escape(spark.sparkContext.master)}</code></p>",
             "<nav><a href='#summary'>summary</a><a href='#kill'>kill matrix</a><a href='#ttf'>time to failure</a>"
             "<a href='#buckets'>signatures</a><a href='#lift'>action lift</a><a href='#lengths'>shrunk lengths</a>"
             "<a href='#coverage'>coverage</a><a href='#motifs'>motifs</a><a href='#diagrams'>space-time diagrams</a>"
             "</nav>"]
    if problem:
        parts.append(f"<p class='error'><b>No corpus to report on:</b> {html.escape(problem)}</p>")
    for note in corpus.notes if not problem else ():
        parts.append(f"<p class='note'>{html.escape(note)}</p>")
    if corpus.skipped:
        parts.append(f"<h2 id='skipped'>Skipped files</h2><p class='error'><b>{len(corpus.skipped)} file(s) or "
                     f"folder(s) of the corpus could not be read</b> and are not in this report; everything else "
                     f"is.</p>")
        parts.append(_table([{"path": str(s.path), "why": s.reason} for s in corpus.skipped], ["path", "why"],
                            cell=lambda c, v, r: f"<span class='mono'>{_esc(v)}</span>" if c == "path" else None))

    # summary
    summary = [("counterexamples", o["counterexamples"]),
               ("counterexample rows (every find; a counterexample found again counts once above)", o["rows"]),
               ("files read", None if corpus.counterexample_files is None  # a remote corpus: not listed here
                else corpus.counterexample_files + (corpus.run_files or 0)),
               ("files or folders skipped", len(corpus.skipped)), ("signatures", o["signatures"]),
               ("failing properties", o["properties"]), ("targets with failures", o["targets"]),
               ("first found", o["first_found"]), ("last found", o["last_found"]), ("runs", o["runs"]),
               ("failed runs", o["failed_runs"] or 0), ("examples run", o["examples"] or 0),
               ("steps executed", o["steps_executed"] or 0), ("run time (s)", o["run_time_s"] or 0.0)]
    parts.append("<h2 id='summary'>Summary</h2>")
    parts.append(_table([{"what": k, "value": v} for k, v in summary], ["what", "value"], cls="summary"))
    if campaign is not None:
        parts += _campaign_section(campaign, run_id)

    # kill matrix
    parts.append("<h2 id='kill'>Kill matrix</h2><p class='small'>Counterexamples per failing property (rows) and "
                 "target (columns: protocol variants, SUT bugs, or <i>correct</i> when neither was switched on — a "
                 "failure there is a finding against the model or the harness). <i>total</i> counts each "
                 "counterexample once.</p>")
    if km_wide:
        maximum = max((r[t] for r in km_wide for t in target_names), default=0)
        parts.append(_table(km_wide, ["property"] + target_names + ["total"], cls="kill", cell=_kill_cell(maximum)))
        parts.append(_img(figs["kill"], "kill matrix heat map"))
    else:
        parts.append("<p class='empty'>no counterexamples</p>")

    # time to failure
    parts.append("<h2 id='ttf'>Time to failure</h2><p class='small'>Per target: runs and the share that failed (kill "
                 "rate), counterexamples, distinct signatures, median time and examples to the first failure, and "
                 "the shortest counterexample.</p>")
    parts.append(_img(figs["ttf"], "time to failure"))
    parts.append(_table(ttf, ["target_kind", "target", "runs", "failed_runs", "kill_rate", "failures", "signatures",
                              "median_time_to_failure_s", "median_examples_to_failure", "min_step_count"],
                        ["kind", "target", "runs", "failed runs", "kill rate", "failures", "signatures",
                         "median time to failure (s)", "median examples to failure", "shortest"],
                        empty="no runs and no counterexamples"))

    # buckets
    parts.append(f"<h2 id='buckets'>Signature buckets</h2><p class='small'>One row per failure signature (the dedup "
                 f"key: property and violation kind with ids and offsets normalized), largest first (at most "
                 f"{bucket_rows}). The representative is the shortest member.</p>")

    def bucket_cell(col: str, v: Any, r: Any) -> Optional[str]:
        if col == "signature" and r["signature"] in diagrams:
            return f"<a href='#{_anchor(v)}' class='mono'>{_esc(v)}</a>"
        if col in ("signature", "representative"):
            return f"<span class='mono'>{_esc(v)}</span>"
        return None
    parts.append(_table(buckets[:bucket_rows], ["signature", "property", "kind", "count", "first_seen", "last_seen",
                                                "representative", "representative_step_count", "targets"],
                        ["signature", "property", "kind", "members", "first seen", "last seen", "representative",
                         "steps", "targets"], cell=bucket_cell, empty="no counterexamples"))

    # lift
    parts.append("<h2 id='lift'>Action lift (statistical debugging)</h2><p class='small'>Per target, how "
                 "over-represented each action family, action, and action with its key argument is among the steps "
                 "of failing traces. <b>lift</b> = share of failing-trace steps ÷ share of baseline steps; "
                 "<b>Failure</b> = failing steps ÷ baseline steps doing it; <b>Context</b> = the same for its site "
                 "(the family for an action, the action for a key argument, any step for a family); "
                 "<b>Increase</b> = Failure − Context (&gt; 0: more failure-prone than its site). Baseline: every "
                 "step the target's runs executed (families, actions) or every counterexample's steps of all targets "
                 "(key arguments: the runs record no arguments). Top rows by Increase with at least two failing "
                 "steps.</p>")
    cols = ["target", "item", "family", "fail_steps", "base_steps", "fail_share", "base_share", "lift", "failure",
            "context", "increase"]
    heads = ["target", "item", "family", "failing steps", "baseline steps", "failing share", "baseline share",
             "lift", "Failure", "Context", "Increase"]
    for level, title in (("family", "Families"), ("action", "Actions"), ("key_arg", "Actions with key arguments")):
        parts.append(f"<h3>{title}</h3>")
        parts.append(_table(lift.get(level, []), cols, heads, empty="no failing steps"))

    # shrunk lengths
    parts.append("<h2 id='lengths'>Shrunk length distribution</h2>")
    parts.append("<p>Steps per counterexample: after reduction for the rows the fuzz campaign reduced "
                 "(corpus schema version 2), as Hypothesis shrank them otherwise.</p>")
    parts.append(_img(figs["lengths"], "shrunk lengths"))
    parts.append(_table(lengths, ["property", "target_kind", "target", "count", "min", "p25", "median", "p75", "max",
                                  "mean"], empty="no counterexamples"))

    # coverage
    parts.append("<h2 id='coverage'>Protocol coverage</h2><p class='small'>Share of runs that reached each protocol "
                 "event (from the runs' event counts); events no run reached are red.</p>")
    parts.append(_img(figs["coverage"], "protocol coverage"))
    parts.append(_table(cov, ["event", "runs_reaching", "total", "share_of_runs", "expected"],
                        ["event", "runs reaching", "occurrences", "share of runs", "known event"], empty="no runs"))

    # motifs
    parts.append("<h2 id='motifs'>Step motifs</h2><p class='small'>Action n-grams shared by members of a signature "
                 "(support = members containing the n-gram), top per signature for the signatures drawn below.</p>")
    parts.append(_table(motifs, ["signature", "property", "ngram", "support", "members", "share"],
                        cell=lambda c, v, r: f"<span class='mono'>{_esc(v)}</span>" if c in ("ngram", "signature")
                        else None, empty="no n-gram occurs in two members of a signature"))

    # diagrams
    parts.append("<h2 id='diagrams'>Space-time diagrams of the representatives</h2><p class='small'>One lane per "
                 "broker (and one for the controller and clients), the trace steps left to right, the final logs on "
                 "the right. Reconstructed from the step list and the final state only (the report does not re-run "
                 "the model): dashed, faded and italic marks are inferred; see each figure's legend.</p>")
    if not reps:
        parts.append("<p class='empty'>no counterexamples</p>")
    bucket_of = {b.signature: b for b in buckets}
    for sig, row in reps.items():
        b = bucket_of[sig]
        parts.append(f"<h3 id='{_anchor(sig)}'>{html.escape(row['property'])} <span class='mono small'>"
                     f"{html.escape(sig)}</span></h3>")
        targets = list(row["variants"] or []) + list(row["sut_bugs"] or [])
        parts.append(f"<p class='small'>{b['count']:,} member(s), first seen {_esc(b['first_seen'])}, last seen "
                     f"{_esc(b['last_seen'])} · representative <code>{html.escape(row['counterexample_id'])}</code> "
                     f"({row['step_count']} steps) · targets {html.escape(', '.join(targets) or 'correct')} · "
                     f"{row['brokers']} brokers, RF {row['replication_factor']}, MinISR {row['min_isr']}, unclean "
                     f"recovery {html.escape(str(row['unclean_recovery']))}"
                     f"{', unclean leader election' if row['unclean_leader_election'] else ''}"
                     f"{', seed ' + html.escape(str(row['seed'])) if row['seed'] else ''}</p>")
        parts.append(f"<p class='small'><b>violation:</b> {html.escape(row['violation'] or '')}</p>")
        parts.append(f"<details><summary>steps</summary><p class='steps'>{_steps_text(row)}</p></details>")
        if diagrams.get(sig):
            parts.append(_img(diagrams[sig], f"space-time diagram of {row['counterexample_id']}"))
            parts.append("<p class='small'>" + ("drawn from the recorded timeline (what replay observed at each step)"
                                                if row["timeline"] is not None else
                                                "drawn from the steps and final state only: the row has no timeline "
                                                "(written before corpus schema version 3)") + "</p>")

    parts.append("<h2>Timings</h2>")
    parts.append(_table([{"step": k, "seconds": v} for k, v in timings], ["step", "seconds"]))
    parts.append("</body></html>")
    return "\n".join(parts)
