"""Loading a counterexample corpus (``store.schema``) into Spark DataFrames.

A corpus directory holds two hive-partitioned Parquet tables::

    counterexamples/run_date=YYYY-MM-DD/*.parquet
    runs/run_date=YYYY-MM-DD/*.parquet

Of a local corpus, the files read are chosen before Spark sees any, by the rule
every reader follows (``store.schema.table_files``): the ``*.parquet`` files of
the ``run_date=YYYY-MM-DD`` folders that pyarrow opens, whose columns have the
schema's types and whose ``schema_version`` is at most
``store.schema.SCHEMA_VERSION``; older ones are read with the columns they
lack as nulls (the schema only ever grows). Files and folders whose names start
with ``.`` (writers' temp files) or ``_`` are ignored, as Spark ignores them.
Anything else — a README.md, an empty, truncated, unreadable or foreign file, a
column of another type, a newer version, a stray folder, ``run_date=notadate``,
a folder that cannot be listed, a symbolic link loop — is skipped, and named
with why in ``Corpus.skipped``; Spark reads the list of good files only, so one
bad file never costs the others.

Each table is then read whole once, by one Spark action, and kept cached for the
analyses (``Corpus.release`` frees it): a file whose footer is sound but whose
data Spark cannot read (a corrupt data page, a file gone since it was listed) is
named by Spark's failure, skipped with why (what pyarrow says of it, as
``store.reader`` does) and the other files read again, with Spark's own log of
the failed task (a Java stack) silenced meanwhile. The same action finds the
rows that break the schema's non-null rules (``store.schema.NON_NULL``: a null
``signature``, ``counterexample_id``, ``step_count``, ``variants``, ``steps``,
…): each is one ``Skipped`` naming its file, its index in it (Spark's
``_metadata.row_index``), its id and the column, and the frames hold the other
rows.

A corpus at a URI that pyarrow's file systems open (``store.fs``:
``s3://``, ``gs://``, ``hdfs://``) is checked by the same rule, through
pyarrow; then the driver reads the good files with pyarrow and hands Spark the
Arrow tables (``spark.createDataFrame``), since Spark itself reads object
stores only with the cloud connector jars (``hadoop-aws``, the GCS connector)
on its classpath, which replicheck does not ship. The corpus then has to fit in
the driver's memory (a few thousand rows take a few MB). Any other URI (``s3a://``
with the connector configured) is listed and read by Spark itself, unchecked.
A local corpus of at most ``DRIVER_READ_MAX_BYTES`` of data files is read the
same way, by the driver (a campaign's hundreds of small files cost Spark a
reader each): a file pyarrow cannot read whole is skipped with what it says.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Union
from urllib.parse import quote, unquote, urlparse

import pyarrow as pa

from store.schema import (ACTION_FAMILIES, COUNTEREXAMPLE_SCHEMA, COUNTEREXAMPLES, ID_COLUMN,  # noqa: F401
                          NON_NULL, NON_NULL_ITEMS, PARTITION_COLUMN, RUN_SCHEMA, RUNS, SCHEMA_VERSION, Skipped,
                          data_problem, row_reason, skipped_count, table_files)

PathLike = Union[str, os.PathLike]

#: A local corpus whose data files hold at most this many bytes is read by the
#: driver with pyarrow and handed to Spark as Arrow tables, as a remote one is:
#: a campaign's corpus is hundreds of small files, each of which costs Spark a
#: reader of its own (half the load's time); larger ones are read by Spark.
DRIVER_READ_MAX_BYTES = 64 * 1024 * 1024

#: The corpus's tables and their schemas, counterexamples first.
_SCHEMAS = {COUNTEREXAMPLES: COUNTEREXAMPLE_SCHEMA, RUNS: RUN_SCHEMA}


#: Action arguments left out of ``key_arg``: message ids and produced values are
#: per-trace identifiers with no meaning across traces.
NON_KEY_ARGS: tuple[str, ...] = ("msg", "value")

#: Columns of the long ``steps`` DataFrame (and SQL view), in order.
STEP_COLUMNS: tuple[str, ...] = ("counterexample_id", "signature", "property", "kind", "variants", "sut_bugs",
                                 "step_idx", "family", "action", "args_json", "key_arg")


class CorpusError(Exception):
    """The corpus cannot be read: ``path`` and what is missing or wrong;
    ``skipped``: the files and folders skipped on the way (``Skipped``), when
    there was nothing readable left."""

    def __init__(self, path: object, problem: str, skipped: Iterable[Skipped] = ()):
        self.path = str(path)
        self.problem = problem
        self.skipped: tuple[Skipped, ...] = tuple(skipped)
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


# ------------------------------------------------------------------------ locations

def _uri(path: Path) -> str:
    """A local path as Spark takes it: ``file://`` and the path, absolute and
    normalized (``..`` folded) but with its links kept, so that a file's lies
    below its table's; not percent-encoded (Hadoop's ``Path`` quotes it
    itself: encoded, ``run_date%3D…`` would name no folder)."""
    return "file://" + os.path.abspath(path)


def _remote(text: str):
    """The ``store.fs.RemotePath`` of a URI pyarrow opens, else None
    (a URI left to Spark). ``CorpusError`` when pyarrow knows the scheme but
    cannot set up its file system (no libhdfs, a region that cannot be looked up)."""
    from store.fs import CorpusLocationError, RemotePath, location
    try:
        where = location(text)
    except CorpusLocationError as exc:
        if "unknown scheme" in str(exc) or "Hadoop's name" in str(exc):
            return None
        raise CorpusError(text, f"the corpus cannot be opened: {exc}") from None
    return where if isinstance(where, RemotePath) else None


def _missing(root) -> Optional[str]:
    """Why the corpus at ``root`` (a local ``Path`` or a ``RemotePath``) cannot be
    read at all, or None: it does not exist, is not a folder, or (remote) its
    store cannot be reached, denies access, or has no such bucket."""
    from store.fs import exists_dir, probe
    if isinstance(root, Path):
        if not root.exists():
            return "the corpus directory does not exist"
        return None if root.is_dir() else "the corpus path is not a directory"
    problem = probe(root)
    if problem is not None:
        return f"the corpus cannot be read: {problem}"
    return None if exists_dir(root) else "the corpus directory does not exist"


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
    report; ``newest_schema_version`` is the newest version among the files read;
    ``skipped`` (``store.schema.Skipped``: path and reason) every file or folder
    of the corpus not read, in path order (a URI Spark lists itself: none are
    checked).
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
    skipped: tuple[Skipped, ...] = ()
    cached: tuple = ()   # the DataFrames cached while loading (``release`` frees them)

    @property
    def spark(self):
        return self.counterexamples.sparkSession

    def release(self) -> None:
        """Free the tables Spark keeps cached since loading (``load_corpus``):
        call when done with the corpus in a session that goes on."""
        for frame in self.cached:
            frame.unpersist()

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


def empty_corpus(spark, path: PathLike, notes: Iterable[str] = (), missing: bool = False,
                 skipped: Iterable[Skipped] = ()) -> Corpus:
    """A corpus with no rows (the right schemas), for reports on nothing."""
    ce = _empty(spark, COUNTEREXAMPLE_SCHEMA)
    runs = _empty(spark, RUN_SCHEMA)
    return Corpus(os.fspath(path), ce, runs, steps_of(ce), tuple(notes), 0, 0, 0, missing,
                  tuple(skipped)).register_views()


def _arrow_table(files: Iterable[object], table: str, arrow_schema: pa.Schema) -> tuple[pa.Table, list[Skipped]]:
    """The rows of ``files`` (remote corpus files that ``table_files`` found
    readable) as one Arrow table of ``spark_schema``'s columns: the schema's,
    plus ``run_date`` (date) from each file's partition folder and each row's
    place (``_FILE``, ``_ROW``); and the files that could not be read after all
    (gone since, a page corrupt behind a sound footer), skipped with why."""
    from datetime import date

    from store.schema import file_table
    parts, skipped = [], []
    for f in files:
        try:
            data = file_table(f, table)
        except Exception as exc:
            skipped.append(Skipped(f, data_problem(exc)))
            continue
        day = date.fromisoformat(f.parent.name.partition("=")[2])
        n = data.num_rows
        data = data.append_column(pa.field(PARTITION_COLUMN, pa.date32()), pa.array([day] * n, pa.date32()))
        data = data.append_column(pa.field(_FILE, pa.string()), pa.array([str(f)] * n, pa.string()))
        parts.append(data.append_column(pa.field(_ROW, pa.int64()), pa.array(range(n), pa.int64())))
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema] + [pa.field(PARTITION_COLUMN, pa.date32()),
                       pa.field(_FILE, pa.string()), pa.field(_ROW, pa.int64())])
    return (pa.concat_tables(parts) if parts else schema.empty_table()), skipped


def _read_table(spark, location: str, arrow_schema: pa.Schema, files: Optional[Iterable[Path]] = None):
    """The table at ``location`` (a URI) with its explicit schema: every file
    Spark lists there, or only ``files`` (local paths below it) when given."""
    paths = [location] if files is None else [_uri(f) for f in files]
    return (spark.read.schema(spark_schema(arrow_schema))
            .option("basePath", location)
            .parquet(*paths))


def load_corpus(spark, path: PathLike, register: bool = True) -> Corpus:
    """Load the corpus under ``path`` (a directory, a URI pyarrow opens, or any
    URI Spark reads).

    Of a local corpus, only the files ``store.schema.table_files`` finds
    readable are handed to Spark; every other file or folder of the tables is
    in ``Corpus.skipped`` with why. Of a corpus at a URI pyarrow opens
    (``s3://``, ``gs://``, ``hdfs://``), the same files are chosen the same way,
    read by the driver with pyarrow and handed to Spark as Arrow tables (module
    doc). Every table is read whole once and cached (module doc): a file Spark
    cannot read after all, and every row breaking the schema's non-null rules,
    is in ``Corpus.skipped`` too. Raises ``CorpusError`` when the path does
    not exist or is not a directory (a URI: its store cannot be reached, denies
    access, has no such bucket), or when neither table has a readable file
    (``CorpusError.skipped`` then names what was skipped); of a URI only Spark
    reads (listed by Spark, unchecked), ``SchemaVersionError`` when it holds rows of a
    newer schema version. A corpus with runs but no counterexamples (every run
    passed) gives an empty ``counterexamples`` (and ``steps``) DataFrame with the
    right schema and a note; likewise for a corpus without runs (lift then has
    no baseline).
    """
    text = os.fspath(path)
    local = _local_path(path)
    remote = None if local is not None else _remote(text)
    if local is not None or remote is not None:
        tables = _checked_tables(text, local, remote)
    else:  # a URI pyarrow does not open: let Spark list it
        tables = _spark_listed_tables(spark, text)
    ce, runs = tables.frames(spark)
    skipped = tuple(sorted(tables.skipped, key=lambda s: (str(s.path), -1 if s.row is None else s.row)))
    corpus = Corpus(text, ce, runs, steps_of(ce), tables.notes(), tables.counts[COUNTEREXAMPLES],
                    tables.counts[RUNS], tables.newest, skipped=skipped, cached=tuple(tables.cached))
    return corpus.register_views() if register else corpus


# ------------------------------------------------------- reading every row once

#: The columns naming each row's file and index in it while a table is checked
#: (``_read_checked``); not in the loaded frames.
_FILE, _ROW = "_replicheck_file", "_replicheck_row"

#: Spark's loggers that print a failed task with its Java stack: silenced while a
#: table is read (``_quiet_task_failures``); the file is named in one line instead.
_TASK_LOGGERS = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
                 "org.apache.spark.scheduler.TaskSchedulerImpl")


def _placed_schema(arrow_schema: pa.Schema):
    """``spark_schema`` and the place columns ``_FILE`` and ``_ROW``."""
    from pyspark.sql import types as T
    return T.StructType(spark_schema(arrow_schema).fields + [T.StructField(_FILE, T.StringType(), True),
                                                             T.StructField(_ROW, T.LongType(), True)])


def _placed(frame):
    """A table Spark reads, with each row's file and index in it (Spark's
    ``_metadata`` of Parquet files) as ``_FILE`` and ``_ROW``."""
    from pyspark.sql import functions as F
    return frame.select("*", F.col("_metadata.file_path").alias(_FILE), F.col("_metadata.row_index").alias(_ROW))


def null_problem(table: str):
    """Column expression: how a row breaks the schema's non-null rules, in the
    words of ``store.schema.row_problem`` (``"signature is null"``,
    ``"variants holds a null item"``), or null for a sound row."""
    from pyspark.sql import functions as F
    checks = []
    for name in NON_NULL[table]:
        checks.append(F.when(F.col(name).isNull(), F.lit(f"{name} is null")))
        if name in NON_NULL_ITEMS[table]:
            checks.append(F.when(F.exists(name, lambda item: item.isNull()), F.lit(f"{name} holds a null item")))
    return F.coalesce(*checks)


#: How many reads have Spark's task failure loggers off (``_quiet_task_failures``)
#: and their levels before the first; the tables are read at once.
_QUIET: dict = {"readers": 0, "before": {}}
_QUIET_LOCK = threading.Lock()


@contextmanager
def _quiet_task_failures(spark):
    """Spark's own log lines about a failed task (a file it could not read: an
    ERROR and a Java stack each) off meanwhile, in this JVM (local mode; a
    cluster's executors log on their hosts); restored after the last of the
    reads meanwhile."""
    with _QUIET_LOCK:
        if _QUIET["readers"] == 0:
            _QUIET["before"] = _set_task_loggers(spark, None)
        _QUIET["readers"] += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _QUIET["readers"] -= 1
            if _QUIET["readers"] == 0:
                _set_task_loggers(spark, _QUIET["before"])


def _set_task_loggers(spark, levels: Optional[dict]) -> dict:
    """Set ``_TASK_LOGGERS`` to ``levels`` (None: off); returns their levels
    before ({} when they cannot be set: another logging back end, whose lines
    stay)."""
    try:
        log4j = spark.sparkContext._jvm.org.apache.logging.log4j
        manager, configurator = log4j.LogManager, log4j.core.config.Configurator
        before = {name: manager.getLogger(name).getLevel() for name in _TASK_LOGGERS}
        for name in _TASK_LOGGERS:
            configurator.setLevel(name, log4j.Level.OFF if levels is None else levels[name])
        return before
    except Exception:
        return {}


def _file_of(text: str, files: Optional[Iterable[object]]) -> object:
    """The corpus file a Spark file name (``file:/PATH``, a URI) or a place
    column's value stands for, or the text itself when it is none of ``files``."""
    for f in files or ():
        if str(f) == text or (isinstance(f, Path) and os.path.abspath(f) == unquote(urlparse(text).path)):
            return f
    return text


def _failed_file(exc: BaseException, files: Optional[list]) -> Optional[object]:
    """The file of ``files`` (local paths) a Spark read failure names (its
    message names the file it was reading), or None."""
    text = str(exc)
    named = [f for f in files or () if isinstance(f, Path)
             and (os.path.abspath(f) in text or quote(os.path.abspath(f)) in text)]
    return max(named, key=lambda f: len(str(f)), default=None)


def _java_cause(exc: BaseException) -> str:
    """The root cause of a Spark failure on one line (its last ``Caused by:``)."""
    from store.fs import one_line
    causes = [line.strip()[len("Caused by: "):] for line in str(exc).splitlines()
              if line.strip().startswith("Caused by: ")]
    return " ".join(causes[-1].split())[:300] if causes else one_line(exc)


def _why_unreadable(path: object, table: str, exc: BaseException) -> str:
    """Why Spark could not read the corpus file ``path``: what pyarrow says
    reading it (``store.schema.data_problem``, as ``store.reader`` says it), or
    Spark's cause when pyarrow reads it."""
    from store.schema import file_table
    try:
        file_table(path, table)
    except Exception as pyarrow_exc:
        return data_problem(pyarrow_exc)
    return f"cannot be read by Spark ({_java_cause(exc)})"


def _checked(frame, table: str, files) -> tuple[object, list[Skipped]]:
    """``frame`` (cached, with the place columns) read whole by one action —
    every column of every row, so that a corrupt data page fails here, not in
    an analysis — its rows that break the schema's non-null rules named
    (``Skipped`` with the row's index), and the frame of the others, without
    the place columns."""
    problem = null_problem(table)
    bad = frame.where(problem.isNotNull()).select(_FILE, _ROW, ID_COLUMN[table], problem.alias("problem")).collect()
    skipped = [Skipped(_file_of(r[_FILE], files), row_reason(table, r[_ROW], r[ID_COLUMN[table]], r["problem"]),
                       r[_ROW]) for r in bad]
    sound = frame.where(problem.isNull()) if bad else frame
    return sound.drop(_FILE, _ROW), skipped


def _read_checked(read: Callable, files: Optional[tuple], table: str,
                  where: str) -> tuple[Optional[object], list, list[Skipped]]:
    """``read(files)`` cached and checked (``_checked``): ``(frame, cached,
    skipped)``. A file Spark fails to read (its error names it) is skipped with
    why and the others are read again; ``frame`` None when none is left.
    ``CorpusError`` when a failure names no file of ``files`` (``files`` None: a
    table Spark lists itself)."""
    chosen = None if files is None else list(files)
    skipped: list[Skipped] = []
    while True:
        frame = read(chosen).persist()
        try:
            with _quiet_task_failures(frame.sparkSession):
                sound, rows = _checked(frame, table, chosen)
            return sound, [frame], skipped + rows
        except Exception as exc:   # Py4JJavaError: a file Spark could not read
            frame.unpersist()
            bad = _failed_file(exc, chosen)
            if bad is None:
                raise CorpusError(where, f"{table}: cannot be read ({_java_cause(exc)})") from None
            skipped.append(Skipped(bad, _why_unreadable(bad, table, exc)))
            chosen.remove(bad)
            if not chosen:
                return None, [], skipped


@dataclass
class _Tables:
    """Where a corpus's two tables are and what was found of them: per table
    its ``locations`` (a URI), the ``files`` to read (None: every file Spark
    lists there), whether it has rows (``present``), how many files
    (``counts``; None: not listed here) and, of a remote corpus, its rows read
    by the driver (``arrow``); the ``newest`` schema version and what was
    ``skipped``."""

    locations: dict[str, str]
    present: dict[str, bool]
    counts: dict[str, Optional[int]]
    newest: int
    files: dict[str, Optional[tuple[Path, ...]]] = field(default_factory=lambda: {COUNTEREXAMPLES: None, RUNS: None})
    arrow: dict[str, pa.Table] = field(default_factory=dict)
    skipped: tuple[Skipped, ...] = ()

    cached: list = field(default_factory=list)

    def frames(self, spark) -> tuple:
        """The counterexamples' and the runs' frames (``frame``), both tables
        read at once, from a thread each (a small corpus's two reads are mostly
        waiting on Spark's planning and scheduling, which overlap)."""
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="replicheck-load") as pool:
            reads = [pool.submit(self._read, spark, t, schema) for t, schema in _SCHEMAS.items()]
        failed = next((r.exception() for r in reads if r.exception() is not None), None)
        if failed is not None:   # the other table's cache is freed: the corpus is not loaded
            for r in reads:
                for frame in [] if r.exception() is not None else r.result()[1]:
                    frame.unpersist()
            raise failed
        return tuple(self._merge(spark, t, schema, *r.result()) for (t, schema), r in zip(_SCHEMAS.items(), reads))

    def _read(self, spark, t: str, schema: pa.Schema) -> tuple[Optional[object], list, list[Skipped]]:
        """Table ``t`` read whole once and cached (``_read_checked``): ``(frame,
        cached, skipped)``, ``frame`` None when it has no rows or no file of it
        could be read after all. Changes nothing of ``self``."""
        if not self.present[t]:
            return None, [], []
        if t in self.arrow:
            def read(_files):
                return spark.createDataFrame(self.arrow[t], _placed_schema(schema))
        else:
            def read(files):
                return _placed(_read_table(spark, self.locations[t], schema, files))
        return _read_checked(read, self.files[t], t, self.locations[t])

    def _merge(self, spark, t: str, schema: pa.Schema, frame: Optional[object], cached: list,
               skipped: list[Skipped]):
        """Table ``t`` as a DataFrame (empty, with the schema's columns, when
        it has no rows), ``_read``'s outcome added to what was found: a file
        Spark cannot read and each row breaking the schema's non-null rules to
        ``skipped``."""
        self.skipped += tuple(skipped)
        self.cached += cached
        if self.counts[t] is not None:
            self.counts[t] -= sum(s.row is None for s in skipped)
        if frame is None:   # no rows, or no file of it could be read after all
            self.present[t] = False
            return _empty(spark, schema)
        return frame

    def notes(self) -> tuple[str, ...]:
        """What is missing, in words for a report."""
        notes = []
        if not self.present[COUNTEREXAMPLES]:
            notes.append(f"no counterexamples: every recorded run passed (no data files under {COUNTEREXAMPLES}/)")
        if not self.present[RUNS]:
            notes.append(f"no runs table (no data files under {RUNS}/): lift has no baseline, "
                         "coverage and kill rates are unknown")
        if self.skipped:
            notes.append(f"{skipped_count(self.skipped)} of the corpus could not be read and were "
                         "skipped; everything else is reported")
        return tuple(notes)


def _checked_tables(text: str, local: Optional[Path], remote) -> _Tables:
    """The tables of a local corpus (``local``) or of one at a URI pyarrow opens
    (``remote``), their files chosen by ``table_files``; a remote corpus's are
    read by the driver (module doc)."""
    root = local if local is not None else remote
    problem = _missing(root)
    if problem is not None:
        raise CorpusError(text, problem)
    found = {t: table_files(root, t) for t in (COUNTEREXAMPLES, RUNS)}
    skipped = found[COUNTEREXAMPLES].skipped + found[RUNS].skipped
    files = {t: found[t].files for t in found}
    if not files[COUNTEREXAMPLES] and not files[RUNS]:
        raise CorpusError(text, f"empty corpus: no data files under {COUNTEREXAMPLES}/ or {RUNS}/" if not skipped
                          else f"empty corpus: no readable data files under {COUNTEREXAMPLES}/ or {RUNS}/ "
                               f"({len(skipped)} file(s) or folder(s) skipped)", skipped)
    tables = _Tables({}, {t: bool(files[t]) for t in files}, {t: len(files[t]) for t in files},
                     max(f.newest_version for f in found.values()), files, skipped=skipped)
    if local is not None:
        tables.locations = {t: _uri(local / t) for t in files}
        if sum(_size(f) for t in files for f in files[t]) > DRIVER_READ_MAX_BYTES:
            return tables
    else:
        tables.locations = {t: str(remote / t) for t in files}
    for t, schema in _SCHEMAS.items():
        if files[t]:
            tables.arrow[t], lost = _arrow_table(files[t], t, schema)
            tables.skipped += tuple(lost)
            tables.counts[t] -= len(lost)
            tables.present[t] = len(lost) < len(files[t])
    return tables


def _size(path: Path) -> int:
    """``path``'s size in bytes (0: it cannot be read, which its reading says)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _spark_listed_tables(spark, text: str) -> _Tables:
    """The tables at a URI only Spark reads: listed by Spark, unchecked; rows of
    a newer schema version refused (``SchemaVersionError``)."""
    base = text.rstrip("/")
    tables = _Tables({t: f"{base}/{t}" for t in (COUNTEREXAMPLES, RUNS)}, {}, {COUNTEREXAMPLES: None, RUNS: None}, 0)
    for t, schema in ((COUNTEREXAMPLES, COUNTEREXAMPLE_SCHEMA), (RUNS, RUN_SCHEMA)):
        try:
            df = _read_table(spark, tables.locations[t], schema)
            row = df.agg({"schema_version": "max"}).collect()[0][0]
            tables.present[t] = row is not None
            tables.newest = max(tables.newest, row or 0)
            if row is not None and row > SCHEMA_VERSION:
                raise SchemaVersionError(tables.locations[t], f"{t}: files written with a newer corpus schema "
                                         f"(schema_version {row} > {SCHEMA_VERSION}); upgrade replicheck to read them")
        except CorpusError:
            raise
        except Exception as exc:  # path not found, permission, …
            if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
                tables.present[t] = False
            else:
                raise CorpusError(tables.locations[t], f"{t}: cannot be read: {exc}") from None
    if not any(tables.present.values()):
        raise CorpusError(text, f"empty or missing corpus: no data under {COUNTEREXAMPLES}/ or {RUNS}/")
    return tables
