"""What putting Apache Kafka's own code in the loop costs (kafka_bridge, JPype).

Usage: python benchmarks/kafka_bridge_cost.py [--walks 20] [--steps 300] [--passes 3]

Prints the JVM's start-up (a fresh process starting it, and the first request
handled by Kafka's controller, class loading included), then checked steps per
second of weighted random walks under the Kafka profile (RF 3 of 4 brokers,
MinISR 2; the model, the implementation's apply, outcome and observation
comparisons and the enablement probes; properties off), in passes over the same
walks (the first on a cold JVM, the later ones warm), with the Python SUT,
with Kafka's PartitionChangeBuilder alone under the SUT's controller, with
Kafka's controller managers and epoch cache under the SUT's Partition
(``kafka_bridge.CONTROLLER_COMPONENTS``), and with the implementation "kafka"
(Kafka's controller, and Kafka's Partition and fetcher on every broker), and
the cost of one controller request (a registration, heartbeat, session expiry,
controlled shutdown, AlterPartition, reassignment or election) in each; then
each epoch cache's cost per write and lookup (Kafka's writes its checkpoint
file on every change); then Kafka's ``kafka.cluster.Partition`` as a leader,
driven alone (``kafka_bridge.partition``): set-up, produce, fetch, ISR check.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import defaultdict

from check.implementations import bundled_sut
from check.lockstep import LockStep
from check.random_walk import random_walk
from check.subject import Subject
from model import KAFKA, Config

CONFIG = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)

_START = """
import time
t0 = time.perf_counter()
from kafka_bridge import jvm
jvm.start()
t1 = time.perf_counter()
from check.lockstep import LockStep
from check.subject import Subject
from model import (Config, KAFKA, AdvanceTime, ProposeIsrShrink, ReceiveAlterPartition, ReceiveFetchRequest,
                   ReceiveFetchResponse, SendFetch)
import kafka_bridge
ls = LockStep(Subject.at(Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA), implementation=kafka_bridge.implementation))
for a in (SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2), AdvanceTime(30001), ProposeIsrShrink(1, 3),
          ReceiveAlterPartition(3)):
    ls.step(a)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


#: The controller's requests, as the SUT's brokers and cluster call them.
REQUESTS = ("register_broker", "process_broker_heartbeat", "expire_session", "process_controlled_shutdown",
            "handle_alter_partition", "alter_partition_reassignments", "cancel_partition_reassignment",
            "unclean_leader_election")


def timed_requests(totals: dict) -> None:
    """Wrap both controllers' requests to sum their time and count their calls, per
    builder class for the SUT's controller (``totals[name] = [seconds, calls]``)."""
    import kafka_bridge.controller as kc
    import sut.controller as sc
    for cls in (sc.QuorumController, kc.KafkaQuorumController):
        for request in REQUESTS:
            original = cls.__dict__[request]

            def wrapped(self, *args, _original=original, **kwargs):
                builder = getattr(getattr(self, "replication", None), "change_builder", None)
                name = type(self).__name__ if builder is None else builder.__name__
                t0 = time.perf_counter()
                try:
                    return _original(self, *args, **kwargs)
                finally:
                    totals[name][0] += time.perf_counter() - t0
                    totals[name][1] += 1
            setattr(cls, request, wrapped)


def checked_rate(traces: list, factory) -> float:
    """Checked steps per second of wall clock of ``traces``, each in a fresh lockstep
    of ``factory``'s implementation with the model (properties off, probes on)."""
    steps, t0 = 0, time.perf_counter()
    for trace in traces:
        lockstep = LockStep(Subject.at(CONFIG, implementation=factory, check_properties=False))
        for action in trace:
            verdict = lockstep.step(action)
            assert verdict is None, verdict.text
            steps += 1
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=20)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--passes", type=int, default=3, help="passes over the walks per implementation (default 3)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_bridge_cost")
    args = ap.parse_args()

    out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, check=True)
    jvm_s, first_s = (float(x) for x in out.stdout.split())
    print(f"JVM start-up (startJVM with Kafka's jars): {jvm_s * 1e3:.0f} ms; "
          f"first requests to Kafka's controller (class loading): {first_s * 1e3:.0f} ms")

    import kafka_bridge
    from sut import Cluster
    kafka_bridge.start()
    traces = [[a for a, _ in random_walk(CONFIG, args.steps, seed=s, policy="weighted")] for s in range(args.walks)]
    totals: dict = defaultdict(lambda: [0.0, 0])
    timed_requests(totals)
    print(f"\nchecked steps/s: the first pass over the walks, and the best later pass of {args.passes} (warm: "
          f"Kafka's classes compiled by the JIT, as in a campaign worker after its first minute)")
    print(f"{'implementation':32} {'first pass':>11} {'warm':>7} {'requests':>9} {'µs per request':>15}")
    print("-" * 78)
    for name, factory in (
            ("Python SUT", bundled_sut(frozenset())),
            ("Kafka's builder alone", lambda c: Cluster(c, components=kafka_bridge.BUILDER_COMPONENTS)),
            ("Kafka's controller", lambda c: Cluster(c, components=kafka_bridge.CONTROLLER_COMPONENTS)),
            ("kafka (+ Partition and fetcher)", kafka_bridge.implementation)):
        rates = []
        for _ in range(args.passes):
            totals.clear()
            rates.append(checked_rate(traces, factory))
        spent, calls = (sum(x) for x in zip(*totals.values())) if totals else (0.0, 0)
        print(f"{name:32} {rates[0]:>11,.0f} {max(rates[1:] or rates):>7,.0f} {calls:>9,} "
              f"{spent / max(calls, 1) * 1e6:>15.1f}")

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

    partition_cost()


def partition_cost(rounds: int = 100, writes: int = 10) -> None:
    """Kafka's ``kafka.cluster.Partition`` as a leader (kafka_bridge.partition):
    its set-up (a UnifiedLog in a folder of its own and makeLeader), then per call
    an acks=all produce, a follower's fetch, and the periodic ISR check."""
    from kafka_bridge.partition import KafkaPartition
    from sut.metadata import PartitionRegistration
    spent = [0.0, 0.0, 0.0, 0.0]
    for _ in range(rounds):
        t0 = time.perf_counter()
        p = KafkaPartition(1, 10, 2)
        for b in (1, 2, 3):
            p.set_broker(b, 9 + b)
        p.make_leader(PartitionRegistration((1, 2, 3), frozenset({1, 2, 3}), 1, 1, 1))
        t1 = time.perf_counter()
        for v in range(writes):
            p.append(v)
        t2 = time.perf_counter()
        for offset in range(writes):
            follower = 2 + offset % 2
            p.fetch(follower, 9 + follower, 1, offset, 1)
        t3 = time.perf_counter()
        for _ in range(writes):
            p.maybe_shrink_isr()
        t4 = time.perf_counter()
        for i, x in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            spent[i] += x
    print(f"\n{'Kafka Partition':16} {'µs set-up':>10} {'µs per produce':>15} {'µs per fetch':>13} "
          f"{'µs per ISR check':>17}")
    print("-" * 75)
    print(f"{'leader':16} {spent[0] / rounds * 1e6:>10.0f} {spent[1] / (rounds * writes) * 1e6:>15.1f} "
          f"{spent[2] / (rounds * writes) * 1e6:>13.1f} {spent[3] / (rounds * writes) * 1e6:>17.1f}")
    follower_cost(rounds, writes)


def follower_cost(rounds: int, writes: int) -> None:
    """Kafka's ``Partition`` as a follower (kafka_bridge.partition): makeFollower,
    then per call one fetched record appended with the leader's HWM taken, a
    flush, and a lossy unclean shutdown followed by a restart (the log's files cut
    and reopened)."""
    from kafka_bridge.partition import KafkaPartition
    from sut.metadata import PartitionRegistration
    spent = [0.0, 0.0, 0.0, 0.0]
    for _ in range(rounds):
        p = KafkaPartition(2, 11, 2)
        t0 = time.perf_counter()
        p.make_follower(PartitionRegistration((1, 2, 3), frozenset({1, 2, 3}), 1, 1, 1))
        t1 = time.perf_counter()
        for offset in range(writes):
            p.append_as_follower(((offset, 1, offset),), 1)
            p.update_high_watermark(offset)
        t2 = time.perf_counter()
        for _ in range(writes):
            p.flush()
        t3 = time.perf_counter()
        p.unclean_shutdown(lossy=True)
        p.restart(12)
        t4 = time.perf_counter()
        for i, x in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            spent[i] += x
    print(f"\n{'Kafka Partition':16} {'µs makeFollower':>16} {'µs per record':>14} {'µs per flush':>13} "
          f"{'µs crash + restart':>19}")
    print("-" * 82)
    print(f"{'follower':16} {spent[0] / rounds * 1e6:>16.0f} {spent[1] / (rounds * writes) * 1e6:>14.1f} "
          f"{spent[2] / (rounds * writes) * 1e6:>13.1f} {spent[3] / rounds * 1e6:>19.0f}")


if __name__ == "__main__":
    import results
    results.run(main)
