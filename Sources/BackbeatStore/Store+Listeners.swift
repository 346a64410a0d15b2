import BackbeatCore
import PostgresNIO

extension Store {
    /// The union of the daily sketches of `scope` (listeners or visitors) per period of `granularity` (keyed by period start;
    /// nil for `all`), as `hll_union_agg` computes it, so that memory and PostgreSQL can be unioned further. Asked by
    /// month or in all, whole months come from the month rows (migration 0020).
    public func listenerSketches(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: HyperLogLog] {
        Self.periods(try await rowsAndSketches([], [.periods(scope, granularity)]).sketches[0])
    }

    /// The union of each of `keys`' daily sketches of `kind` over `days` (whole months from the month rows): tracks'
    /// listeners, pages' (or page sources', `PageSourceKey`) visitors.
    public func keyedSketches(_ kind: ListenerScope.Kind, artistID: String, keys: [String], days: Range<Int64>) async throws -> [String: HyperLogLog] {
        Self.keyed(try await rowsAndSketches([], [.keyed(kind, artistID: artistID, keys: keys, days: days)]).sketches[0])
    }

    /// The unions of a `SketchRead.periods`, by period start (nil: `all`).
    public static func periods(_ unions: [String?: HyperLogLog]) -> [Timestamp?: HyperLogLog] {
        var result: [Timestamp?: HyperLogLog] = [:]
        for (start, sketch) in unions { result[start.flatMap(Int64.init).map { Timestamp(seconds: $0) }] = sketch }
        return result
    }

    /// The unions of a `SketchRead.keyed`, by key.
    public static func keyed(_ unions: [String?: HyperLogLog]) -> [String: HyperLogLog] {
        var result: [String: HyperLogLog] = [:]
        for (key, sketch) in unions { if let key { result[key] = sketch } }
        return result
    }
}
