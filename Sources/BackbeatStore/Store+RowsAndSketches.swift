import BackbeatCore
import PostgresNIO

/// A union of stored sketches one statement reads beside rows (`Store.rowsAndSketches`).
public enum SketchRead: Sendable, Hashable {
    /// The unique listeners or visitors of `scope` (of its track, when it names one) per period of the granularity
    /// (keyed by the period's start in seconds, as text; nil for `all`).
    case periods(ListenerScope, Granularity)
    /// The unique listeners of each track, or visitors of each page or page source (`PageSourceKey`), of `keys`
    /// over `days` (keyed by the key).
    case keyed(ListenerScope.Kind, artistID: String, keys: [String], days: Range<Int64>)

    /// Whose sketches it reads: listeners or visitors.
    public var kind: ListenerScope.Kind {
        switch self {
        case .periods(let scope, _): scope.kind
        case .keyed(let kind, _, _, _): kind
        }
    }

    var family: SketchFamily { SketchFamily(kind) }

    /// The same read over `days`.
    public func with(days: Range<Int64>) -> SketchRead {
        switch self {
        case .periods(let scope, let granularity): .periods(scope.with(days: days), granularity)
        case .keyed(let kind, let artistID, let keys, _): .keyed(kind, artistID: artistID, keys: keys, days: days)
        }
    }

    public var days: Range<Int64> {
        switch self {
        case .periods(let scope, _): scope.days
        case .keyed(_, _, _, let days): days
        }
    }

    /// The days whose whole months may be read from month rows (nil: none; by day or week, every day's own row).
    var wholeMonthDays: Range<Int64>? {
        switch self {
        case .periods(_, let granularity): [.month, .all].contains(granularity) ? days : nil
        case .keyed: days
        }
    }

    /// Whether there is nothing to read: no day, or no key.
    var isEmpty: Bool {
        switch self {
        case .periods(let scope, _): scope.days.isEmpty
        case .keyed(_, _, let keys, let days): keys.isEmpty || days.isEmpty
        }
    }

    /// The SELECT of the unions, one row per key, `(key text, sketch)`, `tag` first and a NULL bigint third (the
    /// columns of `Store.rowsAndSketches`): the day rows of `days` but the whole `months`, which come from the
    /// month rows. Its values are appended to `binds`.
    func select(tag: Int, months: Range<Int64>?, _ binds: inout PostgresBindings) -> String {
        let family = self.family
        let artistID: String, keys: [String]?, key: String
        switch self {
        case .periods(let scope, let granularity):
            artistID = scope.artistID
            keys = scope.trackID.map { [$0] }
            key = granularity == .all ? "NULL::text" : "extract(epoch FROM date_trunc('\(granularity.rawValue)', day::timestamp))::bigint::text"
        case .keyed(_, let artist, let keyList, _):
            (artistID, keys, key) = (artist, keyList, "track_id")
        }
        let artist = binds.parameter(artistID)
        let keyCondition = keys.map { " AND t.track_id = ANY(\(binds.parameter($0))::text[])" } ?? ""
        let source = { (table: String) in
            keys == nil
                ? "SELECT day, NULL::text AS track_id, \(family.column) AS sketch FROM \(table) WHERE artist_id = \(artist)"
                : "SELECT d.day, t.track_id, t.sketch FROM \(table) d, unnest(d.\(family.key), d.\(family.column)) AS t(track_id, sketch) WHERE d.artist_id = \(artist)\(keyCondition)"
        }
        let tables = keys == nil ? family.artists : family.keyed
        var rows = source(tables.stored) + " AND day >= \(binds.day(days.lowerBound)) AND day < \(binds.day(days.upperBound))"
        if let months, let monthTable = tables.months {
            let lower = binds.day(months.lowerBound), upper = binds.day(months.upperBound)
            rows += " AND (day < \(lower) OR day >= \(upper))\nUNION ALL " + source(monthTable) + " AND day >= \(lower) AND day < \(upper)"
        }
        return "SELECT \(tag), \(key), NULL::bigint, hll_send(hll_union_agg(sketch)) FROM (\(rows)) AS sketches GROUP BY 2"
    }
}

extension Store {
    /// The rows of each of `queries` (as `rows(for:)` answers one) and the unions of each of `sketches`, in their
    /// orders, from one statement: the blocks of every query, every union, the first days retention kept of the
    /// queries' cubes and the months rolled (each row tagged with what it answers; whole months of a month-rolled
    /// cube or sketch read from its month rows, `readingMonthRows`). Each full dimension by day adds a statement of
    /// its own for the daily rows retention rolled its hourly detail into.
    /// - Throws: `QueryError` `dropped_by_retention` for the first query whose interval starts before the first day
    ///   retention kept of its cube.
    public func rowsAndSketches(_ queries: [Query], _ sketches: [SketchRead]) async throws -> (rows: [[QueryRow]], sketches: [[String?: HyperLogLog]]) {
        if queries.isEmpty && sketches.allSatisfy(\.isEmpty) { return ([], sketches.map { _ in [:] }) }
        var answers = queries.map(BlockAnswer.init)
        // Whole months of a month-rolled cube, asked by month or in all, are read from its month rows.
        let queryMonthDays = answers.map { answer -> Range<Int64>? in
            let query = answer.query
            guard query.interval.from < query.interval.to, AggregateTable(answer.stored).months != nil, [.month, .all].contains(query.granularity) else {
                return nil
            }
            let firstWholeDay = -(-query.interval.from.seconds).floorDiv(86_400)
            return firstWholeDay..<max(firstWholeDay, query.interval.to.seconds.floorDiv(86_400))
        }
        let (keptFrom, unions) = try await readingMonthRows(of: queryMonthDays + sketches.map(\.wholeMonthDays)) { months in
            answers = queries.map(BlockAnswer.init)
            var binds = PostgresBindings()
            // The blocks of a day cube are its own; the full dimensions by day read the full table's.
            var selects: [String] = []
            for (index, answer) in answers.enumerated() where answer.query.interval.from < answer.query.interval.to {
                let query = answer.query, tables = AggregateTable(answer.stored)
                let days = "day >= \(binds.day(query.interval.from.seconds.floorDiv(86_400))) AND day <= \(binds.day((query.interval.to.seconds - 1).floorDiv(86_400)))"
                let artistCondition = query.filters[.artistID].map { " AND artist_id = ANY(\(binds.parameter($0))::text[])" } ?? ""
                let block = "SELECT \(index), artist_id, (day - date '1970-01-01')::bigint, block FROM "
                if let monthDays = months[index], let monthTable = tables.months {
                    let lower = binds.day(monthDays.lowerBound), upper = binds.day(monthDays.upperBound)
                    selects.append(block + "\(tables.stored) WHERE \(days)\(artistCondition) AND (day < \(lower) OR day >= \(upper))")
                    selects.append(block + "\(monthTable) WHERE day >= \(lower) AND day < \(upper)\(artistCondition)")
                } else {
                    selects.append(block + "\(tables.stored) WHERE \(days)\(artistCondition)")
                }
            }
            for (index, read) in sketches.enumerated() where !read.isEmpty {
                selects.append(read.select(tag: Self.sketchTag(index), months: months[queries.count + index], &binds))
            }
            // The first day retention kept of each cube, and the months rolled, come in the same statement.
            if !queries.isEmpty {
                let tables = binds.parameter(Array(Set(answers.map(\.cube.table))).sorted())
                selects.append("SELECT \(Self.keptFromTag), table_name, (kept_from - date '1970-01-01')::bigint, NULL::bytea FROM retention_horizons WHERE table_name = ANY(\(tables)::text[])")
            }
            selects.append("SELECT \(Self.rolledToTag), NULL, (rolled_to - date '1970-01-01')::bigint, NULL FROM month_rolls")
            var keptFrom: [String: Int64] = [:]
            var unions = [[String?: HyperLogLog]](repeating: [:], count: sketches.count)
            var rolledTo: Int64??
            for try await (tag, name, day, bytes) in try await read(PostgresQuery(unsafeSQL: selects.joined(separator: "\nUNION ALL "), binds: binds))
                .decode((Int32, String?, Int64?, ByteBuffer?).self) {
                let tag = Int(tag)
                switch tag {
                case Self.keptFromTag: if let name, let day { keptFrom[name] = day }
                case Self.rolledToTag: rolledTo = .some(day)
                case answers.indices:
                    guard let name, let day, let bytes else { continue }
                    blocksSummed.add()
                    answers[tag].add(artist: name, day: day, try CubeBlock.decode(Array(bytes.readableBytesView), of: answers[tag].stored))
                default:
                    let index = Self.sketchTag(tag)
                    guard unions.indices.contains(index), let bytes else { continue }
                    unions[index][name] = try Self.sketch(bytes)
                }
            }
            return ((keptFrom, unions), rolledTo)
        }
        for answer in answers {
            try requireKept(answer.cube, from: answer.query.interval.from, keptFrom: keptFrom[answer.cube.table])
        }
        for index in answers.indices where Self.readsRolledDetail(answers[index]) {
            try await addRolledDetail(to: &answers[index])
        }
        return (answers.map(\.rows), unions)
    }

    /// The tags of the statement's rows that are not a query's block (a query's is its index).
    private static let keptFromTag = -1, rolledToTag = -2

    /// The tag of the `index`th union of sketches, and the index of a union's tag (one mapping, its own inverse).
    private static func sketchTag(_ index: Int) -> Int {
        -3 - index
    }

    /// A sketch from an `hll` value's storage bytes (`hll_send`, or the value as PostgreSQL sends it in binary).
    static func sketch(_ stored: ByteBuffer) throws -> HyperLogLog {
        try HyperLogLog(serialized: Array(stored.readableBytesView))
    }
}
