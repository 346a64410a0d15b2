import BackbeatCore
import PostgresNIO

/// How the processes that write the stored numbers tell the ones that answer from them: every write announces the
/// artists it changed when it commits (`changesChannel`), and `storedChanges()` sums what other processes' writes
/// leave behind (rebuilds, replays, retention), for a reader that polls.
extension Store {
    /// The channel on which every write of the stored numbers is announced when it commits (`announceChanges`).
    public static let changesChannel = "backbeat_stored_changes"

    /// Announces on `changesChannel`, when the transaction of `connection` commits (and only then), that the stored
    /// numbers of `artists` changed on their days (`ArtistDays.announcement`); nil: those of any artist on any day (a
    /// rebuild, retention).
    func announceChanges(to artists: ArtistDays?, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.changesChannel), \(artists?.announcement ?? "*"))", logger: logger)
    }

    /// What `serve` watches of the writes other processes make to the stored numbers: the latest rebuild, how far
    /// every replay has gone, the days retention kept, and the artists' zones.
    public struct StoredChanges: Sendable, Equatable {
        /// The id of the latest rebuild (0: none).
        public var rebuild: Int64
        /// The sum of the replays' stored positions: it grows with every batch a replay applies.
        public var replayed: Int64
        /// The sum of the first days retention kept of each table: it grows with every retention run that drops.
        public var retention: Int64
        /// The generation of the artists' recorded zones (`artist_zones`, migration 0024): it grows when any is set or changed.
        public var zones: Int64

        /// Whether the stored aggregates are as they were at `other`: no rebuild, replay or retention run since (a
        /// zone set changes no stored number).
        public func sameAggregates(as other: StoredChanges) -> Bool {
            rebuild == other.rebuild && replayed == other.replayed && retention == other.retention
        }
    }

    public func storedChanges() async throws -> StoredChanges {
        let rows = try await client.query("""
            SELECT (SELECT coalesce(max(id), 0)::bigint FROM rebuilds),
                   (SELECT coalesce(sum(next_offset), 0)::bigint FROM kafka_offsets WHERE topic LIKE 'replay:%'),
                   (SELECT coalesce(sum(kept_from - date '1970-01-01'), 0)::bigint FROM retention_horizons),
                   (SELECT coalesce(max(generation), 0)::bigint FROM artist_zones)
            """, logger: logger)
        for try await (rebuild, replayed, retention, zones) in rows.decode((Int64, Int64, Int64, Int64).self) {
            return StoredChanges(rebuild: rebuild, replayed: replayed, retention: retention, zones: zones)
        }
        return StoredChanges(rebuild: 0, replayed: 0, retention: 0, zones: 0)
    }
}
