import BackbeatCore
import PostgresNIO

/// When compaction merges an artist-day's deltas of a full-dimension table into its block (migration 0032): once
/// they are `count` or more, or their bytes a `bytesShare`th of the block's or more (a day with no block: at once).
/// By bytes alone a block is rewritten once a quarter of its size has arrived, so that the bytes rewritten for a day
/// stay within some five times what arrived for it; `count` bounds the deltas a reader sums beside a block, at the
/// price of rewriting a large block after that many small ones (a flush a second: once a minute).
public struct DetailCompactionBounds: Sendable {
    public var count: Int
    public var bytesShare: Int

    public init(count: Int = 64, bytesShare: Int = 4) {
        self.count = count
        self.bytesShare = bytesShare
    }

    /// Every artist-day with deltas, however few.
    public static let everything = DetailCompactionBounds(count: 1, bytesShare: 1)
}

extension Store {
    /// Merges the deltas of up to `limit` artist-days of each full-dimension table that pass `bounds` into their
    /// blocks, one transaction per table; answers the artist-days merged (`limit` of a table: more may be left).
    ///
    /// A transaction takes the maintenance lock shared (`maintenanceLock`; while a rebuild or retention holds it,
    /// the pass ends and answers nil), deletes the artist-days' deltas, and merges them into their blocks as a flush
    /// merges a dashboard cube's (`mergeBlocks`). A flush appending deltas meanwhile waits for nothing; its deltas stay
    /// for a later pass. What a reader sums is the same before and after: no answer changes, none is retired.
    public func compactDetail(bounds: DetailCompactionBounds = DetailCompactionBounds(), limit: Int = 16) async throws -> Int? {
        var merged = 0
        for cube in Cube.all where cube.isFull {
            let keys = try await compactable(cube, bounds: bounds, limit: limit)
            guard !keys.isEmpty else { continue }
            guard let done = try await compact(keys, of: cube) else { return nil }
            merged += done
        }
        return merged
    }

    /// Merges every delta of the full-dimension tables into its block (`compactDetail` until none is left, `limit`
    /// artist-days a transaction): what a replay or a rebuild does once it has written; answers the artist-days
    /// merged, or nil when maintenance held its lock.
    public func compactAllDetail(limit: Int = 512) async throws -> Int? {
        var merged = 0
        while true {
            // A round that merged fewer than `limit` found every table's deltas (those flushes add meanwhile are
            // left to them: this ends while they go on).
            guard let done = try await compactDetail(bounds: .everything, limit: limit) else { return nil }
            merged += done
            if done < limit { return merged }
        }
    }

    /// Up to `limit` artist-days of `cube` whose deltas pass `bounds`, in write order.
    private func compactable(_ cube: Cube, bounds: DetailCompactionBounds, limit: Int) async throws -> [ArtistDayKey] {
        let table = AggregateTable(cube)
        guard let deltas = table.deltas else { return [] }
        var binds = PostgresBindings()
        let count = binds.parameter(Int64(bounds.count)), share = binds.parameter(Int64(bounds.bytesShare)), most = binds.parameter(Int64(limit))
        let rows = try await client.query(PostgresQuery(unsafeSQL: """
            SELECT x.artist_id, (x.day - date '1970-01-01')::bigint FROM (
                SELECT artist_id, day, count(*) AS deltas, sum(length(block)) AS bytes FROM \(deltas) GROUP BY artist_id, day
            ) x LEFT JOIN LATERAL (SELECT length(d.block) AS bytes FROM \(table.days) d WHERE d.artist_id = x.artist_id AND d.day = x.day) s ON true
            WHERE x.deltas >= \(count) OR x.bytes * \(share) >= coalesce(s.bytes, 0)
            ORDER BY date_trunc('month', x.day), x.artist_id, x.day LIMIT \(most)
            """, binds: binds), logger: logger)
        var keys: [ArtistDayKey] = []
        for try await (artistID, day) in rows.decode((String, Int64).self) { keys.append(ArtistDayKey(artistID: artistID, day: day)) }
        return keys
    }

    /// Merges the deltas of `keys` of `cube` into their blocks in one transaction; answers the artist-days merged
    /// (those whose deltas another pass had not taken meanwhile), or nil when maintenance holds its lock.
    private func compact(_ keys: [ArtistDayKey], of cube: Cube) async throws -> Int? {
        let table = AggregateTable(cube)
        guard let deltas = table.deltas else { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            for try await locked in try await connection.query(
                "SELECT pg_try_advisory_xact_lock_shared(\(Self.maintenanceLock))", logger: logger
            ).decode(Bool.self) where !locked {
                return nil
            }
            var binds = PostgresBindings()
            let artists = binds.parameter(keys.map(\.artistID)), days = binds.parameter(keys.map(\.day))
            let taken = try await connection.query(PostgresQuery(unsafeSQL: """
                DELETE FROM \(deltas) t USING unnest(\(artists)::text[], \(days)::bigint[]) AS k(artist_id, day)
                WHERE t.artist_id = k.artist_id AND t.day = date '1970-01-01' + k.day::integer
                RETURNING t.artist_id, (t.day - date '1970-01-01')::bigint, t.block
                """, binds: binds), logger: logger)
            var found: [(String, Int64, ByteBuffer)] = []
            for try await row in taken.decode((String, Int64, ByteBuffer).self) { found.append(row) }
            guard !found.isEmpty else { return 0 }
            let rows = found
            let blocks = try await computed { Result { try Self.combined(rows, of: cube) } }.get()
            try await makeMonthPartitions(of: table.days, days: blocks.map(\.day), on: connection)
            try await mergeBlocks(blocks, of: cube, into: table.days, on: connection)
            return blocks.count
        }
    }

    /// One block per artist-day of `deltas`: the sum of its deltas' rows.
    private static func combined(_ deltas: [(String, Int64, ByteBuffer)], of cube: Cube) throws -> [StagedBlock] {
        var sums: [ArtistDayKey: BlockRows] = [:]
        for (artistID, day, block) in deltas {
            let rows = try CubeBlock.decode(Array(block.readableBytesView), of: cube)
            let key = ArtistDayKey(artistID: artistID, day: day)
            sums[key] = sums[key].map { $0.merging(rows) } ?? rows
        }
        return sums.map { key, rows in StagedBlock(artistID: key.artistID, day: key.day, block: CubeBlock.encode(rows, of: cube)) }
    }
}
