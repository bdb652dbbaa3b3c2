"""The counterexample corpus schema (Parquet, hive-partitioned by ``run_date``).

This module depends on pyarrow, the model's action registry
(``model.actions``, data) and ``store.fs`` (pyarrow's file systems) only, so readers (``spark_reports``) take the schema and the
action vocabulary from here and need nothing else of the model or the harness.
Changes are additive only: a new column gets a new
``SCHEMA_VERSION``; readers accept every version up to theirs and refuse newer
files with a clear error.

Which files are read is decided here too, once for every reader
(``table_files``: ``list_table`` then ``check_file``): the ``*.parquet`` files of
the ``run_date=YYYY-MM-DD`` folders that pyarrow opens, whose columns have the
schema's types and whose version is not newer; anything else in a table folder
is skipped, one ``Skipped(path, reason)`` each, and the other files still read.
What the readers then find reading the rows is named the same way: a file whose
data cannot be read (``data_problem``), a row breaking the schema's non-null
rules (``row_problem``, ``row_reason``: ``Skipped`` with its ``row``).

Versions: 1, the first; 2 adds ``shrunk_steps``, ``shrunk_step_count``,
``shrunk_config_json`` and ``reduction`` (a row whose trace was reduced after
Hypothesis's shrinking keeps the shrunk trace beside it; null in version 1 rows
and in rows that were not reduced); 3 adds ``timeline`` (what each step visibly
did as replay observed it, ``check.timeline``; null in older rows); 4 adds
``implementation`` (the implementation under test a row was found with, by
``check.implementations`` name; null: the bundled SUT, as in every older row).

Layout under a corpus directory::

    counterexamples/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet
    runs/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import pyarrow as pa

from model.actions import ACTIONS

from .fs import Location, error_text, lexists, listing, location, opened

SCHEMA_VERSION = 4

#: Action class name -> family (``model.ActionKind.family``): the reports' action
#: vocabulary, the lift baseline of actions that never occur in a failing trace.
ACTION_FAMILIES: dict[str, str] = {k.name: k.family for k in ACTIONS}

COUNTEREXAMPLES = "counterexamples"
RUNS = "runs"
PARTITION_COLUMN = "run_date"


def campaign_test_id(label: str) -> str:
    """The ``test_id`` of a fuzz campaign target's rows (both tables): ``campaign[LABEL]``,
    LABEL being ``correct``, ``profile:NAME``, ``variant:NAME``, ``bug:NAME`` or
    ``implementation:NAME``."""
    return f"campaign[{label}]"


#: The test id of a campaign target whose rows hold no variant and no SUT bug, yet
#: are not the correct protocol's: a profile's or an implementation's (groups: the
#: kind, the name).
NAMED_TARGET_TEST_ID = r"^campaign\[(profile|implementation):(.+)\]$"


def row_target(variants: Sequence[str], bugs: Sequence[str], test_id: Optional[str], sep: str = "+") -> str:
    """The target(s) a row counts for, as one label: its variants and SUT bugs
    joined with ``sep``; without either, the profile or implementation its campaign
    test id names (``profile:kafka-4.4.0``, ``implementation:kafka``); else
    ``correct``."""
    named = re.match(NAMED_TARGET_TEST_ID, test_id or "")
    return sep.join(list(variants or []) + list(bugs or [])) or (
        f"{named.group(1)}:{named.group(2)}" if named else "correct")

#: One step of a trace: its index (0-based), action family, action class name and
#: the action's fields as JSON (e.g. ``{"broker": 2}``).
STEP = pa.struct([
    pa.field("idx", pa.int32(), nullable=False),
    pa.field("family", pa.string(), nullable=False),
    pa.field("action", pa.string(), nullable=False),
    pa.field("args_json", pa.string(), nullable=False),
])

#: A message a step sent (``check.timeline.SentMessage``): id (the network's
#: numbering), type (``FetchRequest``, ``FetchResponse``, ``AlterPartitionRequest``,
#: ``AlterPartitionResponse``), source and destination broker (null: the
#: controller), error code (null: none).
SENT_MESSAGE = pa.struct([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("type", pa.string(), nullable=False),
    pa.field("src", pa.int32(), nullable=True),
    pa.field("dst", pa.int32(), nullable=True),
    pa.field("error", pa.string(), nullable=True),
])

#: One broker after a step (``check.timeline.BrokerMoment``): status
#: (``BrokerStatus`` name), fenced by the controller, its replica's role (null: no
#: replica), leader epoch, LEO, HWM and flushed offset (exclusive ends).
BROKER_MOMENT = pa.struct([
    pa.field("broker", pa.int32(), nullable=False),
    pa.field("status", pa.string(), nullable=False),
    pa.field("fenced", pa.bool_(), nullable=False),
    pa.field("role", pa.string(), nullable=True),
    pa.field("leader_epoch", pa.int32(), nullable=True),
    pa.field("leo", pa.int64(), nullable=True),
    pa.field("hwm", pa.int64(), nullable=True),
    pa.field("flushed", pa.int64(), nullable=True),
])

#: What one step visibly did (``check.timeline.Moment``): the id of the message
#: it delivered or dropped (null: none), the messages it sent, its outcome as JSON
#: (``appended`` and ``acknowledged`` ``[value, offset]`` pairs, ``failed`` values,
#: ``consumed`` records, the ``list_offsets`` answer), and the partition
#: registration and brokers after it (leader -1: none).
TIMELINE_STEP = pa.struct([
    pa.field("idx", pa.int32(), nullable=False),
    pa.field("received", pa.int64(), nullable=True),
    pa.field("sent", pa.list_(SENT_MESSAGE), nullable=False),
    pa.field("outcome_json", pa.string(), nullable=False),
    pa.field("leader", pa.int32(), nullable=False),
    pa.field("leader_epoch", pa.int32(), nullable=False),
    pa.field("partition_epoch", pa.int32(), nullable=False),
    pa.field("isr", pa.list_(pa.int32()), nullable=False),
    pa.field("elr", pa.list_(pa.int32()), nullable=False),
    pa.field("brokers", pa.list_(BROKER_MOMENT), nullable=False),
])

COUNTEREXAMPLE_SCHEMA = pa.schema([
    pa.field("schema_version", pa.int32(), nullable=False),
    pa.field("counterexample_id", pa.string(), nullable=False),   # content hash of config + trace + failure
    pa.field("signature", pa.string(), nullable=False),           # dedup key: property + violation kind, ids/offsets normalized
    pa.field("property", pa.string(), nullable=False),            # property name, "SutDiffersFromModel" or "HarnessError"
    pa.field("kind", pa.string(), nullable=False),                # "property" | "liveness" | "divergence" | "harness_error"
    pa.field("violation", pa.string(), nullable=False),           # the violation text as reported
    pa.field("variants", pa.list_(pa.string()), nullable=False),
    pa.field("sut_bugs", pa.list_(pa.string()), nullable=False),
    pa.field("brokers", pa.int32(), nullable=False),
    pa.field("replication_factor", pa.int32(), nullable=False),
    pa.field("min_isr", pa.int32(), nullable=False),
    pa.field("unclean_recovery", pa.string(), nullable=False),
    pa.field("unclean_leader_election", pa.bool_(), nullable=False),
    pa.field("config_json", pa.string(), nullable=False),         # the full model.Config, for replay
    pa.field("steps", pa.list_(STEP), nullable=False),
    pa.field("step_count", pa.int32(), nullable=False),
    pa.field("final_state_json", pa.string(), nullable=False),
    pa.field("seed", pa.string(), nullable=True),                 # Hypothesis seed, when known
    pa.field("hypothesis_version", pa.string(), nullable=False),
    pa.field("project_version", pa.string(), nullable=False),
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("worker", pa.string(), nullable=False),
    pa.field("test_id", pa.string(), nullable=False),
    pa.field("found_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("time_to_failure_s", pa.float64(), nullable=True),   # run start → first failure
    pa.field("examples_to_failure", pa.int64(), nullable=True),   # examples run when the first failure was found, it included
    # Version 2. ``steps``/``config_json`` above are then the reduced counterexample
    # (check.reduce); these keep what Hypothesis's shrinking reported. Null: not reduced.
    pa.field("shrunk_steps", pa.list_(STEP), nullable=True),
    pa.field("shrunk_step_count", pa.int32(), nullable=True),
    pa.field("shrunk_config_json", pa.string(), nullable=True),   # the run's configuration
    pa.field("reduction", pa.list_(pa.string()), nullable=True),  # the configuration's simplifications, in order
    # Version 3: one entry per step of ``steps`` as replay observed it (null: not recorded).
    pa.field("timeline", pa.list_(TIMELINE_STEP), nullable=True),
    # Version 4: "kafka", "module:qualname", or null for the bundled SUT (check.implementations).
    pa.field("implementation", pa.string(), nullable=True),
])

RUN_SCHEMA = pa.schema([
    pa.field("schema_version", pa.int32(), nullable=False),
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("test_id", pa.string(), nullable=False),
    pa.field("worker", pa.string(), nullable=False),
    pa.field("profile", pa.string(), nullable=False),
    pa.field("variants", pa.list_(pa.string()), nullable=False),
    pa.field("sut_bugs", pa.list_(pa.string()), nullable=False),
    pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("duration_s", pa.float64(), nullable=False),
    pa.field("examples", pa.int64(), nullable=False),
    pa.field("steps", pa.int64(), nullable=False),
    pa.field("failed", pa.bool_(), nullable=False),
    pa.field("rule_counts", pa.map_(pa.string(), pa.int64()), nullable=False),   # steps per action family
    pa.field("action_counts", pa.map_(pa.string(), pa.int64()), nullable=False),  # steps per action class
    pa.field("event_counts", pa.map_(pa.string(), pa.int64()), nullable=False),  # protocol coverage events
])

SCHEMAS = {COUNTEREXAMPLES: COUNTEREXAMPLE_SCHEMA, RUNS: RUN_SCHEMA}

#: The columns that make a Parquet file one of the table's: a file lacking one is
#: not a replicheck file (nor is one lacking a ``NON_NULL`` column). A nullable
#: column may be missing (the schema only grows: an older file lacks the newer
#: columns) and reads as null.
REQUIRED_COLUMNS = {COUNTEREXAMPLES: ("schema_version", "counterexample_id"), RUNS: ("schema_version", "run_id")}

#: Per table, the columns every row must hold a value in (the schema's non-null
#: fields, every one of them there since version 1), in schema order; of a list
#: of names (``variants``, ``sut_bugs``) its items too. A file lacking one of
#: these columns is not a replicheck file; a row holding a null in one breaks
#: the schema (``row_problem``): a file written by another tool can hold it.
NON_NULL = {t: tuple(f.name for f in s if not f.nullable) for t, s in SCHEMAS.items()}

#: The columns a row is named by in a line about it.
ID_COLUMN = {COUNTEREXAMPLES: "counterexample_id", RUNS: "run_id"}

#: The columns ``store.decode`` checks itself: a counterexample whose trace or
#: configuration is null is still read by ``store.reader`` (listed, found by
#: id), and its replay fails naming the column ("cannot be decoded"), never
#: replaying as the empty trace. Every other reader skips such a row.
DECODED_COLUMNS = {COUNTEREXAMPLES: ("config_json", "steps"), RUNS: ()}


def _holds_null_item(t: pa.DataType) -> bool:
    """Whether a column of type ``t`` is a list of primitive values (names,
    ids), whose items are then checked for null too."""
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and not pa.types.is_nested(t.value_type)


#: Per table, the ``NON_NULL`` columns whose list items must be values too.
NON_NULL_ITEMS = {t: tuple(f.name for f in s if not f.nullable and _holds_null_item(f.type))
                  for t, s in SCHEMAS.items()}


def row_problem(row: dict, table: str, exempt: tuple[str, ...] = ()) -> Optional[str]:
    """Why ``row`` (a dict of the table's columns) breaks the schema's non-null
    rules — the first ``NON_NULL`` column, not in ``exempt``, that is missing
    or null (``"signature is null"``), or a list of names holding a null
    (``"variants holds a null item"``) — or None."""
    for name in NON_NULL[table]:
        if name in exempt:
            continue
        if name not in row:
            return f"{name} is missing"
        value = row[name]
        if value is None:
            return f"{name} is null"
        if name in NON_NULL_ITEMS[table] and any(item is None for item in value):
            return f"{name} holds a null item"
    return None


def row_reason(table: str, index: Optional[int], ident: Optional[str], problem: str) -> str:
    """The reason of a skipped row, for ``Skipped``: ``row 3 (counterexample_id
    ab12…): signature is null, which the schema does not allow; the row is
    skipped, the file's other rows are read``. ``index``: the row's place in its
    file (0-based; None: unknown); ``ident``: its id (None: none)."""
    where = "a row" if index is None else f"row {index}"
    if ident is not None:
        where += f" ({ID_COLUMN[table]} {ident[:16] + '…' if len(ident) > 16 else ident})"
    return f"{where}: {problem}, which the schema does not allow; the row is skipped, the file's other rows are read"


# ------------------------------------------------------------------ reading
#
# Which files of a corpus table are read, and which are skipped and why: the one
# rule every reader follows (``store.reader.read_table_rows`` — replay and
# ``pytest --replay-corpus`` — and ``spark_reports.load_corpus``), so that one
# bad file costs that file alone. pyarrow and the standard library only.

#: Parquet key-value metadata naming the schema version a file was written with.
VERSION_KEY = b"replicheck.schema_version"

#: How a partition folder is named: ``run_date=`` and an ISO date.
PARTITION_FORMAT = f"{PARTITION_COLUMN}=YYYY-MM-DD"


@dataclass(frozen=True)
class Skipped:
    """A file or folder of a corpus table that is not read, or one row of a file
    (``row``: its index) that is not: its path and why (one line). ``str()`` is
    the line every reader prints: ``PATH: REASON``."""

    path: Location   # a local Path, or a store.fs.RemotePath (str(): its URI)
    reason: str
    row: Optional[int] = None   # a row of the file (0-based) skipped, the rest of the file read; None: the file

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def data_problem(exc: BaseException) -> str:
    """Why a file ``table_files`` chose could not be read after all — a data
    page corrupt behind a sound footer, a file gone since it was listed — on one
    line: ``cannot be read (OSError: Couldn't deserialize thrift: …)``."""
    return f"cannot be read ({type(exc).__name__}: {' '.join(str(exc).split())})"


def skipped_count(skipped) -> str:
    """How many ``Skipped`` entries, in words: ``3 file(s) or folder(s)``,
    ``1 row(s)``, or ``3 file(s) or folder(s) and 1 row(s)``."""
    rows = sum(s.row is not None for s in skipped)
    files = len(skipped) - rows
    parts = ([f"{files} file(s) or folder(s)"] if files or not rows else []) + ([f"{rows} row(s)"] if rows else [])
    return " and ".join(parts)


@dataclass(frozen=True)
class TableFiles:
    """The files of one corpus table that can be read (``files``, sorted, each
    with its schema version in ``versions``) and everything else found there
    that cannot (``skipped``, in path order)."""

    files: tuple[Location, ...]
    versions: tuple[int, ...]
    skipped: tuple[Skipped, ...]

    @property
    def newest_version(self) -> int:
        return max(self.versions, default=0)


def _hidden(name: str) -> bool:
    """Files being written (``.part-….tmp-…``) and Spark's or Hadoop's own
    (``_SUCCESS``, ``.crc``) are not part of the corpus: never read, never named."""
    return name.startswith((".", "_"))


def partition_date(name: str) -> Optional[dt.date]:
    """The date of a partition folder's name (``run_date=2026-01-05``), or None
    when the name is not ``run_date=`` and a date in ISO form (``YYYY-MM-DD``)."""
    key, sep, value = name.partition("=")
    if not sep or key != PARTITION_COLUMN:
        return None
    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        return None
    return date if date.isoformat() == value else None


def list_table(table_dir: Location) -> tuple[list[Location], list[Skipped]]:
    """The candidate data files of one table folder and what is skipped there.

    ``table_dir``: a local ``Path`` or a ``store.fs.RemotePath`` (a
    corpus at a URI); the files come back as the same kind of path.

    A table is ``TABLE/run_date=YYYY-MM-DD/NAME.parquet``: hidden names (``.``
    or ``_`` first) are ignored; every other entry that is not such a file is
    skipped with a reason: a file that is not ``*.parquet`` (a README.md), a
    file outside the partition folders, a folder that is not a partition folder
    (a stray folder, ``run_date=notadate``), a folder inside a partition folder,
    a folder that cannot be listed (permissions), an entry that cannot be
    reached (a symbolic link loop, a dangling link). Nothing is descended deeper
    than the partition folders, so a link to a parent folder cannot loop. A
    missing table folder has no files; one that is not a folder, or cannot be
    listed, is itself skipped."""
    files: list = []
    skipped: list[Skipped] = []
    try:
        if not lexists(table_dir):
            return files, skipped
    except OSError as exc:   # a remote store that does not answer
        skipped.append(Skipped(table_dir, f"folder cannot be read ({error_text(exc)})"))
        return files, skipped

    def entries(folder) -> Optional[list[tuple[str, object, str]]]:
        try:
            return listing(folder, _hidden)
        except NotADirectoryError:
            skipped.append(Skipped(folder, "not a folder: a corpus table is a folder of "
                                           f"{PARTITION_FORMAT} folders"))
        except OSError as exc:
            skipped.append(Skipped(folder, f"folder cannot be read ({error_text(exc)})"))
        return None

    for name, path, what in entries(table_dir) or ():
        if what == "dir":
            if partition_date(name) is None:
                why = (f"not a partition folder: the value of {PARTITION_COLUMN} must be a date YYYY-MM-DD"
                       if name.startswith(f"{PARTITION_COLUMN}=") else
                       f"not a partition folder: expected {PARTITION_FORMAT}")
                skipped.append(Skipped(path, why + "; its files are not read"))
                continue
            for inner_name, inner, what in entries(path) or ():
                if what == "dir":
                    skipped.append(Skipped(inner, "a folder inside a partition folder: not read"))
                elif what != "file":
                    skipped.append(Skipped(inner, what))
                elif not inner_name.endswith(".parquet"):
                    skipped.append(Skipped(inner, "not a .parquet file"))
                else:
                    files.append(inner)
        elif what == "file":
            skipped.append(Skipped(path, "not a .parquet file" if not name.endswith(".parquet") else
                                   f"a file outside the {PARTITION_FORMAT} folders"))
        else:
            skipped.append(Skipped(path, what))
    return files, skipped


def _same_type(found: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a file's column type reads as the schema's: equal up to
    nullability, list item names (Spark writes ``element``), string and list
    offsets width, and timestamp unit; a time zone must be there or not alike."""
    t = pa.types
    if t.is_timestamp(expected):
        return t.is_timestamp(found) and (found.tz is None) == (expected.tz is None)
    if t.is_string(expected) or t.is_large_string(expected):
        return t.is_string(found) or t.is_large_string(found)
    if t.is_map(expected):
        return t.is_map(found) and _same_type(found.key_type, expected.key_type) \
            and _same_type(found.item_type, expected.item_type)
    if t.is_list(expected) or t.is_large_list(expected):
        return (t.is_list(found) or t.is_large_list(found)) and _same_type(found.value_type, expected.value_type)
    if t.is_struct(expected):
        if not t.is_struct(found):
            return False
        got = {f.name: f.type for f in found}
        return all(f.name in got and _same_type(got[f.name], f.type) for f in expected) and len(got) == len(expected)
    return found == expected


def _type_name(t: pa.DataType) -> str:
    return str(t) if len(str(t)) <= 60 else str(t)[:57] + "…"


def check_file(path: Location, table: str) -> tuple[Optional[int], Optional[str]]:
    """``(version, None)`` when ``path`` (a local ``Path`` or a
    ``store.fs.RemotePath``) is a readable Parquet file of ``table``
    (``version``: the schema version it was written with), else ``(None,
    reason)`` (one line): the file cannot be opened (permissions, a link loop),
    is empty, is not Parquet or is truncated; it lacks a ``REQUIRED_COLUMNS`` or
    ``NON_NULL`` column; a column has another type than the schema's; or it was
    written with a newer schema version than this reader's. Other columns the
    file lacks (newer, nullable ones) read as null. Reads the footer (and,
    without version metadata or statistics, the ``schema_version`` column)
    only: a data page corrupt behind a sound footer, or a row breaking the
    non-null rules, is found when the rows are read (``row_problem``)."""
    try:
        with opened(path) as (size, source):
            return _check_open(source, size, table)
    except OSError as exc:
        return None, f"cannot be read ({error_text(exc)})"


def _check_open(source, size: int, table: str) -> tuple[Optional[int], Optional[str]]:
    """``check_file`` of an opened file (``store.fs.opened``)."""
    import pyarrow.parquet as pq

    schema = SCHEMAS[table]
    try:
        if size == 0:
            return None, "empty file (0 bytes): not a Parquet file"
        pf = pq.ParquetFile(source)
        found = pf.schema_arrow
    except OSError as exc:
        return None, f"cannot be read ({error_text(exc)})"
    except Exception as exc:  # ArrowInvalid and the like: not Parquet, truncated
        return None, f"not a readable Parquet file, or a truncated one ({error_text(exc)})"
    missing = [name for name in REQUIRED_COLUMNS[table] + NON_NULL[table] if name not in found.names]
    missing = list(dict.fromkeys(missing))
    if missing:
        named = ", ".join(missing if len(missing) <= 5 else missing[:4] + [f"and {len(missing) - 4} more"])
        return None, f"not a replicheck {table} file (missing columns {named})"
    for f in schema:
        i = found.get_field_index(f.name)
        if i >= 0 and not _same_type(found.field(i).type, f.type):
            return None, (f"not a replicheck {table} file: column {f.name} is {_type_name(found.field(i).type)}, "
                          f"expected {_type_name(f.type)}")
    try:
        version = _file_version(pf)
    except Exception as exc:
        return None, f"cannot be read ({error_text(exc)})"
    if version > SCHEMA_VERSION:
        return None, (f"refused: written with corpus schema version {version}, newer than the version "
                      f"{SCHEMA_VERSION} this replicheck reads; upgrade replicheck to read it")
    return version, None


def _file_version(pf) -> int:
    """The schema version of an open ``ParquetFile``: the newest of its metadata
    (``VERSION_KEY``) and its rows' ``schema_version`` (footer statistics when
    every row group has them, else the column itself); 0 for no rows."""
    raw = (pf.schema_arrow.metadata or {}).get(VERSION_KEY)
    version = int(raw) if raw is not None else 0
    md = pf.metadata
    if md.num_rows == 0:
        return version
    col = pf.schema_arrow.get_field_index("schema_version")
    best: Optional[int] = None
    for rg in range(md.num_row_groups):
        stats = md.row_group(rg).column(col).statistics
        if stats is None or not stats.has_min_max:
            best = None
            break
        best = stats.max if best is None else max(best, stats.max)
    if best is None:
        import pyarrow.compute as pc
        best = pc.max(pf.read(columns=["schema_version"]).column(0)).as_py() or 0
    return max(version, int(best))


def table_files(root: Path | str | Location, table: str) -> TableFiles:
    """``list_table`` of ``root/table``, each candidate file checked with
    ``check_file``: the readable files and everything skipped, with reasons.
    ``root``: a folder path, or a URI (``store.fs.location``: raises
    its ``CorpusLocationError`` for one that cannot be opened)."""
    candidates, skipped = list_table(location(root) / table)
    files, versions = [], []
    for path in candidates:
        version, why = check_file(path, table)
        if why is not None:
            skipped.append(Skipped(path, why))
        else:
            files.append(path)
            versions.append(version)
    return TableFiles(tuple(files), tuple(versions), tuple(sorted(skipped, key=lambda s: str(s.path))))


def file_table(path: Location, table: str) -> pa.Table:
    """One file of ``table`` (chosen by ``store.schema.table_files``) as an
    Arrow table of the schema's columns, in order, every one nullable (an older
    file's missing columns as nulls). Raises what pyarrow raises for a file it
    cannot read."""
    import pyarrow.parquet as pq

    schema = SCHEMAS[table]
    with opened(path) as (_, source):
        data = pq.ParquetFile(source).read()
    for f in schema:  # an older version lacks the newer columns: null
        if f.name not in data.column_names:
            data = data.append_column(f.with_nullable(True), pa.nulls(data.num_rows, f.type))
    return data.select([f.name for f in schema]).cast(pa.schema([f.with_nullable(True) for f in schema]))
