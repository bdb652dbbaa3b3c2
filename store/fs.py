"""Where a corpus lives: a local folder (a ``pathlib.Path``, the default) or a
URI that pyarrow's file system layer opens (``pyarrow.fs.FileSystem.from_uri``):
``s3://BUCKET/PATH``, ``gs://BUCKET/PATH``, ``hdfs://HOST:PORT/PATH``. A
``file://`` URI is the local folder it names (a ``Path``: the local writer's
temp file, fsync and hard link).

The one interface every corpus reader and writer goes through:

- ``location(root)``: ``Path`` or ``RemotePath`` (a file or folder of a remote
  corpus: ``/``, ``name``, ``parent``, ``str()`` its URI, sortable);
- ``listing(folder)``: a folder's entries, ``(name, path, kind)``;
- ``opened(path)``: a file's size and something ``pyarrow.parquet`` reads;
- ``publish_remote(directory, data, name, temp_name)``: a finished Parquet file
  made visible under its name, whole or not at all.

Credentials and endpoints come from the environment as pyarrow takes them (for
S3: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``,
``AWS_ENDPOINT_URL``; or the URI's query, ``?endpoint_override=HOST:PORT&scheme=http``).
Every process (a local worker, a Spark executor) opens the file system again
from the URI, so it needs that environment too.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Optional, Union
from urllib.parse import unquote, urlsplit

#: A URI's scheme, as typed (``s3://b/k``) or after a path type folded its
#: slashes (``s3:/b/k``); two letters at least, so ``C:/`` is not one.
URI = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/+(.*)", re.S)
#: Schemes documented and tested (``README``: Campaigns on a Spark cluster);
#: any other that ``FileSystem.from_uri`` opens (``viewfs``, ``abfs``…) is taken too.
SCHEMES = ("s3", "gs", "hdfs", "file")
#: pyarrow ``FileSystem.type_name`` of object stores: an upload appears whole or
#: not at all, and a rename is a copy, so a part is written once under its name.
OBJECT_STORES = frozenset({"s3", "gcs", "abfs"})
#: Hadoop's names for schemes pyarrow knows by another.
_HADOOP_NAMES = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}


class CorpusLocationError(ValueError):
    """A corpus URI cannot be used: one line naming it and what is wrong."""


def is_uri(root: object) -> bool:
    """Whether ``root`` (a str, path or ``RemotePath``) is given as a URI."""
    return isinstance(root, RemotePath) or URI.fullmatch(os.fspath(root) if isinstance(root, os.PathLike)
                                                         else str(root)) is not None


@dataclass(frozen=True, order=True)
class RemotePath:
    """A file or folder of a corpus on a pyarrow file system: ``path`` as that
    file system names it (``bucket/corpus/runs``), ``prefix`` what makes it a
    URI again (``s3://``); ``str()`` is the URI (without the query)."""

    prefix: str
    path: str
    fs: Any = field(compare=False, repr=False, hash=False)

    def __truediv__(self, name: str) -> "RemotePath":
        return RemotePath(self.prefix, f"{self.path.rstrip('/')}/{name}", self.fs)

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rpartition("/")[2]

    @property
    def parent(self) -> "RemotePath":
        return RemotePath(self.prefix, self.path.rstrip("/").rpartition("/")[0], self.fs)

    def is_relative_to(self, other: object) -> bool:
        return isinstance(other, RemotePath) and self.prefix == other.prefix and \
            (self.path == other.path or self.path.startswith(other.path.rstrip("/") + "/"))

    def relative_to(self, other: "RemotePath") -> PurePosixPath:
        """The part of ``self`` below ``other`` (ValueError when it is not below)."""
        if not self.is_relative_to(other):
            raise ValueError(f"{self} is not below {other}")
        return PurePosixPath(self.path[len(other.path.rstrip("/")) + 1:])

    @property
    def is_object_store(self) -> bool:
        return self.fs.type_name in OBJECT_STORES

    def __str__(self) -> str:
        return self.prefix + self.path

    def __fspath__(self) -> str:   # never a local path: refuse rather than write beside the URI
        raise TypeError(f"{self} is a remote corpus path, not a local one")


Location = Union[Path, RemotePath]

_FILESYSTEMS: dict[tuple, tuple[Any, str]] = {}
_ENV_PREFIXES = ("AWS_", "GOOGLE_", "HADOOP_", "ARROW_")
_FS_LOCK = threading.Lock()


def _canonical(text: str) -> tuple[str, str]:
    """(scheme, the URI with its slashes restored) of a URI given as text."""
    m = URI.fullmatch(text)
    assert m is not None
    scheme = m.group(1).lower()
    rest = m.group(2)
    # a path type folds "s3://b" to "s3:/b"; hdfs://HOST and s3://BUCKET have an authority, file:/// none
    return scheme, f"{scheme}:///{rest}" if scheme == "file" else f"{scheme}://{rest}"


def location(root: object) -> Location:
    """The corpus at ``root``: a ``Path`` for a folder path or a ``file://`` URI,
    a ``RemotePath`` for a URI pyarrow opens (its file system opened once per
    process and URI). Raises ``CorpusLocationError`` (one line naming the URI)
    for a scheme pyarrow does not open (``s3a://``: give ``s3://``), a malformed
    URI, or a file system that cannot be set up (no libhdfs or JVM for
    ``hdfs://``, a bucket's region that cannot be looked up)."""
    if isinstance(root, (Path, RemotePath)) and not (isinstance(root, Path) and is_uri(root)):
        return root
    text = os.fspath(root) if isinstance(root, os.PathLike) else str(root)
    if URI.fullmatch(text) is None:
        return Path(text)
    scheme, uri = _canonical(text)
    if scheme == "file":
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost"):
            raise CorpusLocationError(f"{uri}: a file:// URI names a folder of this machine (file:///PATH)")
        return Path(unquote(parts.path))
    # Opened once per URI and environment (the credentials and endpoint it reads).
    key = (uri, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES))))
    with _FS_LOCK:
        cached = _FILESYSTEMS.get(key)
    if cached is None:
        cached = _open(scheme, uri)
        with _FS_LOCK:
            _FILESYSTEMS[key] = cached
    fs, path = cached
    base = uri.split("?", 1)[0].rstrip("/")
    prefix = base[: len(base) - len(path.rstrip("/"))] if path and base.endswith(path.rstrip("/")) \
        else f"{scheme}://"
    return RemotePath(prefix, path.rstrip("/") or path, fs)


def _open(scheme: str, uri: str) -> tuple[Any, str]:
    from pyarrow import fs as pafs
    if scheme in _HADOOP_NAMES:
        raise CorpusLocationError(f"{uri}: {scheme}:// is Hadoop's name; give {_HADOOP_NAMES[scheme]}:// "
                                  f"(pyarrow's file systems: {', '.join(s + '://' for s in SCHEMES)})")
    try:
        fs, path = pafs.FileSystem.from_uri(uri)
    except Exception as exc:
        text = one_line(exc)
        if "Unrecognized filesystem type" in text:
            raise CorpusLocationError(f"{uri}: unknown scheme {scheme}://; give a folder path or a URI of "
                                      f"{', '.join(s + '://' for s in SCHEMES)}") from None
        raise CorpusLocationError(f"{uri}: cannot open its file system ({text})") from None
    if fs.type_name == "local":   # e.g. a scheme pyarrow maps to the local disk: the local path
        raise CorpusLocationError(f"{uri}: a local folder: give its path (or file:///PATH)")
    return fs, path


def error_text(exc: BaseException) -> str:
    """The exception on one line; for an OS error its message without the path
    (the line names the path already)."""
    text = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def one_line(exc: BaseException, limit: Optional[int] = 300) -> str:
    """An exception on one line: its type and its message's first non-blank line
    (pyarrow's errors go on with the native library's details, Spark's with a
    stack), cut at ``limit`` characters (None: whole)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if limit is not None and len(first) > limit:
        first = first[:limit - 3] + "…"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def probe_failure(text: str) -> str:
    """What a probe's error ``text`` (pyarrow's, on one line) says went wrong:
    access denied (an AWS access error, HTTP status 403, a word of credentials),
    the endpoint unreachable, or the corpus unreadable. The status is matched as
    a status: an endpoint whose port holds the digits 403 is no access error."""
    if ("ACCESS_DENIED" in text or "AccessDenied" in text or re.search(r"status\D{0,3}403\b", text)
            or "credentials" in text.lower()):
        return f"access denied: missing or wrong credentials? ({text})"
    if "NETWORK_CONNECTION" in text or "connect" in text.lower() or "resolve" in text.lower():
        return f"cannot reach its endpoint ({text})"
    return f"cannot be read ({text})"


def probe(root: Location, timeout_s: float = 5.0) -> Optional[str]:
    """Why the remote corpus ``root`` cannot be used (one line, without the URI),
    or None: its endpoint does not answer within about ``timeout_s`` seconds,
    access is denied (missing or wrong credentials), its bucket does not exist,
    or it names a file. A folder that does not exist yet is fine (writers make
    it). A local ``Path`` is not probed here (None)."""
    if not isinstance(root, RemotePath):
        return None
    from pyarrow import fs as pafs
    fs = _quick(root.fs, timeout_s)
    try:
        if root.is_object_store:
            bucket = root.path.strip("/").split("/", 1)[0]
            if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                return f"the bucket {bucket} does not exist (or is not visible with these credentials)"
        info = fs.get_file_info(root.path)
    except Exception as exc:
        return probe_failure(one_line(exc))
    if info.type == pafs.FileType.File:
        return "a file, not a folder"
    return None


def _quick(fs: Any, timeout_s: float) -> Any:
    """``fs`` with short timeouts and one attempt when it is S3 (its default
    retries an unreachable endpoint for seconds); else ``fs`` itself."""
    if fs.type_name != "s3":
        return fs
    from pyarrow import fs as pafs
    try:
        options = dict(fs.__reduce__()[1][0])
        options.update(connect_timeout=timeout_s, request_timeout=timeout_s)
        return pafs.S3FileSystem(**options, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))
    except Exception:   # another pyarrow's options: probe with the file system as it is
        return fs


def open_corpus(root: object) -> tuple[Optional[Location], Optional[str]]:
    """``(location, None)`` when ``root`` (a folder path or a URI) is a folder to
    read a corpus from; else ``(None, why)``, one line without ``root``: ``no such
    directory`` (a local path that is not a folder; a URI with nothing below
    it), or what ``location`` or ``probe`` says of a URI."""
    try:
        where = location(root)
    except CorpusLocationError as exc:
        return None, str(exc).partition(": ")[2] or str(exc)
    problem = probe(where)
    if problem is None and not exists_dir(where):
        problem = "no such directory"
    return (where, None) if problem is None else (None, problem)


def exists_dir(root: Location) -> bool:
    """Whether ``root`` is a folder (on an object store: whether anything is below it)."""
    if isinstance(root, Path):
        return root.is_dir()
    from pyarrow import fs as pafs
    return root.fs.get_file_info(root.path).type == pafs.FileType.Directory


# ------------------------------------------------------------------ reading

def listing(folder: Location, hidden: Any = lambda name: False) -> list[tuple[str, Location, str]]:
    """The entries of ``folder`` but those whose name ``hidden`` is true of,
    sorted by name: ``(name, path, kind)``, kind
    being ``"dir"``, ``"file"`` or why the entry cannot be reached (a link loop,
    a dangling link: ``cannot be reached (…)``; ``not a regular file or
    folder``). Raises ``NotADirectoryError`` when ``folder`` is a file and
    ``OSError`` when it cannot be listed. A local entry is looked at through
    its symbolic links; a remote one as the listing gives it."""
    if isinstance(folder, Path):
        with os.scandir(folder) as it:
            entries = sorted((e for e in it if not hidden(e.name)), key=lambda e: e.name)
        return [(e.name, Path(e.path), _local_kind(e.path)) for e in entries]
    from pyarrow import fs as pafs
    info = folder.fs.get_file_info(folder.path)
    if info.type == pafs.FileType.File:
        raise NotADirectoryError(20, "Not a directory")
    infos = folder.fs.get_file_info(pafs.FileSelector(folder.path, allow_not_found=True))
    kinds = {pafs.FileType.Directory: "dir", pafs.FileType.File: "file"}
    out = [(i.base_name, RemotePath(folder.prefix, i.path, folder.fs), kinds.get(i.type, "not a regular file or folder"))
           for i in infos if not hidden(i.base_name)]
    return sorted(out, key=lambda e: e[0])


def _local_kind(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:   # ELOOP, ENOENT, EACCES
        return f"cannot be reached ({error_text(exc)})"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "not a regular file or folder"


def lexists(path: Location) -> bool:
    """Whether anything is at ``path`` (a local dangling link counts)."""
    if isinstance(path, Path):
        return os.path.lexists(path)
    from pyarrow import fs as pafs
    return path.fs.get_file_info(path.path).type != pafs.FileType.NotFound


@contextmanager
def opened(path: Location) -> Iterator[tuple[int, Any]]:
    """``(size in bytes, source)`` of a corpus file, ``source`` what
    ``pyarrow.parquet.ParquetFile`` / ``read_table`` take: the local path itself,
    or an open pyarrow input file (closed on exit). OSError when it cannot be
    opened."""
    if isinstance(path, Path):
        yield os.stat(path).st_size, path
        return
    with path.fs.open_input_file(path.path) as f:
        yield f.size(), f


# ------------------------------------------------------------------ writing

_MADE: set[tuple[int, str]] = set()


def publish_remote(directory: RemotePath, data: bytes, name: str, temp_name: str) -> RemotePath:
    """Make ``data`` (a whole Parquet file) visible as ``directory/name``, whole
    or not at all; ``name`` must be unique to this write (nothing checks that it
    is free). On an object store (``OBJECT_STORES``) it is uploaded once under
    its name: an upload appears when it completes, and an interrupted one never
    does. Elsewhere (HDFS) it is written as ``temp_name`` (a ``.`` name readers
    skip) and renamed. Returns the file's path; OSError when it cannot be
    written (then nothing is visible under ``name``)."""
    fs = directory.fs
    final = directory / name
    if directory.is_object_store:
        _upload(fs, final.path, data)
        return final
    if (id(fs), directory.path) not in _MADE:
        fs.create_dir(directory.path, recursive=True)
        _MADE.add((id(fs), directory.path))
    tmp = directory / temp_name
    try:
        _upload(fs, tmp.path, data)
        fs.move(tmp.path, final.path)
    finally:
        try:
            fs.delete_file(tmp.path)
        except Exception:   # moved: nothing left to remove
            pass
    return final


def _upload(fs: Any, path: str, data: bytes) -> None:
    # The file is serialized before the upload starts, so an error can only come
    # from the upload itself, which then never completes (no half file appears).
    with fs.open_output_stream(path) as out:
        out.write(data)
