"""JUnit reproducers (``reproducers``, ``replicheck reproduce``): the requests the
bridge made of Kafka's controller, written as a standalone JUnit 5 test of Kafka's
classes. The generated text pins what each finding's test asserts; two tests compile
and run the Java with Maven: a finding's reproducer passes on the pinned release, and
one generated from a fresh campaign row whose disagreement was planted in the bridge
fails at the row's step, Kafka's value beside the model's."""

from __future__ import annotations

import re
import shutil

import attrs
import pytest
from click.testing import CliRunner
from hypothesis import settings

from campaign.record import run_machine
from check.failures import SutDiverged
from check.machine import machine_for
from check.subject import Subject
import kafka_bridge
from kafka_bridge.controller import KafkaQuorumController
from kafka_bridge.render import JavaSource, message_expression
from model import KAFKA
from replicheck_cli.commands import main
from reproducers.findings import FINDINGS, finding
from reproducers.generate import NotReproducible, generate
from store.reader import read_counterexamples
from store.writer import CorpusWriter

MAVEN = pytest.mark.skipif(shutil.which("mvn") is None, reason="Maven (mvn) is needed to build the reproducers")


def _of(number: int, release: str = "4.4.0"):
    f = finding(number)
    return generate(f.config, f.trace, f.name, f.title, f.shows, release, f.replicas)


def test_a_kafka_message_is_written_as_the_java_that_builds_it():
    """A setter per field that is not the default, nested structs and lists, the
    short ones on one line."""
    from jpype import JClass
    kafka_bridge.start()
    data = "org.apache.kafka.common.message.AlterPartitionRequestData"
    request = JClass(data)().setBrokerId(2).setBrokerEpoch(7)
    partition = JClass(data + "$PartitionData")().setLeaderEpoch(1).setPartitionEpoch(3)
    as_list = JClass("java.util.List").of
    partition.setNewIsrWithEpochs(as_list(JClass(data + "$BrokerState")().setBrokerId(2).setBrokerEpoch(7)))
    request.setTopics(as_list(JClass(data + "$TopicData")().setPartitions(as_list(partition))))
    out = JavaSource()
    assert message_expression(request, out) == (
        "new AlterPartitionRequestData()\n"
        "    .setBrokerId(2)\n"
        "    .setBrokerEpoch(7L)\n"
        "    .setTopics(List.of(\n"
        "        new AlterPartitionRequestData.TopicData()\n"
        "            .setPartitions(List.of(\n"
        "                new AlterPartitionRequestData.PartitionData()\n"
        "                    .setLeaderEpoch(1)\n"
        "                    .setNewIsrWithEpochs(List.of(\n"
        "                        new AlterPartitionRequestData.BrokerState().setBrokerId(2).setBrokerEpoch(7L)))\n"
        "                    .setPartitionEpoch(3)))))")
    assert out.imports == {data, "java.util.List"}


def test_finding_5s_reproducer_expects_kafkas_exception_at_the_registration():
    r = _of(5)
    assert (r.expected, r.steps) == ("pass", len(finding(5).trace))
    registration = r.text.split("// 6. StartBroker(broker=2)")[1]
    assert "BrokerRegistrationRequestData request" in registration and ".setBrokerId(2)" in registration
    assert "IllegalArgumentException thrown" in registration
    assert re.search(r"assertThrows\(IllegalArgumentException\.class,\s+\(\) -> controller\.clusterControl\.registerBroker\(",
                     registration)
    assert 'assertEquals("Replica 1 is not assigned to this partition.", thrown' in registration
    assert "// 5. UncleanShutdown(broker=2, lossy=False): no request to the controller" in r.text
    assert "replicheck" not in r.text.split("package org.apache.kafka.controller;")[1].split("/**")[0]   # imports


def test_finding_7s_reproducer_replays_the_same_change_twice_and_pins_the_epoch():
    """The registration returns two PartitionChangeRecords, replayed at consecutive
    offsets; the partition epoch asserted is the one they leave (Kafka numbers from 0)."""
    r = _of(7)
    last = r.text.split("// 8. StartBroker(broker=2)")[1]
    assert re.search(r"controller\.replay\(result\d+, 18L, 19L, 20L\);   // PartitionChangeRecord, "
                     r"PartitionChangeRecord, RegisterBrokerRecord", last)
    assert 'assertEquals(7, partition.partitionEpoch, "partition epoch");' in last


def test_finding_2s_reproducer_drives_kafkas_partition_and_pins_the_hwm_past_the_follower():
    """Leader 1's makeLeader takes a registration of the partition epoch it already
    has (step 27); the test ends with leader 1's HWM at 4 while ISR member 2's log
    ends at 2."""
    r = _of(2)
    assert r.replicas and r.steps == 31
    step27 = r.text.split("// 27. ReplicateMetadata(broker=1, count=1)")[1].split("// 28.")[0]
    assert "broker1.partition().makeLeader(" in step27 and ".setIsr(new int[] {1, 3})" in step27
    assert ".setPartitionEpoch(2)" in step27
    assert 'assertEquals(4L, broker1.log().highWatermark(), "broker 1\'s HWM");' in r.text
    assert 'assertEquals(2L, broker2.log().logEndOffset(), "broker 2\'s log end offset");' in r.text
    assert 'assertEquals(Set.of(1, 2, 3), set(partition.isr), "ISR");' in r.text
    assert r.text.count("setMilliseconds(") < 10   # the glue's clock settings, only where they change it


def test_finding_1s_reproducer_pins_the_elected_empty_log_beside_the_one_holding_the_write():
    """Leader 1, elected with an empty log; broker 2, stopped, holds the write in its
    files (read back at its shutdown)."""
    r = _of(1)
    assert 'assertEquals(1, partition.leader, "leader");' in r.text
    assert 'assertEquals(0L, broker1.log().logEndOffset(), "broker 1\'s log end offset");' in r.text
    assert 'assertEquals(1L, broker2.log().logEndOffset(), "broker 2\'s log end offset");' in r.text
    assert "broker1.uncleanShutdown(true);" in r.text and "broker2.uncleanShutdown(false);" in r.text


def test_a_controller_findings_reproducer_leaves_the_replicas_out():
    r = _of(5)
    assert not r.replicas and "ReplicheckPartitionShim" not in r.text


def test_calls_are_written_for_the_release_they_run_on():
    """Before 4.3.0, createTopics and incrementalAlterConfigs take one boolean fewer."""
    new, old = _of(7, "4.4.0").text, _of(7, "4.2.0").text
    assert "Set.of(TOPIC), false);" in new and "Set.of(TOPIC));" in old
    assert "    false, false);" in new and "    false);" in old and "    false, false);" not in old
    assert "Apache Kafka 4.2.0's controller managers" in old


def test_a_cluster_level_config_change_is_written_for_the_default_resource():
    """AlterClusterMinIsr is IncrementalAlterConfigs of resource BROKER with the empty
    name; Kafka answers with the ConfigRecord and a ClearElrRecord, replayed, and the
    ELR it cleared is asserted empty."""
    from model import AlterClusterMinIsr, Config, FenceBroker
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    r = generate(config, (FenceBroker(3), FenceBroker(2), AlterClusterMinIsr(1)), "ReplicheckClusterMinIsrTest",
                 "a cluster-level MinISR", "the ELR cleared", replicas=False)
    step = r.text.split("// 3. AlterClusterMinIsr(min_isr=1)")[1]
    assert 'new ConfigResource(ConfigResource.Type.BROKER, ""),' in step
    assert 'Map.of("min.insync.replicas", new AbstractMap.SimpleImmutableEntry<>(AlterConfigOp.OpType.SET, "1"))' \
        in step
    assert re.search(r"// ConfigRecord, ClearElrRecord", step)
    assert 'assertEquals(Set.of(), set(partition.elr), "ELR");' in step


def test_an_elr_feature_update_is_written_as_kafkas_update_features():
    """UpdateElrFeature is ConfigurationControlManager.updateFeatures: a downgrade
    (SAFE_DOWNGRADE to ELRV_0) answered with the FeatureLevelRecord alone, an upgrade
    with the cluster-level min.insync.replicas first; the claimed epoch is passed
    from 4.1.0 on."""
    from model import Config, FenceBroker, UpdateElrFeature
    config = Config(brokers=(1, 2, 3), assignment=(1, 2, 3), min_isr=2, profile=KAFKA)
    trace = (FenceBroker(3), FenceBroker(2), UpdateElrFeature(False), UpdateElrFeature(True))
    texts = {v: generate(config, trace, "ReplicheckElrFeatureTest", "the ELR feature", "switched off and on",
                         kafka_version=v, replicas=False).text for v in ("4.4.0", "4.0.0")}
    down, up = texts["4.4.0"].split("// 3. UpdateElrFeature(enabled=False)")[1].split("// 4. UpdateElrFeature")
    assert "EligibleLeaderReplicasVersion.ELRV_0.featureLevel()" in down and "UpgradeType.SAFE_DOWNGRADE" in down
    assert re.search(r"// FeatureLevelRecord\n", down)
    assert "UpgradeType.UPGRADE" in up and re.search(r"// ConfigRecord, FeatureLevelRecord\n", up)
    assert "false, CLAIM_EPOCH);" in up and "CLAIM_EPOCH" not in texts["4.0.0"]


def test_a_disagreement_outside_the_asserted_state_is_not_reproducible(monkeypatch):
    """A difference in no state a reproducer asserts (here a clock planted in the
    observation): the generator says so rather than write a test that would pass."""
    from sut import Cluster
    observe = Cluster.observe
    monkeypatch.setattr(Cluster, "observe", lambda self: attrs.evolve(observe(self), now_ms=observe(self).now_ms + 1))
    f = finding(4)
    with pytest.raises(NotReproducible, match="not in the state a reproducer asserts"):
        generate(f.config, f.trace, f.name, f.title, f.shows)


def test_every_finding_has_a_reproducer_that_expects_to_pass():
    """Kafka's code agrees with the model along every finding's trace (or throws)."""
    assert [(f.number, _of(f.number).expected) for f in FINDINGS] == [(f.number, "pass") for f in FINDINGS]


@MAVEN
@pytest.mark.system  # Maven builds and runs JUnit
def test_findings_reproducers_compile_and_pass_on_the_pinned_release(tmp_path):
    """Finding 5's (Kafka's controller alone) and finding 2's (Kafka's Partition too)."""
    out = tmp_path / "reproducers"
    result = CliRunner().invoke(main, ["reproduce", "--finding", "5", "--finding", "2", "--out", str(out), "--run"])
    assert result.exit_code == 0, result.output
    assert re.search(r"ReplicheckFinding5Test\s+pass\s+passed", result.output), result.output
    assert re.search(r"ReplicheckFinding2Test\s+pass\s+passed", result.output), result.output
    assert (out / "src" / "test" / "java" / "kafka" / "cluster" / "ReplicheckPartitionShim.java").exists()


def _planted_row(tmp_path, monkeypatch) -> dict:
    """A campaign row of Kafka's code with a disagreement planted in the bridge: every
    reassignment reaches Kafka's controller with its target reversed."""
    reassign = KafkaQuorumController._reassign
    monkeypatch.setattr(KafkaQuorumController, "_reassign",
                        lambda self, target: reassign(self, None if target is None else tuple(reversed(target))))
    machine = machine_for(Subject(profile=KAFKA, implementation="kafka", check_properties=False),
                          name="PlantedReassignment")
    writer = CorpusWriter(tmp_path / "corpus", run_id="planted", worker="main")
    with pytest.raises(SutDiverged):
        run_machine(machine, settings(max_examples=200, stateful_step_count=30, derandomize=True, database=None,
                                      deadline=None), writer=writer, test_id="planted::reassignment")
    writer.flush()
    (row,) = read_counterexamples(tmp_path / "corpus").rows
    return row


@MAVEN
@pytest.mark.system  # Maven builds and runs JUnit
def test_a_reproducer_of_a_fresh_disagreement_fails_at_the_rows_step(tmp_path, monkeypatch):
    row = _planted_row(tmp_path, monkeypatch)
    out = tmp_path / "reproducer"
    result = CliRunner().invoke(main, ["reproduce", str(tmp_path / "corpus"), "--id", row["counterexample_id"],
                                       "--out", str(out), "--run"])
    assert result.exit_code == 0, result.output   # it failed, as a disagreement's reproducer should
    (line,) = [x for x in result.output.splitlines() if x.startswith("ReplicheckRow")]
    assert re.search(r"\sfail\s+failed\s+replicas ==> ", line), line
    (test,) = (out / "src" / "test" / "java" / "org" / "apache" / "kafka" / "controller").glob("ReplicheckRow*.java")
    text = test.read_text()
    assert f"// {row['step_count']}. Reassign(" in text or "Reassign(" in text.rsplit("// What the row shows", 1)[0]
    assert f"Kafka's code disagrees with the model at step {row['step_count']}" in text
