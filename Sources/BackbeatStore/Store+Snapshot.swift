import BackbeatCore
import PostgresNIO

/// What PostgreSQL held at one instant: every stored offset, and the dashboard cubes and listener sketches of the
/// days from a horizon on, ready to answer from memory.
public struct StoredSnapshot: Sendable {
    public var offsets: [TopicPartition: Int64]
    public var memory: CubeMemory
}

extension Store {
    /// Reads the offsets and every held cube's rows and sketches from `fromDay` on, in one repeatable-read
    /// transaction: the cubes are exactly the sum of the messages before those offsets. With `artistsOf`, only the
    /// artists whose messages arrived on those partitions alone (`artist_partitions`): those an instance owning
    /// them holds whole.
    public func snapshot(fromDay: Int64, artistsOf partitions: Set<TopicPartition>? = nil) async throws -> StoredSnapshot {
        try await client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
            do {
                let snapshot = try await readSnapshot(fromDay: fromDay, artistsOf: partitions, on: connection)
                try await connection.query("COMMIT", logger: logger)
                return snapshot
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    private func readSnapshot(fromDay: Int64, artistsOf partitions: Set<TopicPartition>?, on connection: PostgresConnection) async throws -> StoredSnapshot {
        var offsets: [TopicPartition: Int64] = [:]
        for try await (topic, partition, offset) in try await connection.query(
            "SELECT topic, partition, next_offset FROM kafka_offsets", logger: logger
        ).decode((String, Int32, Int64).self) {
            offsets[TopicPartition(topic: topic, partition: partition)] = offset
        }

        var memory = CubeMemory(horizonDay: fromDay)
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: fromDay))
        // The artists kept, in a temporary table the reads below join (dropped at the transaction's end).
        var artistJoin = ""
        if let partitions {
            let owned = partitions.sorted()
            try await connection.query("""
                CREATE TEMPORARY TABLE snapshot_artists ON COMMIT DROP AS
                SELECT artist_id FROM artist_partitions
                GROUP BY artist_id
                HAVING bool_and((topic, partition) IN (
                    SELECT * FROM unnest(\(owned.map(\.topic))::text[], \(owned.map(\.partition))::integer[])))
                """, logger: logger)
            artistJoin = " JOIN snapshot_artists USING (artist_id)"
        }
        // Each cube's blocks of those days (migration 0019), decoded here.
        for cube in CubeMemory.cubes {
            let blocks = try await connection.query("""
                SELECT artist_id, (day - date '1970-01-01')::bigint, block FROM \(unescaped: AggregateTable(cube).stored)\(unescaped: artistJoin)
                WHERE day >= \(from)::date
                """, logger: logger)
            for try await (artist, day, block) in blocks.decode((String, Int64, ByteBuffer).self) {
                let rows = try CubeBlock.decode(Array(block.readableBytesView), of: cube)
                for row in 0..<rows.count {
                    let slot = rows.slots.isEmpty ? 0 : Int64(rows.slots[row])
                    memory.add(
                        cube: cube, artistID: artist, time: Timestamp(seconds: day * 86_400 + slot * cube.grain.seconds),
                        dimensionValues: rows.values(of: row), values: rows.sums[row].metrics(of: cube.dataset))
                }
            }
        }

        // Each family's sketches: an artist's of a day (no key), then each key's (a track's, a page's).
        for family in SketchFamily.all {
            for try await (artist, key, day, stored) in try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT artist_id, NULL::text, (day - date '1970-01-01')::bigint, \(family.column) FROM \(family.artists.name)\(artistJoin) WHERE day >= $1::date
                UNION ALL
                SELECT artist_id, \(family.key), (day - date '1970-01-01')::bigint, \(family.column) FROM \(family.keyed.name)\(artistJoin) WHERE day >= $1::date
                """, binds: Self.binds(from)), logger: logger).decode((String, String?, Int64, ByteBuffer).self) {
                memory.addSketch(family.kind, artistID: artist, key: key, day: day, try Self.sketch(stored))
            }
        }
        return StoredSnapshot(offsets: offsets, memory: memory)
    }
}
