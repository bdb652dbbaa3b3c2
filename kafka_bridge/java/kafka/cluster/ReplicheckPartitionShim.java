/*
 * replicheck's bridge to Apache Kafka's kafka.cluster.Partition (Apache License 2.0).
 */
package kafka.cluster;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.LeaderAndIsr;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TopicIdPartition;
import org.apache.kafka.server.partition.AlterPartitionListener;
import org.apache.kafka.server.partition.AlterPartitionManager;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.storage.log.FetchParams;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.server.util.timer.Timer;
import org.apache.kafka.server.util.timer.TimerTask;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogReadInfo;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;

import scala.Option;

/**
 * One broker's replica of one partition in Apache Kafka's own {@link Partition}, on a
 * real {@link UnifiedLog} in a folder of its own, with the collaborators a broker would
 * give it put in the bridge's hands, as Kafka's own PartitionTest sets it up:
 * <ul>
 *   <li>the clock ({@link ManualTime}): replica.lag.time.max.ms is measured on it;</li>
 *   <li>the log's scheduler (the bridge runs each task at once, on the caller's thread);</li>
 *   <li>the broker's metadata ({@link #setBroker}): the alive broker epochs, fenced and
 *       shutting-down brokers Partition.isReplicaIsrEligible reads;</li>
 *   <li>the AlterPartitionManager: every request Partition submits waits in
 *       {@link #submitted()} until the bridge completes its future with the
 *       controller's answer ({@link #answer}, {@link #answerError});</li>
 *   <li>no LogManager: the log is handed to Partition ({@code setLog}) before its first
 *       makeLeader or makeFollower, and a follower truncates its log itself, as
 *       LogManager.truncateTo does at its core.</li>
 * </ul>
 * The delayed operations are Kafka's purgatories, empty: the bridge keeps its own
 * produce requests waiting on the HWM.
 */
public final class ReplicheckPartitionShim {

    /** A clock that moves only when told: replica lag is measured on it. */
    public static final class ManualTime implements Time {
        private long nowMs = 1_000_000L;

        @Override public long milliseconds() { return nowMs; }
        @Override public long nanoseconds() { return nowMs * 1_000_000L; }
        @Override public void sleep(long ms) { nowMs += ms; }
        public void advance(long ms) { nowMs += ms; }
    }

    /** An AlterPartition Partition submitted, waiting for the controller's answer. */
    public static final class Submitted {
        public final LeaderAndIsr leaderAndIsr;
        public final CompletableFuture<LeaderAndIsr> future;

        Submitted(LeaderAndIsr leaderAndIsr, CompletableFuture<LeaderAndIsr> future) {
            this.leaderAndIsr = leaderAndIsr;
            this.future = future;
        }
    }

    private static final long REPLICA_LAG_TIME_MAX_MS = 30_000L;
    private static DelayedOperations delayedOperations;

    private final ManualTime time;
    private final int brokerId;
    private long brokerEpoch = -1L;
    private final Map<Integer, Long> aliveBrokerEpochs = new HashMap<>();
    private final Map<Integer, Boolean> fenced = new HashMap<>();
    private final Map<Integer, Boolean> shuttingDown = new HashMap<>();
    private final Deque<Submitted> submitted = new ArrayDeque<>();
    private final Uuid topicId;
    private final UnifiedLog log;
    private final Partition partition;

    public ReplicheckPartitionShim(File dir, String topic, Uuid topicId, int brokerId, int minIsr, ManualTime time,
                                   Scheduler scheduler) throws IOException {
        this.time = time;
        this.brokerId = brokerId;
        this.topicId = topicId;
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties props = new Properties();
        props.put("min.insync.replicas", Integer.toString(minIsr));
        File logDir = new File(dir, topic + "-0");
        this.log = UnifiedLog.create(logDir, new LogConfig(props), 0L, 0L, scheduler, new BrokerTopicStats(),
            time, 60_000, new ProducerStateManagerConfig(86_400_000, false), 600_000,
            new LogDirFailureChannel(1), true, Optional.of(topicId));
        MetadataCache metadataCache = (MetadataCache) Proxy.newProxyInstance(
            MetadataCache.class.getClassLoader(), new Class<?>[]{MetadataCache.class}, (proxy, method, args) -> {
                switch (method.getName()) {
                    case "hasAliveBroker": return aliveBrokerEpochs.containsKey((Integer) args[0]);
                    case "getAliveBrokerEpoch": return Optional.ofNullable(aliveBrokerEpochs.get((Integer) args[0]));
                    case "isBrokerFenced": return fenced.getOrDefault((Integer) args[0], false);
                    case "isBrokerShuttingDown": return shuttingDown.getOrDefault((Integer) args[0], false);
                    case "toString": return "ReplicheckMetadataCache";
                    case "hashCode": return System.identityHashCode(proxy);
                    case "equals": return proxy == args[0];
                    default: throw new UnsupportedOperationException("MetadataCache." + method.getName());
                }
            });
        AlterPartitionManager alterPartitionManager = new AlterPartitionManager() {
            @Override public void start() { }
            @Override public void shutdown() { }
            @Override public CompletableFuture<LeaderAndIsr> submit(TopicIdPartition ignored, LeaderAndIsr leaderAndIsr) {
                CompletableFuture<LeaderAndIsr> future = new CompletableFuture<>();
                submitted.addLast(new Submitted(leaderAndIsr, future));
                return future;
            }
        };
        AlterPartitionListener listener = new AlterPartitionListener() {
            @Override public void markIsrExpand() { }
            @Override public void markIsrShrink() { }
            @Override public void markFailed() { }
        };
        this.partition = new Partition(tp, REPLICA_LAG_TIME_MAX_MS, brokerId, () -> brokerEpoch, time, listener,
            delayedOperations(tp), metadataCache, null, alterPartitionManager, Option.apply(topicId));
        this.partition.setLog(log, false);
    }

    /** A purgatory timer that holds nothing: nothing waits in these purgatories. */
    private static final class NoTimer implements Timer {
        @Override public void add(TimerTask task) { throw new UnsupportedOperationException("no delayed operations"); }
        @Override public boolean advanceClock(long timeoutMs) { return false; }
        @Override public int size() { return 0; }
        @Override public void close() { }
    }

    private static <T extends org.apache.kafka.server.purgatory.DelayedOperation> DelayedOperationPurgatory<T> purgatory(
            String name) {
        // no expiration reaper: it is a thread of its own
        return new DelayedOperationPurgatory<>(name, new NoTimer(), 0, false);
    }

    private static synchronized DelayedOperations delayedOperations(TopicPartition tp) {
        // Kafka's purgatories, shared and always empty: the bridge keeps its own waiting produce requests
        if (delayedOperations == null) {
            delayedOperations = new DelayedOperations(Option.empty(), tp, purgatory("Produce"), purgatory("Fetch"),
                purgatory("DeleteRecords"), purgatory("ShareFetch"));
        }
        return delayedOperations;
    }

    public Partition partition() { return partition; }
    public UnifiedLog log() { return log; }
    public ManualTime time() { return time; }
    public long replicaLagTimeMaxMs() { return REPLICA_LAG_TIME_MAX_MS; }

    /** This broker's own epoch (Partition's localBrokerEpochSupplier). */
    public void setBrokerEpoch(long epoch) { brokerEpoch = epoch; }

    /** What this broker's metadata says of {@code broker}: its epoch (null: not alive),
     *  fenced, in controlled shutdown. */
    public void setBroker(int broker, Long epoch, boolean isFenced, boolean isShuttingDown) {
        if (epoch == null) aliveBrokerEpochs.remove(broker); else aliveBrokerEpochs.put(broker, epoch);
        fenced.put(broker, isFenced);
        shuttingDown.put(broker, isShuttingDown);
    }

    /** The AlterPartition requests Partition submitted and the bridge has not answered, oldest first. */
    public Deque<Submitted> submitted() { return submitted; }

    /** Produce one record of {@code value} with acks=all (Partition.appendRecordsToLeader);
     *  returns its offset. Throws NotEnoughReplicasException below MinISR. */
    public long appendToLeader(long value) {
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord(time.milliseconds(), null, Long.toString(value).getBytes()));
        return partition.appendRecordsToLeader(records, AppendOrigin.CLIENT, -1, RequestLocal.noCaching(),
            VerificationGuard.SENTINEL, (short) 0).firstOffset();
    }

    /** A follower's fetch (Partition.fetchRecords, updating its fetch state): the
     *  replica fetch of {@code follower} in {@code brokerEpoch} for {@code fetchOffset},
     *  carrying {@code currentLeaderEpoch} and {@code lastFetchedEpoch} (-1: none). */
    public LogReadInfo fetch(int follower, long followerBrokerEpoch, int currentLeaderEpoch, long fetchOffset,
                             int lastFetchedEpoch) throws IOException {
        FetchParams params = new FetchParams(follower, followerBrokerEpoch, 0L, 1, Integer.MAX_VALUE,
            FetchIsolation.LOG_END, Optional.empty());
        FetchRequest.PartitionData data = new FetchRequest.PartitionData(topicId, fetchOffset, 0L, Integer.MAX_VALUE,
            Optional.of(currentLeaderEpoch), lastFetchedEpoch < 0 ? Optional.empty() : Optional.of(lastFetchedEpoch));
        return partition.fetchRecords(params, data, time.milliseconds(), Integer.MAX_VALUE, true, true);
    }

    /** The leader's periodic ISR check (the isr-expiration task: Partition.maybeShrinkIsr). */
    public void maybeShrinkIsr() { partition.maybeShrinkIsr(); }

    /** Record batches of a fetch, for a follower's log: each record's leader epoch is its
     *  batch's partitionLeaderEpoch. */
    public static long[][] records(LogReadInfo info) {
        java.util.List<long[]> out = new java.util.ArrayList<>();
        for (RecordBatch batch : info.fetchedData().records.batches()) {
            for (org.apache.kafka.common.record.internal.Record r : batch) {
                byte[] bytes = new byte[r.valueSize()];
                r.value().get(bytes);
                out.add(new long[]{r.offset(), batch.partitionLeaderEpoch(), Long.parseLong(new String(bytes))});
            }
        }
        return out.toArray(new long[0][]);
    }
}
