import BackbeatCore
import PostgresNIO

/// `offset_gaps`: messages the broker deleted before a consumer read them, stored with the offset move that steps
/// over them (`OffsetGap`), and the operator's way past a partition that waits at one (`resetOffset`).
extension Store {
    /// Stores `gaps` on `connection` (inside the flush's transaction). A gap stored again (another instance found
    /// it too, or a flush was retried) keeps its first detection and takes the resumption when it had none.
    func recordGaps(_ gaps: [OffsetGap], on connection: PostgresConnection) async throws {
        for gap in gaps {
            try await connection.query("""
                INSERT INTO offset_gaps (topic, partition, first_missing, last_missing, log_start, log_end, detected_at, resumed_from, resumed_at)
                VALUES (\(gap.topicPartition.topic), \(gap.topicPartition.partition), \(gap.firstMissing), \(gap.lastMissing),
                        \(gap.logStart), \(gap.logEnd), to_timestamp(\(Double(gap.detectedAt.microseconds) / 1_000_000)),
                        \(gap.resumedAt), CASE WHEN \(gap.resumedAt)::bigint IS NULL THEN NULL ELSE now() END)
                ON CONFLICT (topic, partition, first_missing) DO UPDATE
                SET resumed_from = COALESCE(offset_gaps.resumed_from, EXCLUDED.resumed_from),
                    resumed_at = COALESCE(offset_gaps.resumed_at, EXCLUDED.resumed_at)
                """, logger: logger)
        }
    }

    /// A stored gap, as `backbeat offsets gaps` and the status show it.
    public struct StoredGap: Sendable, Equatable {
        public var topicPartition: TopicPartition
        public var firstMissing: Int64
        public var lastMissing: Int64?
        public var logStart: Int64
        public var logEnd: Int64
        public var detectedAt: String
        public var resumedFrom: Int64?
        public var resumedAt: String?
    }

    /// Every stored gap, oldest first (`waitingOnly`: those no one has moved past yet).
    public func offsetGaps(waitingOnly: Bool = false) async throws -> [StoredGap] {
        let rows = try await client.query("""
            SELECT topic, partition, first_missing, last_missing, log_start, log_end,
                   to_char(detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), resumed_from,
                   to_char(resumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            FROM offset_gaps
            WHERE NOT \(waitingOnly) OR resumed_at IS NULL
            ORDER BY detected_at, topic, partition, first_missing
            """, logger: logger)
        var gaps: [StoredGap] = []
        for try await (topic, partition, first, last, start, end, detected, from, at) in rows.decode(
            (String, Int32, Int64, Int64?, Int64, Int64, String, Int64?, String?).self
        ) {
            gaps.append(StoredGap(
                topicPartition: TopicPartition(topic: topic, partition: partition), firstMissing: first, lastMissing: last,
                logStart: start, logEnd: end, detectedAt: detected, resumedFrom: from, resumedAt: at))
        }
        return gaps
    }

    /// What `resetOffset` did.
    public struct OffsetReset: Sendable, Equatable {
        /// The stored offset before (nil: none was stored).
        public var previous: Int64?
        /// The gaps of the partition that waited and now resume from the new offset.
        public var resumedGaps: Int
    }

    /// Moves the stored offset of `partition` to `offset` and marks its waiting gaps resumed from there, in one
    /// transaction: the instance that owns the partition notices within a few seconds and consumes from there.
    public func resetOffset(of partition: TopicPartition, to offset: Int64) async throws -> OffsetReset {
        try await client.withTransaction(logger: logger) { connection in
            var previous: Int64?
            let rows = try await connection.query("""
                SELECT next_offset FROM kafka_offsets WHERE topic = \(partition.topic) AND partition = \(partition.partition) FOR UPDATE
                """, logger: logger)
            for try await value in rows.decode(Int64.self) { previous = value }
            try await connection.query("""
                INSERT INTO kafka_offsets (topic, partition, next_offset) VALUES (\(partition.topic), \(partition.partition), \(offset))
                ON CONFLICT (topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()
                """, logger: logger)
            let resumed = try await connection.query("""
                UPDATE offset_gaps SET resumed_from = \(offset), resumed_at = now(),
                       last_missing = CASE WHEN first_missing < \(offset) THEN \(offset) - 1 ELSE last_missing END
                WHERE topic = \(partition.topic) AND partition = \(partition.partition) AND resumed_at IS NULL
                RETURNING 1
                """, logger: logger)
            var count = 0
            for try await _ in resumed { count += 1 }
            return OffsetReset(previous: previous, resumedGaps: count)
        }
    }
}
