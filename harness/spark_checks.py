"""Checks made before Spark starts, shared by the campaign on a cluster
(``harness.spark_pool``) and the Spark report (``spark_reports``): each gives one
line naming the option and what it allows, or None. Nothing here imports
PySpark, so a bad argument is reported in milliseconds, before any JVM starts."""

from __future__ import annotations

import re
import socket
from typing import Optional
from urllib.parse import urlsplit

#: The master URL forms ``check_master`` accepts (Spark's "Master URLs").
MASTER_FORMS = ("local", "local[N]", "local[*]", "local[N,F]", "local[*,F]", "local-cluster[N,C,M]",
                "spark://HOST:PORT[,HOST:PORT…]", "yarn", "k8s://[https://]HOST:PORT")

_LOCAL = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]")
#: A URI's scheme, as typed (``s3a://b/k``) or after a path type folded its
#: slashes (``s3a:/b/k``); two letters at least, so ``C:/`` is not one.
_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/+(.*)")


def is_local_master(master: Optional[str]) -> bool:
    """Whether ``master`` runs Spark inside this machine's driver (``local``,
    ``local[N]``, … or None)."""
    return master is None or bool(_LOCAL.fullmatch(master)) and not master.startswith("local-cluster")


def check_master(master: Optional[str], timeout_s: float = 3.0) -> Optional[str]:
    """Why Spark cannot start with ``master`` (one line naming it and the forms
    allowed), or None when it may: a local master, ``yarn`` (its address comes
    from Hadoop's configuration), or a ``spark://`` / ``k8s://`` master one of
    whose HOST:PORT accepts a TCP connection within ``timeout_s`` seconds — so
    an unreachable cluster is reported at once instead of after Spark's own
    minute of retries. None (no master) is local."""
    if master is None or _LOCAL.fullmatch(master) or master == "yarn":
        return None
    allowed = f"allowed: {', '.join(MASTER_FORMS)}"
    if master.startswith("spark://"):
        addresses = master[len("spark://"):].split(",")
    elif master.startswith("k8s://"):
        rest = master[len("k8s://"):]
        addresses = [urlsplit(rest if "://" in rest else f"https://{rest}").netloc]
    else:
        return f"--master {master}: not a Spark master URL; {allowed}"
    problems = []
    for address in addresses:
        host, sep, port = address.rpartition(":")
        if not sep or not host or not port.isdigit():
            return f"--master {master}: {address!r} is not HOST:PORT; {allowed}"
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
                return None
        except OSError as exc:
            problems.append(f"{address}: {exc.strerror or str(exc) or type(exc).__name__}")
    return f"--master {master}: cannot connect within {timeout_s:g} s ({'; '.join(problems)}); is the cluster up?"


def check_shared_corpus(corpus: object, option: str = "--corpus") -> Optional[str]:
    """Why ``corpus`` (a str or path) cannot be a campaign's corpus, or None:
    it must be a folder path that every worker (a local worker process, a Spark
    executor) writes: a local folder on one machine, a shared mount across
    hosts. ``option`` names it in the line. A URI (``hdfs://``,
    ``s3a://``, ``file://``, …) is refused: units write their rows through the
    local file system (``harness.corpus.CorpusWriter``: temp file, fsync,
    link), which object stores and HDFS do not offer."""
    match = _URI.fullmatch(str(corpus))
    if match is None:
        return None
    uri = f"{match.group(1)}://{match.group(2)}"
    return (f"{option} {uri}: a URI; the corpus must be a folder path every worker can write (a local folder on "
            f"one machine: local workers, local[N], a cluster on this machine; a shared mount such as NFS across "
            f"hosts); hdfs://, s3a:// and other URIs are not supported yet")
