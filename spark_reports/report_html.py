"""The report's HTML, rendered from ``templates/report.html.j2`` (Jinja2,
``spark_reports.templating``): this module turns a ``ReportData`` into the
template's values (the plain-text parts: summary rows, step lists, targets)
and gives the template its filters."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
from typing import Any

from markupsafe import Markup

from store.schema import SCHEMA_VERSION, row_target, skipped_count

from .report_data import ReportData
from .templating import environment


def cell_text(v: Any) -> str:
    """A table cell's text: numbers with thousands separators (floats to 3
    decimals, or 3 significant digits when tiny or huge), booleans yes/no,
    times to the second, lists comma-separated, None and NaN empty."""
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
        return ", ".join(str(x) for x in v)
    return str(v)


def _header(name: str) -> Markup:
    """A column header that may break after its underscores."""
    return Markup(html.escape(name).replace("_", "_<wbr>"))


def anchor(signature: str) -> str:
    """The id of a signature's diagram section."""
    return "sig-" + hashlib.sha1(signature.encode()).hexdigest()[:12]


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_ENV = environment("spark_reports")
_ENV.filters.update(cell=cell_text, header=_header, anchor=anchor,
                    base64=lambda png: base64.b64encode(png).decode())
_ENV.tests.update(numeric=_numeric)


def render(data: ReportData) -> str:
    """The report's ``index.html`` text."""
    o, corpus = data.overview, data.corpus
    files = None if corpus.counterexample_files is None else corpus.counterexample_files + (corpus.run_files or 0)
    summary = [("counterexamples", o["counterexamples"]),
               ("counterexample rows (every find; a counterexample found again counts once above)", o["rows"]),
               ("files read", files),   # None: a remote corpus, not listed here
               ("files or folders skipped", sum(s.row is None for s in corpus.skipped)), *_rows_skipped(corpus),
               ("signatures", o["signatures"]),
               ("failing properties", o["properties"]), ("targets with failures", o["targets"]),
               ("first found", o["first_found"]), ("last found", o["last_found"]), ("runs", o["runs"]),
               ("failed runs", o["failed_runs"] or 0), ("examples run", o["examples"] or 0),
               ("steps executed", o["steps_executed"] or 0), ("run time (s)", o["run_time_s"] or 0.0)]
    bucket_of = {b.signature: b for b in data.buckets}
    campaign = None if data.campaign is None else [dict(r, ran="yes" if r["ran"] else "did not run")
                                                   for r in data.campaign]
    return _ENV.get_template("report.html.j2").render(
        r=data, corpus=corpus, schema_version=SCHEMA_VERSION,
        now=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        summary=[{"what": k, "value": v} for k, v in summary],
        skipped=[{"path": str(s.path), "why": s.reason} for s in corpus.skipped],
        skipped_words=skipped_count(corpus.skipped),
        campaign=campaign, not_run=[r["target"] for r in data.campaign or () if not r["ran"]],
        kill_max=max((row[t] for row in data.kill_matrix for t in data.target_names), default=0),
        representatives=[_representative(sig, row, bucket_of[sig], data.diagrams.get(sig))
                         for sig, row in data.representatives.items()],
        timings=[{"step": k, "seconds": v} for k, v in data.timings])


def _rows_skipped(corpus: Any) -> list[tuple[str, int]]:
    """The summary's line of rows skipped (a null where the schema requires a
    value), when there are any."""
    rows = sum(s.row is not None for s in corpus.skipped)
    return [("rows skipped (a null where the schema requires a value)", rows)] if rows else []


def _representative(sig: str, row: Any, bucket: Any, png: Any) -> dict:
    """What the report shows of the representative ``row`` of the signature
    ``sig`` (its ``bucket`` row) and its diagram (``png``, None: none)."""
    return {"signature": sig, "row": row, "bucket": bucket,
            "targets": row_target(row["variants"], row["sut_bugs"], row["test_id"], sep=", "),
            "steps": [_step(s) for s in row["steps"] or []], "png": png}


def _step(s: Any) -> dict:
    """One step of a trace: its index, family, action and ``k=v`` arguments."""
    try:
        args = json.loads(s["args_json"] or "{}")
    except ValueError:
        args = {}
    return {"idx": s["idx"], "family": s["family"] or "", "action": s["action"],
            "args": ", ".join(f"{k}={v}" for k, v in args.items())}
