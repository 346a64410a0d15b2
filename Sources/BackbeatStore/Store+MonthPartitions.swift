import BackbeatCore
import PostgresNIO

extension Store {
    /// Creates the month partitions (migration 0014) of `parent` that hold `days` (days since the epoch), where they
    /// are missing: a new month's first write, or late events of a month retention dropped.
    func makeMonthPartitions(of parent: String, days: [Int64], on connection: PostgresConnection) async throws {
        let months = Set(days.map { day -> String in
            let date = CivilDate(daysSinceEpoch: day)
            return RFC3339.formatDate(CivilDate(year: date.year, month: date.month, day: 1))
        })
        guard !months.isEmpty else { return }
        // Read to its end: an error raised while the rows are made (a partition that cannot be created) comes there.
        for try await _ in try await connection.query(
            "SELECT backbeat_month_partition(\(parent), month::date) FROM unnest(\(Array(months))::text[]) month", logger: logger
        ) {}
    }
}
