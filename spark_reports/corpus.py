"""Loading a counterexample corpus (``harness.schema``) into Spark DataFrames.

A corpus directory holds two hive-partitioned Parquet tables::

    counterexamples/run_date=YYYY-MM-DD/*.parquet
    runs/run_date=YYYY-MM-DD/*.parquet

Files and folders whose names start with ``.`` (writers' temp files) or ``_``
are ignored, as Spark ignores them. Every file's ``schema_version`` must be at
most ``harness.schema.SCHEMA_VERSION``: newer files are refused, older ones are
read with the columns they lack as nulls (the schema only ever grows).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union
from urllib.parse import urlparse

import pyarrow as pa

from harness.schema import (ACTION_FAMILIES, COUNTEREXAMPLE_SCHEMA, COUNTEREXAMPLES, PARTITION_COLUMN,  # noqa: F401
                            RUN_SCHEMA, RUNS, SCHEMA_VERSION)

PathLike = Union[str, os.PathLike]


#: Action arguments left out of ``key_arg``: message ids and produced values are
#: per-trace identifiers with no meaning across traces.
NON_KEY_ARGS: tuple[str, ...] = ("msg", "value")

#: Columns of the long ``steps`` DataFrame (and SQL view), in order.
STEP_COLUMNS: tuple[str, ...] = ("counterexample_id", "signature", "property", "kind", "variants", "sut_bugs",
                                 "step_idx", "family", "action", "args_json", "key_arg")


class CorpusError(Exception):
    """The corpus cannot be read: ``path`` and what is missing or wrong."""

    def __init__(self, path: object, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{problem} (corpus: {self.path})")


class SchemaVersionError(CorpusError):
    """A corpus file was written with a newer ``schema_version`` than this reader's."""


# ----------------------------------------------------------------------------- schemas

def _spark_type(t: pa.DataType):
    from pyspark.sql import types as T
    if pa.types.is_int32(t):
        return T.IntegerType()
    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return T.StringType()
    if pa.types.is_boolean(t):
        return T.BooleanType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz is not None else T.TimestampNTZType()
    if pa.types.is_date(t):
        return T.DateType()
    if pa.types.is_map(t):
        return T.MapType(_spark_type(t.key_type), _spark_type(t.item_type), True)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(_spark_type(t.value_type), True)
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, _spark_type(f.type), True) for f in t])
    raise TypeError(f"no Spark type for Arrow type {t}")


def spark_schema(arrow_schema: pa.Schema, partition_column: Optional[str] = PARTITION_COLUMN):
    """The Spark read schema of a corpus table: the Arrow schema (every field
    nullable, as Spark reads Parquet) plus the ``run_date`` partition column."""
    from pyspark.sql import types as T
    fields = [T.StructField(f.name, _spark_type(f.type), True) for f in arrow_schema]
    if partition_column:
        fields.append(T.StructField(partition_column, T.DateType(), True))
    return T.StructType(fields)


# ------------------------------------------------------------------------ file checks

def _is_hidden(name: str) -> bool:
    return name.startswith(".") or name.startswith("_")


def data_files(table_dir: Path) -> list[Path]:
    """The data files of one table directory, as Spark lists them (hidden files
    and folders skipped), sorted."""
    out: list[Path] = []
    for root, dirs, files in os.walk(table_dir):
        dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
        out.extend(Path(root) / f for f in sorted(files) if not _is_hidden(f))
    return out


def file_schema_version(path: Path) -> int:
    """The largest ``schema_version`` in one Parquet file, from the footer
    statistics when present (no data read), else from the column itself."""
    import pyarrow.parquet as pq
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # not Parquet, truncated, unreadable
        raise CorpusError(path, f"not a readable Parquet file: {exc}") from None
    names = pf.schema_arrow.names
    if "schema_version" not in names:
        raise CorpusError(path, "not a replicheck corpus file: no schema_version column")
    md = pf.metadata
    if md.num_rows == 0:
        return 0
    col = names.index("schema_version")
    best: Optional[int] = None
    for rg in range(md.num_row_groups):
        stats = md.row_group(rg).column(col).statistics
        if stats is None or not stats.has_min_max:
            best = None
            break
        best = stats.max if best is None else max(best, stats.max)
    if best is None:
        column = pf.read(columns=["schema_version"]).column(0)
        import pyarrow.compute as pc
        best = pc.max(column).as_py() or 0
    return int(best)


def _check_versions(files: list[Path], table: str, where: Path) -> int:
    """Refuse files written by a newer schema; returns the newest version seen."""
    newest = 0
    too_new: list[str] = []
    for f in files:
        v = file_schema_version(f)
        newest = max(newest, v)
        if v > SCHEMA_VERSION:
            too_new.append(f"{f.name} (schema_version {v})")
    if too_new:
        shown = ", ".join(too_new[:5]) + (f" and {len(too_new) - 5} more" if len(too_new) > 5 else "")
        raise SchemaVersionError(
            where,
            f"{table}: {len(too_new)} file(s) written with a newer corpus schema than this reader "
            f"understands (reader schema_version {SCHEMA_VERSION}): {shown}; upgrade replicheck to read them")
    return newest


def _local_path(path: PathLike) -> Optional[Path]:
    """A local filesystem path for ``path`` (plain path or file:// URI), else None."""
    text = os.fspath(path)
    parsed = urlparse(text)
    if parsed.scheme in ("", "file") or (len(parsed.scheme) == 1 and text[1:2] == ":"):
        return Path(parsed.path if parsed.scheme == "file" else text).expanduser()
    return None


# ---------------------------------------------------------------------------- corpus

@dataclass
class Corpus:
    """A loaded corpus: DataFrames registered as the SQL views ``counterexamples``,
    ``runs`` and ``steps``.

    ``notes`` says what is missing (no runs, only passing runs, …) in words for a
    report; ``newest_schema_version`` is the newest version among the files read.
    """

    path: str
    counterexamples: object
    runs: object
    steps: object
    notes: tuple[str, ...] = ()
    counterexample_files: Optional[int] = None
    run_files: Optional[int] = None
    newest_schema_version: int = 0
    missing: bool = False

    @property
    def spark(self):
        return self.counterexamples.sparkSession

    def register_views(self) -> "Corpus":
        self.counterexamples.createOrReplaceTempView(COUNTEREXAMPLES)
        self.runs.createOrReplaceTempView(RUNS)
        self.steps.createOrReplaceTempView("steps")
        return self


def key_arg(action, args_json):
    """Column expression: the action with its key arguments, e.g.
    ``FenceBroker(broker=2)``, ``UncleanShutdown(broker=1,lossy=true)``,
    ``ProposeIsrShrink(follower=3,leader=1)``, ``Reassign(target=[1,2,4])``,
    ``ReplicateMetadata(broker=2,count=3)``.

    Rule: every argument of ``args_json`` in its key order (the harness writes
    keys sorted) except message ids
    and produced values (``msg``, ``value``: per-trace identifiers); an action
    left without arguments is its bare name (``ReceiveFetchResponse``,
    ``Consume``). Unparsable ``args_json`` counts as no arguments.
    """
    from pyspark.sql import functions as F
    parsed = F.from_json(args_json, "map<string,string>")
    kept = F.map_filter(F.coalesce(parsed, F.create_map().cast("map<string,string>")),
                        lambda k, v: ~k.isin(*NON_KEY_ARGS))
    parts = F.transform(F.map_entries(kept), lambda e: F.concat(e["key"], F.lit("="), e["value"]))
    return F.when(F.size(kept) > 0, F.concat(action, F.lit("("), F.array_join(parts, ","), F.lit(")"))) \
        .otherwise(action)


def steps_of(counterexamples):
    """The long steps DataFrame: one row per step of every counterexample, with
    the columns ``STEP_COLUMNS`` (``step_idx`` is the step's own ``idx``)."""
    from pyspark.sql import functions as F
    exploded = counterexamples.select(
        "counterexample_id", "signature", "property", "kind", "variants", "sut_bugs",
        F.explode("steps").alias("s"))
    return exploded.select(
        "counterexample_id", "signature", "property", "kind", "variants", "sut_bugs",
        F.col("s.idx").alias("step_idx"), F.col("s.family").alias("family"), F.col("s.action").alias("action"),
        F.col("s.args_json").alias("args_json"), key_arg(F.col("s.action"), F.col("s.args_json")).alias("key_arg"))


def _empty(spark, arrow_schema: pa.Schema):
    return spark.createDataFrame([], spark_schema(arrow_schema))


def empty_corpus(spark, path: PathLike, notes: Iterable[str] = (), missing: bool = False) -> Corpus:
    """A corpus with no rows (the right schemas), for reports on nothing."""
    ce = _empty(spark, COUNTEREXAMPLE_SCHEMA)
    runs = _empty(spark, RUN_SCHEMA)
    return Corpus(os.fspath(path), ce, runs, steps_of(ce), tuple(notes), 0, 0, 0, missing).register_views()


def _read_table(spark, location: str, arrow_schema: pa.Schema):
    return (spark.read.schema(spark_schema(arrow_schema))
            .option("basePath", location)
            .parquet(location))


def load_corpus(spark, path: PathLike, register: bool = True) -> Corpus:
    """Load the corpus under ``path`` (a directory, or any URI Spark reads).

    Raises ``CorpusError`` when the path does not exist, holds neither table, or
    holds a file written with a newer schema version. A corpus with runs but no
    counterexamples (every run passed) gives an empty ``counterexamples`` (and
    ``steps``) DataFrame with the right schema and a note; likewise for a corpus
    without runs (lift then has no baseline).
    """
    text = os.fspath(path)
    local = _local_path(path)
    notes: list[str] = []
    if local is not None:
        if not local.exists():
            raise CorpusError(text, "the corpus directory does not exist")
        if not local.is_dir():
            raise CorpusError(text, "the corpus path is not a directory")
        files = {t: data_files(local / t) if (local / t).is_dir() else [] for t in (COUNTEREXAMPLES, RUNS)}
        if not files[COUNTEREXAMPLES] and not files[RUNS]:
            raise CorpusError(text, f"empty corpus: no data files under {COUNTEREXAMPLES}/ or {RUNS}/")
        newest = max(_check_versions(files[COUNTEREXAMPLES], COUNTEREXAMPLES, local / COUNTEREXAMPLES),
                     _check_versions(files[RUNS], RUNS, local / RUNS))
        present = {t: bool(files[t]) for t in files}
        locations = {t: (local / t).resolve().as_uri() for t in files}
        counts = {t: len(files[t]) for t in files}
    else:  # a remote URI: let Spark list it
        base = text.rstrip("/")
        locations = {t: f"{base}/{t}" for t in (COUNTEREXAMPLES, RUNS)}
        present, counts, newest = {}, {COUNTEREXAMPLES: None, RUNS: None}, 0
        for t, schema in ((COUNTEREXAMPLES, COUNTEREXAMPLE_SCHEMA), (RUNS, RUN_SCHEMA)):
            try:
                df = _read_table(spark, locations[t], schema)
                row = df.agg({"schema_version": "max"}).collect()[0][0]
                present[t] = row is not None
                newest = max(newest, row or 0)
                if row is not None and row > SCHEMA_VERSION:
                    raise SchemaVersionError(locations[t], f"{t}: files written with a newer corpus schema "
                                      f"(schema_version {row} > {SCHEMA_VERSION}); upgrade replicheck to read them")
            except CorpusError:
                raise
            except Exception as exc:  # path not found, permission, …
                if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
                    present[t] = False
                else:
                    raise CorpusError(locations[t], f"{t}: cannot be read: {exc}") from None
        if not any(present.values()):
            raise CorpusError(text, f"empty or missing corpus: no data under {COUNTEREXAMPLES}/ or {RUNS}/")

    ce = _read_table(spark, locations[COUNTEREXAMPLES], COUNTEREXAMPLE_SCHEMA) if present[COUNTEREXAMPLES] \
        else _empty(spark, COUNTEREXAMPLE_SCHEMA)
    runs = _read_table(spark, locations[RUNS], RUN_SCHEMA) if present[RUNS] else _empty(spark, RUN_SCHEMA)
    if not present[COUNTEREXAMPLES]:
        notes.append(f"no counterexamples: every recorded run passed (no data files under {COUNTEREXAMPLES}/)")
    if not present[RUNS]:
        notes.append(f"no runs table (no data files under {RUNS}/): lift has no baseline, "
                     "coverage and kill rates are unknown")
    corpus = Corpus(text, ce, runs, steps_of(ce), tuple(notes), counts[COUNTEREXAMPLES], counts[RUNS], newest)
    return corpus.register_views() if register else corpus
