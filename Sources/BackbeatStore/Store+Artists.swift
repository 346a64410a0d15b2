import PostgresNIO

extension Store {
    /// Artists with any stored streams, revenue or social numbers, sorted, at most `limit`.
    public func artistIDs(limit: Int) async throws -> [String] {
        let rows = try await client.query("""
            SELECT artist_id FROM (
                SELECT DISTINCT artist_id FROM streams_by_artist_day_platform
                UNION SELECT DISTINCT artist_id FROM revenue_by_artist_day
                UNION SELECT DISTINCT artist_id FROM social_by_artist_day
            ) artists ORDER BY artist_id LIMIT \(limit)
            """, logger: logger)
        var artists: [String] = []
        for try await artist in rows.decode(String.self) { artists.append(artist) }
        return artists
    }
}
