"""Kafka's own code of releases other than the pinned one: the shims adapted and
built per release (``kafka_bridge.releases``, ``make kafka-jars KAFKA_VERSION=X``),
the implementation ``kafka@X`` run in a process of its own, and the changes
Kafka made between releases (``kafka_bridge.changes``), each shown on the last
release without it and the first with it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engines import require_kafka
from kafka_bridge import releases
from kafka_bridge.changes import CHANGES, known_before
from model import KAFKA_RELEASE

ROOT = Path(__file__).resolve().parents[2]
#: The releases the walks run on: Kafka's controller under the SUT's replicas (before
#: the ``Partition`` shim's first release; 4.0.x's epoch cache answers ``latestEpoch``
#: with an ``OptionalInt``), and with Kafka's ``Partition`` and fetcher: taking the
#: ZooKeeper-era ``LeaderAndIsrRequest.PartitionState`` (4.1.x) and the registration.
CONTROLLER_ONLY, PARTITION_STATE, WITH_PARTITION = "4.0.2", "4.1.0", "4.3.0"

#: Run in a process of its own (one process runs one release's classes): argv[1] the
#: release; argv[2] a change's JIRA, whose trace is stepped in lockstep with Kafka's
#: code, or "walks": four of the pinned release's seeded walks (test_kafka_replica's
#: "rf3-unclean"), every step compared. Prints what each step said.
_LOCKSTEP = """
import json, sys
import kafka_bridge
from check.lockstep import LockStep
from check.random_walk import random_walk
from check.subject import Subject
from kafka_bridge.changes import CHANGES
from model import KAFKA, Config
release, what = sys.argv[1], sys.argv[2]
name = "kafka@" + release

def run(config, actions, known=frozenset()):
    lockstep = LockStep(Subject.at(config, implementation=name, check_properties=False, known=known))
    return [lockstep.step(a) for a in actions]

if what == "walks":
    walk = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, profile=KAFKA, unclean_leader_election=True)
    from campaign.known import parse_known
    from kafka_bridge.changes import known_before
    known = parse_known(known_before(release))   # past the changes after the release: a run goes on there
    said = [[len(steps), sum(v is not None for v in steps)]
            for steps in (run(walk, [a for a, _ in random_walk(walk, 300, seed=seed, policy="weighted")], known)
                          for seed in range(4))]
else:
    [change] = [c for c in CHANGES if c.issue == what]
    said = [None if v is None else v.signature for v in run(change.config, change.trace)]
print(json.dumps({"release": kafka_bridge.version(),
                  "partition": "KafkaReplica" in repr(kafka_bridge.components()), "said": said}))
"""


def _run(release: str, what: str) -> dict:
    require_kafka(release)
    done = subprocess.run([sys.executable, "-c", _LOCKSTEP, release, what], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.system
@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c.issue)
def test_a_change_disagrees_on_the_last_release_without_it_and_agrees_from_its_first(change):
    before, after = _run(change.last_without, change.issue), _run(change.since, change.issue)
    assert before["release"] == change.last_without and after["release"] == change.since
    *quiet, last = before["said"]
    assert quiet == [None] * (len(change.trace) - 1) and last in change.signatures, before
    assert after["said"] == [None] * len(change.trace), after


@pytest.mark.system
@pytest.mark.parametrize("release, partition", [(CONTROLLER_ONLY, False), (PARTITION_STATE, True),
                                                (WITH_PARTITION, True)])
def test_seeded_walks_agree_on_an_older_release_with_every_part_in_the_loop(release, partition):
    """Kafka's controller and epoch cache (4.0.2: the SUT's replicas; 4.1.0 and 4.3.0:
    Kafka's ``Partition`` and fetcher too), every step compared, past the changes after
    the release (``known_before``): what is left is the bridge reading that release."""
    assert _run(release, "walks") == {"release": release, "partition": partition, "said": [[300, 0]] * 4}


def test_the_system_tests_fetch_the_releases_they_run():
    """``make test-system`` fetches each release the tests above run (KAFKA_OLDER)."""
    line = next(l for l in (ROOT / "Makefile").read_text().splitlines() if l.startswith("KAFKA_OLDER :="))
    needed = {r for c in CHANGES for r in (c.last_without, c.since)}
    needed |= {CONTROLLER_ONLY, PARTITION_STATE, WITH_PARTITION}
    assert sorted(line.split(":=")[1].split(), key=releases.release) == sorted(needed, key=releases.release)


def test_a_campaign_on_a_release_knows_the_changes_after_it():
    from campaign.known import parse_known
    assert parse_known(known_before("4.0.0")) == frozenset(sig for c in CHANGES for sig in c.signatures)
    assert "KAFKA-19383" not in known_before("4.0.1") and "KAFKA-19130" in known_before("4.0.1")
    assert "KAFKA-19130" not in known_before("4.1.0") and "KAFKA-19975" in known_before("4.1.0")
    assert known_before(KAFKA_RELEASE).splitlines()[1:] == []


def test_the_pinned_release_is_the_model_s():
    assert releases.PINNED == KAFKA_RELEASE == releases.RELEASES[-1]
    pom = (ROOT / "kafka_bridge" / "pom.xml").read_text()
    assert f"<kafka.version>{KAFKA_RELEASE}</kafka.version>" in pom


def test_every_source_change_is_in_the_shims_it_adapts():
    """A shim edited so that a change no longer matches would compile against the
    pinned release and break on the older ones without a word: each change's text
    must be found in the shims."""
    text = "".join((releases.JAVA / path).read_text() for path in releases.SHIMS)
    for since, new, old in releases.SOURCE_CHANGES:
        assert new in text, (since, new)


def test_a_release_s_sources_are_the_pinned_ones_adapted(tmp_path):
    assert releases.adapt("anything", KAFKA_RELEASE) == "anything"
    written = releases.write_sources(CONTROLLER_ONLY, tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(releases.CONTROLLER_SHIMS)
    fixture = (tmp_path / releases.CONTROLLER_SHIMS[0]).read_text()
    assert "org.apache.kafka.common.utils.LogContext;" in fixture and "utils.internals" not in fixture
    shim = (tmp_path / releases.CONTROLLER_SHIMS[1]).read_text()
    assert "request, Set.of(TOPIC))" in shim and "incrementalAlterConfigs(Map.of(resource, ops), false)" in shim
    assert releases.has_partition(WITH_PARTITION) and releases.has_partition(PARTITION_STATE)
    assert not releases.has_partition(CONTROLLER_ONLY)


@pytest.mark.parametrize("version, message", [
    ("3.9.0", "kafka version '3.9.0': allowed are 4.0.0, 4.0.1"),
    ("4.x", "kafka version '4.x': allowed are 4.0.0"),
])
def test_a_release_the_bridge_is_not_built_for_is_named_with_the_allowed_ones(version, message):
    with pytest.raises(releases.UnknownRelease, match=re.escape(message)):
        releases.check(version)


def test_a_process_running_one_release_refuses_another():
    """A row of another release replayed here (``--replay-corpus``: rows of several
    releases on one worker) fails naming why, rather than running on this one's."""
    import kafka_bridge
    from check.implementations import named
    from model import KAFKA, Config
    require_kafka()
    kafka_bridge.start()
    kafka_bridge.use(KAFKA_RELEASE)   # the one it runs: nothing changes
    refused = re.escape(f"this process runs Kafka {KAFKA_RELEASE}'s classes: Kafka {WITH_PARTITION}'s need a "
                        f"process of their own")
    with pytest.raises(ValueError, match=refused):
        kafka_bridge.use(WITH_PARTITION)
    with pytest.raises(ValueError, match=refused):
        named(f"kafka@{WITH_PARTITION}")(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=1, profile=KAFKA))
    assert kafka_bridge.version() == KAFKA_RELEASE


@pytest.mark.system
def test_a_corpus_of_two_releases_replays_in_one_process(tmp_path):
    """``pytest --replay-corpus`` without xdist, one process: the row of the pinned
    release runs here (its JVM starts with the pinned release's classes), the row of
    another release in a Python process of its own (``campaign.regression.
    check_regression_elsewhere``), where it once failed with "need a process of their
    own". Both are judged by the regression rule alike: finding 12's trace, recorded
    as a property failure of the correct protocol, fails again on each release."""
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    from corpus_support import rows_for, run_pytest, write_corpus
    from reproducers.findings import finding
    require_kafka(WITH_PARTITION)
    f = finding(12)
    (row,) = rows_for(f.trace, f.config)
    rows = [dict(row, implementation="kafka", counterexample_id="a" * 64),
            dict(row, implementation=f"kafka@{WITH_PARTITION}", counterexample_id="b" * 64)]
    write_corpus(tmp_path / "corpus", rows)
    done = run_pytest(tmp_path, "-p", "no:xdist", "--replay-corpus", str(tmp_path / "corpus"), "-q", "-rf")
    assert "need a process of their own" not in done.stdout, done.stdout[-3000:]
    failed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED corpus::")}
    assert failed == {"corpus::ValidPartitionMetadata[correct-aaaaaaaaaaaa]",
                      "corpus::ValidPartitionMetadata[correct-bbbbbbbbbbbb]"}, done.stdout[-3000:]
    # The failure sections only: with CI set, pytest does not shorten the summary lines,
    # which then repeat each message.
    sections = done.stdout.split("short test summary info")[0]
    assert sections.count("a counterexample of the correct protocol fails again: ValidPartitionMetadata") == 2, \
        done.stdout[-3000:]
