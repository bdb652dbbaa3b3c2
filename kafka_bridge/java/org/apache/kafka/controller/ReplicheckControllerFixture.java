/*
 * replicheck's fixture for Apache Kafka's controller managers (Apache License 2.0).
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
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
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.writer.ImageWriterOptions;
import org.apache.kafka.image.writer.RecordListWriter;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ServerLogConfigs;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Apache Kafka's controller managers for one topic, set up as Kafka's own
 * ReplicationControlManagerTest sets them up: {@link FeatureControlManager} (a KRaft
 * cluster at the latest production metadata version, ELR on at bootstrap), {@link ClusterControlManager}
 * (broker registration, heartbeats, fencing), {@link ConfigurationControlManager} (topic
 * configs, the cluster-level min.insync.replicas, feature updates) and
 * {@link ReplicationControlManager} (the partition). Their builders are
 * package-private, hence this class's package.
 *
 * <p>Nothing a request returns is replayed until {@link #replay} is called with the
 * records' offsets in the metadata log (QuorumController replays each record it
 * appends). Time is a manual clock, moved only by {@link ManualTime#sleep}.
 * {@link #failOver} replaces the managers by a standby's, which replayed the same
 * records, and {@link #failOverFromSnapshot} by those of a controller that loaded a
 * snapshot of them: read them through the fixture's fields, which both set anew.
 *
 * <p>Used by replicheck's bridge (ReplicheckControllerShim) and, as its own source
 * file, by every JUnit reproducer {@code replicheck reproduce} writes: the same
 * set-up in both.
 */
public final class ReplicheckControllerFixture {
    /** Kafka's default broker session timeout (broker.session.timeout.ms). */
    public static final long SESSION_TIMEOUT_MS = 9000;
    public static final String CLUSTER_ID = "replicheck-cluster-0000";
    public static final String TOPIC = "replicheck";
    /** The epoch the active controller claimed, which QuorumController passes to a feature
     *  update (curClaimEpoch, its Raft leader epoch): only a kraft.version upgrade reads it,
     *  so with no Raft log here any fixed one will do (Kafka's own tests pass 0). */
    public static final int CLAIM_EPOCH = 1;

    /** A clock moved only by {@link #sleep}. */
    public static final class ManualTime implements Time {
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

        // Time's abstract method up to Kafka 4.3 (a default one since): no manager the
        // fixture sets up waits, and a clock no one moves could not end a wait.
        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            if (!condition.get()) throw new UnsupportedOperationException("a manual clock does not wait");
        }
    }

    public final ManualTime time = new ManualTime();
    public SnapshotRegistry snapshotRegistry;
    public FeatureControlManager featureControl;
    public ClusterControlManager clusterControl;
    public ConfigurationControlManager configurationControl;
    public ReplicationControlManager replicationControl;
    /** Every record replayed, with its offset: what a standby has replayed too. */
    private final List<Map.Entry<ApiMessageAndVersion, Long>> replayed = new java.util.ArrayList<>();
    private int snapshotAt = -1;
    private long snapshotOffset = -1L;

    /** The managers, nothing replayed; not yet active. */
    public ReplicheckControllerFixture() {
        build();
    }

    /** A new set of managers over the same clock (a controller process's). */
    private void build() {
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
                       ConfigResource.Type.BROKER, brokerConfigDef()),
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

    /** The broker configs the controller resolves: only Kafka's broker min.insync.replicas
     *  (LogConfig.SERVER_CONFIG_DEF's key, default ServerLogConfigs.MIN_IN_SYNC_REPLICAS_DEFAULT),
     *  the static value an ELR upgrade writes as the cluster-level one when there is none
     *  (ConfigurationControlManager.maybeGenerateElrSafetyRecords; without the key it throws). */
    private static ConfigDef brokerConfigDef() {
        return new ConfigDef().define(
            LogConfig.SERVER_CONFIG_DEF.configKeys().get(ServerLogConfigs.MIN_IN_SYNC_REPLICAS_CONFIG));
    }

    // a method, not a lambda: the handler reads replicationControl, built after clusterControl
    private void handleBrokerShutdown(int brokerId, boolean isCleanShutdown, List<ApiMessageAndVersion> records) {
        replicationControl.handleBrokerShutdown(brokerId, isCleanShutdown, records);
    }

    /** The feature levels of a KRaft cluster with ELR on (bootstrap; not in the partition's log). */
    public static List<ApiMessageAndVersion> bootstrapRecords() {
        return List.of(
            new ApiMessageAndVersion(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
                .setFeatureLevel(MetadataVersion.latestProduction().featureLevel()), (short) 0),
            new ApiMessageAndVersion(new FeatureLevelRecord().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
                .setFeatureLevel(EligibleLeaderReplicasVersion.ELRV_1.featureLevel()), (short) 0));
    }

    /** Replay the bootstrap records, then start the heartbeat manager (the controller becomes active). */
    public void bootstrapAndActivate() {
        for (ApiMessageAndVersion record : bootstrapRecords()) replay(record, -1);
        clusterControl.activate();
    }

    /**
     * The active controller resigns and a standby becomes active (QuorumController.renounce,
     * then claim): the standby's managers have replayed every record this one replayed,
     * at the same offsets; on a log with a metadata version its activation writes no
     * record (ActivationRecordsGenerator.recordsForNonEmptyLog), and its heartbeat
     * manager starts (ClusterControlManager.activate: a session for each unfenced
     * broker from now, none for a fenced one).
     */
    public void failOver() {
        List<Map.Entry<ApiMessageAndVersion, Long>> log = replayed();
        replayed.clear();
        build();
        for (Map.Entry<ApiMessageAndVersion, Long> entry : log) replay(entry.getKey(), entry.getValue());
        snapshotAt = -1;
        snapshotOffset = -1L;
        clusterControl.activate();
    }

    /**
     * The active controller resigns and one that restarted becomes active: at its start
     * it loaded the latest snapshot, taken at the end of the log replayed so far, whose
     * last record is at {@code lastOffset} (QuorumController.handleLoadSnapshot replays
     * each of the snapshot's records at that offset); then its heartbeat manager starts,
     * as in {@link #failOver}. The log stays what {@link #replayed} returns: a later
     * {@link #failOver} replays it.
     */
    public void failOverFromSnapshot(long lastOffset) {
        List<Map.Entry<ApiMessageAndVersion, Long>> log = replayed();
        build();
        for (ApiMessageAndVersion record : snapshot(log)) dispatch(record.message(), lastOffset);
        snapshotAt = log.size();
        snapshotOffset = lastOffset;
        clusterControl.activate();
    }

    /**
     * The records of the snapshot of {@code log} (records with their offsets): the
     * metadata image the records give (MetadataDelta.replay, apply), written as
     * SnapshotEmitter.maybeEmit writes it, with the options of the image's features
     * (the ELR feature's level decides whether partitions keep their ELR and
     * LastKnownELR: PartitionRegistration.toRecord).
     */
    public static List<ApiMessageAndVersion> snapshot(List<Map.Entry<ApiMessageAndVersion, Long>> log) {
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        long lastOffset = -1L;
        for (Map.Entry<ApiMessageAndVersion, Long> entry : log) {
            delta.replay(entry.getKey().message());
            lastOffset = Math.max(lastOffset, entry.getValue());
        }
        // the provenance names the image, which the writer does not read
        MetadataImage image = delta.apply(new MetadataProvenance(lastOffset, 0, 0L, true));
        RecordListWriter writer = new RecordListWriter();
        image.write(writer, new ImageWriterOptions.Builder(image.features().metadataVersionOrThrow())
            .setEligibleLeaderReplicasEnabled(image.features().isElrEnabled())
            .build());
        return writer.records();
    }

    /** How many records of {@link #replayed} the active managers loaded as a snapshot
     *  ({@link #failOverFromSnapshot}) rather than replayed; -1: none. */
    public int snapshotAt() {
        return snapshotAt;
    }

    /** The last offset of the snapshot {@link #failOverFromSnapshot} loaded (-1: none). */
    public long snapshotOffset() {
        return snapshotOffset;
    }

    /** Every record replayed so far, with its offset, in order. */
    public List<Map.Entry<ApiMessageAndVersion, Long>> replayed() {
        return List.copyOf(replayed);
    }

    /** Replay one record at {@code offset} (QuorumController.replay's dispatch). */
    public void replay(ApiMessageAndVersion record, long offset) {
        replayed.add(Map.entry(record, offset));
        dispatch(record.message(), offset);
    }

    private void dispatch(ApiMessage message, long offset) {
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

    /** Replay {@code result}'s records, the i-th at {@code offsets[i]} (one offset per record). */
    public void replay(ControllerResult<?> result, long... offsets) {
        List<ApiMessageAndVersion> records = result.records();
        if (records.size() != offsets.length) {
            throw new IllegalArgumentException(records.size() + " records, " + offsets.length + " offsets: " + records);
        }
        for (int i = 0; i < offsets.length; i++) replay(records.get(i), offsets[i]);
    }

    /** The request context QuorumController gives a handler for {@code api}. */
    public static ControllerRequestContext context(ApiKeys api) {
        return new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(api.latestVersion()),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
    }

    /** The features a broker of this cluster supports, at Kafka's default ranges
     *  (what its BrokerRegistration request lists). */
    public static org.apache.kafka.common.message.BrokerRegistrationRequestData.FeatureCollection supportedFeatures() {
        var features = new org.apache.kafka.common.message.BrokerRegistrationRequestData.FeatureCollection();
        for (Map.Entry<String, org.apache.kafka.metadata.VersionRange> feature
                : QuorumFeatures.defaultSupportedFeatureMap(true).entrySet()) {
            features.add(new org.apache.kafka.common.message.BrokerRegistrationRequestData.Feature()
                .setName(feature.getKey())
                .setMinSupportedVersion(feature.getValue().min())
                .setMaxSupportedVersion(feature.getValue().max()));
        }
        return features;
    }

    /** The finalized feature levels a registering broker is checked against. */
    public FinalizedControllerFeatures finalizedFeatures() {
        return new FinalizedControllerFeatures(featureControl.finalizedFeatures(Long.MAX_VALUE).featureMap(),
            Long.MAX_VALUE);
    }

    /** The topic's id, or null before it is created. */
    public Uuid topicId() {
        return replicationControl.getTopicId(TOPIC);
    }

    /** The partition's registration, or null before it is created. */
    public PartitionRegistration partition() {
        Uuid id = topicId();
        return id == null ? null : replicationControl.getPartition(id, 0);
    }

    /** The offset of the broker's latest RegisterBrokerRecord, -1 when none. */
    public long registerBrokerRecordOffset(int brokerId) {
        return clusterControl.registerBrokerRecordOffset(brokerId).orElse(-1L);
    }

    /**
     * A BrokerHeartbeat as QuorumController.processBrokerHeartbeat handles it: the
     * contact time is tracked, then ReplicationControlManager.processBrokerHeartbeat.
     */
    public ControllerResult<org.apache.kafka.metadata.BrokerHeartbeatReply> heartbeat(
            org.apache.kafka.common.message.BrokerHeartbeatRequestData request) {
        clusterControl.trackBrokerHeartbeat(request.brokerId(), request.brokerEpoch());
        return replicationControl.processBrokerHeartbeat(request, registerBrokerRecordOffset(request.brokerId()));
    }

    /**
     * QuorumController.processBrokerHeartbeat's processBatchEndOffset for a heartbeat that
     * left the broker in controlled shutdown: its controlled shutdown offset becomes
     * {@code offset}, the last offset of the batch the heartbeat wrote (the first time only:
     * BrokerHeartbeatManager.maybeUpdateControlledShutdownOffset).
     */
    public void processBatchEndOffset(int brokerId, long offset) {
        clusterControl.heartbeatManager().maybeUpdateControlledShutdownOffset(brokerId, offset);
    }

    /**
     * A periodic heartbeat of an unfenced broker reporting {@code offset}, the last metadata
     * offset it applied, where nothing else changes (BrokerHeartbeatManager.touch, as
     * ReplicationControlManager.processBrokerHeartbeat calls it).
     */
    public void reportMetadataOffset(int brokerId, long offset) {
        org.apache.kafka.metadata.BrokerRegistration registration = clusterControl.registration(brokerId);
        if (registration != null && !registration.fenced()) {
            clusterControl.heartbeatManager().touch(brokerId, false, offset);
        }
    }

    /** The broker's controlled shutdown offset in the heartbeat manager, -1 when it has none. */
    public long controlledShutdownOffset(int brokerId) {
        return clusterControl.heartbeatManager().controlledShutdownOffset(brokerId).orElse(-1L);
    }

    /**
     * Which broker keeps {@code brokerId}'s heartbeat asking to shut down from letting it go
     * (BrokerHeartbeatManager.calculateNextBrokerState), once each unfenced broker in
     * {@code running} has reported the offset at the same index of {@code offsets}: the
     * active broker with the lowest metadata offset, or -1 when it is let go. A leader not
     * yet in controlled shutdown is let go by its second heartbeat only when no other broker
     * is active (its first writes records no other broker has applied). The heartbeat
     * manager is left as it was.
     */
    public int controlledShutdownWaitsFor(int brokerId, int[] running, long[] offsets) {
        BrokerHeartbeatManager heartbeats = clusterControl.heartbeatManager();
        Map<Integer, Long> reported = new java.util.HashMap<>();
        for (BrokerHeartbeatManager.BrokerHeartbeatState state : heartbeats.brokers()) {
            reported.put(state.id(), state.metadataOffset());
        }
        Map<Integer, Long> previous = new java.util.HashMap<>();
        for (int i = 0; i < running.length; i++) {
            org.apache.kafka.metadata.BrokerRegistration registration = clusterControl.registration(running[i]);
            if (running[i] == brokerId || registration == null || registration.fenced()) continue;
            previous.put(running[i], reported.get(running[i]));
            heartbeats.touch(running[i], false, offsets[i]);
        }
        try {
            PartitionRegistration partition = partition();
            boolean leads = partition != null && partition.leader == brokerId;
            org.apache.kafka.common.message.BrokerHeartbeatRequestData request =
                new org.apache.kafka.common.message.BrokerHeartbeatRequestData().setBrokerId(brokerId)
                    .setBrokerEpoch(clusterControl.registration(brokerId).epoch()).setWantShutDown(true);
            BrokerControlStates states = heartbeats.calculateNextBrokerState(brokerId, request,
                registerBrokerRecordOffset(brokerId), () -> leads);
            if (states.next() == BrokerControlState.SHUTDOWN_NOW) return -1;
            int lowest = -1;
            long lowestOffset = Long.MAX_VALUE;
            for (BrokerHeartbeatManager.BrokerHeartbeatState state : heartbeats.brokers()) {
                if (state.id() == brokerId || state.fenced() || state.shuttingDown()) continue;
                if (state.metadataOffset() < lowestOffset || lowest < 0) {
                    lowest = state.id();
                    lowestOffset = state.metadataOffset();
                }
            }
            return lowest;
        } finally {
            for (Map.Entry<Integer, Long> entry : previous.entrySet()) {
                heartbeats.touch(entry.getKey(), false, entry.getValue());
            }
        }
    }

    /**
     * The heartbeat manager's state of each broker (the metadata offset it last reported,
     * its controlled shutdown offset) taken from {@code other}'s, a controller that
     * replayed the same records: what a copy of this controller needs beyond the records.
     */
    public void adoptHeartbeats(ReplicheckControllerFixture other) {
        BrokerHeartbeatManager heartbeats = clusterControl.heartbeatManager();
        for (BrokerHeartbeatManager.BrokerHeartbeatState state : other.clusterControl.heartbeatManager().brokers()) {
            if (clusterControl.registration(state.id()) == null) continue;
            heartbeats.touch(state.id(), state.fenced(), state.metadataOffset());
            long offset = other.controlledShutdownOffset(state.id());
            if (offset >= 0) heartbeats.maybeUpdateControlledShutdownOffset(state.id(), offset);
        }
    }

    /**
     * The broker's first heartbeat once registered renews its contact time for its
     * registered broker epoch (QuorumController.processBrokerHeartbeat tracks it first).
     */
    public void trackSession(int brokerId) {
        clusterControl.trackBrokerHeartbeat(brokerId, clusterControl.registration(brokerId).epoch());
    }

    /**
     * Time passes beyond the session timeout while every broker in {@code alive} keeps
     * heartbeating (its contact time is renewed); every other session expires.
     */
    public void expireSessions(int... alive) {
        time.sleep(SESSION_TIMEOUT_MS + 1);
        for (int brokerId : alive) {
            var registration = clusterControl.registration(brokerId);
            if (registration != null) clusterControl.trackBrokerHeartbeat(brokerId, registration.epoch());
        }
    }

    /**
     * AlterPartition as QuorumController answers it: a stale broker epoch fails the
     * whole request (STALE_BROKER_EPOCH, no records).
     */
    public ControllerResult<AlterPartitionResponseData> alterPartition(AlterPartitionRequestData request) {
        try {
            return replicationControl.alterPartition(context(ApiKeys.ALTER_PARTITION), request);
        } catch (org.apache.kafka.common.errors.StaleBrokerEpochException e) {
            return ControllerResult.of(List.of(),
                new AlterPartitionResponseData().setErrorCode(Errors.STALE_BROKER_EPOCH.code()));
        }
    }

    /** The broker ids of {@code ids} as a sorted set (an ISR or ELR compared as a set). */
    public static TreeSet<Integer> set(int[] ids) {
        TreeSet<Integer> out = new TreeSet<>();
        for (int id : ids) out.add(id);
        return out;
    }
}
