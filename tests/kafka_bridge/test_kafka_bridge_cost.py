"""``benchmarks/kafka_bridge_cost.py`` runs end to end on a small budget (one
walk of a few steps): each table it prints has its rows. Its numbers are the
results page's business, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engines import require_kafka

ROOT = Path(__file__).resolve().parents[2]


def test_the_bridge_cost_benchmark_prints_every_table():
    require_kafka()
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kafka_bridge_cost.py"), "--walks", "1",
                          "--steps", "20"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    for row in ("JVM start-up", "Python SUT", "Kafka's builder alone", "Kafka's controller",
                "kafka (+ Partition and fetcher)", "first pass", "warm", "leader ", "follower "):
        assert row in out.stdout, (row, out.stdout)
