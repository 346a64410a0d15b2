import BackbeatCore
import PostgresNIO

extension Store {
    /// Records `zone` (a name the zone database holds: the caller checked) as `artistID`'s reporting time zone, under
    /// a new generation when it changes (setting the zone it has changes nothing).
    public func setZone(_ zone: ZoneName, of artistID: String) async throws {
        try await client.query(Self.setZoneQuery(zone, of: artistID), logger: logger)
    }

    static func setZoneQuery(_ zone: ZoneName, of artistID: String) -> PostgresQuery {
        """
        INSERT INTO artist_zones (artist_id, zone) VALUES (\(artistID), \(zone.text))
        ON CONFLICT (artist_id) DO UPDATE SET zone = EXCLUDED.zone, set_at = now(), generation = nextval('artist_zone_generations')
        WHERE artist_zones.zone <> EXCLUDED.zone
        """
    }

    /// The generation of the zones recorded now (0: none is): the highest any zone set was given.
    static let zonesGenerationQuery: PostgresQuery = "SELECT coalesce(max(generation), 0)::bigint FROM artist_zones"

    /// `artistID`'s reporting time zone as recorded; nil when none is (the artist reports in UTC).
    public func zone(of artistID: String) async throws -> String? {
        let rows = try await client.query("SELECT zone FROM artist_zones WHERE artist_id = \(artistID)", logger: logger)
        for try await zone in rows.decode(String.self) { return zone }
        return nil
    }

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
