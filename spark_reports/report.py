"""The HTML report: one self-contained ``index.html`` (CSS inline, plots and
space-time diagrams as inline base64 PNG) over a corpus directory. Its contents
are gathered with Spark (``spark_reports.report_data``) and rendered from a
template (``spark_reports.report_html``)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Optional, Sequence

from .corpus import Corpus
from .report_data import ReportSettings, gather
from .report_html import render

__all__ = ["ReportSettings", "build_report"]


def _spark_for(master: Optional[str]):
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    from ._session import session
    return session(master or "local[*]")


def build_report(corpus_dir: Any, out_dir: Any, master: Optional[str] = None, *, spark: Any = None,
                 settings: Optional[ReportSettings] = None, targets: Optional[Sequence[str]] = None,
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
    ``settings``: how much is shown (``ReportSettings``; by default diagrams for
    the 20 largest signatures). ``targets``: a fuzz campaign's target labels
    (``campaign_targets``; of campaign ``run_id`` when given): the report then
    has a section of them, naming those that did not run.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spark = spark or _spark_for(master)
    data = gather(spark, corpus_dir, corpus, settings or ReportSettings(), targets, run_id)
    doc = render(data)
    if corpus is None:   # loaded here: its cached tables are freed here
        data.corpus.release()
    return _replace_file(out, "index.html", doc)


def _replace_file(folder: Path, name: str, text: str) -> Path:
    """Write ``text`` as ``folder/name``, whole: to a new temp file of a random
    name (``O_EXCL | O_NOFOLLOW``: a link planted in a shared report folder is
    never written through), then ``os.replace`` onto the name (a link there is
    replaced, not followed). OSError when it cannot be written."""
    tmp = folder / f".{name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, folder / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return folder / name
