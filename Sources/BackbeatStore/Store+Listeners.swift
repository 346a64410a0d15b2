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
        let sql = "SELECT \(period), hll_union_agg(listeners)::text FROM \(table) WHERE \(conditions) GROUP BY 1"
        var result: [Timestamp?: HyperLogLog] = [:]
        for try await (start, text) in try await read(PostgresQuery(unsafeSQL: sql, binds: binds))
            .decode((Int64?, String).self) {
            result[start.map { Timestamp(seconds: $0) }] = try Self.sketch(fromText: text)
        }
        return result
    }

    /// The union of each of `trackIDs`' daily listener sketches over `days`.
    public func trackListenerSketches(artistID: String, trackIDs: [String], days: Range<Int64>) async throws -> [String: HyperLogLog] {
        guard !trackIDs.isEmpty, days.lowerBound < days.upperBound else { return [:] }
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.lowerBound))
        let to = RFC3339.formatDate(CivilDate(daysSinceEpoch: days.upperBound))
        let rows = try await read("""
            SELECT track_id, hll_union_agg(listeners)::text FROM track_listeners_daily
            WHERE artist_id = \(artistID) AND track_id = ANY(\(trackIDs)::text[]) AND day >= \(from)::date AND day < \(to)::date
            GROUP BY track_id
            """)
        var result: [String: HyperLogLog] = [:]
        for try await (track, text) in rows.decode((String, String).self) {
            result[track] = try Self.sketch(fromText: text)
        }
        return result
    }

    /// A sketch from the text form of an `hll` value: `\x` and the storage bytes in hex.
    static func sketch(fromText text: String) throws -> HyperLogLog {
        guard let bytes = bytes(fromHexText: text) else { throw StoredSketchError(text: text) }
        return try HyperLogLog(serialized: bytes)
    }

    /// The bytes of PostgreSQL's hex text output (`\x` then two hex digits per byte), or nil if it is not that.
    public static func bytes(fromHexText text: String) -> [UInt8]? {
        let hex = Array(text.utf8.dropFirst(2))
        guard text.hasPrefix("\\x"), hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index < hex.count {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// An `hll` value PostgreSQL returned that is not the text form of a sketch.
public struct StoredSketchError: Error, CustomStringConvertible {
    public var text: String
    public var description: String { "PostgreSQL returned an hll value that is not \\x followed by hex: \(text.prefix(40))" }
}
