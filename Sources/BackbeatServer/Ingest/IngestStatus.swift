import BackbeatCore
import BackbeatKafka

/// Where the ingest stands now: each owned partition's position and freshness, what each topic's polls counted and
/// how long ago a flush last committed. What `GET /v1/ingest` answers and what `IngestGauges` records.
struct IngestStatus: Sendable {
    struct Partition: Sendable {
        var topicPartition: TopicPartition
        /// The next offset stored in PostgreSQL (nil: nothing stored yet).
        var storedOffset: Int64?
        /// The high watermark as last fetched less the stored offset: messages not yet flushed (nil: no fetch yet).
        var lagMessages: Int64?
        /// The newest `occurred_at` counted, in seconds (nil: none yet).
        var newestEventTime: Int64?
        /// How long ago, in seconds, the newest counted event occurred: an idle partition's grows too, while
        /// `lagMessages` stays 0.
        var eventTimeLagSeconds: Double?
        /// Whether consumption waits at a gap for an operator.
        var waitingAtGap: Bool
    }

    var partitions: [Partition]
    var topics: [String: IngestTotals]
    var flushesCommitted: Int
    /// When the last flush committed (nil: none since the start).
    var lastFlushAt: Timestamp?
    /// Seconds since the last flush committed, or since the ingest started when none has.
    var lastFlushAgeSeconds: Double
    var paused: Bool
    var pendingBytes: Int
    var dedupIDs: Int
    var dedupBytes: Int
    var dedupIDsForgottenEarly: Int
}

extension IngestService {
    /// The ingest's status as of now; lags in messages are known once `consumer` has fetched.
    func status(consumer: KafkaConsumer?) -> IngestStatus {
        let now = Self.now()
        let (stored, newest, waiting, topics, flushes, lastFlush, paused, pending, dedup, forgotten) = state.read {
            ($0.ledger.storedOffsets, $0.ledger.newestEventTimes, Set($0.ledger.waitingGaps.map(\.topicPartition)), $0.topicTotals,
             $0.flushesCommitted, $0.lastFlushCommittedAt, $0.paused, $0.pendingBytes,
             (ids: $0.ledger.dedupIDCount, bytes: $0.ledger.dedupByteCount), $0.ledger.idsForgottenEarly)
        }
        let partitions = stored.keys.sorted().map { partition in
            let offset = stored[partition] ?? nil
            let lag = consumer?.cachedWatermarks(partition).map { max(0, $0.high - (offset ?? $0.low)) }
            let newestTime = newest[partition] ?? nil
            return IngestStatus.Partition(
                topicPartition: partition, storedOffset: offset, lagMessages: lag, newestEventTime: newestTime,
                eventTimeLagSeconds: newestTime.map { max(0, Double(now.microseconds - $0 * 1_000_000) / 1_000_000) },
                waitingAtGap: waiting.contains(partition))
        }
        return IngestStatus(
            partitions: partitions, topics: topics, flushesCommitted: flushes, lastFlushAt: lastFlush,
            lastFlushAgeSeconds: max(0, Double(now.microseconds - (lastFlush ?? startedAt).microseconds) / 1_000_000),
            paused: paused, pendingBytes: pending, dedupIDs: dedup.ids, dedupBytes: dedup.bytes,
            dedupIDsForgottenEarly: forgotten)
    }
}
