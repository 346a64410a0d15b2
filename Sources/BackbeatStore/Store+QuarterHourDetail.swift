import BackbeatCore
import PostgresNIO

extension Store {
    /// The first (local) day whose full-dimension rows are all by quarter hour (migration 0025): `Int64.min` when every
    /// day's are (a database that held none before it), else the second day after the migration's (UTC) date. Rows of
    /// a day before it may be by the hour, each read as its hour's first quarter.
    public func quarterHourDetailFrom() async throws -> Int64 {
        try await client.withConnection { try await quarterHourDetailFrom(on: $0) }
    }

    func quarterHourDetailFrom(on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            "SELECT (from_day - date '1970-01-01')::bigint FROM quarter_hour_detail", logger: logger)
        for try await day in rows.decode(Int64?.self) { return day ?? .min }
        return .min
    }
}
