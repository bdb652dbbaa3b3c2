"""The call log (``calls``) as the body of a JUnit test of Kafka's controller: each
request the bridge made, written as the call to Kafka's manager it is (the shim's
request methods, ``ReplicheckControllerShim``, do no more), its Kafka request built
in full (``render``), and the records it returned replayed at the offsets the
bridge replayed them at. A request that threw is written as ``assertThrows`` on
the exception and its message.

The test reads these names, set up by ``reproducers``' test template:
``controller`` (a ``ReplicheckControllerFixture``: its managers are read through
its fields, which a controller failover sets anew), the fixture's static members.
"""

from __future__ import annotations

from typing import Any, Optional

from .calls import Call
from .change_builder import registration_of
from .java import kafka
from .releases import has_api_change
from .render import JavaSource, int_array, long_array, message_expression, string_literal

#: shim method -> the ControllerResult's response type (None: a config change's map)
_RESPONSES = {
    "createTopic": "org.apache.kafka.common.message.CreateTopicsResponseData",
    "registerBroker": "org.apache.kafka.metadata.BrokerRegistrationReply",
    "amendRegistration": "org.apache.kafka.metadata.BrokerRegistrationReply",
    "heartbeat": "org.apache.kafka.metadata.BrokerHeartbeatReply",
    "fenceOneStaleBroker": "java.lang.Boolean",
    "alterPartition": "org.apache.kafka.common.message.AlterPartitionResponseData",
    "alterPartitionReassignment": "org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData",
    "alterTopicConfig": None,
    "alterClusterConfig": None,
    "updateElrFeature": "org.apache.kafka.common.requests.ApiError",
    "electUncleanLeaders": "java.lang.Boolean",
    "electPreferredLeader": "org.apache.kafka.common.message.ElectLeadersResponseData",
}
#: Periodic tasks: a run that returned no record changed nothing, and is left out.
_PERIODIC = frozenset({"fenceOneStaleBroker", "electUncleanLeaders"})


def source(controller: Any) -> JavaSource:
    """A ``JavaSource`` naming what the fixture holds: a broker's supported features,
    and the topic id ``controller`` (a ``KafkaQuorumController``) drew, which a run
    of the test draws again."""
    named = [(kafka().ControllerFixture.supportedFeatures(), "supportedFeatures()")]
    topic_id = controller.shim.topicId()
    if topic_id is not None:
        named.append((topic_id, "controller.topicId()"))
    return JavaSource(named=named)


#: The requests written the same on every release: shim method -> the Java call
#: ({request}: the local holding Kafka's request).
_SIMPLE_CALLS = {
    "heartbeat": "controller.heartbeat({request})",
    "fenceOneStaleBroker": "controller.replicationControl.maybeFenceOneStaleBroker()",
    "alterPartition": "controller.alterPartition({request})",
    "alterPartitionReassignment": "controller.replicationControl.alterPartitionReassignments({request})",
    "electUncleanLeaders": "controller.replicationControl.maybeElectUncleanLeaders()",
    "electPreferredLeader": "controller.replicationControl.electLeaders({request})",
}


def _invocation(call: Call, request: str, out: JavaSource, release: tuple[int, ...]) -> str:
    """The Java expression that makes ``call`` of Kafka's managers of ``release``."""
    m, a = call.method, call.args
    if m in _SIMPLE_CALLS:
        return _SIMPLE_CALLS[m].format(request=request)
    if m == "createTopic":
        out.use("org.apache.kafka.common.protocol.ApiKeys")
        return f"controller.replicationControl.createTopics(context(ApiKeys.CREATE_TOPICS), {request}, " \
               f"{out.use('java.util.Set')}.of(TOPIC){', false' if has_api_change(release, 'createTopics') else ''})"
    if m in ("registerBroker", "amendRegistration"):
        return f"controller.clusterControl.registerBroker({request}, {int(a[1])}L, controller.finalizedFeatures(), true)"
    if m in ("alterTopicConfig", "alterClusterConfig"):
        resource = out.use("org.apache.kafka.common.config.ConfigResource")
        entry = out.use("java.util.AbstractMap") + ".SimpleImmutableEntry"
        op = out.use("org.apache.kafka.clients.admin.AlterConfigOp")
        map_ = out.use("java.util.Map")
        target = "Type.TOPIC, TOPIC" if m == "alterTopicConfig" else 'Type.BROKER, ""'
        return (f"controller.configurationControl.incrementalAlterConfigs({map_}.of(\n"
                f"        new {resource}({resource}.{target}),\n"
                f"        {map_}.of({string_literal(a[0])}, new {entry}<>({op}.OpType.SET, {string_literal(a[1])}))),\n"
                f"    false{', false' if has_api_change(release, 'incrementalAlterConfigs') else ''})")
    if m == "updateElrFeature":
        return _update_elr_feature(bool(a[0]), out, release)
    raise ValueError(f"no Java for the controller request {m!r}")


def _update_elr_feature(enabled: bool, out: JavaSource, release: tuple[int, ...]) -> str:
    """``ConfigurationControlManager.updateFeatures`` of eligible.leader.replicas.version
    to 1 (UPGRADE) or 0 (SAFE_DOWNGRADE), as the shim's ``updateElrFeature`` calls it."""
    map_ = out.use("java.util.Map")
    version = out.use("org.apache.kafka.server.common.EligibleLeaderReplicasVersion")
    upgrade = out.use("org.apache.kafka.clients.admin.FeatureUpdate") + ".UpgradeType"
    level, kind = ("ELRV_1", "UPGRADE") if enabled else ("ELRV_0", "SAFE_DOWNGRADE")
    epoch = ", CLAIM_EPOCH" if has_api_change(release, "updateFeatures") else ""
    return (f"controller.configurationControl.updateFeatures(\n"
            f"        {map_}.of({version}.FEATURE_NAME, {version}.{level}.featureLevel()),\n"
            f"        {map_}.of({version}.FEATURE_NAME, {upgrade}.{kind}),\n"
            f"    false{epoch})")


def _result_type(call: Call, out: JavaSource) -> str:
    response = _RESPONSES[call.method]
    if response is None:   # alterTopicConfig, alterClusterConfig
        return (f"ControllerResult<{out.use('java.util.Map')}<"
                f"{out.use('org.apache.kafka.common.config.ConfigResource')}, "
                f"{out.use('org.apache.kafka.common.requests.ApiError')}>>")
    return f"ControllerResult<{out.use(response)}>"


def _records(result: Any) -> list[str]:
    return [str(r.message().getClass().getSimpleName()) for r in result.records()]


def call_statements(call: Call, n: int, out: JavaSource, release: tuple[int, ...]) -> list[str]:
    """The Java statements of ``call``, the ``n``-th of the test (its locals are
    suffixed ``n``), for Kafka ``release`` (``releases.API_CHANGES``); empty for a periodic
    task that did nothing."""
    if call.method == "expireSessions":
        alive = ", ".join(str(int(b)) for b in call.args[0])
        who = f"brokers {alive} heartbeat" if alive else "no broker heartbeats"
        return [f"controller.expireSessions({alive});   // the session timeout passes: {who}"]
    if call.method == "trackSession":
        return [f"controller.trackSession({int(call.args[0])});   // its first heartbeat once registered"]
    if call.method == "failOver":
        return ["controller.failOver();   // the active controller resigns: a standby that replayed the log activates"]
    if call.method == "failOverFromSnapshot":
        return [f"controller.failOverFromSnapshot({int(call.args[0])}L);   // the active controller resigns: one "
                "that restarted, and loaded a snapshot of the log, activates"]
    if call.method == "reportMetadataOffset":
        b, offset = int(call.args[0]), int(call.args[1])
        return [f"controller.reportMetadataOffset({b}, {offset}L);   // broker {b}'s heartbeat reports offset {offset}"]
    if call.method == "processBatchEndOffset":
        b, offset = int(call.args[0]), int(call.args[1])
        return [f"controller.processBatchEndOffset({b}, {offset}L);   // broker {b} is in controlled shutdown "
                f"until the active brokers reach {offset}"]
    if call.thrown is None and call.method in _PERIODIC and not list(call.result.records()):
        return []
    lines: list[str] = []
    request = f"request{n}"
    if call.request is not None:
        text = message_expression(call.request, out)
        lines.append(f"{out.name(call.request.getClass())} {request} = {text};")
    invocation = _invocation(call, request, out, release)
    if call.thrown is not None:
        return lines + _thrown(call.thrown, invocation, n, out)
    lines.append(f"{_result_type(call, out)} result{n} = {invocation};")
    if call.method == "alterPartition":
        lines.append(_alter_partition_answer(call.result, n, out))
    records = _records(call.result)
    if call.offsets:
        offsets = ", ".join(f"{o}L" for o in call.offsets)
        lines.append(f"controller.replay(result{n}, {offsets});   // {', '.join(records)}")
    elif records:
        lines.append(f"// not replayed: {', '.join(records)} (the bridge refused the change)")
    return lines


def _alter_partition_answer(result: Any, n: int, out: JavaSource) -> str:
    """The assertion of Kafka's answer to the partition of AlterPartition ``result``
    (``ReplicationControlManager.alterPartition``): its error, NONE when it was taken."""
    errors = out.use("org.apache.kafka.common.protocol.Errors")
    code = int(result.response().topics().get(0).partitions().get(0).errorCode())
    name = str(kafka().Errors.forCode(code).name())
    return (f"assertEquals({errors}.{name}.code(), result{n}.response().topics().get(0).partitions().get(0)"
            f".errorCode(), \"the AlterPartition's answer\");")


def _thrown(error: Any, invocation: str, n: int, out: JavaSource) -> list[str]:
    """``assertThrows`` of ``error``'s class around ``invocation``, and its message."""
    name = out.name(error.getClass())
    message: Optional[Any] = error.getMessage()
    lines = [f"{name} thrown{n} = assertThrows({name}.class,\n    () -> {invocation});"]
    if message is not None:
        lines.append(f"assertEquals({string_literal(message)}, thrown{n}.getMessage());")
    return lines


# ------------------------------------------------------------------ a broker's replica

def _boolean(value: Any) -> str:
    return "true" if value else "false"


def registration_expression(reg: Any, out: JavaSource) -> str:
    """Kafka's ``PartitionRegistration`` ``reg`` (as ``change_builder.registration_of``
    builds it) as the Java that builds it."""
    builder = out.use("org.apache.kafka.metadata.PartitionRegistration") + ".Builder"
    directory = out.use("org.apache.kafka.common.DirectoryId")
    recovery = out.use("org.apache.kafka.metadata.LeaderRecoveryState")
    return (f"new {builder}()\n    .setReplicas({int_array(reg.replicas)})"
            f".setDirectories({directory}.unassignedArray({len(reg.replicas)}))\n"
            f"    .setIsr({int_array(reg.isr)}).setRemovingReplicas({int_array(reg.removingReplicas)})"
            f".setAddingReplicas({int_array(reg.addingReplicas)})\n"
            f"    .setElr({int_array(reg.elr)}).setLastKnownElr({int_array(reg.lastKnownElr)})\n"
            f"    .setLeader({int(reg.leader)}).setLeaderRecoveryState({recovery}.{reg.leaderRecoveryState.name()})"
            f".setLeaderEpoch({int(reg.leaderEpoch)}).setPartitionEpoch({int(reg.partitionEpoch)})\n"
            f"    .build()")


def _process_fetch_response(fetcher: str, a: tuple) -> str:
    """The Java of ``KafkaPartition.process_fetch_response`` with arguments ``a``, on
    the fetcher variable ``fetcher``."""
    fetch_offset, leader_epoch, error, hwm, diverging, records = a
    epoch, end = (-1, -1) if diverging is None else diverging
    return (f"{fetcher}.processResponse({int(fetch_offset)}L, {int(leader_epoch)}, \"{error or 'NONE'}\", "
            f"{int(hwm)}L, {int(epoch)}, {int(end)}L, {long_array(r[0] for r in records)}, "
            f"{int_array(r[1] for r in records)}, {long_array(r[2] for r in records)})")


def _replica_invocation(call: Call, b: str, out: JavaSource) -> str:
    """The Java of ``call`` on broker variable ``b`` (a ``ReplicheckPartitionShim``):
    what ``partition.KafkaPartition``'s method of that name calls (its arguments
    logged in full, defaults applied)."""
    m, a = call.method, call.args
    option = out.use("scala.Option")
    fetcher = f"fetcher{call.broker}"   # the broker's ReplicheckFetcherShim, declared with it
    simple = {
        "lag": lambda: f"{b}.time().advance({int(a[0])}L)",
        "set_now_ms": lambda: f"{b}.time().setMilliseconds({int(a[0])}L)",
        "set_min_isr": lambda: f"{b}.setMinIsr({int(a[0])})",
        "append": lambda: f"{b}.appendToLeader({int(a[0])}L)",
        "fetch": lambda: f"{b}.fetch({int(a[0])}, {int(a[1])}L, {int(a[2])}, {int(a[3])}L, "
                         f"{-1 if a[4] is None else int(a[4])})",
        "maybe_shrink_isr": lambda: f"{b}.partition().maybeShrinkIsr()",
        "append_as_follower": lambda: f"{b}.appendAsFollower({long_array(r[0] for r in a[0])}, "
                                      f"{int_array(r[1] for r in a[0])}, {long_array(r[2] for r in a[0])}, {int(a[1])})",
        "update_high_watermark": lambda: f"{b}.log().maybeUpdateHighWatermark({int(a[0])}L)",
        "truncate_to": lambda: f"{b}.truncateTo({int(a[0])}L)",
        "flush": lambda: f"{b}.flush()",
        "start_fetcher": lambda: f"{fetcher} = {out.use('kafka.server.ReplicheckFetcherShim')}.start({b}, "
                                 f"{call.broker}, {int(a[0])}, {int(a[1])})",
        "send_fetch": lambda: f"{fetcher}.sendFetch()",
        "process_fetch_response": lambda: _process_fetch_response(fetcher, a),
        "defer_epoch_checkpoint_writes": lambda: f"{b}.deferEpochCheckpointWrites()",
        "write_epoch_checkpoint": lambda: f"{b}.writeEpochCheckpoint()",
        "unclean_shutdown": lambda: f"{b}.uncleanShutdown({_boolean(a[0])})",
        "restart": lambda: f"{b}.restart({int(a[0])}L)",
        "set_broker": lambda: f"{b}.setBroker({int(a[0])}, {'null' if a[1] is None else f'{int(a[1])}L'}, "
                              f"{_boolean(a[2])}, {_boolean(a[3])})",
    }
    if m in simple:
        return simple[m]()
    if m in ("make_leader", "make_follower"):
        kind = "makeLeader" if m == "make_leader" else "makeFollower"
        reg = registration_expression(registration_of(a[0]), out).replace("\n", "\n    ")
        return f"{b}.partition().{kind}(\n    {reg},\n    false, null, {option}.apply(PARTITION_TOPIC_ID), " \
               f"{option}.empty())"
    if m == "answer":
        isr = ", ".join(str(i) for i in sorted(a[0]))
        return (f"{b}.submitted().removeFirst().future.complete(new {out.use('org.apache.kafka.metadata.LeaderAndIsr')}("
                f"{call.broker}, {int(a[1])}, {out.use('java.util.List')}.of({isr}), "
                f"{out.use('org.apache.kafka.metadata.LeaderRecoveryState')}.RECOVERED, {int(a[2])}))")
    if m == "answer_error":
        errors = out.use("org.apache.kafka.common.protocol.Errors")
        return f"{b}.submitted().removeFirst().future.completeExceptionally({errors}.{a[0]}.exception())"
    raise ValueError(f"no Java for the replica call {m!r}")


def replica_statements(call: Call, n: int, out: JavaSource) -> list[str]:
    """The Java statements of ``call``, the ``n``-th of the test, on a broker's
    replica (``broker{N}``, a ``ReplicheckPartitionShim``: the bridge's own fixture
    of Kafka's ``Partition`` over ``UnifiedLog``)."""
    b = f"broker{call.broker}"
    if call.method == "create":
        shim = out.use("kafka.cluster.ReplicheckPartitionShim")
        broker, epoch, min_isr = (int(x) for x in call.args)
        files = out.use("java.nio.file.Files")
        fetcher = out.use("kafka.server.ReplicheckFetcherShim")
        return [f"{shim} {b} = new {shim}({files}.createDirectories(dir.resolve(\"{b}\")).toFile(), TOPIC_NAME, "
                f"PARTITION_TOPIC_ID, "
                f"{broker}, {min_isr}, new {shim}.ManualTime());", f"{b}.setBrokerEpoch({epoch}L);",
                f"{fetcher} fetcher{broker} = null;   // the follower's fetcher, once one starts"]
    if call.method == "controlled_shutdown":
        return [f"{b}.controlledShutdown();"]   # the shim prepares the active segment where the release does
    invocation = _replica_invocation(call, b, out)
    if call.thrown is not None:
        return _thrown(call.thrown, invocation, n, out)
    return [f"{invocation};"]
