"""Bad entries of a corpus table, one kind at a time, for the tests of every
reader (``store.reader`` — replay, ``--replay-corpus`` — and
``spark_reports``): pyarrow and the standard library only.

``add_bad(root, table, kind, good)`` puts one entry of ``kind`` into
``root/table`` beside ``good`` (a readable file of that table) and returns
``(path, reason)``: the path every reader must name, once, and a fragment of the
reason it must give. A row kind (``ROW_KINDS``, ``DECODE_KINDS``) is a file of
two rows, the first breaking the schema's non-null rules, the second good: the
path is the file's, the reason the row's. The unreadable kinds need ``chmod`` to
deny: ``denied(path)`` says whether it does (not for root); ``restore(root)``
makes everything readable again for clean-up."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from store.schema import SCHEMA_VERSION, VERSION_KEY

#: A row breaking the schema's non-null rules, by kind: the column made null in
#: a counterexamples file and in a runs file (the nearest column of its own).
NULL_ROW_COLUMNS = {"null_signature": ("signature", "test_id"),
                    "null_counterexample_id": ("counterexample_id", "run_id"),
                    "null_step_count": ("step_count", "steps"),
                    "null_variants": ("variants", "variants"),
                    "null_steps": ("steps", "steps")}
#: Of a counterexamples file, the kind whose row ``store.reader`` reads (its
#: replay says it cannot be decoded, naming the column) while the report skips
#: it: not in ``KINDS``.
DECODE_KINDS = ("null_steps",)
#: The kinds that are one bad row of a file whose other row is good (the path
#: named is the file's, the line names the row: ``Skipped.row`` is 0).
ROW_KINDS = tuple(k for k in NULL_ROW_COLUMNS if k not in DECODE_KINDS)
#: Every kind of bad entry, in the order the tests build them.
KINDS = ("zero_byte", "truncated", "readme", "readme_in_partition", "wrong_schema", "wrong_type", "newer_version",
         "unreadable_file", "symlink_loop", "stray_folder", "notadate", "unreadable_folder", "folder_in_partition",
         "outside_partition", "corrupt_page") + ROW_KINDS
#: The id of the bad row of a ``ROW_KINDS`` file (but ``null_counterexample_id``'s).
BAD_ROW_ID = "b" * 64
#: The kinds that need file permissions to deny reading.
UNREADABLE = ("unreadable_file", "unreadable_folder")


def _wrong_type(table: pa.Table) -> pa.Table:
    """``table`` with its first integer column (after ``schema_version``) as strings."""
    i = next(i for i, f in enumerate(table.schema)
             if pa.types.is_integer(f.type) and f.name != "schema_version")
    name = table.schema.field(i).name
    return table.set_column(i, pa.field(name, pa.string()), pa.array([str(v) for v in table.column(i).to_pylist()]))


def corrupt_page(good: Path, path: Path) -> Path:
    """A copy of ``good`` at ``path`` whose footer is sound but whose data is
    not: the header of the first page of the middle column's chunk, in every
    row group, overwritten with garbage. Opening it and reading its footer
    work (``store.schema.check_file`` passes); reading its rows fails."""
    data = bytearray(good.read_bytes())
    md = pq.ParquetFile(good).metadata
    for rg in range(md.num_row_groups):
        chunk = md.row_group(rg).column(md.num_columns // 2)
        start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
        data[start:start + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return path


def null_row(good: Path, path: Path, table: str, kind: str) -> Path:
    """A file at ``path`` of two rows: ``good``'s first row with ``kind``'s
    column (``NULL_ROW_COLUMNS``) null and its id ``BAD_ROW_ID``, then that
    row again, unchanged (a good row: the same find again)."""
    data = pq.read_table(good)
    column = NULL_ROW_COLUMNS[kind][0 if table == "counterexamples" else 1]
    bad = data.slice(0, 1).to_pylist()[0]
    if kind != "null_counterexample_id":
        bad["counterexample_id" if table == "counterexamples" else "run_id"] = BAD_ROW_ID
    bad[column] = None
    schema = pa.schema([f.with_nullable(True) for f in data.schema], metadata=data.schema.metadata)
    pq.write_table(pa.Table.from_pylist([bad, data.slice(0, 1).to_pylist()[0]], schema=schema), path)
    return path


def add_bad(root: Path, table: str, kind: str, good: Path) -> tuple[Path, str]:
    """One bad entry of ``kind`` in ``root/table``; returns (its path, a fragment of the reason)."""
    base = root / table
    part = good.parent
    if kind == "zero_byte":
        p = part / "part-zero.parquet"
        p.write_bytes(b"")
        return p, "empty file (0 bytes)"
    if kind == "truncated":
        p = part / "part-truncated.parquet"
        p.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
        return p, "not a readable Parquet file, or a truncated one"
    if kind == "readme":
        p = base / "README.md"
        p.write_text("# what this corpus is\n")
        return p, "not a .parquet file"
    if kind == "readme_in_partition":
        p = part / "README.md"
        p.write_text("# notes\n")
        return p, "not a .parquet file"
    if kind == "wrong_schema":
        p = part / "part-foreign.parquet"
        pq.write_table(pa.table({"x": [1, 2]}), p)
        return p, f"not a replicheck {table} file (missing columns schema_version, "
    if kind == "wrong_type":
        p = part / "part-wrong-type.parquet"
        pq.write_table(_wrong_type(pq.read_table(good)), p)
        return p, "expected int"
    if kind == "newer_version":
        data = pq.read_table(good)
        data = data.set_column(0, data.schema.field(0), pa.array([SCHEMA_VERSION + 1] * data.num_rows, pa.int32()))
        p = part / "part-newer.parquet"
        pq.write_table(data.replace_schema_metadata({VERSION_KEY: str(SCHEMA_VERSION + 1).encode()}), p)
        return p, f"corpus schema version {SCHEMA_VERSION + 1}, newer than the version {SCHEMA_VERSION}"
    if kind == "unreadable_file":
        p = part / "part-unreadable.parquet"
        shutil.copy(good, p)
        p.chmod(0)
        return p, "cannot be read (PermissionError: Permission denied)"
    if kind == "symlink_loop":
        p = part / "part-loop.parquet"
        os.symlink(p.name, p)                  # a link to itself
        return p, "Too many levels of symbolic links"
    if kind == "stray_folder":
        p = base / "stray"
        p.mkdir()
        shutil.copy(good, p / good.name)
        return p, "not a partition folder: expected run_date=YYYY-MM-DD"
    if kind == "notadate":
        p = base / "run_date=notadate"
        p.mkdir()
        shutil.copy(good, p / good.name)
        return p, "the value of run_date must be a date YYYY-MM-DD"
    if kind == "unreadable_folder":
        p = base / "run_date=2001-01-01"
        p.mkdir()
        shutil.copy(good, p / good.name)
        p.chmod(0)
        return p, "folder cannot be read (PermissionError: Permission denied)"
    if kind == "folder_in_partition":
        p = part / "nested"
        p.mkdir()
        shutil.copy(good, p / good.name)
        return p, "a folder inside a partition folder"
    if kind == "outside_partition":
        p = base / "part-outside.parquet"
        shutil.copy(good, p)
        return p, "a file outside the run_date=YYYY-MM-DD folders"
    if kind == "corrupt_page":
        return corrupt_page(good, part / "part-corrupt-page.parquet"), "cannot be read ("
    if kind in NULL_ROW_COLUMNS:
        column = NULL_ROW_COLUMNS[kind][0 if table == "counterexamples" else 1]
        p = null_row(good, part / f"part-{kind.replace('_', '-')}.parquet", table, kind)
        id_column = "counterexample_id" if table == "counterexamples" else "run_id"
        ident = "" if kind == "null_counterexample_id" else f" ({id_column} {BAD_ROW_ID[:16]}…)"
        return p, f"row 0{ident}: {column} is null, which the schema does not allow"
    raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(KINDS)}")


def denied(path: Path) -> bool:
    """Whether permissions keep this process from reading ``path`` (root reads anything)."""
    return not os.access(path, os.R_OK)


def restore(root: Path) -> None:
    """Make every folder and file under ``root`` readable again (clean-up)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if not p.is_symlink() and not stat.S_IMODE(p.stat().st_mode):
                p.chmod(0o755 if p.is_dir() else 0o644)


def add_every_bad(root: Path, table: str, good: Path, kinds=KINDS) -> dict[str, tuple[Path, str]]:
    """``add_bad`` of each of ``kinds`` (those needing permissions only where
    chmod denies): kind -> (path, reason fragment)."""
    out = {}
    for kind in kinds:
        path, reason = add_bad(root, table, kind, good)
        if kind in UNREADABLE and not denied(path):
            path.chmod(0o755 if path.is_dir() else 0o644)
            shutil.rmtree(path) if path.is_dir() else path.unlink()
            continue
        out[kind] = (path, reason)
    return out
