import BackbeatCore
import PostgresNIO

extension Store {
    /// The union of the daily sketches of `scope` (listeners or visitors) per period of `granularity` (keyed by period start;
    /// nil for `all`), as `hll_union_agg` computes it, so that memory and PostgreSQL can be unioned further. Asked by
    /// month or in all, whole months come from the month rows (migration 0020).
    public func listenerSketches(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: HyperLogLog] {
        guard scope.days.lowerBound < scope.days.upperBound else { return [:] }
        let period = granularity == .all
            ? "NULL::text"
            : "extract(epoch FROM date_trunc('\(granularity.rawValue)', day::timestamp))::bigint::text"
        let wholeMonths = [.month, .all].contains(granularity)
        var result: [Timestamp?: HyperLogLog] = [:]
        try await readSketches(
            SketchFamily(scope.kind), artistID: scope.artistID, keys: scope.trackID.map { [$0] }, days: scope.days,
            wholeMonths: wholeMonths, groupingBy: period
        ) { start, sketch in
            result[start.flatMap(Int64.init).map { Timestamp(seconds: $0) }] = sketch
        }
        return result
    }

    /// The union of each of `keys`' daily sketches of `kind` over `days` (whole months from the month rows): tracks'
    /// listeners, pages' (or page sources', `PageSourceKey`) visitors.
    public func keyedSketches(_ kind: ListenerScope.Kind, artistID: String, keys: [String], days: Range<Int64>) async throws -> [String: HyperLogLog] {
        guard !keys.isEmpty, days.lowerBound < days.upperBound else { return [:] }
        var result: [String: HyperLogLog] = [:]
        try await readSketches(SketchFamily(kind), artistID: artistID, keys: keys, days: days, wholeMonths: true, groupingBy: "track_id") { track, sketch in
            if let track { result[track] = sketch }
        }
        return result
    }

    /// Reads the unions of `family`'s sketches of `artistID` over `days` (of `keys`' when given: tracks or pages, else
    /// the artist's own), one per value of `groupingBy` (SQL text over `day` and `track_id`), each handed to `receive`. With
    /// `wholeMonths`, the months inside `days` that have month rows are read from them, the other days from the day
    /// rows (`readingMonthRows`).
    private func readSketches(
        _ family: SketchFamily, artistID: String, keys: [String]?, days: Range<Int64>, wholeMonths: Bool, groupingBy key: String,
        _ receive: (String?, HyperLogLog) -> Void
    ) async throws {
        let unions = try await readingMonthRows(of: wholeMonths ? days : nil) { months in
            var binds = PostgresBindings()
            binds.append(artistID)
            binds.append(days.lowerBound)
            binds.append(days.upperBound)
            binds.append(months?.lowerBound ?? 0)
            binds.append(months?.upperBound ?? 0)
            let range = { (from: Int, to: Int) in "day >= date '1970-01-01' + $\(from)::integer AND day < date '1970-01-01' + $\(to)::integer" }
            var source: (String) -> String
            if let keys {
                binds.append(keys)
                source = { table in """
                    SELECT d.day, t.track_id, t.sketch FROM \(table) d, unnest(d.\(family.key), d.\(family.column)) AS t(track_id, sketch)
                    WHERE d.artist_id = $1 AND t.track_id = ANY($6::text[])
                    """ }
            } else {
                source = { table in "SELECT day, NULL::text AS track_id, \(family.column) AS sketch FROM \(table) WHERE artist_id = $1" }
            }
            let tables = keys == nil ? family.artists : family.keyed
            var rows = source(tables.days) + " AND " + range(2, 3)
            if months != nil, let monthTable = tables.months {
                rows += " AND (day < date '1970-01-01' + $4::integer OR day >= date '1970-01-01' + $5::integer)\nUNION ALL " + source(monthTable) + " AND " + range(4, 5)
            }
            let sql = """
                SELECT \(key), hll_union_agg(sketch), (SELECT (rolled_to - date '1970-01-01')::bigint FROM month_rolls)
                FROM (\(rows)) AS sketches GROUP BY 1
                """
            var unions: [(String?, HyperLogLog)] = []
            var rolledTo: Int64??
            for try await (value, stored, rolled) in try await read(PostgresQuery(unsafeSQL: sql, binds: binds)).decode((String?, ByteBuffer, Int64?).self) {
                unions.append((value, try Self.sketch(stored)))
                rolledTo = .some(rolled)
            }
            return (unions, rolledTo)
        }
        for (value, sketch) in unions { receive(value, sketch) }
    }

    /// A sketch from an `hll` value as PostgreSQL sends it in binary (`hll_send`): its storage bytes.
    static func sketch(_ stored: ByteBuffer) throws -> HyperLogLog {
        try HyperLogLog(serialized: Array(stored.readableBytesView))
    }
}
