"""Checks made before Spark starts, shared by the campaign on a cluster
(``campaign.spark_pool``) and the Spark report (``spark_reports``): each gives one
line naming the option and what it allows, or None. Nothing here imports
PySpark, so a bad argument is reported in milliseconds, before any JVM starts."""

from __future__ import annotations

import re
import socket
from typing import Optional
from urllib.parse import urlsplit

from store.fs import CorpusLocationError, is_uri, location, probe

#: The master URL forms ``check_master`` accepts (Spark's "Master URLs").
MASTER_FORMS = ("local", "local[N]", "local[*]", "local[N,F]", "local[*,F]", "local-cluster[N,C,M]",
                "spark://HOST:PORT[,HOST:PORT…]", "yarn", "k8s://[https://]HOST:PORT")

_LOCAL = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]")


def is_local_master(master: Optional[str]) -> bool:
    """Whether ``master`` runs Spark inside this machine's driver (``local``,
    ``local[N]``, … or None)."""
    return master is None or bool(_LOCAL.fullmatch(master)) and not master.startswith("local-cluster")


def on_loopback(master: Optional[str]) -> bool:
    """Whether ``master`` is a ``spark://`` master on this machine's loopback
    (its first HOST 127.0.0.1, localhost or [::1]): its executors reach the
    driver at 127.0.0.1."""
    if master is None or not master.startswith("spark://"):
        return False
    host = master[len("spark://"):].split(",")[0].rpartition(":")[0]
    return host in ("127.0.0.1", "localhost", "[::1]")


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
    every worker (a local worker process, a Spark executor) writes it, so it is
    a folder path (a local folder on one machine, a shared mount across hosts)
    or a URI pyarrow's file systems open (``store.fs``: ``s3://``,
    ``gs://``, ``hdfs://``; ``file:///PATH`` is that folder path). A URI is
    checked by asking its store, within a few seconds: the line (``option`` and
    the URI first) says that its scheme is unknown (``s3a://``: give
    ``s3://``), that its file system cannot be set up (no libhdfs), that its
    endpoint does not answer, that access is denied (missing or wrong
    credentials), that its bucket does not exist, or that it names a file. Each
    executor opens it again with its own environment (credentials, endpoint)."""
    if not is_uri(corpus):
        return None
    try:
        where = location(corpus)
    except CorpusLocationError as exc:
        return f"{option} {exc}"
    problem = probe(where)
    return None if problem is None else f"{option} {where}: {problem}"
