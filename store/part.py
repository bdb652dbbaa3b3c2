"""One Parquet part of a corpus table, written durably and atomically.

Files: ``<corpus>/<table>/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet``,
first written as ``.part-….parquet.tmp-<pid>-<uuid>`` in the same directory,
fsynced, then linked to their final name (never overwriting: an existing name
bumps ``seq``; without hard links, renamed to a name unique to the write,
``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``), so readers (which
skip dot-files, as Spark and pyarrow datasets do) never see half a file and
concurrent workers never collide. A corpus given as a URI (``s3://``, ``gs://``,
``hdfs://``: ``store.fs``) is written through pyarrow's file systems: each part
under a name unique to its write, uploaded once on an object store, written
under the temp name and renamed on HDFS.

Links (security: a corpus folder other local users can write in): the corpus
folder is taken as named, but nothing below it is followed
(``store.nofollow``): a table or partition folder that is a symbolic link is
refused (``store.nofollow.LinkRefused``, an OSError naming it), the temp file
is created with ``O_EXCL | O_NOFOLLOW`` and every later step (fsync, link,
rename, unlink) goes through the partition folder's descriptor, never a path
looked up again.
"""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
import os
import uuid
from pathlib import Path
from typing import Any, Iterable, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from .fs import Location, RemotePath, location, publish_remote
from .nofollow import create_new, folder
from .schema import PARTITION_COLUMN, SCHEMA_VERSION, SCHEMAS, VERSION_KEY


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def _ensure_tz(rows: list[dict[str, Any]], columns: Iterable[str]) -> None:
    for row in rows:
        for c in columns:
            v = row.get(c)
            if isinstance(v, _dt.datetime) and v.tzinfo is None:
                row[c] = v.replace(tzinfo=_dt.timezone.utc)


@functools.cache
def load_conversions() -> None:
    """Convert one timezone-aware timestamp, once per process, so that what
    pyarrow imports for it on first use (pandas, pytz, dateutil) is imported now,
    on the calling thread. ``store.writer.CorpusWriter`` calls it when created:
    its timer thread must not be the first to import them. Importing pandas
    parses source (``inspect.signature`` on builtins calls ``ast.parse``), and
    on CPython 3.11 two threads parsing at once can make the other thread's
    parse raise SystemError ("AST constructor recursion depth mismatch",
    CPython gh-106905) -- in pytest, the parse that formats a failing machine
    test's traceback, which then lost its counterexample."""
    pa.array([_dt.datetime(2000, 1, 1, tzinfo=_dt.timezone.utc)], pa.timestamp("us", tz="UTC"))


def table_of(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = SCHEMAS[table]
    rows = [dict(r) for r in rows]
    _ensure_tz(rows, [f.name for f in schema if pa.types.is_timestamp(f.type)])
    t = pa.Table.from_pylist(rows, schema=schema)
    return t.replace_schema_metadata({VERSION_KEY: str(SCHEMA_VERSION).encode()})


def _fsync_directory(folder_fd: int) -> None:
    """Make a folder's new entries durable (a file's link, a rename); a file
    system that cannot fsync a folder is left as it is."""
    try:
        os.fsync(folder_fd)
    except OSError:
        pass


#: Numbers the fallback names of this process's writes (``_publish``).
_PUBLISHED = itertools.count()


def _publish(tmp: str, directory: Path, folder_fd: int, run_id: str, worker: str, seq: int) -> Path:
    """Give the written temp file ``tmp`` its visible name in ``directory``
    (open as ``folder_fd``: every name is taken relative to it),
    never replacing a file: a hard link to ``part-<run_id>-<worker>-<seq>.parquet``
    (``os.link`` fails when the name exists: ``seq`` is bumped); where the file
    system has no hard links (``os.link`` raises any other OSError: EPERM,
    ENOTSUP, EMLINK…), a rename to a name no other writer can make,
    ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet`` (this process's pid,
    its n-th such write, a random uuid). Returns the final path; OSError when
    neither can be done."""
    while True:
        final = f"part-{run_id}-{worker}-{seq:04d}.parquet"
        try:
            # link never follows a link at its new name: it fails (EEXIST), seq is bumped.
            os.link(tmp, final, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
            return directory / final
        except FileExistsError:
            seq += 1
        except OSError:  # a file system without hard links
            break
    final = _unique_name(run_id, worker, seq)
    os.rename(tmp, final, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    return directory / final


def _unique_name(run_id: str, worker: str, seq: int) -> str:
    """A part's name no other write can make: ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``
    (this process's pid, its n-th such write, a random uuid)."""
    return f"part-{run_id}-{worker}-{seq:04d}-{os.getpid()}-{next(_PUBLISHED)}-{uuid.uuid4().hex}.parquet"


def write_part(root: Path | str | Location, table: str, rows: list[dict[str, Any]], run_id: str, worker: str,
               seq: int = 0, run_date: Optional[_dt.date] = None) -> Location:
    """Write ``rows`` (dicts of ``table``'s schema) as one Parquet file of
    ``table`` under ``root/table/run_date=…/``, durably and atomically; returns
    its path (a ``Path``; a ``store.fs.RemotePath`` for a corpus at a
    URI). The file is written to a dot-prefixed temp name unique to this
    call (readers skip it), flushed and fsynced, then published (``_publish``:
    linked to ``part-<run_id>-<worker>-<seq>.parquet``, ``seq`` bumped past any
    existing file, or renamed to a unique name where there are no hard links)
    and the directory fsynced. Nothing is ever overwritten.

    At a URI (``store.fs.location``) the file is serialized in memory
    first, then published under a name unique to the write,
    ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``: on an object
    store uploaded once (it appears whole when the upload completes), elsewhere
    (HDFS) written under the temp name and renamed
    (``store.fs.publish_remote``).

    Raises OSError (ENOSPC: disk full; EACCES, EROFS: an unwritable corpus; a
    store that cannot be reached; ``store.nofollow.LinkRefused``: the table or
    partition folder is a symbolic link) when the file cannot be written: then
    nothing is published and the temp file is removed;
    ``store.fs.CorpusLocationError`` (a ValueError) for a URI that
    cannot be opened."""
    run_date = run_date or utcnow().date()
    base = location(root)
    data = table_of(table, rows)
    temp_name = f".part-{run_id}-{worker}-{seq:04d}.parquet.tmp-{os.getpid()}-{uuid.uuid4().hex}"
    if isinstance(base, RemotePath):
        out = pa.BufferOutputStream()
        pq.write_table(data, out)
        return publish_remote(base / table / f"{PARTITION_COLUMN}={run_date.isoformat()}",
                              out.getvalue().to_pybytes(), _unique_name(run_id, worker, seq), temp_name)
    partition = f"{PARTITION_COLUMN}={run_date.isoformat()}"
    with folder(base, table, partition) as folder_fd:
        fd = create_new(temp_name, folder_fd)
        try:
            with open(fd, "wb") as fh:
                pq.write_table(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            final = _publish(temp_name, base / table / partition, folder_fd, run_id, worker, seq)
            _fsync_directory(folder_fd)
        finally:
            try:
                os.unlink(temp_name, dir_fd=folder_fd)
            except FileNotFoundError:
                pass
    return final


def remove_part(path: Location) -> None:
    """Remove the part ``path`` (as ``write_part`` returned it) once a part
    holding its rows in a better form was written: the campaign's deferred
    reduction replaces a counterexample's unreduced rows so. A local part is
    unlinked through its partition folder's descriptor (a symbolic link on the
    way is refused, as ``write_part`` refuses it) and the folder fsynced; a part
    at a URI is deleted through its file system. A part gone already is no
    error; OSError when it cannot be removed (its rows then stay, beside the
    better ones)."""
    if isinstance(path, RemotePath):
        try:
            path.fs.delete_file(path.path)
        except FileNotFoundError:
            pass
        return
    path = Path(path)
    root, table, partition = path.parent.parent.parent, path.parent.parent.name, path.parent.name
    try:
        with folder(root, table, partition, create=False) as folder_fd:
            os.unlink(path.name, dir_fd=folder_fd)
            _fsync_directory(folder_fd)
    except FileNotFoundError:
        pass
