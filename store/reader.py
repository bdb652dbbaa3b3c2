"""Reading the corpus: every readable file's rows, and each file or folder that
cannot be read named with why.

``read_counterexamples(corpus_dir)`` / ``read_runs`` return the rows of every
readable file (``store.schema.table_files`` chooses them, as for every reader);
every other file or folder of the table — not ``*.parquet``, empty, corrupt or
truncated, unreadable, of another schema or a newer schema version, a stray or
badly named folder, one that cannot be listed — is skipped with one
``CorpusWarning`` naming it and why (the other files are still read), and listed
in ``.skipped`` (``.problems``: their lines). So is each row that breaks the
schema's non-null rules (a null ``signature``, …): named by file, index, id and
column, and the file's other rows read. ``find_by_id`` and
``shortest_of_signature`` pick one counterexample out of the rows.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import attrs
import pyarrow.parquet as pq

from .errors import CounterexampleNotFound, CorpusWarning
from .fs import Location, location, opened
from .schema import (COUNTEREXAMPLES, DECODED_COLUMNS, ID_COLUMN, RUNS, Skipped, data_problem, file_table,
                     list_table, row_problem, row_reason, table_files)


@attrs.define
class CorpusRead:
    """What reading one table gave: ``rows`` (dicts) of every readable file,
    ``files`` (the files read) and ``skipped`` (``store.schema.Skipped``:
    each file or folder not read, with why)."""

    rows: list[dict[str, Any]]
    files: list[Location]
    skipped: list[Skipped]

    @property
    def problems(self) -> list[str]:
        """One line per file or folder skipped: ``PATH: REASON``."""
        return [str(s) for s in self.skipped]


def corpus_files(root: Path | str | Location, table: str) -> list[Location]:
    """The table's candidate data files (``store.schema.list_table``): the
    ``*.parquet`` files of its ``run_date=YYYY-MM-DD`` folders, sorted; names
    starting with ``.`` or ``_`` (files being written) are not part of the
    corpus. Whether each can be read is ``read_table_rows``'s question.
    ``root``: a folder path or a URI (``store.fs.location``)."""
    files, _ = list_table(location(root) / table)
    return sorted(files)


def _partition_values(path: Location) -> dict[str, str]:
    """``{"run_date": "YYYY-MM-DD"}`` from the partition folder holding ``path``
    (``list_table`` reads no deeper)."""
    k, sep, v = path.parent.name.partition("=")
    return {k: v} if sep else {}


def read_file_rows(path: Location, columns: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
    """The rows of one corpus file (``columns`` only, when given) as dicts,
    unchecked: for a reader that has chosen its files already (the live view).
    Raises what pyarrow raises for a file it cannot read."""
    with opened(path) as (_, source):
        return pq.read_table(source, columns=None if columns is None else list(columns)).to_pylist()


def _sound_rows(path: Location, table: str, rows: list[dict[str, Any]], skipped: list[Skipped]) -> list[dict[str, Any]]:
    """The rows of the file ``path`` that keep the schema's non-null rules
    (``store.schema.row_problem``; a counterexample's trace and configuration
    are ``store.decode``'s to check), each with ``run_date`` and ``_file`` and
    its map columns as dicts; each other row is one ``Skipped`` in ``skipped``
    naming its index, id and column."""
    extra = _partition_values(path)
    exempt = DECODED_COLUMNS[table]
    sound = []
    for i, r in enumerate(rows):
        problem = row_problem(r, table, exempt)
        if problem is not None:
            ident = r.get(ID_COLUMN[table])
            skipped.append(Skipped(path, row_reason(table, i, ident if isinstance(ident, str) else None, problem), i))
            continue
        r.update(extra)
        r["_file"] = str(path)
        for key in ("rule_counts", "action_counts", "event_counts"):
            if isinstance(r.get(key), list):
                r[key] = dict(r[key])
        sound.append(r)
    return sound


def read_table_rows(root: Path | str | Location, table: str, warn: bool = True) -> CorpusRead:
    """The rows of every readable file of ``table`` under the corpus ``root``:
    dicts in schema order (an older file's missing columns as None), plus
    ``run_date`` (``"YYYY-MM-DD"``, from the partition folder) and ``_file`` (the
    path, a str); map columns as dicts.

    Files are chosen by ``store.schema.table_files``. Every file or folder of
    the table that is not read is in ``.skipped`` with why (``.problems``: one
    line each) — a file that is not ``*.parquet``, outside or below the
    partition folders, empty, not Parquet or truncated, unreadable, a link loop;
    a stray folder or ``run_date=notadate``; a folder that cannot be listed; a
    file of another schema (missing columns, a column of another type) or of a
    newer schema version; a file whose data cannot be read behind a sound footer
    (a corrupt data page) — and, unless ``warn`` is false, warned as a
    ``CorpusWarning``. The other files are still read. So is every row that
    breaks the schema's non-null rules (``store.schema.row_problem``: a null
    ``signature``, ``counterexample_id``, ``step_count``, ``variants``, …, as
    a file written by another tool can hold): one ``Skipped`` each, naming the
    file, the row's index and id and the column (its ``row`` set), and the
    file's other rows are read. A counterexample with a null trace or
    configuration (``steps``, ``config_json``) is read: its decoding fails
    naming the column (``store.decode``). Never raises for the
    corpus's content; a missing ``root`` or table folder gives no rows.
    ``root``: a folder path, or a URI pyarrow opens (``store.fs``;
    ``CorpusLocationError``, a ValueError, for one it cannot)."""
    listing = table_files(location(root), table)
    result = CorpusRead([], [], list(listing.skipped))
    for path in listing.files:
        try:
            rows = file_table(path, table).to_pylist()
        except Exception as e:  # a data page corrupt behind a sound footer, a file gone since
            result.skipped.append(Skipped(path, data_problem(e)))
            continue
        result.rows.extend(_sound_rows(path, table, rows, result.skipped))
        result.files.append(path)
    if warn:
        for p in result.problems:
            warnings.warn(p, CorpusWarning, stacklevel=2)
    return result


def read_counterexamples(root: Path | str | Location, warn: bool = True) -> CorpusRead:
    """``read_table_rows(root, "counterexamples", warn)``."""
    return read_table_rows(root, COUNTEREXAMPLES, warn)


def read_runs(root: Path | str | Location, warn: bool = True) -> CorpusRead:
    """``read_table_rows(root, "runs", warn)``."""
    return read_table_rows(root, RUNS, warn)


def unique_counterexamples(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per counterexample_id (the earliest found), ordered by signature,
    length and id."""
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        cur = best.get(r["counterexample_id"])
        if cur is None or (r["found_at"], r["_file"]) < (cur["found_at"], cur["_file"]):
            best[r["counterexample_id"]] = r
    return sorted(best.values(), key=lambda r: (r["signature"], r["step_count"], r["counterexample_id"]))


def find_by_id(rows: Sequence[dict[str, Any]], ident: str, where: str = "the corpus") -> dict[str, Any]:
    """The counterexample whose id is ``ident`` or starts with it (unique prefix)."""
    unique = unique_counterexamples(rows)
    exact = [r for r in unique if r["counterexample_id"] == ident]
    matches = exact or [r for r in unique if r["counterexample_id"].startswith(ident)]
    if len(matches) == 1:
        return matches[0]
    signatures = {r["signature"] for r in unique}
    if not matches:
        raise CounterexampleNotFound(
            f"no counterexample with id {ident!r} in {where}: it holds {len(unique)} counterexample id(s) "
            f"of {len(signatures)} signature(s). Use --list to see them, or --signature SIG to replay the "
            f"shortest counterexample of a signature.")
    raise CounterexampleNotFound(
        f"id prefix {ident!r} is ambiguous in {where}: {len(matches)} ids start with it: "
        + ", ".join(r["counterexample_id"][:16] for r in matches[:10]) + ("…" if len(matches) > 10 else ""))


def shortest_of_signature(rows: Sequence[dict[str, Any]], sig: str, where: str = "the corpus") -> dict[str, Any]:
    """The shortest counterexample (fewest steps, then earliest, then id) of a signature."""
    unique = unique_counterexamples(rows)
    members = [r for r in unique if r["signature"] == sig]
    if not members:
        sigs = Counter(r["signature"] for r in unique)
        listing = "\n  ".join(f"{n:4}  {s}" for s, n in sorted(sigs.items()))
        raise CounterexampleNotFound(
            f"no counterexample with signature {sig!r} in {where} ({len(sigs)} signature(s)"
            + (f"):\n  {listing}" if sigs else ")"))
    return min(members, key=lambda r: (r["step_count"], r["found_at"], r["counterexample_id"]))
