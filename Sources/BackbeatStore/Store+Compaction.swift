import BackbeatCore
import PostgresNIO

extension Store {
    /// The advisory lock compaction and rebuild take, so one never merges tables the other is swapping.
    public static let compactionLock: Int64 = 0x6261_636B_6265_6174  // "backbeat"

    /// Moves the rows of every `_delta` table into its `_merged` table, summed (or, for sketches, unioned) per key,
    /// one table per transaction. The view of each table answers the same before and after: rows only move.
    /// Safe beside flushes (they only append to the deltas), other instances (one compaction runs at a time) and
    /// `rebuild` (it waits for the running compaction's table, then compactions wait for it).
    /// - Parameter wait: whether a table another session is compacting (or a rebuild is swapping) is waited for.
    ///   `serve`'s periodic compaction skips it (`false`, the next round catches up); `backbeat compact` and
    ///   readers that need one row per key wait (`true`).
    /// - Returns: the number of delta rows moved.
    @discardableResult
    public func compact(waitingForOthers wait: Bool = false) async throws -> Int {
        var moved = 0
        for table in AggregateTable.all {
            moved += try await compact(table, waiting: wait)
        }
        return moved
    }

    private func compact(_ table: AggregateTable, waiting: Bool) async throws -> Int {
        let key = table.key.joined(separator: ", ")
        let columns = table.columns.joined(separator: ", ")
        let summed = table.measures.map { table.sketches ? "hll_union_agg(\($0))" : "sum(\($0))" }.joined(separator: ", ")
        let updates = table.measures.map {
            table.sketches
                ? "\($0) = hll_union(\(table.merged).\($0), excluded.\($0))"
                : "\($0) = \(table.merged).\($0) + excluded.\($0)"
        }.joined(separator: ", ")
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
            // Table and column names come only from AggregateTable.all.
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                WITH moved AS (DELETE FROM \(table.delta) RETURNING \(columns)),
                     merged AS (
                         INSERT INTO \(table.merged) (\(columns)) SELECT \(key), \(summed) FROM moved GROUP BY \(key)
                         ON CONFLICT (\(key)) DO UPDATE SET \(updates))
                SELECT count(*)::bigint FROM moved
                """), logger: logger)
            var count: Int64 = 0
            for try await moved in rows.decode(Int64.self) { count = moved }
            return Int(count)
        }
    }
}
