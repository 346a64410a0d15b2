import BackbeatCore
import PostgresNIO

/// What one pass of retention did.
public struct RetentionOutcome: Sendable, Equatable {
    /// Month partitions of full-dimension hourly detail summed into daily rows, then dropped (`<table>_YYYY_MM`).
    public var rolled: [String] = []
    /// Month partitions of the other aggregates (and of the daily rows) dropped.
    public var dropped: [String] = []

    public init() {}
}

extension Store {
    /// Applies retention by whole months, never by deleting rows: every month of full-dimension hourly detail that
    /// ends on or before `detailKeptFrom` (a day; nil: kept forever) is summed into its daily rows (`<dataset>_daily_rolled`) and its
    /// partition dropped, in one transaction per month; with `cubesKeptFrom`, every month of the dashboard cubes, the
    /// listener sketches and the daily rows that ends on or before it is dropped. Each table's first kept day is
    /// recorded in `retention_horizons` in the same transaction (`keptFrom`). Runs under the maintenance lock, so it
    /// never interleaves with a rebuild.
    public func applyRetention(detailKeptFrom: Int64?, cubesKeptFrom: Int64?) async throws -> RetentionOutcome {
        var outcome = RetentionOutcome()
        if let detailKeptFrom {
            for cube in Cube.all where cube.isFull {
                for (partition, monthEnd) in try await monthPartitions(of: AggregateTable(cube).days) where monthEnd <= detailKeptFrom {
                    if try await roll(partition, of: cube, monthEnd: monthEnd) { outcome.rolled.append(partition) }
                }
            }
            // A session started before the detail kept can change no count kept: its state goes.
            try await client.query("""
                DELETE FROM page_funnel_sessions WHERE started_at < (date '1970-01-01' + \(detailKeptFrom)::integer)::timestamp AT TIME ZONE 'UTC'
                """, logger: logger)
        }
        guard let cubesKeptFrom else { return outcome }
        var cubes: [(view: String, stored: String, months: String?, deltas: String?)] = Cube.derived.map {
            ($0.table, AggregateTable($0).days, AggregateTable($0).months, nil)
        }
        cubes += SketchFamily.all.flatMap { [$0.artists, $0.keyed] }.map { ($0.name, $0.days, $0.months, $0.deltas) }
        cubes += Cube.all.filter(\.isFull).map { ($0.dailyDetail.table, $0.rolledTable, nil, nil) }
        for (view, stored, months, deltas) in cubes {
            for (partition, monthEnd) in try await monthPartitions(of: stored) where monthEnd <= cubesKeptFrom {
                let dropped = try await client.withTransaction(logger: logger) { connection in
                    guard try await lockForMaintenance(finding: partition, on: connection) else { return false }
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(partition)"), logger: logger)
                    for table in [months, deltas].compactMap({ $0 }) {
                        try await connection.query(PostgresQuery(unsafeSQL:
                            "DELETE FROM \(table) WHERE day < date '1970-01-01' + \(monthEnd)"), logger: logger)
                    }
                    try await recordHorizon(view, keptFrom: monthEnd, on: connection)
                    try await announceChanges(to: nil, on: connection)
                    // The full hourly detail of those days went with their daily rows, if it had not before.
                    if let full = Cube.all.first(where: { $0.isFull && $0.dailyDetail.table == view }) {
                        try await recordHorizon(full.table, keptFrom: monthEnd, on: connection)
                    }
                    return true
                }
                if dropped { outcome.dropped.append(partition) }
            }
        }
        return outcome
    }

    /// The first day `view`'s rows are kept from (nil: all of them).
    public func keptFrom(_ view: String) async throws -> Int64? {
        let rows = try await read("SELECT (kept_from - date '1970-01-01')::bigint FROM retention_horizons WHERE table_name = \(view)")
        for try await day in rows.decode(Int64.self) { return day }
        return nil
    }

    /// Takes the maintenance lock for the rest of the transaction, and says whether `partition` is still there: another
    /// instance's pass, which listed it too, may have rolled or dropped it while this one waited for the lock.
    private func lockForMaintenance(finding partition: String, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.maintenanceLock))", logger: logger)
        for try await found in try await connection.query("SELECT to_regclass(\(partition)) IS NOT NULL", logger: logger).decode(Bool.self) {
            return found
        }
        return false
    }

    /// Sums a month partition of `cube` (a full hourly table's artist-days) and the month's deltas into its daily rows
    /// (`rolledTable`), and drops both; false when the partition was gone by the time the lock was taken (compaction,
    /// which takes the lock shared, merges no delta meanwhile).
    private func roll(_ partition: String, of cube: Cube, monthEnd: Int64) async throws -> Bool {
        let rolled = cube.rolledTable
        let dimensions = cube.dimensions.map(\.rawValue)
        let measures = cube.dataset.metrics.map(\.rawValue)
        let key = ["artist_id", "day"] + dimensions
        // Each block's rows decoded in PostgreSQL (migration 0025): an amount is stored as its micros.
        let sums = measures.enumerated().map { index, measure in
            measure == "amount" ? "sum(r.row_sums[\(index + 1)]) * 0.000001" : "sum(r.row_sums[\(index + 1)])"
        }
        let values = dimensions.indices.map { "r.row_values[\($0 + 1)]" }
        let additions = measures.map { "\($0) = \(rolled).\($0) + excluded.\($0)" }
        guard let deltas = AggregateTable(cube).deltas else { preconditionFailure("only a full-dimension table's months are rolled") }
        let month = "day >= date '1970-01-01' + \(MonthDays.start(of: monthEnd - 1)) AND day < date '1970-01-01' + \(monthEnd)"
        return try await client.withTransaction(logger: logger) { connection in
            guard try await lockForMaintenance(finding: partition, on: connection) else { return false }
            try await makeMonthPartitions(of: rolled, days: [monthEnd - 1], on: connection)
            try await connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(rolled) (\((key + measures).joined(separator: ", ")))
                SELECT d.artist_id, d.day, \((values + sums).joined(separator: ", "))
                FROM (SELECT artist_id, day, block FROM \(partition) UNION ALL SELECT artist_id, day, block FROM \(deltas) WHERE \(month)) d,
                     backbeat_block_slots(d.block, \(cube.grain.slotsPerDay), \(dimensions.count), \(measures.count)) r
                GROUP BY \((1...key.count).map(String.init).joined(separator: ", "))
                ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(additions.joined(separator: ", "))
                """), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(partition)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(deltas) WHERE \(month)"), logger: logger)
            try await recordHorizon(cube.table, keptFrom: monthEnd, on: connection)
            return true
        }
    }

    private func recordHorizon(_ view: String, keptFrom: Int64, on connection: PostgresConnection) async throws {
        let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: keptFrom))
        try await connection.query("""
            INSERT INTO retention_horizons (table_name, kept_from) VALUES (\(view), \(day)::date)
            ON CONFLICT (table_name) DO UPDATE SET kept_from = greatest(retention_horizons.kept_from, excluded.kept_from)
            """, logger: logger)
    }

    /// The month partitions of `parent` (named `<parent>_YYYY_MM` by `backbeat_month_partition`), each with the day
    /// after its month, oldest first.
    private func monthPartitions(of parent: String) async throws -> [(name: String, monthEnd: Int64)] {
        let rows = try await client.query("""
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE p.relname = \(parent) ORDER BY 1
            """, logger: logger)
        var partitions: [(String, Int64)] = []
        for try await name in rows.decode(String.self) {
            let suffix = name.dropFirst(parent.count + 1).split(separator: "_")
            guard name.hasPrefix(parent + "_"), suffix.count == 2, let year = Int(suffix[0]), let month = Int(suffix[1]), (1...12).contains(month) else { continue }
            partitions.append((name, CivilDate(year: year, month: month, day: 1).firstOfNextMonth.daysSinceEpoch))
        }
        return partitions
    }
}
