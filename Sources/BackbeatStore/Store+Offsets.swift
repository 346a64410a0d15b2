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
