/*
 * replicheck's bridge to Apache Kafka's controller (Apache License 2.0).
 */
package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
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
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ClearElrRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Apache Kafka's own controller managers for one partition, driven request by request:
 * {@link ClusterControlManager} (broker registration, heartbeats, fencing) and
 * {@link ReplicationControlManager} (the partition: AlterPartition, reassignment,
 * elections), with the {@link FeatureControlManager} and
 * {@link ConfigurationControlManager} they read, set up as Kafka's own
 * ReplicationControlManagerTest sets them up. Their builders are package-private,
 * hence this class's package.
 *
 * <p>Each request returns the {@link ControllerResult} Kafka's manager returns; nothing
 * is replayed until the caller calls {@link #replay(ApiMessageAndVersion, long)} with
 * the record's offset in its metadata log (as QuorumController replays each record it
 * appends). A second instance replaying the same records reaches the same state
 * (Kafka's standby controllers work so): {@link #activate()} then starts its
 * heartbeat manager.
 *
 * <p>Time is a manual clock: sessions expire only when {@link #expireSessions} moves it
 * past the session timeout.
 */
public final class ReplicheckControllerShim {
    /** Kafka's default broker session timeout (broker.session.timeout.ms). */
    public static final long SESSION_TIMEOUT_MS = 9000;
    public static final String CLUSTER_ID = "replicheck-cluster-0000";
    public static final String TOPIC = "replicheck";

    /** A clock moved only by {@link #sleep}. */
    static final class ManualTime implements Time {
        private long nanos = TimeUnit.MILLISECONDS.toNanos(1_000_000);

        @Override
        public long milliseconds() {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }

        @Override
        public long nanoseconds() {
            return nanos;
        }

        @Override
        public void sleep(long ms) {
            nanos += TimeUnit.MILLISECONDS.toNanos(ms);
        }
    }

    private final ManualTime time = new ManualTime();
    private final SnapshotRegistry snapshotRegistry;
    private final FeatureControlManager featureControl;
    private final ClusterControlManager clusterControl;
    private final ConfigurationControlManager configurationControl;
    private final ReplicationControlManager replicationControl;
    private final int minIsr;
    private final boolean uncleanLeaderElection;

    public ReplicheckControllerShim(int minIsr, boolean uncleanLeaderElection) {
        this.minIsr = minIsr;
        this.uncleanLeaderElection = uncleanLeaderElection;
        LogContext logContext = new LogContext();
        snapshotRegistry = new SnapshotRegistry(logContext);
        featureControl = new FeatureControlManager.Builder()
            .setSnapshotRegistry(snapshotRegistry)
            .setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultSupportedFeatureMap(true), List.of(0)))
            .build();
        clusterControl = new ClusterControlManager.Builder()
            .setLogContext(logContext)
            .setClusterId(CLUSTER_ID)
            .setTime(time)
            .setSnapshotRegistry(snapshotRegistry)
            .setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(SESSION_TIMEOUT_MS))
            .setReplicaPlacer(new org.apache.kafka.metadata.placement.StripedReplicaPlacer(new Random(0)))
            .setFeatureControlManager(featureControl)
            .setBrokerShutdownHandler(this::handleBrokerShutdown)
            .build();
        configurationControl = new ConfigurationControlManager.Builder()
            .setSnapshotRegistry(snapshotRegistry)
            .setFeatureControl(featureControl)
            .setKafkaConfigSchema(new KafkaConfigSchema(
                Map.of(ConfigResource.Type.TOPIC, LogConfig.configDefCopy(),
                       ConfigResource.Type.BROKER, new ConfigDef()),
                ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS))
            .build();
        replicationControl = new ReplicationControlManager.Builder()
            .setSnapshotRegistry(snapshotRegistry)
            .setLogContext(logContext)
            .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
            .setConfigurationControl(configurationControl)
            .setClusterControl(clusterControl)
            .setFeatureControl(featureControl)
            .build();
    }

    /** The feature levels of a KRaft cluster with ELR on (bootstrap; not in the partition's log). */
    public List<ApiMessageAndVersion> bootstrapRecords() {
        return List.of(
            new ApiMessageAndVersion(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
                .setFeatureLevel(MetadataVersion.latestProduction().featureLevel()), (short) 0),
            new ApiMessageAndVersion(new FeatureLevelRecord().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
                .setFeatureLevel(EligibleLeaderReplicasVersion.ELRV_1.featureLevel()), (short) 0));
    }

    /** Start the heartbeat manager (the controller becomes active), after the bootstrap records. */
    public void activate() {
        clusterControl.activate();
    }

    private void handleBrokerShutdown(int brokerId, boolean isCleanShutdown, List<ApiMessageAndVersion> records) {
        replicationControl.handleBrokerShutdown(brokerId, isCleanShutdown, records);
    }

    /** Replay one record at {@code offset} (QuorumController.replay's dispatch). */
    public void replay(ApiMessageAndVersion record, long offset) {
        ApiMessage message = record.message();
        if (message instanceof RegisterBrokerRecord r) {
            clusterControl.replay(r, offset);
        } else if (message instanceof BrokerRegistrationChangeRecord r) {
            clusterControl.replay(r);
        } else if (message instanceof FenceBrokerRecord r) {
            clusterControl.replay(r);
        } else if (message instanceof UnfenceBrokerRecord r) {
            clusterControl.replay(r);
        } else if (message instanceof TopicRecord r) {
            replicationControl.replay(r);
        } else if (message instanceof PartitionRecord r) {
            replicationControl.replay(r);
        } else if (message instanceof PartitionChangeRecord r) {
            replicationControl.replay(r);
        } else if (message instanceof ClearElrRecord r) {
            replicationControl.replay(r);
        } else if (message instanceof ConfigRecord r) {
            configurationControl.replay(r);
        } else if (message instanceof FeatureLevelRecord r) {
            featureControl.replay(r);
        } else {
            throw new IllegalArgumentException("no replay for " + message.getClass().getSimpleName());
        }
    }

    private static ControllerRequestContext context(ApiKeys api) {
        return new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(api.latestVersion()),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
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
        ControllerResult<CreateTopicsResponseData> result =
            replicationControl.createTopics(context(ApiKeys.CREATE_TOPICS), request, Set.of(TOPIC), false);
        CreateTopicsResponseData.CreatableTopicResult answer = result.response().topics().find(TOPIC);
        if (answer.errorCode() != Errors.NONE.code()) {
            throw new IllegalStateException("CreateTopics failed: " + Errors.forCode(answer.errorCode()) + " "
                + answer.errorMessage());
        }
        return result;
    }

    /** The partition's registration, or null before it is created. */
    public PartitionRegistration partition() {
        Uuid id = replicationControl.getTopicId(TOPIC);
        return id == null ? null : replicationControl.getPartition(id, 0);
    }

    // ---------------------------------------------------------------- brokers

    /** The broker's registration, or null when it never registered. */
    public BrokerRegistration registration(int brokerId) {
        return clusterControl.registration(brokerId);
    }

    /** The offset of the broker's latest RegisterBrokerRecord, -1 when none. */
    public long registerBrokerRecordOffset(int brokerId) {
        return clusterControl.registerBrokerRecordOffset(brokerId).orElse(-1L);
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
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData()
            .setBrokerId(brokerId)
            .setClusterId(CLUSTER_ID)
            .setIncarnationId(new Uuid(brokerId + 1L, newBrokerEpoch + 1))   // new per registration, and in a copy
            .setPreviousBrokerEpoch(previousBrokerEpoch)
            .setLogDirs(List.of(directory(brokerId)));
        request.listeners().add(new BrokerRegistrationRequestData.Listener()
            .setName("PLAINTEXT").setHost("localhost").setPort(9092 + brokerId).setSecurityProtocol((short) 0));
        for (Map.Entry<String, VersionRange> feature : QuorumFeatures.defaultSupportedFeatureMap(true).entrySet()) {
            request.features().add(new BrokerRegistrationRequestData.Feature().setName(feature.getKey())
                .setMinSupportedVersion(feature.getValue().min()).setMaxSupportedVersion(feature.getValue().max()));
        }
        FinalizedControllerFeatures finalized = new FinalizedControllerFeatures(
            featureControl.finalizedFeatures(Long.MAX_VALUE).featureMap(), Long.MAX_VALUE);
        return clusterControl.registerBroker(request, newBrokerEpoch, finalized, true);
    }

    /**
     * A BrokerHeartbeat (QuorumController.processBrokerHeartbeat: the contact time is
     * tracked, then ReplicationControlManager.processBrokerHeartbeat). The controlled
     * shutdown offset is never set, so a broker in controlled shutdown that leads
     * nothing is let go at its next heartbeat, not once the other brokers have
     * replicated its leadership moves (liveness the model's atomic controlled
     * shutdown abstracts).
     */
    public ControllerResult<BrokerHeartbeatReply> heartbeat(int brokerId, long brokerEpoch, long currentMetadataOffset,
                                                            boolean wantFence, boolean wantShutDown) {
        clusterControl.trackBrokerHeartbeat(brokerId, brokerEpoch);
        BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData()
            .setBrokerId(brokerId).setBrokerEpoch(brokerEpoch).setCurrentMetadataOffset(currentMetadataOffset)
            .setWantFence(wantFence).setWantShutDown(wantShutDown);
        return replicationControl.processBrokerHeartbeat(request, registerBrokerRecordOffset(brokerId));
    }

    /**
     * Time passes beyond the session timeout while every broker in {@code alive} keeps
     * heartbeating (its contact time is renewed); every other session expires, and
     * {@link #fenceOneStaleBroker()} then fences their brokers one at a time.
     */
    public void expireSessions(int[] alive) {
        time.sleep(SESSION_TIMEOUT_MS + 1);
        for (int brokerId : alive) {
            BrokerRegistration registration = clusterControl.registration(brokerId);
            if (registration != null) clusterControl.trackBrokerHeartbeat(brokerId, registration.epoch());
        }
    }

    /** ReplicationControlManager.maybeFenceOneStaleBroker: the response is false once no
     *  session is expired. */
    public ControllerResult<Boolean> fenceOneStaleBroker() {
        return replicationControl.maybeFenceOneStaleBroker();
    }

    // --------------------------------------------------------------- partition

    /**
     * AlterPartition from {@code brokerId} in {@code brokerEpoch}: the proposed ISR with
     * each member's broker epoch (-1: not checked), at the leader and partition epochs
     * the leader holds. A stale broker epoch is answered as QuorumController answers
     * the whole request (STALE_BROKER_EPOCH, no records).
     */
    public ControllerResult<AlterPartitionResponseData> alterPartition(int brokerId, long brokerEpoch, int leaderEpoch,
                                                                        int partitionEpoch, int[] isr, long[] isrEpochs) {
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        for (int i = 0; i < isr.length; i++) {
            states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(isr[i]).setBrokerEpoch(isrEpochs[i]));
        }
        AlterPartitionRequestData request = new AlterPartitionRequestData()
            .setBrokerId(brokerId).setBrokerEpoch(brokerEpoch)
            .setTopics(List.of(new AlterPartitionRequestData.TopicData()
                .setTopicId(replicationControl.getTopicId(TOPIC))
                .setPartitions(List.of(new AlterPartitionRequestData.PartitionData()
                    .setPartitionIndex(0).setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch)
                    .setNewIsrWithEpochs(states)))));
        try {
            return replicationControl.alterPartition(context(ApiKeys.ALTER_PARTITION), request);
        } catch (org.apache.kafka.common.errors.StaleBrokerEpochException e) {
            return ControllerResult.of(List.of(),
                new AlterPartitionResponseData().setErrorCode(Errors.STALE_BROKER_EPOCH.code()));
        }
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
        ControllerResult<AlterPartitionReassignmentsResponseData> result =
            replicationControl.alterPartitionReassignments(request);
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
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
        Map<String, Map.Entry<AlterConfigOp.OpType, String>> ops = Map.of(name,
            new AbstractMap.SimpleImmutableEntry<>(AlterConfigOp.OpType.SET, value));
        ControllerResult<Map<ConfigResource, ApiError>> result =
            configurationControl.incrementalAlterConfigs(Map.of(resource, ops), false, false);
        return ControllerResult.of(result.records(), result.response().get(resource));
    }

    /** The topic's min.insync.replicas as the controller holds it (what
     *  ReplicationControlManager reads for each change). */
    public int minIsr() {
        return Integer.parseInt(configurationControl.getTopicConfig(TOPIC, "min.insync.replicas").value());
    }

    /** Whether the topic's unclean.leader.election.enable is on, as the controller's
     *  elections read it (ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic). */
    public boolean uncleanLeaderElection() {
        return configurationControl.uncleanLeaderElectionEnabledForTopic(TOPIC);
    }

    /** The periodic unclean election of leaderless partitions
     *  (ReplicationControlManager.maybeElectUncleanLeaders). */
    public ControllerResult<Boolean> electUncleanLeaders() {
        return replicationControl.maybeElectUncleanLeaders();
    }
}
