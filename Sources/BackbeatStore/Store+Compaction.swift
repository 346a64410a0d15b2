import BackbeatCore
import PostgresNIO

extension Store {
    /// The advisory lock compaction and rebuild take, so one never merges tables the other is swapping.
    public static let compactionLock: Int64 = 0x6261_636B_6265_6174  // "backbeat"

    /// Moves the rows of every `_delta` table into its `_merged` table, summed (or, for sketches, unioned) per key,
    /// one table per transaction; the rows moved out of a full hourly table are also summed into the merged rows of
    /// its derived cubes in the same statement (their views read that delta until then). Every view answers the same
    /// before and after: rows only move.
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
            // The moved rows stay in the delta's pages as dead tuples until a vacuum: every read of the view (and of
            // the derived cubes' views) would scan them. Autovacuum comes up to a minute later; this comes now.
            if rows > 0 { try await client.query(PostgresQuery(unsafeSQL: "VACUUM \(table.delta)"), logger: logger) }
            moved += rows
        }
        return moved
    }

    private func compact(_ table: AggregateTable, waiting: Bool) async throws -> Int {
        // The full rows moved, summed into each derived cube's merged rows.
        let derived = table.derived.enumerated().map { index, cube in
            "derived\(index) AS (\(Self.merge(into: cube, from: "moved", key: cube.keyFromFullRows)))"
        }
        let statements = ["moved AS (DELETE FROM \(table.delta) RETURNING \(table.columns.joined(separator: ", ")))",
                          "merged AS (\(Self.merge(into: table, from: "moved", key: table.key)))"] + derived
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
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                WITH \(statements.joined(separator: ",\n     "))
                SELECT count(*)::bigint FROM moved
                """), logger: logger)
            var count: Int64 = 0
            for try await moved in rows.decode(Int64.self) { count = moved }
            return Int(count)
        }
    }

    /// Sums `rows` (which hold `table`'s measures) into `table`'s merged rows: one per value of `key`, the
    /// expressions of `table`'s key columns over `rows`, inserted in key order (the primary key's pages are then
    /// visited in order rather than at random). Table and column names come only from `AggregateTable`.
    private static func merge(into table: AggregateTable, from rows: String, key: [String]) -> String {
        let summed = table.measures.map { table.sketches ? "hll_union_agg(\($0))" : "sum(\($0))" }
        let updates = table.measures.map {
            table.sketches
                ? "\($0) = hll_union(\(table.merged).\($0), excluded.\($0))"
                : "\($0) = \(table.merged).\($0) + excluded.\($0)"
        }
        let groups = (1...key.count).map(String.init).joined(separator: ", ")
        return """
            INSERT INTO \(table.merged) (\(table.columns.joined(separator: ", ")))
            SELECT \((key + summed).joined(separator: ", ")) FROM \(rows) GROUP BY \(groups) ORDER BY \(groups)
            ON CONFLICT (\(table.key.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }
}
