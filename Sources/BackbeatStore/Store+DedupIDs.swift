import BackbeatCore
import PostgresNIO

extension Store {
    /// Rows of a partition under `smallRowBytes` are merged into one once there are `mergedRowCount` of them.
    static let mergedRowCount = 32
    static let smallRowBytes = 1 << 20

    /// Stores the ids each part's dedup window remembered since the last flush (one row per part with some), deletes
    /// the part's rows whose every id expired by its newest event time, and merges a partition's small rows once
    /// there are many: inside a flush's transaction.
    func recordDedupIDs(_ parts: [FlushBatch.Part], on connection: PostgresConnection) async throws {
        let remembering = parts.filter { !$0.remembered.isEmpty }
        guard !remembering.isEmpty else { return }
        let topics = remembering.map(\.topicPartition.topic)
        let numbers = remembering.map(\.topicPartition.partition)
        let newest = remembering.map { $0.newestEventTime ?? .min }
        try await connection.query("""
            INSERT INTO dedup_ids (topic, partition, from_offset, through_offset, expires_max, newest_event_time, ids)
            SELECT * FROM unnest(\(topics)::text[], \(numbers)::integer[], \(remembering.map { $0.expectedOffset ?? 0 })::bigint[],
                                 \(remembering.map(\.newOffset))::bigint[], \(remembering.map { $0.remembered.map(\.expiresAt).max()! })::bigint[],
                                 \(newest)::bigint[], \(remembering.map { ByteBuffer(bytes: DedupWindow.encode($0.remembered)) })::bytea[])
            """, logger: logger)
        try await connection.query("""
            DELETE FROM dedup_ids d
            USING unnest(\(topics)::text[], \(numbers)::integer[], \(newest)::bigint[]) AS done(topic, partition, newest)
            WHERE d.topic = done.topic AND d.partition = done.partition AND d.expires_max < done.newest
            """, logger: logger)
        // Merged in PostgreSQL: each row's ids after its version byte, in offset order, behind one version byte.
        try await connection.query("""
            WITH crowded AS (
                SELECT d.topic, d.partition FROM dedup_ids d
                JOIN unnest(\(topics)::text[], \(numbers)::integer[]) AS done(topic, partition)
                  ON d.topic = done.topic AND d.partition = done.partition
                WHERE octet_length(d.ids) < \(Self.smallRowBytes)
                GROUP BY d.topic, d.partition HAVING count(*) >= \(Self.mergedRowCount)
            ), merged AS (
                DELETE FROM dedup_ids d USING crowded c
                WHERE d.topic = c.topic AND d.partition = c.partition AND octet_length(d.ids) < \(Self.smallRowBytes)
                RETURNING d.*
            )
            INSERT INTO dedup_ids (topic, partition, from_offset, through_offset, expires_max, newest_event_time, ids)
            SELECT topic, partition, min(from_offset), max(through_offset), max(expires_max), max(newest_event_time),
                   \(ByteBuffer(bytes: [DedupWindow.storageVersion])) || string_agg(substring(ids FROM 2), ''::bytea ORDER BY through_offset)
            FROM merged GROUP BY topic, partition
            """, logger: logger)
    }

    /// The dedup window of each of `partitions` that has stored ids, as the flushes left it.
    public func storedDedupWindows(for partitions: [TopicPartition]) async throws -> [TopicPartition: DedupWindow] {
        guard !partitions.isEmpty else { return [:] }
        let rows = try await client.query("""
            SELECT d.topic, d.partition, d.newest_event_time, d.ids
            FROM dedup_ids d
            JOIN unnest(\(partitions.map(\.topic))::text[], \(partitions.map(\.partition))::integer[]) AS wanted(topic, partition)
              ON d.topic = wanted.topic AND d.partition = wanted.partition
            ORDER BY d.topic, d.partition, d.through_offset
            """, logger: logger)
        var stored: [TopicPartition: (newest: Int64, ids: [DedupWindow.Remembered])] = [:]
        for try await (topic, partition, newest, ids) in rows.decode((String, Int32, Int64, ByteBuffer).self) {
            let remembered = try DedupWindow.decode(Array(buffer: ids))
            let key = TopicPartition(topic: topic, partition: partition)
            stored[key, default: (.min, [])].newest = max(stored[key]?.newest ?? .min, newest)
            stored[key]!.ids.append(contentsOf: remembered)
        }
        return stored.mapValues { DedupWindow(loading: $0.ids, newestEventTime: $0.newest) }
    }
}
