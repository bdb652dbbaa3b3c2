"""``report CORPUS_DIR --out DIR [--master URL]``: print the summary table and
write the HTML report.

An already active SparkSession is used (and left running) when no
``--master`` is given; a session this command starts is stopped at the end.

Call ``report(ReportOptions(...))`` with the options already parsed (the
``replicheck report`` click command's), embed it in another argparse CLI with
``add_arguments(subparser)`` and ``run(namespace)``, or call ``main(argv)`` (a
leading ``"report"`` is accepted and skipped).

The arguments are checked before Spark starts (``check_arguments``): ``--top``
and ``--max-diagrams`` are integers >= 0, ``--out`` a folder that can be
created and written, CORPUS_DIR not a file, ``--master`` a Spark master URL
whose cluster accepts a connection (``_session.check_master``). A bad one is
one line on stderr naming it and what is allowed, and nothing is written.

Every file or folder of the corpus that cannot be read is skipped
(``store.schema.table_files``; a data page Spark cannot read: when the corpus is
loaded, ``spark_reports.corpus``), and so is every row that breaks the schema's
non-null rules (a null ``signature``, …): one ``skipped: PATH: REASON`` line
each on stderr (a row's names its index, id and column), then how many, and
listed in the report; everything else is reported.

Exit status:

- ``OK`` 0: the report is written and every file of the corpus was read (also
  for an empty corpus or one of passing runs only, which the report says);
- ``MISSING`` 1: CORPUS_DIR does not exist (an empty report is still written);
- ``USAGE`` 2: a bad argument, Spark could not start, or (a remote corpus)
  rows of a newer schema version: one line, no report;
- ``PARTIAL`` 3: the report is written, but files or folders of the corpus were
  skipped (each named on stderr and in the report).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

import attrs

OK, MISSING, USAGE, PARTIAL = 0, 1, 2, 3


@attrs.frozen(kw_only=True)
class ReportOptions:
    """The ``report`` command's options, parsed: ``corpus_dir`` (CORPUS_DIR: a
    folder or a URI), ``out`` (``--out``, the folder for index.html),
    ``master`` (``--master``, a Spark master URL; None: the active session,
    else local[*]), ``max_diagrams`` (``--max-diagrams``: space-time diagrams
    for the N largest signatures) and ``top`` (``--top``: signatures in the
    printed summary)."""

    corpus_dir: Any
    out: Any
    master: Optional[str] = None
    max_diagrams: int = 20
    top: int = 20

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> "ReportOptions":
        """The options of a namespace ``add_arguments``' parser made."""
        return cls(corpus_dir=args.corpus_dir, out=args.out, master=args.master, max_diagrams=args.max_diagrams,
                   top=args.top)


def _default(option: str) -> Any:
    return attrs.fields_dict(ReportOptions)[option].default


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("corpus_dir", metavar="CORPUS_DIR", help="corpus directory (counterexamples/ and runs/)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for index.html")
    parser.add_argument("--master", default=None, metavar="URL",
                        help="Spark master URL (default: local[*])")
    parser.add_argument("--max-diagrams", type=int, default=_default("max_diagrams"), metavar="N",
                        help="space-time diagrams for the N largest signatures (an integer >= 0; default "
                             f"{_default('max_diagrams')})")
    parser.add_argument("--top", type=int, default=_default("top"), metavar="N",
                        help=f"signatures listed in the printed summary (an integer >= 0; default {_default('top')})")
    return parser


def build_parser(prog: str = "replicheck report") -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(
        prog=prog, description="Summarize a counterexample corpus and write an HTML report with Spark."))


def writable_folder(path: "str | Path", option: str) -> Optional[str]:
    """Why the folder ``path`` (given as ``option``) cannot hold output, on one
    line, or None when it can: it is created (with its parents) if missing and a
    temporary file is written in it, so that the check is the one the write
    will meet (permissions, read-only file systems, ``/proc``, a file in the way)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        return f"{option} {path}: cannot create or write this folder ({why}); give a writable folder"
    return None


def check_arguments(options: ReportOptions) -> Optional[str]:
    """The first bad option, on one line naming it and what is allowed, or
    None. Creates ``--out``; connects to a cluster's master
    (``_session.check_master``)."""
    from ._session import check_master
    from .corpus import _local_path
    for option, value in (("--top", options.top), ("--max-diagrams", options.max_diagrams)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{option} must be an integer >= 0, got {value}"
    local = _local_path(options.corpus_dir)
    if local is not None and local.exists() and not local.is_dir():
        return f"CORPUS_DIR {options.corpus_dir}: not a folder; give the folder holding counterexamples/ and runs/"
    return writable_folder(options.out, "--out") or check_master(options.master)


def report(options: ReportOptions, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Check the options, load the corpus once, print its summary (to ``out``,
    default stdout) and the files skipped (to ``err``, default stderr), write
    the report; returns the exit status (module doc). An active SparkSession is
    used when no ``master`` is given; a session started here is stopped."""
    out = out or sys.stdout
    err = err or sys.stderr
    problem = check_arguments(options)
    if problem is not None:
        print(f"replicheck report: {problem}", file=err)
        return USAGE
    from pyspark.sql import SparkSession

    from ._session import session
    active = SparkSession.getActiveSession()
    own = active is None or options.master is not None
    try:
        spark = session(options.master or "local[*]") if own else active
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"replicheck report: --master {options.master or 'local[*]'}: Spark did not start ({first})", file=err)
        return USAGE
    try:
        return _summarize_and_write(spark, options, out, err)
    finally:
        if own:
            spark.stop()


def _summarize_and_write(spark: Any, options: ReportOptions, out: TextIO, err: TextIO) -> int:
    """Load the corpus, print its summary and what was skipped, write the report."""
    from . import analyses as A
    from .corpus import CorpusError, SchemaVersionError, load_corpus
    from .report import ReportSettings, build_report
    from store.schema import skipped_count
    status, corpus, skipped = OK, None, ()
    try:
        corpus = load_corpus(spark, options.corpus_dir)
        skipped = corpus.skipped
        print(A.summary_table(corpus, top=options.top), file=out)
    except SchemaVersionError as exc:
        print(f"replicheck report: refused: {exc}", file=err)
        return USAGE
    except CorpusError as exc:
        skipped = exc.skipped
        missing = not Path(options.corpus_dir).exists() if "://" not in str(options.corpus_dir) else True
        print(f"replicheck report: {exc}", file=err)
        status = MISSING if missing else OK
    for s in skipped:
        print(f"skipped: {s}", file=err)
    if skipped:
        print(f"replicheck report: {skipped_count(skipped)} of {options.corpus_dir} skipped (named "
              f"above); everything else is reported", file=err)
        status = PARTIAL
    try:
        path = build_report(options.corpus_dir, options.out, spark=spark, corpus=corpus,
                            settings=ReportSettings(max_diagrams=options.max_diagrams))
    except CorpusError as exc:
        print(f"replicheck report: refused: {exc}", file=err)
        return USAGE
    finally:
        if corpus is not None:
            corpus.release()
    print(f"report: {path}", file=out)
    return status


def run(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """``report`` with the options of ``args`` (``add_arguments``' namespace)."""
    return report(ReportOptions.from_namespace(args), out, err)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
