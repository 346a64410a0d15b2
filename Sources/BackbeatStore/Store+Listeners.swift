import BackbeatCore
import PostgresNIO

extension Store {
    /// Unique listeners of `scope`, per period of `granularity` (keyed by period start; nil for `all`),
    /// as `hll_cardinality(hll_union_agg(...))` over the daily sketches.
    public func listeners(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: Double] {
        var binds = PostgresBindings()
        binds.append(scope.artistID)
        binds.append(RFC3339.formatDate(CivilDate(daysSinceEpoch: scope.days.lowerBound)))
        binds.append(RFC3339.formatDate(CivilDate(daysSinceEpoch: scope.days.upperBound)))
        var table = "artist_listeners_daily"
        var conditions = "artist_id = $1 AND day >= $2::date AND day < $3::date"
        if let track = scope.trackID {
            binds.append(track)
            table = "track_listeners_daily"
            conditions += " AND track_id = $4"
        }
        let period = granularity == .all
            ? "NULL::bigint"
            : "extract(epoch FROM date_trunc('\(granularity.rawValue)', day::timestamp))::bigint"
        let sql = "SELECT \(period), hll_cardinality(hll_union_agg(listeners)) FROM \(table) WHERE \(conditions) GROUP BY 1"
        var result: [Timestamp?: Double] = [:]
        for try await (start, cardinality) in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            .decode((Int64?, Double?).self) {
            result[start.map { Timestamp(seconds: $0) }] = cardinality ?? 0
        }
        return result
    }

    /// Unique listeners of each of `trackIDs` over `days`.
    public func trackListeners(artistID: String, trackIDs: [String], days: Range<Int64>) async throws -> [String: Double] {
        guard !trackIDs.isEmpty else { return [:] }
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.lowerBound))
        let to = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.upperBound))
        let rows = try await client.query("""
            SELECT track_id, hll_cardinality(hll_union_agg(listeners)) FROM track_listeners_daily
            WHERE artist_id = \(artistID) AND track_id = ANY(\(trackIDs)::text[]) AND day >= \(from)::date AND day < \(to)::date
            GROUP BY track_id
            """, logger: logger)
        var result: [String: Double] = [:]
        for try await (track, cardinality) in rows.decode((String, Double?).self) {
            result[track] = cardinality ?? 0
        }
        return result
    }
}
