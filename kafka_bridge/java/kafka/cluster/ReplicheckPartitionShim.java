/*
 * replicheck's bridge to Apache Kafka's kafka.cluster.Partition (Apache License 2.0).
 */
package kafka.cluster;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.OperationNotAttemptedException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
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
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogReadInfo;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.LongStream;

import scala.Option;

/**
 * One broker's replica of one partition in Apache Kafka's own {@link Partition}, on a
 * real {@link UnifiedLog} in a folder of its own, through the broker's whole life, with
 * the collaborators a broker would give it put in the bridge's hands, as Kafka's own
 * PartitionTest sets it up:
 * <ul>
 *   <li>the clock ({@link ManualTime}): replica.lag.time.max.ms is measured on it;</li>
 *   <li>the log's scheduler ({@link BridgeScheduler}: each task runs at once, on the
 *       caller's thread, periodic ones once; the epoch cache's checkpoint writes a
 *       truncation schedules wait for {@link #writeEpochCheckpoint} when
 *       {@link #deferEpochCheckpointWrites} asked for it);</li>
 *   <li>the broker's metadata ({@link #setBroker}): the alive broker epochs, fenced and
 *       shutting-down brokers Partition.isReplicaIsrEligible reads;</li>
 *   <li>the AlterPartitionManager: a request Partition submits waits in
 *       {@link #submitted()} until the bridge completes its future with the
 *       controller's answer ({@link #answer}, {@link #answerError}); while one waits,
 *       another is refused at once with OPERATION_NOT_ATTEMPTED, as
 *       DefaultAlterPartitionManager.submit refuses it (one per partition in
 *       unsentIsrUpdates until its answer);</li>
 *   <li>no LogManager and no ReplicaManager: the log is handed to Partition
 *       ({@code setLog}) before its first makeLeader or makeFollower; a follower
 *       truncates its log itself ({@link #truncateTo}, as LogManager.truncateTo does at
 *       its core); and the shim does, at a shutdown and the next start, the little of
 *       their work a restart needs ({@link #uncleanShutdown}, {@link #controlledShutdown},
 *       {@link #restart}): the recovery-point, log-start-offset and high-watermark
 *       checkpoints and the clean-shutdown marker, in Kafka's own files, and the log
 *       read back from the folder by UnifiedLog.create as LogManager.loadLog does.</li>
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
        /** Set the clock to {@code ms} (absolute, ms). */
        public void setMilliseconds(long ms) { nowMs = ms; }
        /** Abstract in {@link Time} before 4.4.0 (a default since): nothing here waits on
         *  another thread, so the condition holds now or the wait times out. */
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            if (!condition.get()) {
                throw new org.apache.kafka.common.errors.TimeoutException("Condition not satisfied before " + deadlineMs);
            }
        }
    }

    /** A scheduler running each task at once, on the caller's thread (a periodic task
     *  once): the log's asynchronous work (the epoch cache's checkpoint flush after a
     *  truncation, the partition metadata file, a segment's deletion) is done before
     *  the call that asked for it returns, deterministically. With {@code deferring},
     *  the epoch cache's checkpoint writes (LeaderEpochFileCache's
     *  "leader-epoch-cache-flush-" tasks) wait instead until {@link #runEpochCheckpointWrites}:
     *  the moments between a truncation and its write, where a crash loses it. */
    public static final class BridgeScheduler implements Scheduler {
        private static final String EPOCH_CHECKPOINT_WRITE = "leader-epoch-cache-flush-";
        private boolean deferring;
        private final List<Runnable> epochCheckpointWrites = new ArrayList<>();

        private static final ScheduledFuture<Object> DONE = new ScheduledFuture<>() {
            @Override public long getDelay(TimeUnit unit) { return 0; }
            @Override public int compareTo(Delayed other) {
                return Long.compare(0, other.getDelay(TimeUnit.MILLISECONDS));
            }
            @Override public boolean cancel(boolean mayInterruptIfRunning) { return false; }
            @Override public boolean isCancelled() { return false; }
            @Override public boolean isDone() { return true; }
            @Override public Object get() { return null; }
            @Override public Object get(long timeout, TimeUnit unit) { return null; }
        };

        @Override public void startup() { }
        @Override public void shutdown() { }
        @Override public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (deferring && name.startsWith(EPOCH_CHECKPOINT_WRITE)) epochCheckpointWrites.add(task);
            else task.run();
            return DONE;
        }
        @Override public void resizeThreadPool(int threads) { }

        /** Whether an epoch checkpoint write waits. */
        public boolean epochCheckpointWriteScheduled() { return !epochCheckpointWrites.isEmpty(); }

        /** Run the waiting epoch checkpoint writes, in the order they were scheduled. */
        public void runEpochCheckpointWrites() {
            List<Runnable> writes = new ArrayList<>(epochCheckpointWrites);
            epochCheckpointWrites.clear();
            for (Runnable write : writes) write.run();
        }

        /** The process died: the waiting writes never run. */
        public void dropEpochCheckpointWrites() { epochCheckpointWrites.clear(); }
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
    /** ReplicaManager's high-watermark checkpoint file (ReplicaManager.HighWatermarkFilename). */
    private static final String HIGH_WATERMARK_CHECKPOINT_FILE = "replication-offset-checkpoint";
    private static DelayedOperations delayedOperations;

    private final ManualTime time;
    private final BridgeScheduler scheduler = new BridgeScheduler();
    private final int brokerId;
    private long brokerEpoch = -1L;
    private final Map<Integer, Long> aliveBrokerEpochs = new HashMap<>();
    private final Map<Integer, Boolean> fenced = new HashMap<>();
    private final Map<Integer, Boolean> shuttingDown = new HashMap<>();
    private final Deque<Submitted> submitted = new ArrayDeque<>();
    private final TopicPartition tp;
    private final Uuid topicId;
    private final File dataDir;    // the broker's log dir: the checkpoints and the clean-shutdown marker
    private final File logDir;     // the partition's folder in it
    private LogConfig config;   // the topic's log config: min.insync.replicas changes (setMinIsr)
    private final LogDirFailureChannel logDirFailureChannel = new LogDirFailureChannel(1);
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats();
    private final OffsetCheckpointFile recoveryPointCheckpoint;
    private final OffsetCheckpointFile logStartOffsetCheckpoint;
    private final OffsetCheckpointFile highWatermarkCheckpoint;
    private final MetadataCache metadataCache;
    private final AlterPartitionManager alterPartitionManager;
    private final AlterPartitionListener listener;
    private UnifiedLog log;
    private Partition partition;    // null while the broker is down
    private boolean lastLoadClean = true;   // a new log: created as after a clean shutdown

    public ReplicheckPartitionShim(File dir, String topic, Uuid topicId, int brokerId, int minIsr, ManualTime time)
            throws IOException {
        this.time = time;
        this.brokerId = brokerId;
        this.topicId = topicId;
        this.tp = new TopicPartition(topic, 0);
        Properties props = new Properties();
        props.put("min.insync.replicas", Integer.toString(minIsr));
        this.config = new LogConfig(props);
        this.dataDir = dir;
        this.logDir = new File(dir, topic + "-0");
        this.recoveryPointCheckpoint = new OffsetCheckpointFile(
            new File(dir, org.apache.kafka.storage.internals.log.LogManager.RECOVERY_POINT_CHECKPOINT_FILE),
            logDirFailureChannel);
        this.logStartOffsetCheckpoint = new OffsetCheckpointFile(
            new File(dir, org.apache.kafka.storage.internals.log.LogManager.LOG_START_OFFSET_CHECKPOINT_FILE),
            logDirFailureChannel);
        this.highWatermarkCheckpoint = new OffsetCheckpointFile(new File(dir, HIGH_WATERMARK_CHECKPOINT_FILE),
            logDirFailureChannel);
        this.log = UnifiedLog.create(logDir, config, 0L, 0L, scheduler, brokerTopicStats, time, 60_000,
            new ProducerStateManagerConfig(86_400_000, false), 600_000, logDirFailureChannel, true,
            Optional.of(topicId));
        this.metadataCache = (MetadataCache) Proxy.newProxyInstance(
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
        this.alterPartitionManager = new AlterPartitionManager() {
            @Override public void start() { }
            @Override public void shutdown() { }
            // As DefaultAlterPartitionManager.submit: one request per partition until its answer
            // (unsentIsrUpdates.putIfAbsent); another fails before submit returns, so Partition's
            // whenComplete (handleAlterPartitionError, OPERATION_NOT_ATTEMPTED) rolls it back
            // inside the call that proposed it (a fetch: before its HWM update).
            @Override public CompletableFuture<LeaderAndIsr> submit(TopicIdPartition ignored, LeaderAndIsr leaderAndIsr) {
                CompletableFuture<LeaderAndIsr> future = new CompletableFuture<>();
                if (submitted.isEmpty()) {
                    submitted.addLast(new Submitted(leaderAndIsr, future));
                } else {
                    future.completeExceptionally(new OperationNotAttemptedException(
                        "Failed to enqueue ISR change state " + leaderAndIsr + ": one is in flight"));
                }
                return future;
            }
        };
        this.listener = new AlterPartitionListener() {
            @Override public void markIsrExpand() { }
            @Override public void markIsrShrink() { }
            @Override public void markFailed() { }
        };
        this.partition = newPartition();
    }

    /** A Partition as ReplicaManager creates one for the broker (no leader, leader epoch
     *  -1, partition epoch 0), over the log. */
    private Partition newPartition() {
        Partition p = new Partition(tp, REPLICA_LAG_TIME_MAX_MS, brokerId, () -> brokerEpoch, time, listener,
            delayedOperations(tp), metadataCache, null, alterPartitionManager, Option.apply(topicId));
        p.setLog(log, false);
        return p;
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

    /** The broker's Partition; null while the broker is down (between a shutdown and
     *  {@link #restart}). */
    public Partition partition() { return partition; }
    /** The log: while the broker is down, the one its next start will have (read back
     *  from the folder at the shutdown; nothing touches the folder in between). */
    public UnifiedLog log() { return log; }
    public ManualTime time() { return time; }
    public long replicaLagTimeMaxMs() { return REPLICA_LAG_TIME_MAX_MS; }
    /** Whether the last read of the log from the folder found the clean-shutdown marker. */
    public boolean lastLoadClean() { return lastLoadClean; }

    /** The topic's new min.insync.replicas reaches the log's config, as Kafka's
     *  DynamicConfigPublisher → LogManager.updateTopicConfig → UnifiedLog.updateConfig
     *  hands it over; a restart reads the log back with it. */
    public void setMinIsr(int minIsr) {
        Properties props = new Properties();
        props.putAll(config.originals());
        props.put("min.insync.replicas", Integer.toString(minIsr));
        config = new LogConfig(props);
        log.updateConfig(config);
    }

    /** The min.insync.replicas the log's config holds (UnifiedLog.config), as
     *  Partition reads it; -1 while the broker is down. */
    public int minIsr() {
        return log == null ? -1 : log.config().minInSyncReplicas;
    }

    /** This broker's own epoch (Partition's localBrokerEpochSupplier). */
    public void setBrokerEpoch(long epoch) { brokerEpoch = epoch; }

    /** What this broker's metadata says of {@code broker}: its epoch (null: not alive),
     *  fenced, in controlled shutdown. */
    public void setBroker(int broker, Long epoch, boolean isFenced, boolean isShuttingDown) {
        if (epoch == null) aliveBrokerEpochs.remove(broker); else aliveBrokerEpochs.put(broker, epoch);
        fenced.put(broker, isFenced);
        shuttingDown.put(broker, isShuttingDown);
    }

    /** The AlterPartition request Partition submitted and the bridge has not answered
     *  (at most one: Kafka's unsentIsrUpdates entry for the partition). */
    public Deque<Submitted> submitted() { return submitted; }

    private Partition running() {
        if (partition == null) throw new IllegalStateException("broker " + brokerId + " is down");
        return partition;
    }

    // ------------------------------------------------------------------ leader

    /** Produce one record of {@code value} with acks=all (Partition.appendRecordsToLeader);
     *  returns its offset. Throws NotEnoughReplicasException below MinISR. */
    public long appendToLeader(long value) {
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord(time.milliseconds(), null, Long.toString(value).getBytes()));
        return running().appendRecordsToLeader(records, AppendOrigin.CLIENT, -1, RequestLocal.noCaching(),
            VerificationGuard.SENTINEL, (short) 0).firstOffset();
    }

    /** Whether an acks=all write waiting for {@code requiredOffset} (its last offset + 1)
     *  completes now, as Kafka's DelayedProduce asks (Partition.checkEnoughReplicasReachOffset):
     *  -1 while it waits, else the error code it completes with (0: NONE, acknowledged;
     *  NOT_ENOUGH_REPLICAS_AFTER_APPEND when the Maximal ISR is below MinISR). */
    public int checkEnoughReplicasReachOffset(long requiredOffset) {
        scala.Tuple2<Object, Errors> done = running().checkEnoughReplicasReachOffset(requiredOffset);
        return (Boolean) done._1() ? done._2().code() : -1;
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
        return running().fetchRecords(params, data, time.milliseconds(), Integer.MAX_VALUE, true, true);
    }

    /** The leader's periodic ISR check (the isr-expiration task: Partition.maybeShrinkIsr). */
    public void maybeShrinkIsr() { running().maybeShrinkIsr(); }

    // ---------------------------------------------------------------- follower

    /** Append a fetch answer's records to the follower's log
     *  (Partition.appendRecordsToFollowerOrFutureReplica, as ReplicaFetcherThread.
     *  processPartitionData calls it): the i-th record has {@code offsets[i]}, leader
     *  epoch {@code epochs[i]} and {@code values[i]}, each in a batch of its own whose
     *  partitionLeaderEpoch is its epoch; {@code currentLeaderEpoch} is the epoch of the
     *  fetch (batches of a later epoch are skipped, with all after them: KAFKA-18723).
     *  Returns the log end offset after. */
    public long appendAsFollower(long[] offsets, int[] epochs, long[] values, int currentLeaderEpoch) {
        Partition p = running();
        p.appendRecordsToFollowerOrFutureReplica(batches(offsets, epochs, values, time.milliseconds()), false,
            currentLeaderEpoch);
        return log.logEndOffset();
    }

    /** The records of a fetch answer as a leader wrote them: the i-th record has
     *  {@code offsets[i]}, leader epoch {@code epochs[i]} and {@code values[i]} (its
     *  value's decimal text), each in a batch of its own whose partitionLeaderEpoch is
     *  its epoch, stamped {@code timestampMs}. */
    public static MemoryRecords batches(long[] offsets, int[] epochs, long[] values, long timestampMs) {
        MemoryRecords[] batches = new MemoryRecords[offsets.length];
        int size = 0;
        for (int i = 0; i < offsets.length; i++) {
            batches[i] = MemoryRecords.withRecords(offsets[i], Compression.NONE, epochs[i],
                new SimpleRecord(timestampMs, null, Long.toString(values[i]).getBytes()));
            size += batches[i].sizeInBytes();
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (MemoryRecords batch : batches) buffer.put(batch.buffer());
        buffer.flip();
        return MemoryRecords.readableRecords(buffer);
    }

    /** Truncate the log to {@code offset} (Partition.truncateTo, which asks LogManager.
     *  truncateTo to call UnifiedLog.truncateTo; LogManager's recovery-point checkpoint
     *  after it is written here at the next shutdown). Whether records were removed. */
    public boolean truncateTo(long offset) {
        running();
        return log.truncateTo(offset);
    }

    /** Flush the log up to its end (UnifiedLog.flush, as LogManager's flusher does):
     *  the recovery point moves to the log end offset. */
    public void flush() {
        running();
        log.flush(false);
    }

    /** From now on the epoch cache's checkpoint write a truncation schedules
     *  (LeaderEpochFileCache.truncateFromEndAsyncFlush) waits for
     *  {@link #writeEpochCheckpoint}, as a broker's scheduler thread may make it wait,
     *  and an unclean shutdown loses it. */
    public void deferEpochCheckpointWrites() {
        scheduler.deferring = true;
    }

    /** The log's scheduler runs the waiting epoch checkpoint writes
     *  (LeaderEpochFileCache.writeIfDirExists): the file holds the cache. */
    public void writeEpochCheckpoint() {
        running();
        scheduler.runEpochCheckpointWrites();
    }

    /** Whether an epoch checkpoint write waits that would change the file: one whose
     *  file does not hold the cache. (The load schedules a write that changes
     *  nothing whenever the first entry starts at the log start offset:
     *  truncateFromStartAsyncFlush removes and puts back that entry.) */
    public boolean epochCheckpointWriteScheduled() throws IOException {
        if (!scheduler.epochCheckpointWriteScheduled()) return false;
        List<EpochEntry> onDisk = new LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.newFile(logDir),
            logDirFailureChannel).read();
        return !onDisk.equals(log.leaderEpochCache().epochEntries());
    }

    // ------------------------------------------------------------ lifecycle

    /** The checkpoints Kafka writes in the background (ReplicaManager's high watermark
     *  every replica.high.watermark.checkpoint.interval.ms, LogManager's recovery point
     *  and log start offset every log.flush.*.checkpoint.interval.ms), as of now. */
    private void checkpoint() {
        highWatermarkCheckpoint.write(Map.of(tp, log.highWatermark()));
        recoveryPointCheckpoint.write(Map.of(tp, log.recoveryPoint()));
        logStartOffsetCheckpoint.write(Map.of(tp, log.logStartOffset()));
    }

    /** The broker dies (the process, or with {@code lossy} the machine): nothing more is
     *  written, the log's files are closed as they are (UnifiedLog.closeQuietly: no
     *  flush, no producer snapshot) and there is no clean-shutdown marker. The
     *  background checkpoints (high watermark, recovery point, log start offset) are
     *  taken as of the moment of the crash.
     *  <p>With {@code lossy}, what was not flushed is lost: every record at or above the
     *  recovery point. The loss is made on disk, not by UnifiedLog.truncateTo: the
     *  active segment file is cut at the recovery point's batch (a flush always ends at
     *  a batch's end) and later segments' files are removed, while the leader epoch
     *  checkpoint, which LeaderEpochFileCache.assign writes and syncs at once, keeps the
     *  entries of the lost records, as a machine's crash leaves them. Kafka's own
     *  recovery then has to find the log's end in the files and drop those entries
     *  (LogLoader: segment recovery from the recovery point, then the epoch cache
     *  truncated from the recovered log end offset); a truncateTo would have done that
     *  work for it, with the very code a crash does not run.
     *  <p>Then the folder is read back as the next start will ({@link #load}). */
    public void uncleanShutdown(boolean lossy) throws IOException {
        running();
        checkpoint();
        List<File> gone = new ArrayList<>();
        File cut = null;
        int cutAt = 0;
        if (lossy) {
            long recoveryPoint = log.recoveryPoint();
            for (LogSegment segment : log.logSegments()) {
                if (segment.baseOffset() >= recoveryPoint) {
                    gone.add(segment.log().file());
                    gone.add(segment.offsetIndexFile());
                    gone.add(segment.timeIndexFile());
                    gone.add(segment.txnIndex().file());
                } else {
                    // the first batch with records at or above the recovery point: a flush
                    // always ends at a batch's end (the log end offset)
                    FileRecords.LogOffsetPosition at = segment.translateOffset(recoveryPoint);
                    if (at != null) {
                        cut = segment.log().file();
                        cutAt = at.position;
                    }
                }
            }
        }
        log.closeQuietly();
        scheduler.dropEpochCheckpointWrites();   // the scheduler's thread dies with the process
        partition = null;
        submitted.clear();   // the requests die with the broker: their answers never come
        if (cut != null) {
            try (RandomAccessFile file = new RandomAccessFile(cut, "rw")) {
                file.setLength(cutAt);
            }
        }
        for (File file : gone) Files.deleteIfExists(file.toPath());
        load();
    }

    /** A controlled shutdown's end: ReplicaManager.shutdown checkpoints the high
     *  watermark; LogManager.shutdown flushes the log (UnifiedLog.flush(true)), closes it,
     *  checkpoints the recovery point and log start offset and writes the clean-shutdown
     *  marker (with this broker's epoch). Then the folder is read back as the next start
     *  will ({@link #load}: no recovery). */
    public void controlledShutdown() throws Exception {
        running();
        highWatermarkCheckpoint.write(Map.of(tp, log.highWatermark()));
        scheduler.runEpochCheckpointWrites();   // KafkaScheduler.shutdown runs its queued tasks
        log.prepareActiveSegmentForClose();   // LogManager.shutdown, since 4.4.0
        log.flush(true);
        log.close();
        recoveryPointCheckpoint.write(Map.of(tp, log.recoveryPoint()));
        logStartOffsetCheckpoint.write(Map.of(tp, log.logStartOffset()));
        new CleanShutdownFileHandler(dataDir.getPath()).write(brokerEpoch);
        partition = null;
        submitted.clear();
        load();
    }

    /** Read the log back from the folder as a starting broker does: LogManager.loadLogs
     *  (the clean-shutdown marker, read and deleted, says whether the last shutdown was
     *  clean; the checkpoints give the recovery point and log start offset) and
     *  LogManager.loadLog (UnifiedLog.create, which recovers the log from the recovery
     *  point after an unclean shutdown), then the high watermark from ReplicaManager's
     *  checkpoint, as Partition.createLog sets it (UnifiedLog.updateHighWatermark: at
     *  most the log end offset) when the first makeLeader or makeFollower asks
     *  LogManager for the log. */
    private void load() throws IOException {
        CleanShutdownFileHandler marker = new CleanShutdownFileHandler(dataDir.getPath());
        boolean clean = marker.exists();
        if (clean) {
            try {
                marker.delete();
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
        lastLoadClean = clean;
        long recoveryPoint = recoveryPointCheckpoint.read().getOrDefault(tp, 0L);
        long logStartOffset = logStartOffsetCheckpoint.read().getOrDefault(tp, 0L);
        log = UnifiedLog.create(logDir, config, logStartOffset, recoveryPoint, scheduler, brokerTopicStats, time,
            60_000, new ProducerStateManagerConfig(86_400_000, false), 600_000, logDirFailureChannel, clean,
            Optional.empty());
        log.updateHighWatermark(highWatermarkCheckpoint.read().getOrDefault(tp, 0L));
    }

    /** The broker starts again, in {@code epoch}: a new Partition (no leader, leader epoch
     *  -1, partition epoch 0, no follower state) over the log read back at the shutdown.
     *  This broker's view of the others ({@link #setBroker}) is kept. */
    public void restart(long epoch) {
        if (partition != null) throw new IllegalStateException("broker " + brokerId + " is running");
        brokerEpoch = epoch;
        partition = newPartition();
    }

    /** The bridge is done with this replica: the log's files are closed (their memory
     *  maps released) before its folder is removed. */
    public void dispose() {
        partition = null;
        log.closeQuietly();
    }

    // ------------------------------------------------------------ reading

    /** The records of {@code records} as (offset, the leader epoch of its batch, value),
     *  one after the other in one array (three longs a record: one array crosses to
     *  Python at once). A log's records (FileRecords) are read into memory at once first:
     *  one read of the file, not one per batch. */
    private static long[] rows(Records records) throws IOException {
        if (records instanceof FileRecords file) {
            ByteBuffer buffer = ByteBuffer.allocate(file.sizeInBytes());
            file.readInto(buffer, 0);   // flips the buffer
            records = MemoryRecords.readableRecords(buffer);
        }
        LongStream.Builder out = LongStream.builder();
        for (RecordBatch batch : records.batches()) {
            for (org.apache.kafka.common.record.internal.Record r : batch) {
                byte[] bytes = new byte[r.valueSize()];
                r.value().get(bytes);
                out.add(r.offset()).add(batch.partitionLeaderEpoch()).add(Long.parseLong(new String(bytes)));
            }
        }
        return out.build().toArray();
    }

    /** A fetch answer's diverging epoch (LogReadInfo's, a record's accessor or a field by release). */
    public static Optional<FetchResponseData.EpochEndOffset> divergingEpoch(LogReadInfo info) {
        return info.divergingEpoch();
    }

    /** A fetch answer's HWM (LogReadInfo's, a record's accessor or a field by release). */
    public static long highWatermark(LogReadInfo info) {
        return info.highWatermark();
    }

    /** Record batches of a fetch, for a follower's log, flat as {@link #rows} gives them:
     *  each record's leader epoch is its batch's partitionLeaderEpoch. */
    public static long[] records(LogReadInfo info) throws IOException {
        return rows(info.fetchedData().records);
    }

    /** The log's records from its start offset to its end (UnifiedLog.read), flat as
     *  {@link #rows} gives them. */
    public long[] logRecordsFlat() throws IOException {
        return rows(log.read(log.logStartOffset(), Integer.MAX_VALUE, FetchIsolation.LOG_END, true).records);
    }

    /** The log's records from its start offset to its end, one (offset, leader epoch,
     *  value) row each. */
    public long[][] logRecords() throws IOException {
        long[] flat = logRecordsFlat();
        long[][] out = new long[flat.length / 3][];
        for (int i = 0; i < out.length; i++) out[i] = new long[]{flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
        return out;
    }

    /** The leader epoch cache's entries as (epoch, start offset), oldest first. */
    public long[][] epochEntries() {
        List<EpochEntry> entries = log.leaderEpochCache().epochEntries();
        long[][] out = new long[entries.size()][];
        for (int i = 0; i < out.length; i++) out[i] = new long[]{entries.get(i).epoch(), entries.get(i).startOffset()};
        return out;
    }
}
