"""What putting Apache Kafka's own code in the loop costs (kafka_bridge, JPype).

Usage: python benchmarks/kafka_bridge_cost.py [--walks 20] [--steps 300]

Prints the JVM's start-up (a fresh process starting it, and the first change
decided by Kafka's builder, class loading included), then checked steps per
second of weighted random walks under the Kafka profile (RF 3 of 4 brokers,
MinISR 2; the model, the implementation's apply, outcome and observation
comparisons and the enablement probes; properties off) with the Python SUT and
with the implementation "kafka", and the cost of one partition change decided
by each builder; then each epoch cache's cost per write and lookup (Kafka's
writes its checkpoint file on every change).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import defaultdict

from harness.lockstep import LockStep, sut_factory
from harness.random_walk import random_walk
from model import KAFKA, Config

CONFIG = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)

_START = """
import time
t0 = time.perf_counter()
from kafka_bridge import jvm
jvm.start()
t1 = time.perf_counter()
from harness.lockstep import LockStep
from model import Config, KAFKA, ProposeIsrShrink, ReceiveAlterPartition
import kafka_bridge
ls = LockStep(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA), kafka_bridge.implementation)
ls.step(ProposeIsrShrink(1, 3)); ls.step(ReceiveAlterPartition(1))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def timed_build_change(totals: dict) -> None:
    """Wrap both builders' ``build_change`` to sum their time and count their calls."""
    import kafka_bridge.change_builder as kcb
    import sut.change_builder as scb
    for cls in (scb.PartitionChangeBuilder, kcb.KafkaPartitionChangeBuilder):
        original = cls.__dict__["build_change"]

        def wrapped(self, *args, _original=original, _name=cls.__name__, **kwargs):
            t0 = time.perf_counter()
            try:
                return _original(self, *args, **kwargs)
            finally:
                totals[_name][0] += time.perf_counter() - t0
                totals[_name][1] += 1
        setattr(cls, "build_change", wrapped)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=20)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()

    out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, check=True)
    jvm_s, first_s = (float(x) for x in out.stdout.split())
    print(f"JVM start-up (startJVM with Kafka's jars): {jvm_s * 1e3:.0f} ms; "
          f"first change by Kafka's builder (class loading): {first_s * 1e3:.0f} ms")

    import kafka_bridge
    kafka_bridge.start()
    traces = [[a for a, _ in random_walk(CONFIG, args.steps, seed=s, policy="weighted")] for s in range(args.walks)]
    totals: dict = defaultdict(lambda: [0.0, 0])
    timed_build_change(totals)
    print(f"\n{'implementation':16} {'checked steps/s':>16} {'changes':>8} {'µs per change':>14}")
    print("-" * 58)
    for name, factory, builder in (("Python SUT", sut_factory(), "PartitionChangeBuilder"),
                                   ("kafka", kafka_bridge.implementation, "KafkaPartitionChangeBuilder")):
        steps, t0 = 0, time.perf_counter()
        for trace in traces:
            lockstep = LockStep(CONFIG, factory, check_properties=False)
            for action in trace:
                verdict = lockstep.step(action)
                assert verdict is None, verdict.text
                steps += 1
        wall = time.perf_counter() - t0
        spent, calls = totals[builder]
        print(f"{name:16} {steps / wall:>16,.0f} {calls:>8,} {spent / max(calls, 1) * 1e6:>14.1f}")

    print(f"\n{'epoch cache':16} {'µs per assign':>14} {'µs per truncation':>18} {'µs per end offset lookup':>25}")
    print("-" * 77)
    from sut.epoch_cache import LeaderEpochFileCache
    for name, make in (("Python SUT", LeaderEpochFileCache), ("kafka", kafka_bridge.KafkaLeaderEpochFileCache)):
        spent = [0.0, 0.0, 0.0]
        rounds, n = 200, 10   # caches of up to 10 epochs, as a replica's usually are
        for _ in range(rounds):
            cache = make()
            t0 = time.perf_counter()
            for i in range(n):
                cache.assign(i + 1, 2 * i)
            t1 = time.perf_counter()
            for i in range(n):
                cache.end_offset_for(i, 4 * n)
            t2 = time.perf_counter()
            for i in reversed(range(n)):
                cache.truncate_from_end(2 * i)
            t3 = time.perf_counter()
            spent[0] += t1 - t0
            spent[1] += t3 - t2
            spent[2] += t2 - t1
        per = [x / (rounds * n) * 1e6 for x in spent]
        print(f"{name:16} {per[0]:>14.1f} {per[1]:>18.1f} {per[2]:>25.1f}")


if __name__ == "__main__":
    main()
