import BackbeatCore
import PostgresNIO

extension Store {
    /// The advisory lock compaction and rebuild take, so one never merges tables the other is swapping.
    public static let compactionLock: Int64 = 0x6261_636B_6265_6174  // "backbeat"

    /// Moves the rows of every listener sketch `_delta` table into its `_merged` table, unioned per key, one table per
    /// transaction. Every view answers the same before and after: rows only move. (The cubes are final at each flush
    /// and have nothing to compact: `AggregateTable`.)
    /// Safe beside flushes (they only append to the deltas), other instances (one compaction runs at a time) and
    /// `rebuild` (it waits for the running compaction's table, then compactions wait for it).
    /// - Parameter wait: whether a table another session is compacting (or a rebuild is swapping) is waited for.
    ///   `serve`'s periodic compaction skips it (`false`, the next round catches up); `backbeat compact` and
    ///   readers that need one row per key wait (`true`).
    /// - Returns: the number of delta rows moved.
    @discardableResult
    public func compact(waitingForOthers wait: Bool = false) async throws -> Int {
        var moved = 0
        for table in AggregateTable.appended {
            let rows = try await compact(table, waiting: wait)
            // The moved rows stay in the delta's pages as dead tuples until a vacuum: every read of the view would
            // scan them. Autovacuum comes up to a minute later; this comes now.
            if rows > 0 {
                try await client.query(PostgresQuery(unsafeSQL: "VACUUM \(table.delta)"), logger: logger)
            }
            moved += rows
        }
        return moved
    }

    private func compact(_ table: AggregateTable, waiting: Bool) async throws -> Int {
        let statements = [
            "moved AS (DELETE FROM \(table.delta) RETURNING \(table.columns.joined(separator: ", ")))",
            "merged AS (\(Self.merge(into: table, from: "moved")))",
        ]
        return try await client.withTransaction(logger: logger) { connection in
            if waiting {
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.compactionLock))", logger: logger)
            } else {
                var locked = false
                for try await granted in try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(Self.compactionLock))", logger: logger
                ).decode(Bool.self) { locked = granted }
                guard locked else { return 0 }
            }
            // Large deltas group in memory rather than spilling to disk.
            try await connection.query("SET LOCAL work_mem = '128MB'", logger: logger)
            try await createMonthPartitions(for: table, on: connection)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                WITH \(statements.joined(separator: ",\n     "))
                SELECT count(*)::bigint FROM moved
                """), logger: logger)
            var moved: Int64 = 0
            for try await count in rows.decode(Int64.self) { moved = count }
            return Int(moved)
        }
    }

    /// Creates the month partitions that the rows of `table`'s delta are about to be merged into, where they are missing.
    private func createMonthPartitions(for table: AggregateTable, on connection: PostgresConnection) async throws {
        var days: [Int64] = []
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT DISTINCT (day - date '1970-01-01')::bigint FROM \(table.delta)
            """), logger: logger)
        for try await day in rows.decode(Int64.self) { days.append(day) }
        try await makeMonthPartitions(of: table.merged, days: days, on: connection)
    }

    /// Unions `rows` (which hold `table`'s sketches) into `table`'s merged rows: one per key, inserted in key order
    /// (the primary key's pages are then visited in order rather than at random). Table and column names come only
    /// from `AggregateTable`.
    private static func merge(into table: AggregateTable, from rows: String) -> String {
        let summed = table.measures.map { "hll_union_agg(\($0))" }
        let updates = table.measures.map { "\($0) = hll_union(\(table.merged).\($0), excluded.\($0))" }
        let groups = (1...table.key.count).map(String.init).joined(separator: ", ")
        return """
            INSERT INTO \(table.merged) (\(table.columns.joined(separator: ", ")))
            SELECT \((table.key + summed).joined(separator: ", ")) FROM \(rows) GROUP BY \(groups) ORDER BY \(groups)
            ON CONFLICT (\(table.key.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }
}
