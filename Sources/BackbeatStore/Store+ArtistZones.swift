import BackbeatCore
import PostgresNIO

extension Store {
    /// Records `zone` (a name the zone database holds: the caller checked) as `artistID`'s reporting time zone.
    public func setZone(_ zone: ZoneName, of artistID: String) async throws {
        try await client.query("""
            INSERT INTO artist_zones (artist_id, zone) VALUES (\(artistID), \(zone.text))
            ON CONFLICT (artist_id) DO UPDATE SET zone = EXCLUDED.zone, set_at = now()
            """, logger: logger)
    }

    /// `artistID`'s reporting time zone as recorded; nil when none is (the artist reports in UTC).
    public func zone(of artistID: String) async throws -> String? {
        let rows = try await client.query("SELECT zone FROM artist_zones WHERE artist_id = \(artistID)", logger: logger)
        for try await zone in rows.decode(String.self) { return zone }
        return nil
    }

    /// Every zone recorded, by artist id (an artist not listed reports in UTC).
    public func recordedZones() async throws -> [String: String] {
        var zones: [String: String] = [:]
        let rows = try await client.query("SELECT artist_id, zone FROM artist_zones", logger: logger)
        for try await (artist, zone) in rows.decode((String, String).self) { zones[artist] = zone }
        return zones
    }
}
