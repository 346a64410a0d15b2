import BackbeatCore

/// The zone a read names with `tz` (docs/api.md, "Reading in another zone") and the instants its `from` and `to`
/// stand for there.
struct ReadingZone {
    let zone: ZoneRules
    /// Seconds since the epoch, `from` before `to`.
    let from: Int64
    let to: Int64

    /// Reads `tz`, `from` and `to`: an unknown zone is a 400 `unknown_zone` naming it; a date-only bound is the
    /// zone's midnight, an instant itself (on a whole second); `from` before `to`, at most the longest interval apart.
    init(_ name: String, from: String?, to: String?, in database: ZoneDatabase) throws {
        do throws(ZoneDatabase.UnknownZone) {
            zone = try database.rules(name)
        } catch {
            throw APIError(.badRequest, .unknownZone, message: "tz: \(error.description)")
        }
        self.from = try Self.instant(from, named: "from", in: zone)
        self.to = try Self.instant(to, named: "to", in: zone)
        guard self.from < self.to else { throw APIError(QueryError(.invalidInterval, "from must be before to")) }
        do {
            try QueryBuilder.requireLength(days: (self.to - self.from) / 86_400)
        } catch {
            throw APIError(error)
        }
    }

    /// The instants on the zone's own clock.
    var local: QueryInterval {
        QueryInterval(from: Timestamp(seconds: zone.local(atSecond: from)), to: Timestamp(seconds: zone.local(atSecond: to)))
    }

    /// How the stored hours (or quarter hours, from the local day `quarterHoursFrom` on) of an artist in
    /// `storedZone` regroup into this zone's periods by `granularity` (`ZoneRegrouping.choosing`).
    func regrouping(of storedZone: ZoneRules, by granularity: Granularity, quarterHoursFrom: Int64) throws -> ZoneRegrouping {
        do {
            return try ZoneRegrouping.choosing(
                storedIn: storedZone, readIn: zone, from: from, to: to, granularity: granularity, quarterHoursFrom: quarterHoursFrom)
        } catch {
            throw APIError(error)
        }
    }

    /// The instant `text` names in `zone`: a date its local midnight, an RFC 3339 instant itself.
    private static func instant(_ text: String?, named name: String, in zone: ZoneRules) throws -> Int64 {
        guard let text else { throw APIError(QueryError(.missingParameter, "\(name) is required")) }
        if text.utf8.count == 10, let date = RFC3339.parseDate(text) { return zone.startOfLocalDay(date.daysSinceEpoch) }
        guard let instant = RFC3339.parseTimestamp(text) else {
            throw APIError(QueryError(.invalidParameter, "\(name) must be an RFC 3339 timestamp or YYYY-MM-DD"))
        }
        guard instant.microseconds % 1_000_000 == 0 else {
            throw APIError(QueryError(.invalidInterval, "\(name) must fall on a whole second, and on one of the artist's stored hours"))
        }
        return instant.seconds
    }
}
