"""A real S3-compatible server on loopback for the remote-corpus tests: moto's
(``moto.server.ThreadedMotoServer``), which pyarrow's S3 file system reaches
through ``AWS_ENDPOINT_URL`` with dummy credentials."""

from __future__ import annotations

import logging
import socket
import uuid
from typing import Iterator

import pytest

moto_server = pytest.importorskip("moto.server")

#: The environment pyarrow's S3 file system (and every worker process) reads.
def s3_env(endpoint: str) -> dict[str, str]:
    return {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint, "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new empty bucket on the server, the environment pointing at it; its name."""
    import boto3
    for key, value in s3_env(s3_endpoint).items():
        monkeypatch.setenv(key, value)
    name = f"corpus-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name


def keys(endpoint: str, bucket: str) -> list[str]:
    """Every object key of ``bucket``, sorted."""
    import boto3
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", []))


def put(endpoint: str, bucket: str, key: str, body: bytes) -> None:
    import boto3
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").put_object(Bucket=bucket, Key=key, Body=body)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
