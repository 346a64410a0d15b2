import BackbeatCore
import PostgresNIO

extension Store {
    /// The stored next offset of each partition that has one.
    public func storedOffsets(for partitions: [TopicPartition]) async throws -> [TopicPartition: Int64] {
        guard !partitions.isEmpty else { return [:] }
        let topics = partitions.map(\.topic)
        let numbers = partitions.map(\.partition)
        let rows = try await client.query("""
            SELECT o.topic, o.partition, o.next_offset
            FROM kafka_offsets o
            JOIN unnest(\(topics)::text[], \(numbers)::integer[]) AS wanted(topic, partition)
              ON o.topic = wanted.topic AND o.partition = wanted.partition
            """, logger: logger)
        var offsets: [TopicPartition: Int64] = [:]
        for try await (topic, partition, offset) in rows.decode((String, Int32, Int64).self) {
            offsets[TopicPartition(topic: topic, partition: partition)] = offset
        }
        return offsets
    }
}

extension Store {
    /// The stored next offset of every Kafka partition (replay positions of plain files, `replay:*`, left out).
    public func storedKafkaOffsets() async throws -> [TopicPartition: Int64] {
        let rows = try await client.query(
            "SELECT topic, partition, next_offset FROM kafka_offsets WHERE topic NOT LIKE 'replay:%'", logger: logger)
        var offsets: [TopicPartition: Int64] = [:]
        for try await (topic, partition, offset) in rows.decode((String, Int32, Int64).self) {
            offsets[TopicPartition(topic: topic, partition: partition)] = offset
        }
        return offsets
    }
}

extension Store {
    /// A plain input's stored position: the lines applied and, unless a version before 0012 stored it, the hash of
    /// those lines (`AppliedLinesHash`). Nil when nothing is stored.
    public func storedReplayPosition(_ position: TopicPartition) async throws -> (lines: Int64, appliedLinesHash: String?)? {
        let rows = try await client.query("""
            SELECT next_offset, applied_lines_hash FROM kafka_offsets
            WHERE topic = \(position.topic) AND partition = \(position.partition)
            """, logger: logger)
        for try await (lines, hash) in rows.decode((Int64, String?).self) { return (lines, hash) }
        return nil
    }

    /// Whether a version that named plain files by their whole content stored any replay position (one without a
    /// hash of its lines): a replay of a file then looks for it under that name too.
    public func hasPositionsNamedByWholeContent() async throws -> Bool {
        let rows = try await client.query(
            "SELECT EXISTS (SELECT 1 FROM kafka_offsets WHERE topic LIKE 'replay:%' AND applied_lines_hash IS NULL)", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }
}
