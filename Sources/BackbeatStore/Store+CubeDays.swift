import BackbeatCore
import PostgresNIO

extension Store {
    /// Merges a flush's rows of `cube` into `<cube>_days` (migration 0017), one row per artist and day. The batch's
    /// artist-days already stored are read and locked (in the order of the artist-days, so that two flushes sharing
    /// some lock them in the same order) and merged here; every row of the batch is COPYed to a temporary table, then
    /// the merged ones replace the stored ones and the others are inserted. An artist-day another flush stored since
    /// the read is summed with it in the insert itself (`ON CONFLICT DO UPDATE`, in SQL), so no row is overwritten.
    func mergeDays(_ cube: Cube, _ days: [CubeDay], values: ValueDictionary, on connection: PostgresConnection) async throws {
        guard !days.isEmpty else { return }
        let table = AggregateTable(cube)
        let stage = table.days + "_stage"
        let months = Set(days.map { day -> String in
            let date = CivilDate(daysSinceEpoch: day.day)
            return RFC3339.formatDate(CivilDate(year: date.year, month: date.month, day: 1))
        })
        // Read to its end: an error raised while the rows are made (a partition that cannot be created) comes there.
        for try await _ in try await connection.query(
            "SELECT backbeat_month_partition(\(table.days), month::date) FROM unnest(\(Array(months))::text[]) month", logger: logger
        ) {}
        try await connection.query(PostgresQuery(unsafeSQL: """
            CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) (LIKE \(table.days) INCLUDING COMPRESSION, replaces boolean NOT NULL)
            ON COMMIT DELETE ROWS
            """), logger: logger)
        let width = cube.dimensions.count
        var dictionary = values
        let stored = try await storedDays(cube, of: days, values: values, dictionary: &dictionary, on: connection)
        var written: [(day: CubeDay, replaces: Bool)] = []
        written.reserveCapacity(days.count)
        for day in days {
            if let before = stored[ArtistDayCell(artist: day.artist, day: day.day)] {
                written.append((day.merged(with: before, width: width, dictionary: &dictionary), true))
            } else {
                written.append((day, false))
            }
        }
        let hourly = cube.grain == .hour
        try await append(written, to: stage, columns: Self.dayColumns(cube) + ["replaces"], on: connection) { [dictionary] row, copy in
            let day = row.day
            copy.text(dictionary[day.artist])
            copy.day(day.day)
            if hourly {
                copy.array(count: day.rowCount, of: .smallint) { for hour in day.hours { $0.int16(hour) } }
            }
            for dimension in 0..<width {
                copy.array(count: day.rowCount, of: .text) { copy in
                    for row in 0..<day.rowCount { copy.value(day.values[row * width + dimension], in: dictionary) }
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
            copy.bool(row.replaces)
            copy.endRow()
        }
        let arrays = Self.keyArrays(cube) + cube.dataset.metrics.map(\.rawValue)
        if !stored.isEmpty {
            try await connection.query(PostgresQuery(unsafeSQL: """
                UPDATE \(table.days) d SET (\(arrays.joined(separator: ", "))) = (\(arrays.map { "s.\($0)" }.joined(separator: ", ")))
                FROM \(stage) s WHERE s.replaces AND d.artist_id = s.artist_id AND d.day = s.day
                """), logger: logger)
        }
        if stored.count < days.count {
            try await connection.query(PostgresQuery(unsafeSQL: Self.mergeDays(into: table, cube, from: stage)), logger: logger)
        }
    }

    /// The artist-days of `days` that `cube` already stores, locked until the transaction ends, each with its values
    /// as ids of `dictionary` (which extends `values`, the dictionary of `days`).
    private func storedDays(
        _ cube: Cube, of days: [CubeDay], values: ValueDictionary, dictionary: inout ValueDictionary, on connection: PostgresConnection
    ) async throws -> [ArtistDayCell: CubeDay] {
        let table = AggregateTable(cube)
        let keys = Self.keyArrays(cube).map { $0 == "hour" ? "d.hour" : "d.\($0)" }
        let measures = cube.dataset.metrics.map { $0 == .amount ? "d.amount::text[]" : "d.\($0.rawValue)" }
        var binds = PostgresBindings()
        binds.append(days.map { values[$0.artist] })
        binds.append(days.map { RFC3339.formatDate(CivilDate(daysSinceEpoch: $0.day)) })
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT d.artist_id, (d.day - date '1970-01-01')::bigint, \((keys + measures).joined(separator: ", "))
            FROM \(table.days) d JOIN unnest($1::text[], $2::date[]) AS k(artist_id, day) ON d.artist_id = k.artist_id AND d.day = k.day
            ORDER BY d.artist_id, d.day FOR UPDATE OF d
            """, binds: binds), logger: logger)
        let hourly = cube.grain == .hour
        let width = cube.dimensions.count
        var stored: [ArtistDayCell: CubeDay] = [:]
        for try await row in rows {
            let cells = row.makeRandomAccess()
            var day = CubeDay(artist: dictionary.id(try cells[0].decode(String.self)), day: try cells[1].decode(Int64.self))
            var column = 2
            if hourly {
                day.hours = try cells[column].decode([Int16].self)
                column += 1
            }
            var dimensions: [[String]] = []
            for _ in 0..<width {
                dimensions.append(try cells[column].decode([String].self))
                column += 1
            }
            let count = hourly ? day.hours.count : (dimensions.first?.count ?? 0)
            day.values.reserveCapacity(count * width)
            for index in 0..<count {
                for dimension in dimensions { day.values.append(.id(dictionary.id(dimension[index]))) }
            }
            day.sums = try Self.sums(cube.dataset, cells, from: column, count: count)
            stored[ArtistDayCell(artist: day.artist, day: day.day)] = day
        }
        return stored
    }

    /// The measures of `count` rows, from the arrays of `cells` that start at `column`.
    private static func sums(_ dataset: Dataset, _ cells: PostgresRandomAccessRow, from column: Int, count: Int) throws -> [CubeRowSums] {
        var sums = [CubeRowSums](repeating: CubeRowSums(), count: count)
        switch dataset {
        case .streams:
            let (streams, skips, listening) = (try cells[column].decode([Int64].self), try cells[column + 1].decode([Int64].self),
                                               try cells[column + 2].decode([Int64].self))
            for index in 0..<count { sums[index].integers = (streams[index], skips[index], listening[index]) }
        case .revenue:
            let (amounts, events) = (try cells[column].decode([String].self), try cells[column + 1].decode([Int64].self))
            for index in 0..<count {
                sums[index].amount = try Money.parse(amounts[index], allowExponent: false, limit: Money.totalLimitMicros)
                sums[index].integers.0 = events[index]
            }
        case .social:
            let counts = try cells[column].decode([Int64].self)
            for index in 0..<count { sums[index].integers.0 = counts[index] }
        }
        return sums
    }

    /// A `_days` table's columns: the artist, the day, the hour of the day (hourly cubes), the dimensions, the measures.
    private static func dayColumns(_ cube: Cube) -> [String] {
        ["artist_id", "day"] + keyArrays(cube) + cube.dataset.metrics.map(\.rawValue)
    }

    /// The arrays that hold a row's key within its artist-day.
    private static func keyArrays(_ cube: Cube) -> [String] {
        (cube.grain == .hour ? ["hour"] : []) + cube.dimensions.map(\.rawValue)
    }

    /// The statement that inserts the rows of `stage` that replace nothing into `table`'s `_days`, summing an
    /// artist-day stored meanwhile with the staged one per key. Names come only from `Cube` and `AggregateTable`.
    private static func mergeDays(into table: AggregateTable, _ cube: Cube, from stage: String) -> String {
        let keys = keyArrays(cube)
        let measures = cube.dataset.metrics.map(\.rawValue)
        let arrays = (keys + measures).joined(separator: ", ")
        let sums = measures.map { $0 == "amount" ? "sum(amount) AS amount" : "sum(\($0))::bigint AS \($0)" }
        let gathered = (keys + measures).map { "array_agg(\($0))" }
        return """
            INSERT INTO \(table.days) SELECT \((["artist_id", "day"] + keys + measures).joined(separator: ", ")) FROM \(stage)
            WHERE NOT replaces ORDER BY artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET (\(arrays)) = (
                SELECT \(gathered.joined(separator: ", ")) FROM (
                    SELECT \((keys + sums).joined(separator: ", ")) FROM (
                        SELECT * FROM unnest(\((keys + measures).map { "\(table.days).\($0)" }.joined(separator: ", ")))
                        UNION ALL
                        SELECT * FROM unnest(\((keys + measures).map { "excluded.\($0)" }.joined(separator: ", ")))
                    ) AS stored(\(arrays))
                    GROUP BY \(keys.joined(separator: ", "))
                ) AS summed)
            """
    }
}
