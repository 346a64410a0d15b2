import BackbeatCore
import PostgresNIO

/// A flush's block of one artist-day of a cube, as it is staged.
private struct StagedBlock {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var block: [UInt8]
}

extension Store {
    /// Merges a flush's rows of `cube` into `<cube>_days` (migration 0019), one block per artist and day
    /// (`CubeBlock`): the flush's blocks are COPYed to a temporary table and inserted where their artist-day has none
    /// (`stage`); an artist-day already stored is locked, its block and the flush's merged here and written back.
    /// Every writer inserts and locks artist-days in the same order (artist, then day), so two flushes sharing
    /// artist-days never deadlock; an artist-day another writer inserted meanwhile is locked and merged once that
    /// writer commits.
    func mergeDays(_ cube: Cube, _ days: [CubeDay], values: ValueDictionary, on connection: PostgresConnection) async throws {
        guard !days.isEmpty else { return }
        let table = AggregateTable(cube)
        let blocks = days.map { StagedBlock(artistID: values[$0.artist], day: $0.day, block: CubeBlock.encode($0, of: cube, values: values)) }
        let inserted = try await stage(
            blocks, days: blocks.map(\.day), for: table, as: "artist_id text, day date, block bytea", columns: ["artist_id", "day", "block"],
            merging: { stage in """
                INSERT INTO \(table.days) SELECT * FROM \(stage) ORDER BY artist_id, day ON CONFLICT DO NOTHING
                RETURNING artist_id, (day - date '1970-01-01')::bigint
                """ },
            on: connection, Self.encode)
        var stored: Set<ArtistDayKey> = []
        for row in inserted { stored.insert(ArtistDayKey(try row.decode((String, Int64).self))) }
        var remaining = blocks.filter { !stored.contains(ArtistDayKey(($0.artistID, $0.day))) }
        while !remaining.isEmpty {
            // The stored blocks of the rest, locked; each merged with the flush's.
            let locked = try await connection.query("""
                SELECT d.artist_id, (d.day - date '1970-01-01')::bigint, d.block
                FROM \(unescaped: table.days) d
                JOIN unnest(\(remaining.map(\.artistID))::text[], \(remaining.map(\.day))::bigint[]) AS k(artist_id, day)
                  ON d.artist_id = k.artist_id AND d.day = date '1970-01-01' + k.day::integer
                ORDER BY d.artist_id, d.day FOR UPDATE OF d
                """, logger: logger).collect()
            var merged: [StagedBlock] = []
            var found: Set<ArtistDayKey> = []
            let flushed = Dictionary(uniqueKeysWithValues: remaining.map { (ArtistDayKey(($0.artistID, $0.day)), $0.block) })
            for row in locked {
                let (artistID, day, block) = try row.decode((String, Int64, ByteBuffer).self)
                let key = ArtistDayKey((artistID, day))
                guard let mine = flushed[key] else { continue }
                let rows = try CubeBlock.decode(Array(block.readableBytesView), of: cube).merging(try CubeBlock.decode(mine, of: cube))
                merged.append(StagedBlock(artistID: artistID, day: day, block: CubeBlock.encode(rows, of: cube)))
                found.insert(key)
            }
            if !merged.isEmpty {
                try await connection.query(PostgresQuery(unsafeSQL: "TRUNCATE \(table.days)_stage"), logger: logger)
                try await append(merged, to: table.days + "_stage", columns: ["artist_id", "day", "block"], on: connection, Self.encode)
                try await connection.query(PostgresQuery(unsafeSQL: """
                    UPDATE \(table.days) d SET block = s.block FROM \(table.days)_stage s WHERE d.artist_id = s.artist_id AND d.day = s.day
                    """), logger: logger)
            }
            // Any not found was deleted meanwhile (a rebuild): inserted again, or merged on the next turn.
            let missing = remaining.filter { !found.contains(ArtistDayKey(($0.artistID, $0.day))) }
            guard !missing.isEmpty else { break }
            try await connection.query(PostgresQuery(unsafeSQL: "TRUNCATE \(table.days)_stage"), logger: logger)
            try await append(missing, to: table.days + "_stage", columns: ["artist_id", "day", "block"], on: connection, Self.encode)
            let again = try await connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(table.days) SELECT * FROM \(table.days)_stage ORDER BY artist_id, day ON CONFLICT DO NOTHING
                RETURNING artist_id, (day - date '1970-01-01')::bigint
                """), logger: logger).collect()
            var insertedAgain: Set<ArtistDayKey> = []
            for row in again { insertedAgain.insert(ArtistDayKey(try row.decode((String, Int64).self))) }
            remaining = missing.filter { !insertedAgain.contains(ArtistDayKey(($0.artistID, $0.day))) }
        }
    }

    private static func encode(_ block: StagedBlock, _ copy: inout CopyBinaryEncoder) {
        copy.text(block.artistID)
        copy.day(block.day)
        copy.bytes(block.block)
        copy.endRow()
    }

    /// Makes the month partitions of `table.days` that `days` (the rows' days) fall in, COPYs `rows` (each encoded
    /// by `encode` into `columns`) to `table`'s staging table, then runs `merge`, the statement that inserts the
    /// staged rows into `table.days`. The staging table is temporary, made by the session's first flush
    /// (`definition`: its columns) and emptied when the transaction commits.
    @discardableResult
    func stage<Rows: Sequence>(
        _ rows: Rows, days: [Int64], for table: AggregateTable, as definition: String, columns: [String], merging merge: (String) -> String,
        on connection: PostgresConnection, _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) async throws -> [PostgresRow] {
        try await makeMonthPartitions(of: table.days, days: days, on: connection)
        let stage = table.days + "_stage"
        try await connection.query(PostgresQuery(unsafeSQL: """
            CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) (\(definition)) ON COMMIT DELETE ROWS
            """), logger: logger)
        try await append(rows, to: stage, columns: columns, on: connection, encode)
        return try await connection.query(PostgresQuery(unsafeSQL: merge(stage)), logger: logger).collect()
    }
}

/// An artist-day, as rows name it.
private struct ArtistDayKey: Hashable {
    var artistID: String
    var day: Int64

    init(_ pair: (String, Int64)) {
        artistID = pair.0
        day = pair.1
    }
}
