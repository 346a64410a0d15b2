import BackbeatCore
import PostgresNIO

extension Store {
    /// What setting an artist's zone did.
    public enum ZoneChange: Sendable, Equatable {
        /// The artist had that zone already.
        case unchanged
        /// Set; the artist had nothing stored (or it was asked to keep the days counted before in their zones).
        case set
        /// Set, and the artist's stored days counted again in it from the detail kept (`recountFromDetail`): the
        /// days it could not count, the rows moved, and the id of the `rebuilds` row written.
        case recounted(RecountGaps, rows: Int, rebuild: Int64)
    }

    /// Records `zone` (a name the zone database holds: the caller checked) as `artistID`'s reporting time zone, under
    /// a new generation when it changes (setting the zone it has changes nothing).
    ///
    /// The days the artist has stored were counted in its zone before. They are counted again in the new one from the
    /// quarter-hour detail (`recountFromDetail`, with `rules` giving the zones' rules), unless `keepingCountedDays`,
    /// which leaves them in their zones and records since when the artist's events are counted in the new one
    /// (`counted_in_zone_since`). An artist with nothing stored takes any zone. A recount from the archive is
    /// `rebuild(.artist(...))`.
    public func setZone(
        _ zone: ZoneName, of artistID: String, keepingCountedDays: Bool = false, rules: @escaping @Sendable (String) throws -> ZoneRules
    ) async throws -> ZoneChange {
        let change: ZoneChange? = try await client.withTransaction(logger: logger) { connection in
            let current = try await zoneRecord(of: artistID, locking: true, on: connection)?.zone ?? ZoneRules.utc.name
            guard current != zone.text else { return .unchanged }
            let stored = try await earliestStoredDay(of: artistID, on: connection) != nil
            // Counted again from the detail, in a transaction of its own (below).
            if stored && !keepingCountedDays { return nil }
            try await connection.query(Self.setZoneQuery(zone, of: artistID), logger: logger)
            if stored {
                try await connection.query(
                    "UPDATE artist_zones SET counted_in_zone_since = now() WHERE artist_id = \(artistID)", logger: logger)
            }
            return .set
        }
        if let change { return change }
        return try await recountFromDetail(artistID, to: zone, rules: rules)
    }

    /// `artistID`'s zone as recorded (nil: none, the artist reports in UTC), since when its events are counted in it
    /// when the days counted before were kept in earlier zones, and the days a recount from the detail left without
    /// counts or listeners.
    public func zoneRecord(of artistID: String) async throws -> ZoneRecord? {
        try await client.withConnection { try await zoneRecord(of: artistID, locking: false, on: $0) }
    }

    func zoneRecord(of artistID: String, locking: Bool, on connection: PostgresConnection) async throws -> ZoneRecord? {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT zone, (extract(epoch FROM counted_in_zone_since) * 1000000)::bigint, \(Self.gapColumns)
            FROM artist_zones WHERE artist_id = $1\(locking ? " FOR UPDATE" : "")
            """, binds: Self.binds(artistID)), logger: logger)
        for try await (zone, since, countsFrom, missing, listenersFrom) in rows.decode((String, Int64?, Int64?, [Int64], Int64?).self) {
            return ZoneRecord(
                zone: zone, countedSince: since.map { Timestamp(microseconds: $0) },
                gaps: RecountGaps(countsFrom: countsFrom, countsMissing: Set(missing), listenersFrom: listenersFrom))
        }
        return nil
    }

    /// The columns of `artist_zones` a `RecountGaps` is read from (migration 0026), as days since 1970.
    static let gapColumns = """
        (counts_from - date '1970-01-01')::bigint, \
        ARRAY(SELECT (d - date '1970-01-01')::bigint FROM unnest(counts_missing) d ORDER BY d), \
        (listeners_from - date '1970-01-01')::bigint
        """

    static func setZoneQuery(_ zone: ZoneName, of artistID: String) -> PostgresQuery {
        """
        INSERT INTO artist_zones (artist_id, zone) VALUES (\(artistID), \(zone.text))
        ON CONFLICT (artist_id) DO UPDATE SET zone = EXCLUDED.zone, set_at = now(), generation = nextval('artist_zone_generations'),
            counted_in_zone_since = NULL, counts_from = NULL, counts_missing = '{}', listeners_from = NULL
        WHERE artist_zones.zone <> EXCLUDED.zone
        """
    }

    /// The generation of the zones recorded now (0: none is): the highest any zone set was given.
    static let zonesGenerationQuery: PostgresQuery = "SELECT coalesce(max(generation), 0)::bigint FROM artist_zones"

    /// Every zone recorded, by artist id (an artist not listed reports in UTC), the gaps recounts from the detail
    /// left (artists with none are not listed), and their generation (the highest), read at one instant.
    public func recordedZones() async throws -> (zones: [String: String], gaps: [String: RecountGaps], generation: Int64) {
        var zones: [String: String] = [:]
        var gaps: [String: RecountGaps] = [:]
        var generation: Int64 = 0
        let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT artist_id, zone, generation, \(Self.gapColumns) FROM artist_zones"), logger: logger)
        for try await (artist, zone, set, countsFrom, missing, listenersFrom) in rows.decode((String, String, Int64, Int64?, [Int64], Int64?).self) {
            zones[artist] = zone
            let recorded = RecountGaps(countsFrom: countsFrom, countsMissing: Set(missing), listenersFrom: listenersFrom)
            if !recorded.isEmpty { gaps[artist] = recorded }
            generation = max(generation, set)
        }
        return (zones, gaps, generation)
    }

    /// Fails with `ZonesChanged` unless the zones recorded now are those of `generation` (checked by a writer after
    /// it locked its offsets: a zone set after that waits for its commit).
    func checkZones(countedAt generation: Int64, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(Self.zonesGenerationQuery, logger: logger)
        for try await recorded in rows.decode(Int64.self) where recorded != generation {
            throw ZonesChanged(countedAt: generation, recorded: recorded)
        }
    }
}

/// A batch was counted in the artists' zones of one generation, but another is recorded now (an artist's zone was set
/// or changed meanwhile): it is not written, and must be counted again in the zones recorded now.
public struct ZonesChanged: Error, CustomStringConvertible {
    public let countedAt: Int64
    public let recorded: Int64

    public var description: String {
        "an artist's zone changed while events were counted (counted at zone generation \(countedAt), recorded now \(recorded)): they are counted again in the new zones"
    }
}

/// An artist's zone as `artist_zones` records it.
public struct ZoneRecord: Sendable, Equatable {
    /// The IANA name.
    public var zone: String
    /// Since when the artist's events are counted in `zone`, when the days counted before were kept in earlier zones
    /// (nil: every stored day is in it).
    public var countedSince: Timestamp?
    /// What the last recount from the detail could not count (empty: nothing, or the zone was counted otherwise).
    public var gaps: RecountGaps
}
