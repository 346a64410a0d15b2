import BackbeatCore
import PostgresNIO

extension Store {
    /// Artists with any stored streams, revenue, social or page numbers, sorted, at most `limit`.
    public func artistIDs(limit: Int) async throws -> [String] {
        let rows = try await client.query("""
            SELECT artist_id FROM (
                SELECT DISTINCT artist_id FROM streams_by_artist_day_platform
                UNION SELECT DISTINCT artist_id FROM revenue_by_artist_day
                UNION SELECT DISTINCT artist_id FROM social_by_artist_day
                UNION SELECT DISTINCT artist_id FROM page_by_artist_day_days
            ) artists ORDER BY artist_id LIMIT \(limit)
            """, logger: logger)
        var artists: [String] = []
        for try await artist in rows.decode(String.self) { artists.append(artist) }
        return artists
    }

    /// The first day `artist` has a row of in any stored aggregate (nil: none).
    func earliestStoredDay(of artist: String, on connection: PostgresConnection) async throws -> Int64? {
        let tables = AggregateTable.all.map(\.stored) + Cube.all.filter(\.isFull).map(\.rolledTable)
        let firsts = tables.map { "(SELECT min(day) FROM \($0) WHERE artist_id = $1)" }.joined(separator: ", ")
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT (least(\(firsts)) - date '1970-01-01')::bigint", binds: Self.binds(artist)), logger: logger)
        for try await day in rows.decode(Int64?.self) { return day }
        return nil
    }
}
