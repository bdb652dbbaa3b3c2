/*
 * replicheck's bridge to Apache Kafka's controller (Apache License 2.0).
 */
package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Apache Kafka's own controller managers for one partition ({@link ReplicheckControllerFixture}),
 * driven request by request: {@link ClusterControlManager} (broker registration,
 * heartbeats, fencing) and {@link ReplicationControlManager} (the partition:
 * AlterPartition, reassignment, elections), with the {@link FeatureControlManager} and
 * {@link ConfigurationControlManager} they read.
 *
 * <p>Each request returns the {@link ControllerResult} Kafka's manager returns; nothing
 * is replayed until the caller calls {@link #replay(ApiMessageAndVersion, long)} with
 * the record's offset in its metadata log (as QuorumController replays each record it
 * appends). A second instance replaying the same records reaches the same state
 * (Kafka's standby controllers work so): {@link #activate()} then starts its
 * heartbeat manager. Each request method keeps the Kafka request it built
 * ({@link #lastRequest()}): what a reproducer writes out.
 *
 * <p>Time is a manual clock: sessions expire only when {@link #expireSessions} moves it
 * past the session timeout.
 */
public final class ReplicheckControllerShim {
    public static final long SESSION_TIMEOUT_MS = ReplicheckControllerFixture.SESSION_TIMEOUT_MS;
    public static final String CLUSTER_ID = ReplicheckControllerFixture.CLUSTER_ID;
    public static final String TOPIC = ReplicheckControllerFixture.TOPIC;

    private final ReplicheckControllerFixture fixture = new ReplicheckControllerFixture();
    private final int minIsr;
    private final boolean uncleanLeaderElection;
    private ApiMessage lastRequest;

    public ReplicheckControllerShim(int minIsr, boolean uncleanLeaderElection) {
        this.minIsr = minIsr;
        this.uncleanLeaderElection = uncleanLeaderElection;
    }

    /** The Kafka request the last request method built (null: it builds none, as for a
     *  config change or a periodic task). Set before the manager is called, so it is the
     *  request of a call that threw too. */
    public ApiMessage lastRequest() {
        return lastRequest;
    }

    /** The feature levels of a KRaft cluster with ELR on (bootstrap; not in the partition's log). */
    public List<ApiMessageAndVersion> bootstrapRecords() {
        return ReplicheckControllerFixture.bootstrapRecords();
    }

    /** Start the heartbeat manager (the controller becomes active), after the bootstrap records. */
    public void activate() {
        fixture.clusterControl.activate();
    }

    /** Replay one record at {@code offset} (QuorumController.replay's dispatch). */
    public void replay(ApiMessageAndVersion record, long offset) {
        fixture.replay(record, offset);
    }

    /** Every record replayed so far, with its offset, in order (what a standby replays). */
    public List<Map.Entry<ApiMessageAndVersion, Long>> replayed() {
        return fixture.replayed();
    }

    /** A controller failover ({@link ReplicheckControllerFixture#failOver}): a standby's
     *  managers, which replayed every record, become active. */
    public void failOver() {
        lastRequest = null;
        fixture.failOver();
    }

    /** A controller failover to one that loaded a snapshot of the log whose last record is
     *  at {@code lastOffset} ({@link ReplicheckControllerFixture#failOverFromSnapshot}). */
    public void failOverFromSnapshot(long lastOffset) {
        lastRequest = null;
        fixture.failOverFromSnapshot(lastOffset);
    }

    /** How many replayed records the active managers loaded as a snapshot; -1: none. */
    public int snapshotAt() {
        return fixture.snapshotAt();
    }

    /** The last offset of the snapshot the active managers loaded; -1: none. */
    public long snapshotOffset() {
        return fixture.snapshotOffset();
    }

    private static ControllerRequestContext context(ApiKeys api) {
        return ReplicheckControllerFixture.context(api);
    }

    // ------------------------------------------------------------------ topic

    /** CreateTopics of the one topic with one partition on {@code replicas}, MinISR and
     *  unclean leader election as topic configs. Throws if Kafka answers an error. */
    public ControllerResult<CreateTopicsResponseData> createTopic(int[] replicas) {
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic()
            .setName(TOPIC).setNumPartitions(-1).setReplicationFactor((short) -1);
        List<Integer> ids = new ArrayList<>();
        for (int r : replicas) ids.add(r);
        topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment()
            .setPartitionIndex(0).setBrokerIds(ids));
        topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig()
            .setName("min.insync.replicas").setValue(Integer.toString(minIsr)));
        topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig()
            .setName("unclean.leader.election.enable").setValue(Boolean.toString(uncleanLeaderElection)));
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(topic);
        lastRequest = request;
        ControllerResult<CreateTopicsResponseData> result =
            fixture.replicationControl.createTopics(context(ApiKeys.CREATE_TOPICS), request, Set.of(TOPIC), false);
        CreateTopicsResponseData.CreatableTopicResult answer = result.response().topics().find(TOPIC);
        if (answer.errorCode() != Errors.NONE.code()) {
            throw new IllegalStateException("CreateTopics failed: " + Errors.forCode(answer.errorCode()) + " "
                + answer.errorMessage());
        }
        return result;
    }

    /** The topic's id (drawn at random by CreateTopics), or null before it is created. */
    public Uuid topicId() {
        return fixture.topicId();
    }

    /** The partition's registration, or null before it is created. */
    public PartitionRegistration partition() {
        return fixture.partition();
    }

    // ---------------------------------------------------------------- brokers

    /** The broker's registration, or null when it never registered. */
    public BrokerRegistration registration(int brokerId) {
        return fixture.clusterControl.registration(brokerId);
    }

    /** Whether the heartbeat manager tracks a session of the broker's registered broker
     *  epoch that has not expired (BrokerHeartbeatManager.hasValidSession). */
    public boolean hasSession(int brokerId) {
        BrokerRegistration registration = fixture.clusterControl.registration(brokerId);
        return registration != null
            && fixture.clusterControl.heartbeatManager().hasValidSession(brokerId, registration.epoch());
    }

    /** The broker's contact time renewed for its registered broker epoch (the first
     *  heartbeat a broker sends once registered: QuorumController.processBrokerHeartbeat
     *  tracks it before anything else). */
    public void trackSession(int brokerId) {
        lastRequest = null;
        fixture.trackSession(brokerId);
    }

    /** The offset of the broker's latest RegisterBrokerRecord, -1 when none. */
    public long registerBrokerRecordOffset(int brokerId) {
        return fixture.registerBrokerRecordOffset(brokerId);
    }

    private static Uuid directory(int brokerId) {
        return new Uuid(0x5265706cL, 1000L + brokerId);   // one log directory per broker, kept across restarts
    }

    /**
     * BrokerRegistration of a new incarnation of {@code brokerId} (a process restart),
     * presenting {@code previousBrokerEpoch} (-1: no clean-shutdown marker) and
     * supporting every feature at Kafka's default ranges, with broker epoch
     * {@code newBrokerEpoch} (QuorumController passes the next write offset).
     * ClusterControlManager.registerBroker; throws as it does (a duplicate
     * registration while the previous incarnation's session is valid).
     */
    public ControllerResult<BrokerRegistrationReply> registerBroker(int brokerId, long newBrokerEpoch,
                                                                  long previousBrokerEpoch) {
        // new per registration, and in a copy
        return register(brokerId, new Uuid(brokerId + 1L, newBrokerEpoch + 1), newBrokerEpoch, previousBrokerEpoch);
    }

    /**
     * BrokerRegistration of the incarnation of {@code brokerId} the controller holds, sent
     * again (BrokerLifecycleManager.resendBrokerRegistration): ClusterControlManager.
     * registerBroker amends the registration (broker epoch, fencing and controlled
     * shutdown kept). {@code newBrokerEpoch}: what QuorumController passes (the next
     * write offset), which an amendment does not use.
     */
    public ControllerResult<BrokerRegistrationReply> amendRegistration(int brokerId, long newBrokerEpoch) {
        return register(brokerId, fixture.clusterControl.registration(brokerId).incarnationId(), newBrokerEpoch, -1L);
    }

    private ControllerResult<BrokerRegistrationReply> register(int brokerId, Uuid incarnationId, long newBrokerEpoch,
                                                               long previousBrokerEpoch) {
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData()
            .setBrokerId(brokerId)
            .setClusterId(CLUSTER_ID)
            .setIncarnationId(incarnationId)
            .setPreviousBrokerEpoch(previousBrokerEpoch)
            .setLogDirs(List.of(directory(brokerId)));
        request.listeners().add(new BrokerRegistrationRequestData.Listener()
            .setName("PLAINTEXT").setHost("localhost").setPort(9092 + brokerId).setSecurityProtocol((short) 0));
        request.setFeatures(ReplicheckControllerFixture.supportedFeatures());
        lastRequest = request;
        return fixture.clusterControl.registerBroker(request, newBrokerEpoch, fixture.finalizedFeatures(), true);
    }

    /**
     * A BrokerHeartbeat (QuorumController.processBrokerHeartbeat: the contact time is
     * tracked, then ReplicationControlManager.processBrokerHeartbeat). The controlled
     * shutdown offset is set apart ({@link #processBatchEndOffset}), once the caller
     * knows where the heartbeat's records were replayed.
     */
    public ControllerResult<BrokerHeartbeatReply> heartbeat(int brokerId, long brokerEpoch, long currentMetadataOffset,
                                                            boolean wantFence, boolean wantShutDown) {
        BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData()
            .setBrokerId(brokerId).setBrokerEpoch(brokerEpoch).setCurrentMetadataOffset(currentMetadataOffset)
            .setWantFence(wantFence).setWantShutDown(wantShutDown);
        lastRequest = request;
        return fixture.heartbeat(request);
    }

    /** {@link ReplicheckControllerFixture#processBatchEndOffset}. */
    public void processBatchEndOffset(int brokerId, long offset) {
        lastRequest = null;
        fixture.processBatchEndOffset(brokerId, offset);
    }

    /** {@link ReplicheckControllerFixture#reportMetadataOffset}. */
    public void reportMetadataOffset(int brokerId, long offset) {
        lastRequest = null;
        fixture.reportMetadataOffset(brokerId, offset);
    }

    /** {@link ReplicheckControllerFixture#controlledShutdownOffset}. */
    public long controlledShutdownOffset(int brokerId) {
        return fixture.controlledShutdownOffset(brokerId);
    }

    /** {@link ReplicheckControllerFixture#controlledShutdownWaitsFor} (changes nothing). */
    public int controlledShutdownWaitsFor(int brokerId, int[] running, long[] offsets) {
        return fixture.controlledShutdownWaitsFor(brokerId, running, offsets);
    }

    /** {@link ReplicheckControllerFixture#adoptHeartbeats} from {@code other}'s fixture. */
    public void adoptHeartbeats(ReplicheckControllerShim other) {
        fixture.adoptHeartbeats(other.fixture);
    }

    /**
     * Time passes beyond the session timeout while every broker in {@code alive} keeps
     * heartbeating (its contact time is renewed); every other session expires, and
     * {@link #fenceOneStaleBroker()} then fences their brokers one at a time.
     */
    public void expireSessions(int[] alive) {
        lastRequest = null;
        fixture.expireSessions(alive);
    }

    /** ReplicationControlManager.maybeFenceOneStaleBroker: the response is false once no
     *  session is expired. */
    public ControllerResult<Boolean> fenceOneStaleBroker() {
        lastRequest = null;
        return fixture.replicationControl.maybeFenceOneStaleBroker();
    }

    // --------------------------------------------------------------- partition

    /**
     * AlterPartition from {@code brokerId} in {@code brokerEpoch}: the proposed ISR with
     * each member's broker epoch (-1: not checked), at the leader and partition epochs
     * the leader holds, with the leader recovery state the leader holds
     * ({@code LeaderRecoveryState.value()}). A stale broker epoch is answered as QuorumController answers
     * the whole request (STALE_BROKER_EPOCH, no records).
     */
    public ControllerResult<AlterPartitionResponseData> alterPartition(int brokerId, long brokerEpoch, int leaderEpoch,
                                                                        int partitionEpoch, int[] isr, long[] isrEpochs,
                                                                        byte leaderRecoveryState) {
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        for (int i = 0; i < isr.length; i++) {
            states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(isr[i]).setBrokerEpoch(isrEpochs[i]));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData()
            .setBrokerId(brokerId).setBrokerEpoch(brokerEpoch)
            .setTopics(List.of(new AlterPartitionRequestData.TopicData()
                .setTopicId(fixture.replicationControl.getTopicId(TOPIC))
                .setPartitions(List.of(new AlterPartitionRequestData.PartitionData()
                    .setPartitionIndex(0).setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch)
                    .setLeaderRecoveryState(leaderRecoveryState).setNewIsrWithEpochs(states)))));
        lastRequest = request;
        return fixture.alterPartition(request);
    }

    /** AlterPartitionReassignments of the partition to {@code target} (null: cancel),
     *  replication factor changes allowed. The response's partition error says whether
     *  Kafka accepted it; the records are the change. */
    public ControllerResult<ApiError> alterPartitionReassignment(int[] target) {
        List<Integer> replicas = null;
        if (target != null) {
            replicas = new ArrayList<>();
            for (int r : target) replicas.add(r);
        }
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData()
            .setAllowReplicationFactorChange(true)
            .setTopics(List.of(new ReassignableTopic().setName(TOPIC)
                .setPartitions(List.of(new ReassignablePartition().setPartitionIndex(0).setReplicas(replicas)))));
        lastRequest = request;
        ControllerResult<AlterPartitionReassignmentsResponseData> result =
            fixture.replicationControl.alterPartitionReassignments(request);
        AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse answer =
            result.response().responses().get(0).partitions().get(0);
        ApiError error = new ApiError(Errors.forCode(answer.errorCode()), answer.errorMessage());
        return ControllerResult.of(result.records(), error);
    }

    // ------------------------------------------------------------- configs

    /** IncrementalAlterConfigs SET of the topic config {@code name} to {@code value}
     *  (QuorumController.incrementalAlterConfigs → ConfigurationControlManager.
     *  incrementalAlterConfigs): its ConfigRecord and, for min.insync.replicas with ELR on,
     *  the ClearElrRecord; the response is the resource's error. */
    public ControllerResult<ApiError> alterTopicConfig(String name, String value) {
        return alterConfig(new ConfigResource(ConfigResource.Type.TOPIC, TOPIC), name, value);
    }

    /** IncrementalAlterConfigs SET of the cluster-level default {@code name} (resource
     *  BROKER with the empty name, ConfigurationControlManager.DEFAULT_NODE) to
     *  {@code value}: its ConfigRecord (written even when unchanged) and, for
     *  min.insync.replicas with ELR on, a ClearElrRecord with no topic name (every
     *  topic's ELR); the response is the resource's error. */
    public ControllerResult<ApiError> alterClusterConfig(String name, String value) {
        return alterConfig(new ConfigResource(ConfigResource.Type.BROKER, ""), name, value);
    }

    private ControllerResult<ApiError> alterConfig(ConfigResource resource, String name, String value) {
        lastRequest = null;
        Map<String, Map.Entry<AlterConfigOp.OpType, String>> ops = Map.of(name,
            new AbstractMap.SimpleImmutableEntry<>(AlterConfigOp.OpType.SET, value));
        ControllerResult<Map<ConfigResource, ApiError>> result =
            fixture.configurationControl.incrementalAlterConfigs(Map.of(resource, ops), false, false);
        return ControllerResult.of(result.records(), result.response().get(resource));
    }

    /** UpdateFeatures of eligible.leader.replicas.version to 1 ({@code enabled}, an UPGRADE)
     *  or 0 (a SAFE_DOWNGRADE), as QuorumController.updateFeatures calls
     *  ConfigurationControlManager.updateFeatures: the FeatureLevelRecord, after an
     *  upgrade's cluster-level min.insync.replicas when there is none
     *  (maybeGenerateElrSafetyRecords); the response is Kafka's error. Like a config
     *  change, the manager takes no Kafka request. */
    public ControllerResult<ApiError> updateElrFeature(boolean enabled) {
        lastRequest = null;
        String feature = EligibleLeaderReplicasVersion.FEATURE_NAME;
        EligibleLeaderReplicasVersion level =
            enabled ? EligibleLeaderReplicasVersion.ELRV_1 : EligibleLeaderReplicasVersion.ELRV_0;
        FeatureUpdate.UpgradeType type =
            enabled ? FeatureUpdate.UpgradeType.UPGRADE : FeatureUpdate.UpgradeType.SAFE_DOWNGRADE;
        return fixture.configurationControl.updateFeatures(Map.of(feature, level.featureLevel()),
            Map.of(feature, type), false, ReplicheckControllerFixture.CLAIM_EPOCH);
    }

    /** Whether the finalized eligible.leader.replicas.version turns ELR on, as the
     *  controller's partition changes read it (FeatureControlManager.isElrFeatureEnabled). */
    public boolean elrEnabled() {
        return fixture.featureControl.isElrFeatureEnabled();
    }

    /** The topic's min.insync.replicas as the controller holds it (what
     *  ReplicationControlManager reads for each change). */
    public int minIsr() {
        return Integer.parseInt(fixture.configurationControl.getTopicConfig(TOPIC, "min.insync.replicas").value());
    }

    /** Whether the topic's unclean.leader.election.enable is on, as the controller's
     *  elections read it (ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic). */
    public boolean uncleanLeaderElection() {
        return fixture.configurationControl.uncleanLeaderElectionEnabledForTopic(TOPIC);
    }

    /** The periodic unclean election of leaderless partitions
     *  (ReplicationControlManager.maybeElectUncleanLeaders). */
    /** ElectLeaders with ElectionType.PREFERRED for the partition: an operator's
     *  request (the controller's leader balancing, maybeBalancePartitionLeaders, elects
     *  through the same electLeader). */
    public ControllerResult<ElectLeadersResponseData> electPreferredLeader() {
        ElectLeadersRequestData.TopicPartitionsCollection partitions =
            new ElectLeadersRequestData.TopicPartitionsCollection();
        partitions.add(new ElectLeadersRequestData.TopicPartitions().setTopic(TOPIC).setPartitions(List.of(0)));
        ElectLeadersRequestData request = new ElectLeadersRequestData()
            .setElectionType(ElectionType.PREFERRED.value).setTopicPartitions(partitions);
        lastRequest = request;
        return fixture.replicationControl.electLeaders(request);
    }

    public ControllerResult<Boolean> electUncleanLeaders() {
        lastRequest = null;
        return fixture.replicationControl.maybeElectUncleanLeaders();
    }
}
