"""What ``benchmarks/kafka_time_to_find.py`` rests on: a SUT bug on the broker side
still runs, and is still caught, with Kafka's components in place of the SUT's;
a bug in a replaced component has no equivalent there; and the benchmark's runs
switch the bug on in Kafka's implementation."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from check.implementations import bundled_sut
from check.lockstep import LockStep
from check.subject import Subject
from model import (KAFKA, Config, FenceBroker, Produce, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                   SendFetch)
from sut.bugs import DOCS, Bug

ROOT = Path(__file__).resolve().parents[2]


def benchmark():
    spec = importlib.util.spec_from_file_location("kafka_time_to_find", ROOT / "benchmarks" / "kafka_time_to_find.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: EPOCH_CACHE_NOT_TRUNCATED's golden counterexample, under the Kafka profile: the
#: leader 2 appends a record in epoch 1 that its follower never gets; 2 is fenced,
#: 3 leads in epoch 2, and 2 (a follower again) truncates the record on its first
#: fetch from 3. The buggy log (``sut/log.py``) leaves the cache alone, here
#: Kafka's ``LeaderEpochFileCache``, so 2's next fetch still names epoch 1 as its
#: last fetched epoch where its log is empty.
CONFIG = Config(brokers=(1, 2, 3), assignment=(2, 3), min_isr=1, profile=KAFKA)
TRACE = (Produce(2, 1), FenceBroker(2), ReplicateMetadata(3, 2), ReplicateMetadata(2, 2), SendFetch(2),
         ReceiveFetchRequest(1), ReceiveFetchResponse(2), SendFetch(2))


def verdicts(implementation):
    lockstep = LockStep(Subject.at(CONFIG, implementation=implementation, detach_at_findings=True))
    found = [lockstep.check()]
    for action in TRACE:
        found.append(lockstep.step(action))
    assert not lockstep.detached
    return found


def _controller_components(bugs: frozenset = frozenset()):
    import kafka_bridge
    from sut import Cluster

    def build(config: Config):
        kafka_bridge.start()
        return Cluster(config, bugs, components=kafka_bridge.CONTROLLER_COMPONENTS)
    return build


def test_a_broker_side_bug_is_caught_with_kafkas_epoch_cache_as_with_the_sut():
    """With Kafka's controller and epoch cache under the SUT's replica
    (``CONTROLLER_COMPONENTS``) the SUT's log bug drives Kafka's cache and is
    caught at the step the SUT's is; in the implementation "kafka" Kafka's own
    ``UnifiedLog`` runs in its place, and the bug changes nothing."""
    import kafka_bridge
    bug = frozenset({Bug.EPOCH_CACHE_NOT_TRUNCATED})
    assert verdicts(kafka_bridge.implementation) == [None] * (len(TRACE) + 1)
    assert verdicts(lambda config: kafka_bridge.implementation(config, bug)) == [None] * (len(TRACE) + 1)
    for implementation in (_controller_components(bug), bundled_sut(bug)):
        # The truncation (step 7) schedules the epoch checkpoint's write
        # (Rule.EPOCH_CHECKPOINT_WRITTEN_LATER); the buggy log truncates no entry and
        # schedules none: the probe of WriteEpochCheckpoint sees it before 2's next fetch.
        found = verdicts(implementation)
        assert found[:-2] == [None] * (len(TRACE) - 1)
        assert found[-2] is not None and found[-2].kind == "enablement"
        assert "enablement of WriteEpochCheckpoint(broker=2): model=enabled sut=refused" in found[-2].text


def test_each_bug_is_classified_by_the_file_that_holds_its_guard():
    """The table says where each bug's code path is from ``DOCS[bug].where``: that
    file must hold the bug's guard, and the bug has a Kafka equivalent exactly
    when that file is not one of the components Kafka's replace."""
    kafka_time_to_find = benchmark()
    guards = {bug: {p.relative_to(ROOT).as_posix() for p in (ROOT / "sut").glob("*.py")
                    if p.name != "bugs.py" and re.search(rf"Bug\.{bug.name}\b", p.read_text())}
              for bug in Bug}
    for bug in Bug:
        assert guards[bug] == {DOCS[bug].where.split()[0]}, bug
    replaced = {bug for bug in Bug if kafka_time_to_find.kafkas_class(bug) is not None}
    assert {DOCS[bug].where.split()[0] for bug in replaced} == {
        "sut/epoch_cache.py", "sut/change_builder.py", "sut/replication_control.py", "sut/partition.py", "sut/log.py",
        "sut/cluster_control.py", "sut/controller.py", "sut/fetcher.py"}
    assert len(replaced) == 27
    assert kafka_time_to_find.kafkas_class(Bug.HWM_FROM_ISR_NOT_MAXIMAL_ISR) == "kafka.cluster.Partition"


def test_the_benchmark_switches_the_bug_on_in_kafkas_implementation():
    kafka_time_to_find = benchmark()
    found = kafka_time_to_find.measure(Bug.METADATA_BATCH_LAST_DELTA_ONLY, "kafka", 0, examples=100, steps=50,
                                       budget_s=300.0, reduce=False)   # a net: it stops at the find
    assert found["found"] and found["kind"] in ("divergence", "outcome", "enablement")
