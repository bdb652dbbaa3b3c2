"""A SparkSession with sane defaults for reading a counterexample corpus on one
machine (and any cluster when a master URL is given)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from typing import Any, Optional

# The master checks, shared with the campaign on a cluster (campaign.spark_pool).
from campaign.spark_checks import MASTER_FORMS, check_master, on_loopback  # noqa: F401

#: Defaults applied unless the caller passes the same key (underscores in
#: keyword arguments stand for dots: ``spark_sql_shuffle_partitions=8``).
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # A corpus has few large groups (properties, signatures, targets): a few
    # shuffle partitions beat the default 200 by a wide margin on a laptop.
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    # Spark 4's default, stated so that a site-wide spark-defaults.conf cannot
    # silently switch the analyses to lenient casts.
    "spark.sql.ansi.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "4g",
    "spark.sql.adaptive.enabled": "true",
    # A corpus table is handed to Spark as its list of files (hundreds of small
    # ones): listed on the driver, not by a Spark job per table (seconds each).
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
}

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
"""


#: The private folder of this process's log4j2 file (``_log4j_file``).
_LOG4J_FOLDER: Optional[str] = None
_LOG4J_LOCK = threading.Lock()


def _remove(folder: str, owner: int) -> None:
    """Remove ``folder`` at exit, in the process that made it only (a forked
    child exiting must not take it from its parent's JVM)."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def _log4j_file() -> str:
    """The path of the report JVM's log4j2 configuration (``_LOG4J2``), written
    once per process in a folder of its own (``tempfile.mkdtemp``: mode 0700,
    a name no one else holds), which is removed when the process exits.

    Security: never a file found at a fixed name in the shared temp folder,
    which another local user could plant first (a log4j2 configuration can
    append chosen lines to any file the JVM can write). OSError when the temp
    folder cannot be written."""
    global _LOG4J_FOLDER
    with _LOG4J_LOCK:
        if _LOG4J_FOLDER is None or not os.path.isdir(_LOG4J_FOLDER):
            folder = tempfile.mkdtemp(prefix="replicheck-spark-log4j-")
            atexit.register(_remove, folder, os.getpid())
            path = os.path.join(folder, "log4j2.properties")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            with open(os.open(path, flags, 0o600), "w") as fh:
                fh.write(_LOG4J2)
            _LOG4J_FOLDER = folder
        return os.path.join(_LOG4J_FOLDER, "log4j2.properties")


def session(master: Optional[str] = "local[*]", app_name: str = "replicheck-reports", **conf: Any):
    """Get or create a SparkSession for the corpus analyses.

    Defaults (each overridable through ``conf``, with dots or underscores):
    Spark UI off, console progress bars off, 4 shuffle partitions, UTC session
    time zone, ANSI mode on, Arrow for ``toPandas``, 4 GiB driver memory, and
    error-only JVM logs. For a local master, or a standalone one on loopback
    (``spark://127.0.0.1:PORT``, whose executors reach the driver there), the
    driver binds to 127.0.0.1 (no hostname look-up warnings) unless
    ``SPARK_LOCAL_IP`` is already set.

    Settings that size the JVM (``spark.driver.memory``, Java options) only take
    effect when this call starts the JVM; an already running session is returned
    with the runtime SQL settings applied.
    """
    from pyspark.sql import SparkSession

    merged: dict[str, str] = dict(DEFAULT_CONF)
    for key, value in conf.items():
        merged[key if "." in key else key.replace("_", ".")] = str(value).lower() if isinstance(value, bool) else str(value)
    local = master is None or master.startswith("local") or on_loopback(master)
    if local and "SPARK_LOCAL_IP" not in os.environ:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    java_opts = f"-Dlog4j.configurationFile=file:{_log4j_file()}"
    if "spark.driver.extraJavaOptions" in merged:
        java_opts = merged["spark.driver.extraJavaOptions"] + " " + java_opts
    merged["spark.driver.extraJavaOptions"] = java_opts

    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in merged.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for key, value in merged.items():  # an existing session keeps its JVM; runtime SQL confs still apply
        if key.startswith("spark.sql.") and spark.conf.get(key, None) != value:
            try:
                spark.conf.set(key, value)
            except Exception:  # static SQL confs cannot change on a running session
                pass
    return spark
