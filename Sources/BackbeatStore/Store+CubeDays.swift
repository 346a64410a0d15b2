import BackbeatCore
import PostgresNIO

/// A flush's block of one artist-day of a cube, as it is staged.
struct StagedBlock: Sendable {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var block: [UInt8]

    var key: ArtistDayKey { ArtistDayKey(artistID: artistID, day: day) }

    /// The blocks of `cube` that `rows` make, each artist-day encoded as soon as it is summed, their values resolved
    /// through `values`.
    static func blocks(_ rows: ArtistDayRows, of cube: Cube, values: ValueDictionary) -> [StagedBlock] {
        var blocks: [StagedBlock] = []
        rows.forEachDay(of: cube) { day in
            blocks.append(StagedBlock(artistID: values[day.artist], day: day.day, block: CubeBlock.encode(day, of: cube, values: values)))
        }
        return blocks
    }
}

extension Store {
    /// Writes a flush's rows of `cube`, one block per artist and day (`CubeBlock`), making the month partitions of
    /// `<cube>_days` they need first: a dashboard cube's are merged into `<cube>_days` (migration 0019,
    /// `mergeBlocks`); a full-dimension table's cost what arrived, whatever the day holds (migration 0032): a block of
    /// an artist-day the table holds none of is inserted (`insertUnstored`), the others are appended to its deltas,
    /// which `compactDetail` merges later.
    func mergeDays(_ cube: Cube, _ blocks: [StagedBlock], on connection: PostgresConnection) async throws {
        guard !blocks.isEmpty else { return }
        let table = AggregateTable(cube)
        try await makeMonthPartitions(of: table.days, days: blocks.map(\.day), on: connection)
        let columns = ["artist_id", "day", "block"]
        if let deltas = table.deltas {
            let held = try await insertUnstored(blocks, artistDay: \.key, into: table.days, columns: columns, on: connection, Self.encode)
            if !held.isEmpty { try await append(held, to: deltas, columns: columns, on: connection, Self.encode) }
        } else {
            try await mergeBlocks(blocks, of: cube, into: table.days, on: connection)
        }
    }

    /// Merges `blocks` of `cube` into `target` (its `_days` table, or its `_months`, where `day` is a month's first
    /// day): the stored blocks of their artist-days are locked, merged with these here and written back
    /// (`mergeStored`); the other blocks are COPYed into the table (`insertNew`). An artist-day another writer
    /// inserts meanwhile makes that COPY fail on the primary key once the other commits: it is undone to its
    /// savepoint, and the turn repeats for the blocks it held, now stored and merged.
    ///
    /// Every writer locks and inserts artist-days in one order (`ArtistDayKey.inWriteOrder`), so that two flushes
    /// sharing artist-days wait for each other rather than deadlock (a lock never waits for an insert not yet
    /// committed: it does not see it).
    func mergeBlocks(_ blocks: [StagedBlock], of cube: Cube, into target: String, on connection: PostgresConnection) async throws {
        var remaining = blocks
        while !remaining.isEmpty {
            let merged = try await mergeStored(remaining, of: cube, into: target, on: connection)
            let new = remaining.filter { !merged.contains($0.key) }
            guard !new.isEmpty, try await !insertNew(new, into: target, on: connection) else { return }
            remaining = new
        }
    }

    /// Locks the stored blocks of `blocks`' artist-days, merges each with the flush's and writes it back; answers the
    /// artist-days merged (a stored block deleted meanwhile, by a rebuild, is not).
    private func mergeStored(
        _ blocks: [StagedBlock], of cube: Cube, into target: String, on connection: PostgresConnection
    ) async throws -> Set<ArtistDayKey> {
        let locked = try await storedRows(of: target, at: blocks.map(\.key), also: ", d.block", locking: true, on: connection)
        guard !locked.isEmpty else { return [] }
        let stored = try locked.map { row in try row.decode((String, Int64, ByteBuffer).self) }
        let merged = try await computed { Result { try Self.merged(stored, with: blocks, of: cube) } }.get()
        try await stage(merged, into: target, as: "artist_id text, day date, block bytea", columns: ["artist_id", "day", "block"], merging: { stage in
            "UPDATE \(target) d SET block = s.block FROM \(stage) s WHERE d.artist_id = s.artist_id AND d.day = s.day"
        }, on: connection, Self.encode)
        return Set(merged.map(\.key))
    }

    /// Each stored block that `blocks` has an artist-day of, merged with it.
    private static func merged(_ stored: [(String, Int64, ByteBuffer)], with blocks: [StagedBlock], of cube: Cube) throws -> [StagedBlock] {
        var merged: [StagedBlock] = []
        let flushed = Dictionary(blocks.map { ($0.key, $0.block) }, uniquingKeysWith: { first, _ in first })
        for (artistID, day, block) in stored {
            let key = ArtistDayKey(artistID: artistID, day: day)
            guard let mine = flushed[key] else { continue }
            let rows = try CubeBlock.decode(Array(block.readableBytesView), of: cube).merging(try CubeBlock.decode(mine, of: cube))
            merged.append(StagedBlock(artistID: artistID, day: day, block: CubeBlock.encode(rows, of: cube)))
        }
        return merged
    }

    /// COPYs `blocks` (of artist-days with none stored) into `target` (`ArtistDayKey.inWriteOrder`); answers false,
    /// with nothing of them written, when another writer stored one of their artist-days meanwhile.
    private func insertNew(_ blocks: [StagedBlock], into target: String, on connection: PostgresConnection) async throws -> Bool {
        let ordered = ArtistDayKey.inWriteOrder(blocks, \.key)
        return try await appendUnlessStored(ordered, to: target, columns: ["artist_id", "day", "block"], on: connection, Self.encode)
    }

    static func encode(_ block: StagedBlock, _ copy: inout CopyBinaryEncoder) {
        copy.text(block.artistID)
        copy.day(block.day)
        copy.bytes(block.block)
        copy.endRow()
    }

    /// COPYs `rows` (each encoded by `encode` into `columns`) to `target`'s staging table, then runs `merge`, the
    /// statement that carries the staged rows into `target`. The staging table is temporary, made by the session's
    /// first use (`definition`: its columns), emptied when the transaction commits and before each use by `DELETE`
    /// (it is empty then, unless a merge repeats within a transaction: a `TRUNCATE` of a temporary table cost some 2 ms
    /// of catalog work, 14 of them a flush).
    func stage<Rows: Sequence>(
        _ rows: Rows, into target: String, as definition: String, columns: [String], merging merge: (String) -> String,
        on connection: PostgresConnection, _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) async throws {
        let stage = target + "_stage"
        try await connection.query(PostgresQuery(unsafeSQL: """
            CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) (\(definition)) ON COMMIT DELETE ROWS
            """), logger: logger)
        try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(stage)"), logger: logger)
        try await append(rows, to: stage, columns: columns, on: connection, encode)
        try await connection.query(PostgresQuery(unsafeSQL: merge(stage)), logger: logger)
    }
}
