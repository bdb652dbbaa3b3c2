"""``report CORPUS_DIR --out DIR [--master URL]``: print the summary table and
write the HTML report.

An already active SparkSession is used (and left running) when no
``--master`` is given; a session this command starts is stopped at the end.

Embed it in another argparse CLI with ``add_arguments(subparser)`` and
``run(namespace)``, or call ``main(argv)`` (a leading ``"report"`` is accepted
and skipped). Exit status: 0 report written (also for an empty corpus or only
passing runs, which the report and stdout say); 1 corpus missing (an empty
report is still written); 2 corpus refused (a newer schema version, an
unreadable file) or bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("corpus_dir", metavar="CORPUS_DIR", help="corpus directory (counterexamples/ and runs/)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for index.html")
    parser.add_argument("--master", default=None, metavar="URL",
                        help="Spark master URL (default: local[*])")
    parser.add_argument("--max-diagrams", type=int, default=20, metavar="N",
                        help="space-time diagrams for the N largest signatures (default 20)")
    parser.add_argument("--top", type=int, default=20, metavar="N",
                        help="signatures listed in the printed summary (default 20)")
    return parser


def build_parser(prog: str = "replicheck report") -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(
        prog=prog, description="Summarize a counterexample corpus and write an HTML report with Spark."))


def run(args: argparse.Namespace, out=None, err=None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    from pathlib import Path

    from . import analyses as A
    from ._session import session
    from .corpus import CorpusError, SchemaVersionError, load_corpus
    from .report import build_report

    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    own = active is None or args.master is not None
    spark = session(args.master or "local[*]") if own else active
    try:
        status = 0
        try:
            corpus = load_corpus(spark, args.corpus_dir)
            print(A.summary_table(corpus, top=args.top), file=out)
        except SchemaVersionError as exc:
            print(f"replicheck report: refused: {exc}", file=err)
            return 2
        except CorpusError as exc:
            missing = not Path(args.corpus_dir).exists() if "://" not in str(args.corpus_dir) else True
            print(f"replicheck report: {exc}", file=err)
            status = 1 if missing else 0
        try:
            path = build_report(args.corpus_dir, args.out, spark=spark, max_diagrams=args.max_diagrams)
        except CorpusError as exc:
            print(f"replicheck report: refused: {exc}", file=err)
            return 2
        print(f"report: {path}", file=out)
        return status
    finally:
        if own:
            spark.stop()


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
