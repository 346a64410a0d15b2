import BackbeatCore
import PostgresNIO

extension Store {
    /// Merges a flush's rows of `cube` into `<cube>_days` (migration 0017), one row per artist and day: the rows are
    /// COPYed to a temporary table, then inserted (`stage`); an artist-day already stored gets its rows and the
    /// flush's summed per key, in the same statement. The inserts run in the order of the artist-days, so that two
    /// flushes sharing artist-days lock them in the same order.
    func mergeDays(_ cube: Cube, _ days: [CubeDay], values: ValueDictionary, on connection: PostgresConnection) async throws {
        guard !days.isEmpty else { return }
        let table = AggregateTable(cube)
        let hourly = cube.grain == .hour
        let width = cube.dimensions.count
        try await stage(
            days, days: days.map(\.day), for: table, as: "LIKE \(table.days) INCLUDING COMPRESSION", columns: Self.dayColumns(cube),
            merging: Self.mergeDays(into: table, cube), on: connection
        ) { day, copy in
            copy.text(values[day.artist])
            copy.day(day.day)
            if hourly {
                copy.array(count: day.rowCount, of: .smallint) { for hour in day.hours { $0.int16(hour) } }
            }
            for dimension in 0..<width {
                copy.array(count: day.rowCount, of: .text) { copy in
                    for row in 0..<day.rowCount { copy.value(day.values[row * width + dimension], in: values) }
                }
            }
            switch cube.dataset {
            case .streams:
                copy.array(count: day.rowCount, of: .bigint) { for sums in day.sums { $0.int64(sums.integers.0) } }
                copy.array(count: day.rowCount, of: .bigint) { for sums in day.sums { $0.int64(sums.integers.1) } }
                copy.array(count: day.rowCount, of: .bigint) { for sums in day.sums { $0.int64(sums.integers.2) } }
            case .revenue:
                copy.array(count: day.rowCount, of: .numeric) { for sums in day.sums { $0.numeric(sums.amount) } }
                copy.array(count: day.rowCount, of: .bigint) { for sums in day.sums { $0.int64(sums.integers.0) } }
            case .social:
                copy.array(count: day.rowCount, of: .bigint) { for sums in day.sums { $0.int64(sums.integers.0) } }
            }
            copy.endRow()
        }
    }

    /// Makes the month partitions of `table.days` that `days` (the rows' days) fall in, COPYs `rows` (each encoded
    /// by `encode` into `columns`) to `table`'s staging table, then runs `merge`, the statement that inserts the
    /// staged rows into `table.days`. The staging table is temporary, made by the session's first flush
    /// (`definition`: its columns) and emptied when the transaction commits.
    func stage<Rows: Sequence>(
        _ rows: Rows, days: [Int64], for table: AggregateTable, as definition: String, columns: [String], merging merge: (String) -> String,
        on connection: PostgresConnection, _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) async throws {
        try await makeMonthPartitions(of: table.days, days: days, on: connection)
        let stage = table.days + "_stage"
        try await connection.query(PostgresQuery(unsafeSQL: """
            CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) (\(definition)) ON COMMIT DELETE ROWS
            """), logger: logger)
        try await append(rows, to: stage, columns: columns, on: connection, encode)
        try await connection.query(PostgresQuery(unsafeSQL: merge(stage)), logger: logger)
    }

    /// A `_days` table's columns: the artist, the day, the hour of the day (hourly cubes), the dimensions, the measures.
    private static func dayColumns(_ cube: Cube) -> [String] {
        ["artist_id", "day"] + keyArrays(cube) + cube.dataset.metrics.map(\.rawValue)
    }

    /// The arrays that hold a row's key within its artist-day.
    private static func keyArrays(_ cube: Cube) -> [String] {
        (cube.grain == .hour ? ["hour"] : []) + cube.dimensions.map(\.rawValue)
    }

    /// The statement that inserts the rows of `stage` into `table`'s `_days`, summing an artist-day already stored
    /// with the staged one per key. Names come only from `Cube` and `AggregateTable`.
    private static func mergeDays(into table: AggregateTable, _ cube: Cube) -> (String) -> String {
        let keys = keyArrays(cube)
        let measures = cube.dataset.metrics.map(\.rawValue)
        let arrays = (keys + measures).joined(separator: ", ")
        let sums = measures.map { $0 == "amount" ? "sum(amount) AS amount" : "sum(\($0))::bigint AS \($0)" }
        let gathered = (keys + measures).map { "array_agg(\($0))" }
        return { stage in """
            INSERT INTO \(table.days) SELECT * FROM \(stage) ORDER BY artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET (\(arrays)) = (
                SELECT \(gathered.joined(separator: ", ")) FROM (
                    SELECT \((keys + sums).joined(separator: ", ")) FROM (
                        SELECT * FROM unnest(\((keys + measures).map { "\(table.days).\($0)" }.joined(separator: ", ")))
                        UNION ALL
                        SELECT * FROM unnest(\((keys + measures).map { "excluded.\($0)" }.joined(separator: ", ")))
                    ) AS stored(\(arrays))
                    GROUP BY \(keys.joined(separator: ", "))
                ) AS summed)
            """ }
    }
}
