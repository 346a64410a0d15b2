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
        try await rows(for: [query])[0]
    }

    /// The rows of each of `queries`, in their order, as `rows(for:)` of each would answer them, in one statement
    /// (`rowsAndSketches`), and one more for each full dimension by day over some days.
    /// - Throws: `QueryError` `dropped_by_retention` for the first query whose interval starts before the first day
    ///   retention kept of its cube.
    public func rows(for queries: [Query]) async throws -> [[QueryRow]] {
        try await rowsAndSketches(queries, []).rows
    }

    /// Adds to `answer` (of a full dimension by day) the daily rows retention rolled the hourly detail of its
    /// interval's days into.
    func addRolledDetail(to answer: inout BlockAnswer) async throws {
        let query = answer.query
        var binds = PostgresBindings()
        binds.append(query.interval.from.seconds.floorDiv(86_400))
        binds.append((query.interval.to.seconds - 1).floorDiv(86_400))
        var artistCondition = ""
        if let artists = query.filters[.artistID] {
            binds.append(artists)
            artistCondition = " AND artist_id = ANY($3::text[])"
        }
        let dimensions = answer.cube.dimensions.map(Self.column)
        let rolled = try await read(PostgresQuery(unsafeSQL: """
            SELECT artist_id, (day - date '1970-01-01')::bigint, \((dimensions + query.dataset.metrics.map(Self.stored)).joined(separator: ", "))
            FROM \(answer.stored.rolledTable) WHERE day >= date '1970-01-01' + $1::integer AND day <= date '1970-01-01' + $2::integer\(artistCondition)
            """, binds: binds))
        for try await row in rolled {
            let cells = row.makeRandomAccess()
            let metrics = try query.dataset.metrics.enumerated().map { try Self.decode($1, cells[2 + dimensions.count + $0]) }
            let sums = CubeRowSums(metrics, of: query.dataset)
            answer.add(artist: try cells[0].decode(String.self), day: try cells[1].decode(Int64.self), secondOfDay: nil,
                       values: try dimensions.indices.map { try cells[2 + $0].decode(String.self) }, sums: sums)
        }
    }

    /// The statements `rowsAndSketches` (or `rows(for:)`) sends answering `queries` and `sketches`: one (none when
    /// there is nothing to read), and one more for each full dimension by day over some days (it reads the daily rows
    /// retention rolled the hourly detail into).
    public static func statements(answering queries: [Query], sketches: [SketchRead] = []) -> Int {
        if queries.isEmpty && sketches.allSatisfy(\.isEmpty) { return 0 }
        return 1 + queries.filter { readsRolledDetail(BlockAnswer($0)) }.count
    }

    /// Whether `answer` also reads the daily rows retention rolled hourly detail into (`addRolledDetail`, a
    /// statement of its own): a non-empty interval of the full dimensions by day.
    static func readsRolledDetail(_ answer: BlockAnswer) -> Bool {
        answer.cube.isDailyDetail && answer.query.interval.from < answer.query.interval.to
    }

    /// Refuses a query on `cube` from before `keptFrom`, the first day retention kept of it, saying what to ask
    /// instead.
    func requireKept(_ cube: Cube, from: Timestamp, keptFrom: Int64?) throws {
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
