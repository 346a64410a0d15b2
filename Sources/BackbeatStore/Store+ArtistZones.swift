import BackbeatCore
import PostgresNIO

extension Store {
    /// Records `zone` (a name the zone database holds: the caller checked) as `artistID`'s reporting time zone, under
    /// a new generation when it changes (setting the zone it has changes nothing).
    ///
    /// The days the artist has stored were counted in its zone before: a change that does not count them again
    /// (`rebuild(.artist(...))` does) would leave them in that zone. It is refused (`ZoneChangeNeedsRecount`) unless
    /// `keepingCountedDays`, which records since when the artist's events are counted in the new zone
    /// (`counted_in_zone_since`). An artist with nothing stored takes any zone.
    public func setZone(_ zone: ZoneName, of artistID: String, keepingCountedDays: Bool = false) async throws {
        do {
            try await client.withTransaction(logger: logger) { connection in
                var current = "UTC"
                let rows = try await connection.query(
                    "SELECT zone FROM artist_zones WHERE artist_id = \(artistID) FOR UPDATE", logger: logger)
                for try await recorded in rows.decode(String.self) { current = recorded }
                guard current != zone.text else { return }
                let stored = try await earliestStoredDay(of: artistID, on: connection) != nil
                if stored && !keepingCountedDays { throw ZoneChangeNeedsRecount(artistID: artistID, current: current, wanted: zone.text) }
                try await connection.query(Self.setZoneQuery(zone, of: artistID), logger: logger)
                if stored {
                    try await connection.query(
                        "UPDATE artist_zones SET counted_in_zone_since = now() WHERE artist_id = \(artistID)", logger: logger)
                }
            }
        } catch let error as PostgresTransactionError {
            if let refused = error.closureError as? ZoneChangeNeedsRecount { throw refused }
            throw error
        }
    }

    /// `artistID`'s zone as recorded (nil: none, the artist reports in UTC), and since when its events are counted in
    /// it when the days counted before were kept in earlier zones (nil: every stored day is in it).
    public func zoneRecord(of artistID: String) async throws -> (zone: String, countedSince: Timestamp?)? {
        let rows = try await client.query(
            "SELECT zone, (extract(epoch FROM counted_in_zone_since) * 1000000)::bigint FROM artist_zones WHERE artist_id = \(artistID)",
            logger: logger)
        for try await (zone, since) in rows.decode((String, Int64?).self) { return (zone, since.map { Timestamp(microseconds: $0) }) }
        return nil
    }

    static func setZoneQuery(_ zone: ZoneName, of artistID: String) -> PostgresQuery {
        """
        INSERT INTO artist_zones (artist_id, zone) VALUES (\(artistID), \(zone.text))
        ON CONFLICT (artist_id) DO UPDATE SET zone = EXCLUDED.zone, set_at = now(), generation = nextval('artist_zone_generations'),
            counted_in_zone_since = NULL
        WHERE artist_zones.zone <> EXCLUDED.zone
        """
    }

    /// The generation of the zones recorded now (0: none is): the highest any zone set was given.
    static let zonesGenerationQuery: PostgresQuery = "SELECT coalesce(max(generation), 0)::bigint FROM artist_zones"

    /// Every zone recorded, by artist id (an artist not listed reports in UTC), and their generation (the highest),
    /// read at one instant.
    public func recordedZones() async throws -> (zones: [String: String], generation: Int64) {
        var zones: [String: String] = [:]
        var generation: Int64 = 0
        let rows = try await client.query("SELECT artist_id, zone, generation FROM artist_zones", logger: logger)
        for try await (artist, zone, set) in rows.decode((String, String, Int64).self) {
            zones[artist] = zone
            generation = max(generation, set)
        }
        return (zones, generation)
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

/// A change of an artist's zone that would leave the days it has stored in the zone before: give the archives to count
/// them again (`backbeat artist set-zone ... ARCHIVE`), or keep them so explicitly.
public struct ZoneChangeNeedsRecount: Error, CustomStringConvertible {
    public let artistID: String
    public let current: String
    public let wanted: String

    public var description: String {
        "\(artistID) has days counted in \(current): change its zone with `backbeat artist set-zone --artist \(artistID) --zone \(wanted) "
            + "ARCHIVE_DIR...` to count them again in \(wanted), or keep them in \(current) and count in \(wanted) only what is "
            + "consumed from now on (\"keep_counted_days\": true, or --keep-counted-days)"
    }
}
