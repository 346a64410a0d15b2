import BackbeatCore
import PostgresNIO

/// An artist-day, as the `_days` tables key their rows (`artist_id`, `day`).
struct ArtistDayKey: Hashable {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64

    /// `rows` in the order every writer inserts and locks artist-days in (SQL: `ORDER BY date_trunc('month', day),
    /// artist_id, day`): month partition by month partition, each in its primary key's order, so that each
    /// partition's index is filled from left to right (its pages left full, not split in halves) and two writers
    /// take their shared artist-days in one order.
    static func inWriteOrder<Row>(_ rows: [Row], _ artistDay: (Row) -> ArtistDayKey) -> [Row] {
        let keys = rows.map { row -> (month: Int, artistID: String, day: Int64) in
            let key = artistDay(row)
            let date = CivilDate(daysSinceEpoch: key.day)
            return (date.year * 12 + date.month, key.artistID, key.day)
        }
        return rows.indices.sorted { keys[$0] < keys[$1] }.map { rows[$0] }
    }
}

extension Store {
    /// The rows `table` (a `_days` table) stores at `keys`' artist-days: each row's artist and day (days since the
    /// epoch), then `columns` (of the table, aliased `d`). With `locking`, each is locked for update, in write order
    /// (`ArtistDayKey.inWriteOrder`).
    func storedRows(
        of table: String, at keys: [ArtistDayKey], also columns: String = "", locking: Bool = false, on connection: PostgresConnection
    ) async throws -> [PostgresRow] {
        let lock = locking ? "ORDER BY date_trunc('month', d.day), d.artist_id, d.day FOR UPDATE OF d" : ""
        return try await connection.query("""
            SELECT d.artist_id, (d.day - date '1970-01-01')::bigint\(unescaped: columns) FROM \(unescaped: table) d
            JOIN unnest(\(keys.map(\.artistID))::text[], \(keys.map(\.day))::bigint[]) AS k(artist_id, day)
              ON d.artist_id = k.artist_id AND d.day = date '1970-01-01' + k.day::integer
            \(unescaped: lock)
            """, logger: logger).collect()
    }

    /// COPYs the rows of `rows` whose artist-days `table` (a `_days` table) holds none of into it, in write order
    /// (`appendUnlessStored`), and answers the others: those whose artist-days it holds, and all of them when another
    /// writer stored one of theirs meanwhile. A first write of an artist-day costs one row, whatever comes later.
    func insertUnstored<Row>(
        _ rows: [Row], artistDay: (Row) -> ArtistDayKey, into table: String, columns: [String], on connection: PostgresConnection,
        _ encode: (Row, inout CopyBinaryEncoder) -> Void
    ) async throws -> [Row] {
        guard !rows.isEmpty else { return [] }
        let keys = rows.map(artistDay)
        var stored: Set<ArtistDayKey> = []
        for row in try await storedRows(of: table, at: keys, on: connection) {
            let (artistID, day) = try row.decode((String, Int64).self)
            stored.insert(ArtistDayKey(artistID: artistID, day: day))
        }
        let held = rows.indices.filter { stored.contains(keys[$0]) }.map { rows[$0] }
        let new = ArtistDayKey.inWriteOrder(rows.indices.filter { !stored.contains(keys[$0]) }) { keys[$0] }.map { rows[$0] }
        guard !new.isEmpty else { return held }
        return try await appendUnlessStored(new, to: table, columns: columns, on: connection, encode) ? held : held + new
    }
}
