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
            if rows > 0 {
                let vacuumed = table.isInterned ? "\(table.delta), \(table.values)" : table.delta
                try await client.query(PostgresQuery(unsafeSQL: "VACUUM \(vacuumed)"), logger: logger)
            }
            moved += rows
        }
        return moved
    }

    private func compact(_ table: AggregateTable, waiting: Bool) async throws -> Int {
        // The full rows moved, summed into each derived cube's merged rows.
        let derived = table.derived.enumerated().map { index, cube in
            "derived\(index) AS (\(Self.merge(into: cube, from: "moved", key: cube.keyFromFullRows)))"
        }
        let deleting = "DELETE FROM \(table.delta) RETURNING \(table.deltaColumns.joined(separator: ", "))"
        // An interned delta's rows are moved with their texts, and its values with them (all it sees: the rows of
        // the flushes it sees, whose values committed with them).
        let taken = table.isInterned
            ? ["deleted AS (\(deleting))",
               "dropped AS (DELETE FROM \(table.values) RETURNING id, value)",
               "moved AS (\(table.textRows(of: "deleted", values: "dropped")))"]
            : ["moved AS (\(deleting))"]
        let statements = taken + ["merged AS (\(Self.merge(into: table, from: "moved", key: table.key)))"] + derived
        let deleted = table.isInterned ? "deleted" : "moved"
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
                SELECT (SELECT count(*) FROM \(deleted))::bigint, (SELECT count(*) FROM moved)::bigint
                """), logger: logger)
            var count: (deleted: Int64, moved: Int64) = (0, 0)
            for try await counted in rows.decode((Int64, Int64).self) { count = counted }
            // A row whose values are missing would be deleted without being merged: nothing commits then.
            guard count.deleted == count.moved else { throw MissingDeltaValues(table: table.delta, rows: count.deleted - count.moved) }
            return Int(count.moved)
        }
    }

    /// Creates the month partitions (migration 0014) that the rows of `table`'s delta are about to be merged into,
    /// in its merged table and its derived cubes', where they are missing: a new month's first compaction, or late
    /// events of a month retention dropped.
    private func createMonthPartitions(for table: AggregateTable, on connection: PostgresConnection) async throws {
        let month = table.timeColumn == "hour" ? "date_trunc('month', hour AT TIME ZONE 'UTC')::date" : "date_trunc('month', day::timestamp)::date"
        let merged = [table.merged] + table.derived.map(\.merged)
        try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT backbeat_month_partition(parent, month)
            FROM unnest($1::text[]) parents(parent), (SELECT DISTINCT \(month) FROM \(table.delta)) months(month)
            """, binds: { var binds = PostgresBindings(); binds.append(merged); return binds }()), logger: logger)
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

/// Rows of an interned `_delta` table whose values were not found: a compaction that would have lost them commits
/// nothing. (A flush writes its rows and their values in one transaction, so this is a bug or a hand-made row.)
public struct MissingDeltaValues: Error, CustomStringConvertible {
    public var table: String
    public var rows: Int64

    public var description: String { "\(rows) rows of \(table) name values missing from its _values table; nothing was compacted" }
}
