import BackbeatCore
import BackbeatStore
import BackbeatTestSupport
import Foundation
import PostgresNIO
import Testing

/// Migration 0030 fills the page cubes by referrer and by country from the page events counted before it: once
/// migrated, a database that counted its page events without those cubes holds what one that counted them with the
/// cubes holds, day rows and month rows alike.
@Suite(.serialized) struct PageSourceCubesMigrationTests {
    static let cubes = ["page_by_artist_day_referrer": "referrer", "page_by_artist_day_country": "country"]

    @Test func theSourceCubesAreFilledFromThePageEventsCountedBefore() async throws {
        let database = try await TestEnvironment.freshDatabase("page_sources")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let workload = Workload(events: 8_000, seed: 30, artists: 5, days: 80, start: CivilDate(year: 2026, month: 7, day: 10), pageFraction: 0.6)
            try await store.write(FlushBatch(parts: [FlushBatch.Part(
                topicPartition: TopicPartition(topic: "page", partition: 0), generation: 0, expectedOffset: nil,
                newOffset: Int64(workload.messages.count), delta: InternedDelta(events: workload.messages.compactMap(\.event)))]))
            let rolled = try await store.rollMonths(today: CivilDate(year: 2026, month: 10, day: 15).daysSinceEpoch)
            #expect(rolled.rolled.count == 3, "July, August and September rolled")
            let written = try await Self.rows(in: store)
            // The database as it was before migration 0030, then migrated.
            for cube in Self.cubes.keys.sorted() {
                try await store.client.query(PostgresQuery(unsafeSQL: "DROP VIEW \(cube)"))
                try await store.client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(cube)_days, \(cube)_months"))
            }
            try await store.client.query("DELETE FROM schema_migrations WHERE version = 30")
            let applied = try await store.migrate(try TestEnvironment.migrations())
            #expect(applied == ["0030_page_source_cubes.sql"])
            let filled = try await Self.rows(in: store)
            #expect(filled == written)
            // Not empty: every cube has day rows and month rows, and they sum to the page events.
            let pageEvents = workload.messages.filter { if case .page = $0.event { true } else { false } }.count
            for cube in Self.cubes.keys {
                let days = written["\(cube) days"] ?? [], months = written["\(cube) months"] ?? []
                #expect(days.reduce(0) { $0 + $1.events } == pageEvents && months.count > 100, "\(cube): \(days.count) day rows, \(months.count) month rows")
            }
        }
    }

    struct Row: Hashable {
        var key: String
        var events: Int
    }

    /// Each source cube's rows, read from its day blocks and from its month blocks.
    static func rows(in store: Store) async throws -> [String: Set<Row>] {
        var rows: [String: Set<Row>] = [:]
        for (cube, _) in cubes {
            for table in ["days", "months"] {
                let query = PostgresQuery(unsafeSQL: """
                    SELECT t.artist_id || '|' || t.day || '|' || array_to_string(r.row_values, '|'), r.row_sums[1]::bigint
                    FROM \(cube)_\(table) t, backbeat_block_rows(t.block, false, 3, 1) r
                    """)
                for try await (key, events) in try await store.client.query(query).decode((String, Int64).self) {
                    rows["\(cube) \(table)", default: []].insert(Row(key: key, events: Int(events)))
                }
            }
        }
        return rows
    }
}
