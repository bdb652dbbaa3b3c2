"""A report's Spark session warmed up before the report is wanted: the
report's every step (loading, each analysis, a diagram, the plots, the page)
run once on a sample corpus of one row per table, so that the real report
finds the JVM's compiled code, Spark's generated code and matplotlib's fonts
ready: on a cold JVM a campaign's report takes about twice the CPU time."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from store.schema import COUNTEREXAMPLE_SCHEMA, COUNTEREXAMPLES, RUN_SCHEMA, RUNS, SCHEMA_VERSION

#: The sample rows' day and time.
_WHEN = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _sample(name: str, t: pa.DataType) -> Any:
    """A value of type ``t`` for a field ``name``: non-null, lists and maps of
    one item, ``{}`` for JSON text."""
    if pa.types.is_struct(t):
        return {f.name: _sample(f.name, f.type) for f in t}
    if pa.types.is_map(t):
        return [(_sample(name, t.key_type), _sample(name, t.item_type))]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_sample(name, t.value_type)]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "{}" if name.endswith("_json") else "sample"
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_integer(t):
        return SCHEMA_VERSION if name == "schema_version" else 1
    if pa.types.is_floating(t):
        return 1.0
    if pa.types.is_timestamp(t):
        return _WHEN
    raise TypeError(f"no sample value for {name}: {t}")


def sample_row(schema: pa.Schema) -> dict:
    """One row of a corpus table of ``schema`` that breaks none of its rules
    (every column set, ``schema_version`` the current one). TypeError for a
    column of a type it has no sample of."""
    return {f.name: _sample(f.name, f.type) for f in schema}


def write_sample_corpus(root: Path) -> Path:
    """Write a corpus of one sample row per table at ``root`` (made) in the
    hive layout ``spark_reports.corpus`` reads; returns ``root``. OSError when
    it cannot be written."""
    import pyarrow.parquet as pq
    for table, schema in ((COUNTEREXAMPLES, COUNTEREXAMPLE_SCHEMA), (RUNS, RUN_SCHEMA)):
        folder = Path(root) / table / f"run_date={_WHEN.date().isoformat()}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist([sample_row(schema)], schema=schema), folder / "sample.parquet")
    return Path(root)


def warm_up(spark: Any) -> float:
    """Run the report's steps once on a sample corpus (``write_sample_corpus``,
    in a private temporary folder, removed after) with ``spark``; returns the
    seconds it took. Raises what the report raises (an analysis's error,
    OSError when the temporary folder cannot be written)."""
    from .report_data import ReportSettings, gather
    from .report_html import render
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="replicheck-report-warm-up-")
    try:
        data = gather(spark, write_sample_corpus(Path(folder)), None, ReportSettings(), ["correct"], "sample")
        render(data)
        data.corpus.release()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return time.perf_counter() - t0
