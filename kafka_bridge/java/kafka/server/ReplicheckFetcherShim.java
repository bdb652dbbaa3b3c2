package kafka.server;

import kafka.cluster.Partition;
import kafka.cluster.ReplicheckPartitionShim;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.server.LeaderEndPoint;
import org.apache.kafka.server.PartitionFetchState;
import org.apache.kafka.server.ReplicaFetch;
import org.apache.kafka.server.ResultWithPartitions;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.network.BrokerEndPoint;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import scala.Option;

/**
 * Apache Kafka's own fetcher, {@link AbstractFetcherThread}, for one follower's
 * replica of one partition (a {@link ReplicheckPartitionShim}), driven a step at a time
 * as Kafka's AbstractFetcherThreadTest drives its MockFetcherThread: the thread is never
 * started; the bridge asks it for its next fetch ({@link #sendFetch}: Kafka's
 * maybeTruncate, then the request built from Kafka's fetch state) and hands it the
 * leader's answer when the network delivers it ({@link #processResponse}: Kafka's
 * processFetchRequest, which decides whether the answer still applies, truncates on a
 * diverging epoch (getOffsetTruncationState, truncateOnFetchResponse), appends and takes
 * the leader's HWM, or handles the error: FENCED_LEADER_EPOCH removes the partition and
 * marks it failed until the broker applies a new leader epoch).
 * <p>
 * What ReplicaFetcherThread adds to AbstractFetcherThread is restated here on the shim's
 * Partition and UnifiedLog, without its quotas and metrics: processPartitionData,
 * truncate (through the shim, which does LogManager.truncateTo's part),
 * truncateFullyAndStartAt, and the log reads. The fetcher's collaborators are what a
 * broker configures: replica.fetch.backoff.ms = 0 (a partition in error is fetched again
 * at once: when the follower fetches is the caller's choice), no tiered storage, and one
 * thread per leader epoch (Kafka keeps a thread per leader broker and moves the partition
 * between them on a leader change; with one partition, its fetch state is all a thread
 * holds). The leader is reached only through the answer handed in: a ListOffsets or
 * OffsetsForLeaderEpoch request (an OFFSET_OUT_OF_RANGE answer's reset, a partition
 * truncating without the diverging epoch) is counted in {@link #unansweredRequests} and
 * fails as a disconnected leader's would, for the bridge to report.
 */
public final class ReplicheckFetcherShim extends AbstractFetcherThread {

    /** RemoteLeaderEndPoint's fetch size (replica.fetch.max.bytes' default). */
    private static final int FETCH_SIZE = 1024 * 1024;
    private static final Method MAYBE_TRUNCATE = maybeTruncate();

    /** The leader as the fetcher reaches it: the fetch request it builds, as
     *  RemoteLeaderEndPoint.buildFetch does (no fetch session, no throttling), and the
     *  answer handed in by {@link #processResponse}. */
    static final class Endpoint implements LeaderEndPoint {
        private final int brokerId;
        private final int leaderId;
        private Map<TopicPartition, FetchResponseData.PartitionData> answer;
        private int unanswered;

        Endpoint(int brokerId, int leaderId) {
            this.brokerId = brokerId;
            this.leaderId = leaderId;
        }

        @Override public boolean isTruncationOnFetchSupported() { return true; }
        @Override public void initiateClose() { }
        @Override public void close() { }
        @Override public BrokerEndPoint brokerEndPoint() { return new BrokerEndPoint(leaderId, "localhost", 9092); }

        @Override public Map<TopicPartition, FetchResponseData.PartitionData> fetch(FetchRequest.Builder request) {
            if (answer == null) throw new IllegalStateException("no answer was handed in for this fetch");
            return answer;
        }

        private <T> T unanswered(String request) {
            unanswered++;
            throw new IllegalStateException(request + " to the leader is not bridged");
        }

        @Override public OffsetAndEpoch fetchEarliestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return unanswered("ListOffsets (earliest)");
        }

        @Override public OffsetAndEpoch fetchLatestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return unanswered("ListOffsets (latest)");
        }

        @Override public OffsetAndEpoch fetchEarliestLocalOffset(TopicPartition tp, int currentLeaderEpoch) {
            return unanswered("ListOffsets (earliest local)");
        }

        // no @Override: LeaderEndPoint has it from 4.3.0
        public OffsetAndEpoch fetchEarliestPendingUploadOffset(TopicPartition tp, int currentLeaderEpoch) {
            return unanswered("ListOffsets (earliest pending upload)");
        }

        @Override public Map<TopicPartition, EpochEndOffset> fetchEpochEndOffsets(
                Map<TopicPartition, OffsetForLeaderPartition> partitions) {
            return unanswered("OffsetsForLeaderEpoch");
        }

        @Override public ResultWithPartitions<Optional<ReplicaFetch>> buildFetch(
                Map<TopicPartition, PartitionFetchState> partitions) {
            Map<TopicPartition, FetchRequest.PartitionData> data = new HashMap<>();
            partitions.forEach((tp, state) -> {
                if (state.isReadyForFetch()) {
                    data.put(tp, new FetchRequest.PartitionData(state.topicId().orElse(Uuid.ZERO_UUID),
                        state.fetchOffset(), 0L, FETCH_SIZE, Optional.of(state.currentLeaderEpoch()),
                        state.lastFetchedEpoch()));
                }
            });
            Optional<ReplicaFetch> fetch = data.isEmpty() ? Optional.empty()
                : Optional.of(new ReplicaFetch(data, request(brokerId, data)));
            return new ResultWithPartitions<>(fetch, Set.of());
        }
    }

    private final ReplicheckPartitionShim replica;
    private final TopicPartition tp;
    private final Endpoint endpoint;

    private ReplicheckFetcherShim(ReplicheckPartitionShim replica, Endpoint endpoint, int brokerId) {
        super("ReplicaFetcherThread-" + brokerId + "-" + endpoint.leaderId, "replicheck-fetcher-" + brokerId,
            endpoint, new FailedPartitions(), null, 0, false, new BrokerTopicStats());
        this.replica = replica;
        this.tp = replica.partition().topicPartition();
        this.endpoint = endpoint;
    }

    /** A fetcher of {@code replica}'s partition (on broker {@code brokerId}) from broker
     *  {@code leaderId} in leader epoch {@code leaderEpoch}, as ReplicaManager starts one
     *  after a makeFollower that returned true (a new leader epoch), the partition added
     *  (InitialFetchState at initialFetchOffset: the log end offset, or the HWM for a log
     *  without a leader epoch, which Kafka's fetcher then truncates to). */
    public static ReplicheckFetcherShim start(ReplicheckPartitionShim replica, int brokerId, int leaderId,
                                              int leaderEpoch) {
        ReplicheckFetcherShim fetcher = new ReplicheckFetcherShim(replica, new Endpoint(brokerId, leaderId), brokerId);
        UnifiedLog log = replica.log();
        long initOffset = log.latestEpoch().isPresent() ? log.logEndOffset() : log.highWatermark();
        Map<TopicPartition, InitialFetchState> add = new HashMap<>();
        add.put(fetcher.tp, new InitialFetchState(replica.partition().topicId(),
            fetcher.endpoint.brokerEndPoint(), leaderEpoch, initOffset));
        fetcher.addPartitions(scala.jdk.javaapi.CollectionConverters.asScala(add));
        return fetcher;
    }

    private static FetchRequest.Builder request(int brokerId, Map<TopicPartition, FetchRequest.PartitionData> data) {
        return FetchRequest.Builder.forReplica((short) 17, brokerId, -1L, 0, 1, data);
    }

    private static Method maybeTruncate() {
        try {
            Method method = AbstractFetcherThread.class.getDeclaredMethod("maybeTruncate");
            method.setAccessible(true);
            return method;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The fetch state Kafka's fetcher holds for the partition, or null once it marked
     *  the partition failed (removed until a new leader epoch). */
    public PartitionFetchState state() {
        Option<PartitionFetchState> state = fetchState(tp);
        return state.isDefined() ? state.get() : null;
    }

    /** What a ListOffsets or OffsetsForLeaderEpoch request the fetcher sent found: none
     *  is bridged, each failed as a disconnected leader's would. */
    public int unansweredRequests() { return endpoint.unanswered; }

    /** Kafka's doWork up to the request: maybeTruncate, then the fetch built from the
     *  fetch state; {fetch offset, last fetched epoch (-1: none), current leader epoch},
     *  or null when the fetcher has nothing to fetch. */
    public long[] sendFetch() {
        try {
            MAYBE_TRUNCATE.invoke(this);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        PartitionFetchState state = state();
        if (state == null) return null;
        Optional<ReplicaFetch> fetch = endpoint.buildFetch(Map.of(tp, state)).result();
        if (fetch.isEmpty()) return null;
        FetchRequest.PartitionData data = fetch.get().partitionData().get(tp);
        return new long[] {data.fetchOffset, data.lastFetchedEpoch.orElse(-1), data.currentLeaderEpoch.orElse(-1)};
    }

    /** The leader's answer to the fetch at {@code fetchOffset} in {@code leaderEpoch},
     *  handed to Kafka's processFetchRequest: {@code error} (an Errors name), the leader's
     *  {@code highWatermark}, a diverging epoch ({@code divergingEpoch} -1: none) or the
     *  records ({@code offsets}, {@code epochs}, {@code values}: one batch each, as the
     *  leader wrote them, stamped with the follower's clock). */
    public void processResponse(long fetchOffset, int leaderEpoch, String error, long highWatermark,
                                int divergingEpoch, long divergingEndOffset, long[] offsets, int[] epochs,
                                long[] values) {
        FetchResponseData.PartitionData data = new FetchResponseData.PartitionData()
            .setPartitionIndex(tp.partition())
            .setErrorCode(Errors.valueOf(error).code())
            .setHighWatermark(highWatermark)
            .setLogStartOffset(0L)
            .setRecords(ReplicheckPartitionShim.batches(offsets, epochs, values, replica.time().milliseconds()));
        if (divergingEpoch >= 0) {
            data.setDivergingEpoch(new FetchResponseData.EpochEndOffset()
                .setEpoch(divergingEpoch).setEndOffset(divergingEndOffset));
        }
        Option<Uuid> topicId = replica.partition().topicId();
        Map<TopicPartition, FetchRequest.PartitionData> sent = Map.of(tp, new FetchRequest.PartitionData(
            topicId.isDefined() ? topicId.get() : Uuid.ZERO_UUID, fetchOffset, 0L, FETCH_SIZE,
            Optional.of(leaderEpoch), Optional.empty()));
        endpoint.answer = Map.of(tp, data);
        try {
            processFetchRequest(sent, request(endpoint.brokerId, sent));
        } finally {
            endpoint.answer = null;
        }
    }

    // ------------------------------------------------- ReplicaFetcherThread's part

    @Override
    public Option<LogAppendInfo> processPartitionData(TopicPartition topicPartition, long fetchOffset,
                                                      int partitionLeaderEpoch, FetchResponseData.PartitionData data) {
        Partition partition = replica.partition();
        UnifiedLog log = partition.localLogOrException();
        MemoryRecords records = toMemoryRecords(FetchResponse.recordsOrFail(data));
        if (fetchOffset != log.logEndOffset()) {
            throw new IllegalStateException(String.format(
                "Offset mismatch for partition %s: fetched offset = %d, log end offset = %d.",
                topicPartition, fetchOffset, log.logEndOffset()));
        }
        Option<LogAppendInfo> info = partition.appendRecordsToFollowerOrFutureReplica(records, false,
            partitionLeaderEpoch);
        try {
            log.maybeUpdateHighWatermark(data.highWatermark());
        } catch (java.io.IOException e) {
            throw new org.apache.kafka.common.errors.KafkaStorageException(e);   // as Scala lets it through
        }
        log.maybeIncrementLogStartOffset(data.logStartOffset(), LogStartOffsetIncrementReason.LeaderOffsetIncremented);
        return info;
    }

    @Override
    public void truncate(TopicPartition topicPartition, OffsetTruncationState state) {
        replica.truncateTo(state.offset());
    }

    @Override
    public void truncateFullyAndStartAt(TopicPartition topicPartition, long offset) {
        replica.log().truncateFullyAndStartAt(offset, Optional.empty());
    }

    @Override
    public Optional<Integer> latestEpoch(TopicPartition topicPartition) { return replica.log().latestEpoch(); }

    @Override
    public long logStartOffset(TopicPartition topicPartition) { return replica.log().logStartOffset(); }

    @Override
    public long logEndOffset(TopicPartition topicPartition) { return replica.log().logEndOffset(); }

    @Override
    public Optional<OffsetAndEpoch> endOffsetForEpoch(TopicPartition topicPartition, int epoch) {
        return replica.log().endOffsetForEpoch(epoch);
    }

    // no @Override: AbstractFetcherThread has it from 4.3.0
    public boolean shouldFetchFromLastTieredOffset(TopicPartition topicPartition, long leaderEndOffset,
                                                   long replicaEndOffset) {
        return false;   // ReplicaFetcherThread's: only with remote storage on the topic
    }
}
