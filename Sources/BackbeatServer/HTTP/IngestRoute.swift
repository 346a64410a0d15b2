import BackbeatCore
import Hummingbird

/// `GET /v1/ingest`: how fresh this instance's numbers are and what its ingest counted: each owned partition's
/// stored offset, lag in messages and in seconds of event time; per topic the events counted, rejected, resent
/// (not counted again), rejected for a conflicting event id and counted beyond the dedup window; the last flush.
struct IngestRoute<Context: AuthenticatedRequestContext>: Sendable {
    let ingest: IngestService?

    struct IngestResponse: ResponseEncodable {
        /// Whether this instance consumes Kafka (false: the rest is empty).
        var enabled: Bool
        var partitions: [Partition]
        var topics: [Topic]
        var flushes_committed: Int
        /// When the last flush committed; absent before the first.
        var last_flush_at: String?
        /// Seconds since the last flush committed, or since the ingest started when none has.
        var last_flush_age_seconds: Double
        var paused: Bool
        var pending_bytes: Int
        var dedup: Dedup
    }

    struct Partition: Encodable {
        var topic: String
        var partition: Int32
        var stored_offset: Int64?
        var lag_messages: Int64?
        var newest_event_time: String?
        var event_time_lag_seconds: Double?
        var waiting_at_gap: Bool
    }

    struct Topic: Encodable {
        var topic: String
        var accepted: Int
        var rejected: Int
        var duplicates: Int
        var conflicting_event_ids: Int
        var beyond_dedup_window: Int
    }

    struct Dedup: Encodable {
        var enabled: Bool
        var ids: Int
        var bytes: Int
        var budget_bytes: Int
        var ids_forgotten_early: Int
    }

    func add(to group: RouterGroup<Context>) {
        group.get("ingest") { request, context in
            try context.requireAdmin()
            try request.requireKnownParameters([])
            return response()
        }
    }

    func response() -> IngestResponse {
        guard let ingest else {
            return IngestResponse(
                enabled: false, partitions: [], topics: [], flushes_committed: 0, last_flush_at: nil, last_flush_age_seconds: 0,
                paused: false, pending_bytes: 0, dedup: Dedup(enabled: false, ids: 0, bytes: 0, budget_bytes: 0, ids_forgotten_early: 0))
        }
        let status = ingest.status(consumer: ingest.consumer.withLock { $0 })
        let topics = Set(ingest.configuration.topics).union(status.topics.keys).sorted().map { topic in
            let totals = status.topics[topic] ?? IngestTotals()
            return Topic(topic: topic, accepted: totals.accepted, rejected: totals.rejected, duplicates: totals.duplicates,
                         conflicting_event_ids: totals.conflicts, beyond_dedup_window: totals.beyondWindow)
        }
        return IngestResponse(
            enabled: true,
            partitions: status.partitions.map { partition in
                Partition(
                    topic: partition.topicPartition.topic, partition: partition.topicPartition.partition,
                    stored_offset: partition.storedOffset, lag_messages: partition.lagMessages,
                    newest_event_time: partition.newestEventTime.map { RFC3339.format(Timestamp(seconds: $0)) },
                    event_time_lag_seconds: partition.eventTimeLagSeconds.map { ($0 * 1000).rounded() / 1000 },
                    waiting_at_gap: partition.waitingAtGap)
            },
            topics: topics, flushes_committed: status.flushesCommitted,
            last_flush_at: status.lastFlushAt.map(RFC3339.format), last_flush_age_seconds: (status.lastFlushAgeSeconds * 1000).rounded() / 1000,
            paused: status.paused, pending_bytes: status.pendingBytes,
            dedup: Dedup(
                enabled: ingest.configuration.dedup != nil, ids: status.dedupIDs, bytes: status.dedupBytes,
                budget_bytes: ingest.configuration.dedupBudgetBytes, ids_forgotten_early: status.dedupIDsForgottenEarly))
    }
}
