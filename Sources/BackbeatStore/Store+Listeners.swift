import BackbeatCore
import PostgresNIO

extension Store {
    /// The union of the daily listener sketches of `scope` per period of `granularity` (keyed by period start;
    /// nil for `all`), as `hll_union_agg` computes it, so that memory and PostgreSQL can be unioned further.
    public func listenerSketches(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: HyperLogLog] {
        guard scope.days.lowerBound < scope.days.upperBound else { return [:] }
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
        let sql = "SELECT \(period), hll_union_agg(listeners) FROM \(table) WHERE \(conditions) GROUP BY 1"
        var result: [Timestamp?: HyperLogLog] = [:]
        for try await (start, stored) in try await read(PostgresQuery(unsafeSQL: sql, binds: binds))
            .decode((Int64?, ByteBuffer).self) {
            result[start.map { Timestamp(seconds: $0) }] = try Self.sketch(stored)
        }
        return result
    }

    /// The union of each of `trackIDs`' daily listener sketches over `days`.
    public func trackListenerSketches(artistID: String, trackIDs: [String], days: Range<Int64>) async throws -> [String: HyperLogLog] {
        guard !trackIDs.isEmpty, days.lowerBound < days.upperBound else { return [:] }
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.lowerBound))
        let to = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.upperBound))
        let rows = try await read("""
            SELECT track_id, hll_union_agg(listeners) FROM track_listeners_daily
            WHERE artist_id = \(artistID) AND track_id = ANY(\(trackIDs)::text[]) AND day >= \(from)::date AND day < \(to)::date
            GROUP BY track_id
            """)
        var result: [String: HyperLogLog] = [:]
        for try await (track, stored) in rows.decode((String, ByteBuffer).self) {
            result[track] = try Self.sketch(stored)
        }
        return result
    }

    /// A sketch from an `hll` value as PostgreSQL sends it in binary (`hll_send`): its storage bytes.
    static func sketch(_ stored: ByteBuffer) throws -> HyperLogLog {
        try HyperLogLog(serialized: Array(stored.readableBytesView))
    }
}
