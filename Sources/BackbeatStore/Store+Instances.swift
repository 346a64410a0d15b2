import BackbeatCore
import PostgresNIO

/// A live `serve` instance as it last recorded itself (`Store.heartbeat`).
public struct InstanceRecord: Sendable, Equatable {
    public var id: String
    /// The base URL the other instances reach it at.
    public var address: String
    /// The partitions it holds whole in memory.
    public var loaded: Set<TopicPartition>

    public init(id: String, address: String, loaded: Set<TopicPartition>) {
        self.id = id
        self.address = address
        self.loaded = loaded
    }
}

extension Store {
    /// Records `instance` as alive now, and answers every instance whose last heartbeat is at most `liveWithin` old
    /// by PostgreSQL's clock (one clock for all instances), itself included.
    public func heartbeat(_ instance: InstanceRecord, liveWithin: Duration) async throws -> [InstanceRecord] {
        let loaded = instance.loaded.sorted()
        try await client.query("""
            INSERT INTO instances (id, address, loaded_topics, loaded_partitions, heartbeat_at)
            VALUES (\(instance.id), \(instance.address), \(loaded.map(\.topic)), \(loaded.map(\.partition)), now())
            ON CONFLICT (id) DO UPDATE SET address = excluded.address, loaded_topics = excluded.loaded_topics,
                loaded_partitions = excluded.loaded_partitions, heartbeat_at = excluded.heartbeat_at
            """, logger: logger)
        let seconds = Double(liveWithin.components.seconds) + Double(liveWithin.components.attoseconds) / 1e18
        let rows = try await client.query("""
            SELECT id, address, loaded_topics, loaded_partitions FROM instances
            WHERE heartbeat_at > now() - make_interval(secs => \(seconds))
            ORDER BY id
            """, logger: logger)
        var live: [InstanceRecord] = []
        for try await (id, address, topics, partitions) in rows.decode((String, String, [String], [Int32]).self) {
            let loaded = zip(topics, partitions).map { TopicPartition(topic: $0, partition: $1) }
            live.append(InstanceRecord(id: id, address: address, loaded: Set(loaded)))
        }
        return live
    }

    /// Forgets `id` (a graceful stop): queries stop going to it at once rather than when its heartbeat ages out.
    public func removeInstance(_ id: String) async throws {
        try await client.query("DELETE FROM instances WHERE id = \(id)", logger: logger)
    }

    /// The partitions `artistID`'s messages have arrived on, as the flushes stored them.
    public func partitions(ofArtist artistID: String) async throws -> Set<TopicPartition> {
        let rows = try await read("SELECT topic, partition FROM artist_partitions WHERE artist_id = \(artistID)")
        var partitions = Set<TopicPartition>()
        for try await (topic, partition) in rows.decode((String, Int32).self) {
            partitions.insert(TopicPartition(topic: topic, partition: partition))
        }
        return partitions
    }
}
