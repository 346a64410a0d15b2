import BackbeatCore
import PostgresNIO

/// What compaction does with an artist-day's deltas of a full-dimension table or a sketch (migration 0032). Into the
/// row once their bytes are a `bytesShare`th of the row's or more (a day with no row: at once), or when the day is
/// before `quietBefore`: by bytes a row is rewritten once a quarter of its size has arrived, so that the bytes
/// rewritten for a day stay within some five times what arrived for it. Short of that, once they are `count` or more,
/// they are summed into one delta, which rewrites only small rows: so a reader sums at most about `count` deltas
/// beside a row however often flushes append, and the row is not rewritten for each `count` of them.
public struct DetailCompactionBounds: Sendable {
    public var count: Int
    public var bytesShare: Int
    /// The first UTC day (days since 1970-01-01) whose deltas stay deltas by these bounds: those of earlier days go
    /// into their rows, however few (nil: none). The service passes the day before UTC yesterday: earlier days are
    /// past every zone's today and yesterday and get late events only, whose deltas a reader would keep for ever.
    public var quietBefore: Int64?

    public init(count: Int = 8, bytesShare: Int = 4, quietBefore: Int64? = nil) {
        self.count = count
        self.bytesShare = bytesShare
        self.quietBefore = quietBefore
    }

    /// Every artist-day with deltas, however few, into its row.
    public static let everything = DetailCompactionBounds(count: 1, bytesShare: 1, quietBefore: .max)
}

/// What compaction merges: a full-dimension table's blocks (merged in Backbeat, as a flush merges a dashboard
/// cube's), or a family's sketches of artists or of keys (unioned in PostgreSQL).
enum CompactedTable: Sendable {
    case blocks(Cube)
    case sketches(SketchFamily, keyed: Bool)

    /// Every table with deltas.
    static let all: [CompactedTable] = Cube.all.filter(\.isFull).map(CompactedTable.blocks)
        + SketchFamily.all.flatMap { [CompactedTable.sketches($0, keyed: false), .sketches($0, keyed: true)] }

    var table: AggregateTable {
        switch self {
        case .blocks(let cube): AggregateTable(cube)
        case .sketches(let family, let keyed): keyed ? family.keyed : family.artists
        }
    }

    /// A stored row's size in bytes, in SQL (of a row aliased by `alias`).
    func size(_ alias: String) -> String {
        switch self {
        case .blocks: "length(\(alias).block)"
        case .sketches(let family, _): "pg_column_size(\(alias).\(family.column))"
        }
    }
}

extension Store {
    /// Merges the deltas of up to `limit` artist-days of each table with deltas that pass `bounds` into their rows, or
    /// sums them into one delta, one transaction per table and round, up to `rounds` rounds while a round finds
    /// `limit`; answers the artist-days merged (`rounds` times `limit` of a table: more may be left).
    ///
    /// A transaction takes the maintenance lock shared (`maintenanceLock`; while a rebuild or retention holds it,
    /// the pass ends and answers nil), deletes the artist-days' deltas, and merges them into their rows: blocks as a
    /// flush merges a dashboard cube's (`mergeBlocks`), sketches unioned in one statement. A flush appending deltas
    /// meanwhile waits for nothing; its deltas stay for a later pass. What a reader sums or unions is the same before
    /// and after: no answer changes, none is retired.
    public func compactDetail(bounds: DetailCompactionBounds = DetailCompactionBounds(), limit: Int = 16, rounds: Int = 1) async throws -> Int? {
        var merged = 0
        for compacted in CompactedTable.all {
            for _ in 0..<rounds {
                let found = try await compactable(compacted, bounds: bounds, limit: limit)
                guard !found.isEmpty else { break }
                for destination in [Destination.rows, .delta] {
                    let keys = found.filter { $0.destination == destination }.map(\.key)
                    guard !keys.isEmpty else { continue }
                    guard let done = try await compact(keys, of: compacted, into: destination) else { return nil }
                    merged += done
                }
                if found.count < limit { break }
            }
        }
        return merged
    }

    /// Merges every delta into its row (`compactDetail` until none is left, `limit` artist-days a transaction): what a
    /// replay or a rebuild does once it has written; answers the artist-days merged, or nil when maintenance held its
    /// lock.
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

    /// Up to `limit` artist-days of `compacted` whose deltas pass `bounds`, those with the most deltas first (so that
    /// none waits behind others that pass the bounds again and again), in write order.
    private func compactable(
        _ compacted: CompactedTable, bounds: DetailCompactionBounds, limit: Int
    ) async throws -> [(key: ArtistDayKey, destination: Destination)] {
        let table = compacted.table
        guard let deltas = table.deltas else { return [] }
        var binds = PostgresBindings()
        let count = binds.parameter(Int64(bounds.count)), share = binds.parameter(Int64(bounds.bytesShare)), most = binds.parameter(Int64(limit))
        // Into the row by `bounds`; many small deltas are summed into one delta instead.
        let quiet = bounds.quietBefore.map { " OR x.day < \(binds.day(min($0, 1_000_000)))" } ?? ""
        let intoRow = "x.bytes * \(share) >= coalesce(s.bytes, 0)\(quiet)"
        let rows = try await client.query(PostgresQuery(unsafeSQL: """
            SELECT x.artist_id, (x.day - date '1970-01-01')::bigint, \(intoRow) FROM (
                SELECT artist_id, day, count(*) AS deltas, sum(\(compacted.size("t"))) AS bytes FROM \(deltas) t GROUP BY artist_id, day
            ) x LEFT JOIN LATERAL (SELECT \(compacted.size("d")) AS bytes FROM \(table.days) d WHERE d.artist_id = x.artist_id AND d.day = x.day) s ON true
            WHERE x.deltas >= \(count) OR \(intoRow)
            ORDER BY x.deltas DESC, x.artist_id, x.day LIMIT \(most)
            """, binds: binds), logger: logger)
        var found: [(key: ArtistDayKey, destination: Destination)] = []
        for try await (artistID, day, row) in rows.decode((String, Int64, Bool).self) {
            found.append((ArtistDayKey(artistID: artistID, day: day), row ? .rows : .delta))
        }
        return ArtistDayKey.inWriteOrder(found) { $0.key }
    }

    /// Where compaction puts an artist-day's deltas: into its row, or summed into one delta (cheap: the row, which may
    /// be large, is not rewritten; readers sum one delta where they summed many).
    enum Destination {
        case rows, delta
    }

    /// Merges the deltas of `keys` of `compacted` into their rows, or sums them into one delta each, in one
    /// transaction; answers the artist-days merged (those whose deltas another pass had not taken meanwhile), or nil
    /// when maintenance holds its lock.
    private func compact(_ keys: [ArtistDayKey], of compacted: CompactedTable, into destination: Destination) async throws -> Int? {
        let table = compacted.table
        guard let deltas = table.deltas else { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            for try await locked in try await connection.query(
                "SELECT pg_try_advisory_xact_lock_shared(\(Self.maintenanceLock))", logger: logger
            ).decode(Bool.self) where !locked {
                return nil
            }
            var binds = PostgresBindings()
            let artists = binds.parameter(keys.map(\.artistID)), days = binds.parameter(keys.map(\.day))
            // Their month partitions are there (made by the flush that appended the deltas, or made again by a
            // later one after retention dropped them with their deltas); made here too, to depend on neither.
            try await makeMonthPartitions(of: table.days, days: keys.map(\.day), on: connection)
            // The deltas taken, `returning` these columns of them.
            let taken = { (returning: String) in """
                DELETE FROM \(deltas) t USING unnest(\(artists)::text[], \(days)::bigint[]) AS k(artist_id, day)
                WHERE t.artist_id = k.artist_id AND t.day = date '1970-01-01' + k.day::integer
                RETURNING \(returning)
                """ }
            switch compacted {
            case .blocks(let cube):
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: taken("t.artist_id, (t.day - date '1970-01-01')::bigint, t.block"), binds: binds), logger: logger)
                let deltaBlocks = try await rows.decode((String, Int64, ByteBuffer).self).reduce(into: [StagedBlock]()) {
                    $0.append(StagedBlock(artistID: $1.0, day: $1.1, block: Array($1.2.readableBytesView)))
                }
                guard !deltaBlocks.isEmpty else { return 0 }
                let blocks = try await computed { Result { try StagedBlock.summed(deltaBlocks, of: cube) } }.get()
                switch destination {
                case .rows: try await mergeBlocks(blocks, of: cube, into: table.days, on: connection)
                case .delta: try await append(blocks, to: deltas, columns: ["artist_id", "day", "block"], on: connection, Self.encode)
                }
                return blocks.count
            case .sketches(let family, let keyed):
                let (key, sketch) = (family.key, family.column)
                // One row per artist-day of the deltas taken (each key's sketches unioned), then unioned into the
                // day's row as a flush's were (`mergeArtistSketches`, `mergeKeyedSketches`).
                let unioned = keyed
                    ? """
                      (SELECT artist_id, day, array_agg(key ORDER BY key) AS \(key), array_agg(sketch ORDER BY key) AS \(sketch) FROM (
                          SELECT t.artist_id, t.day, u.key, hll_union_agg(u.sketch) AS sketch
                          FROM taken t, unnest(t.\(key), t.\(sketch)) AS u(key, sketch) GROUP BY 1, 2, 3
                      ) per_key GROUP BY artist_id, day) AS unioned
                      """
                    : "(SELECT artist_id, day, hll_union_agg(\(sketch)) AS \(sketch) FROM taken GROUP BY artist_id, day) AS unioned"
                let columns = keyed ? "artist_id, day, \(key), \(sketch)" : "artist_id, day, \(sketch)"
                let merge = switch destination {
                case .rows: keyed ? Self.mergeKeyedSketches(family, into: table.days) : Self.mergeArtistSketches(family, into: table.days)
                case .delta: { (unioned: String) in "INSERT INTO \(deltas) (\(columns)) SELECT \(columns) FROM \(unioned)" }
                }
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "WITH taken AS (\(taken("t.*")))\n" + merge(unioned) + "\nRETURNING 1", binds: binds), logger: logger)
                var merged = 0
                for try await _ in rows { merged += 1 }
                return merged
            }
        }
    }
}
