import BackbeatCore
import PostgresNIO

extension Store {
    /// Answers `query` from the smallest cube that can (see `Cube.plan`): one row per period (unless granularity is
    /// `all`) and group. The blocks of the interval's days (migration 0019) are read and summed here (`BlockAnswer`);
    /// the full dimensions by day add the daily rows retention rolled the hourly detail into. Rows are not
    /// zero-filled or ordered; `ResultShaper` does that.
    /// - Throws: `QueryError` `dropped_by_retention` when the interval starts before the first day retention kept
    ///   of that cube (`Store.applyRetention`).
    public func rows(for query: Query) async throws -> [QueryRow] {
        var answer = BlockAnswer(query)
        let cube = answer.cube
        guard query.interval.from < query.interval.to else {
            try requireKept(cube, from: query.interval.from, keptFrom: try await keptFrom(cube.table))
            return []
        }
        // The blocks of a day cube are its own; the full dimensions by day read the full table's.
        let stored = answer.stored
        var binds = PostgresBindings()
        binds.append(query.interval.from.seconds.floorDiv(86_400))
        binds.append((query.interval.to.seconds - 1).floorDiv(86_400))
        var artistCondition = ""
        if let artists = query.filters[.artistID] {
            binds.append(artists)
            artistCondition = " AND artist_id = ANY($3::text[])"
        }
        let days = "day >= date '1970-01-01' + $1::integer AND day <= date '1970-01-01' + $2::integer"
        // Whole months of a month-rolled cube, asked by month or in all, are read from its month rows.
        let monthTable = AggregateTable(stored).months
        let firstWholeDay = -(-query.interval.from.seconds).floorDiv(86_400)
        let wholeMonthDays = monthTable != nil && [.month, .all].contains(query.granularity)
            ? firstWholeDay..<max(firstWholeDay, query.interval.to.seconds.floorDiv(86_400)) : nil
        let keptFrom = try await readingMonthRows(of: wholeMonthDays) { months in
            answer = BlockAnswer(query)
            var statement = binds
            var sql = "SELECT 0, artist_id, (day - date '1970-01-01')::bigint, block FROM \(AggregateTable(stored).days) WHERE \(days)\(artistCondition)"
            if let months, let monthTable {
                statement.append(months.lowerBound)
                statement.append(months.upperBound)
                let lower = "date '1970-01-01' + $\(statement.count - 1)::integer", upper = "date '1970-01-01' + $\(statement.count)::integer"
                sql += " AND (day < \(lower) OR day >= \(upper))"
                sql += "\nUNION ALL SELECT 0, artist_id, (day - date '1970-01-01')::bigint, block FROM \(monthTable) WHERE day >= \(lower) AND day < \(upper)\(artistCondition)"
            }
            // The first day retention kept of the cube, and the months rolled, come in the same statement.
            statement.append(cube.table)
            sql += """

                UNION ALL SELECT 1, NULL, (kept_from - date '1970-01-01')::bigint, NULL FROM retention_horizons WHERE table_name = $\(statement.count)
                UNION ALL SELECT 2, NULL, (rolled_to - date '1970-01-01')::bigint, NULL FROM month_rolls
                """
            var keptFrom: Int64?
            var rolledTo: Int64??
            for try await (kind, artist, day, block) in try await read(PostgresQuery(unsafeSQL: sql, binds: statement))
                .decode((Int32, String?, Int64?, ByteBuffer?).self) {
                switch kind {
                case 1: keptFrom = day
                case 2: rolledTo = .some(day)
                default:
                    guard let artist, let day, let block else { continue }
                    blocksSummed.add()
                    answer.add(artist: artist, day: day, try CubeBlock.decode(Array(block.readableBytesView), of: stored))
                }
            }
            return (keptFrom, rolledTo)
        }
        try requireKept(cube, from: query.interval.from, keptFrom: keptFrom)
        if cube.isDailyDetail {
            let dimensions = cube.dimensions.map(Self.column)
            let rolled = try await read(PostgresQuery(unsafeSQL: """
                SELECT artist_id, (day - date '1970-01-01')::bigint, \((dimensions + query.dataset.metrics.map(Self.stored)).joined(separator: ", "))
                FROM \(stored.rolledTable) WHERE \(days)\(artistCondition)
                """, binds: binds))
            for try await row in rolled {
                let cells = row.makeRandomAccess()
                let metrics = try query.dataset.metrics.enumerated().map { try Self.decode($1, cells[2 + dimensions.count + $0]) }
                let sums = CubeRowSums(metrics, of: query.dataset)
                answer.add(artist: try cells[0].decode(String.self), day: try cells[1].decode(Int64.self), secondOfDay: nil,
                           values: try dimensions.indices.map { try cells[2 + $0].decode(String.self) }, sums: sums)
            }
        }
        return answer.rows
    }

    /// The statements `rows(for:)` sends answering `query`: one, and a second when the full dimensions by day read the
    /// daily rows retention rolled the hourly detail into.
    public static func statements(answering query: Query) -> Int {
        BlockAnswer(query).cube.isDailyDetail ? 2 : 1
    }

    /// Refuses a query on `cube` from before `keptFrom`, the first day retention kept of it, saying what to ask
    /// instead.
    private func requireKept(_ cube: Cube, from: Timestamp, keptFrom: Int64?) throws {
        guard let keptFrom, from < Timestamp(seconds: keptFrom * 86_400) else { return }
        let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: keptFrom))
        if cube.isFull {
            throw QueryError(.droppedByRetention, "hourly detail before \(day) is no longer kept (serve --detail-days): ask by day (granularity day or coarser, from and to at midnight UTC) or from \(day) on")
        }
        throw QueryError(.droppedByRetention, "these numbers before \(day) are no longer kept (serve --cube-months): ask from \(day) on")
    }

    // MARK: - Allow-lists: with Cube.all's table names, the only identifiers ever placed in SQL text

    /// A dimension's column: its raw value, one of the enum's fixed cases, never client text.
    static func column(_ dimension: Dimension) -> String {
        dimension.rawValue
    }

    /// A metric read back from a column that `aggregate` (or `stored`) selected: money travels as exact text.
    static func decode(_ metric: Metric, _ cell: PostgresCell) throws -> MetricValue {
        if metric == .amount {
            return .money(try Money.parse(try cell.decode(String.self), allowExponent: false, limit: Money.totalLimitMicros))
        }
        return .integer(try cell.decode(Int64.self))
    }

    /// A stored metric column as selected for `decode`.
    static func stored(_ metric: Metric) -> String {
        metric == .amount ? "amount::text" : metric.rawValue
    }

    static func aggregate(_ metric: Metric) -> String {
        switch metric {
        case .streams: "coalesce(sum(streams), 0)::bigint"
        case .skips: "coalesce(sum(skips), 0)::bigint"
        case .listeningMs: "coalesce(sum(listening_ms), 0)::bigint"
        case .amount: "coalesce(sum(amount), 0)::numeric(38, 6)::text"
        case .events, .count, .sessions, .sessionsWithSectionView, .sessionsWithCTAClick: "coalesce(sum(\(metric.rawValue)), 0)::bigint"
        }
    }
}
