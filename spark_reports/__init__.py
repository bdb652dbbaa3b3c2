"""PySpark analyses and an HTML report over the Parquet counterexample corpus.

Imports nothing of the project's but ``store.schema``. Public face::

    from spark_reports import session, load_corpus, kill_matrix
    spark = session()                       # local[*], UI off, UTC, ANSI on
    corpus = load_corpus(spark, "corpus/")  # .counterexamples .runs .steps + SQL views
    kill_matrix(corpus).show()
    spark.sql("SELECT key_arg, count(*) FROM steps GROUP BY key_arg").show()

Analyses (each ``Corpus -> DataFrame``): ``kill_matrix`` (and
``kill_matrix_wide``), ``signature_buckets``, ``action_lift``,
``shrunk_length_distribution``, ``time_to_failure``, ``protocol_coverage``,
``ngram_motifs``, ``campaign_targets``. ``summary_table`` renders the CLI's text summary;
``build_report`` writes ``index.html``; ``spark_reports.cli.main`` is the
``report`` command. pyspark and matplotlib are imported lazily.
"""

from __future__ import annotations

from ._session import session
from .analyses import (KNOWN_EVENTS, LIFT_COLUMNS, action_lift, campaign_targets, kill_matrix, kill_matrix_wide,
                       ngram_motifs, overview, protocol_coverage, shrunk_length_distribution, signature_buckets,
                       summary_table, time_to_failure)
from .corpus import (ACTION_FAMILIES, STEP_COLUMNS, Corpus, CorpusError, SchemaVersionError, empty_corpus, key_arg,
                     load_corpus)


def build_report(corpus_dir, out_dir, master=None, **kwargs):
    """See ``spark_reports.report.build_report``."""
    from .report import build_report as _build
    return _build(corpus_dir, out_dir, master, **kwargs)


__all__ = [
    "ACTION_FAMILIES", "Corpus", "CorpusError", "KNOWN_EVENTS", "LIFT_COLUMNS", "STEP_COLUMNS", "SchemaVersionError",
    "action_lift", "build_report", "campaign_targets", "empty_corpus", "key_arg", "kill_matrix", "kill_matrix_wide",
    "load_corpus", "ngram_motifs", "overview", "protocol_coverage", "session", "shrunk_length_distribution",
    "signature_buckets", "summary_table", "time_to_failure",
]
