import BackbeatCore
import PostgresNIO

extension Store {
    /// Answers `query` from the smallest cube that can (see `Cube.plan`): one row per period (unless granularity is
    /// `all`) and group. Rows are not zero-filled or ordered; `ResultShaper` does that.
    /// - Throws: `QueryError` `dropped_by_retention` when the interval starts before the first day retention kept
    ///   of that cube (`Store.applyRetention`).
    public func rows(for query: Query) async throws -> [QueryRow] {
        let cube = Cube.plan(for: query)
        try await requireKept(cube, from: query.interval.from)
        var binds = PostgresBindings()
        binds.append(query.interval.from.seconds)
        binds.append(query.interval.to.seconds)
        var select: [String] = []
        var groups: [String] = []
        if query.granularity != .all {
            let truncated = cube.grain == .hour
                ? "date_trunc('\(query.granularity.rawValue)', hour, 'UTC')"
                : "date_trunc('\(query.granularity.rawValue)', day::timestamp)"
            select.append("extract(epoch FROM \(truncated))::bigint")
            groups.append("1")
        }
        for dimension in query.groupBy {
            select.append(Self.column(dimension))
            groups.append(Self.column(dimension))
        }
        select += query.dataset.metrics.map(Self.aggregate)
        // The full dimensions by day select by `hour` too: it prunes the hourly partitions.
        var conditions = cube.grain == .hour || cube.isDailyDetail
            ? ["hour >= to_timestamp($1)", "hour < to_timestamp($2)"]
            : ["day >= (to_timestamp($1) AT TIME ZONE 'UTC')::date", "day < (to_timestamp($2) AT TIME ZONE 'UTC')::date"]
        // Cubes are stored by artist-day (migration 0017): the days of an hourly question select the rows to unnest.
        if cube.grain == .hour || cube.isDailyDetail {
            conditions += ["day >= (to_timestamp($1) AT TIME ZONE 'UTC')::date", "day <= (to_timestamp($2) AT TIME ZONE 'UTC')::date"]
        }
        for dimension in Dimension.allCases {
            guard let values = query.filters[dimension] else { continue }
            binds.append(values)
            conditions.append("\(Self.column(dimension)) = ANY($\(binds.count)::text[])")
        }
        var sql = "SELECT \(select.joined(separator: ", ")) FROM \(cube.table) WHERE \(conditions.joined(separator: " AND "))"
        if !groups.isEmpty { sql += " GROUP BY \(groups.joined(separator: ", "))" }

        let rows = try await read(PostgresQuery(unsafeSQL: sql, binds: binds))
        var result: [QueryRow] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            var column = 0
            var periodStart: Timestamp?
            if query.granularity != .all {
                periodStart = Timestamp(seconds: try cells[column].decode(Int64.self))
                column += 1
            }
            var groupValues: [String] = []
            for _ in query.groupBy {
                groupValues.append(try cells[column].decode(String.self))
                column += 1
            }
            var metrics: [MetricValue] = []
            for metric in query.dataset.metrics {
                metrics.append(try Self.decode(metric, cells[column]))
                column += 1
            }
            result.append(QueryRow(periodStart: periodStart, groupValues: groupValues, metrics: metrics))
        }
        return result
    }

    /// Refuses a query on `cube` from before the first day retention kept of it, saying what to ask instead.
    private func requireKept(_ cube: Cube, from: Timestamp) async throws {
        guard let keptFrom = try await keptFrom(cube.table), from < Timestamp(seconds: keptFrom * 86_400) else { return }
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
        case .events: "coalesce(sum(events), 0)::bigint"
        case .count: "coalesce(sum(count), 0)::bigint"
        }
    }
}
