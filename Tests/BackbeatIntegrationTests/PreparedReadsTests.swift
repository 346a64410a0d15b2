import BackbeatCore
import BackbeatTestSupport
import PostgresNIO
import Testing
@testable import BackbeatStore

/// The query path's statements, prepared once per connection of the read pool and planned once for any values.
@Suite(.serialized) struct PreparedReadsTests {
    @Test func everyNumberIsSpelledByATypeOfItsOwn() {
        for number in 0..<1_000 {
            #expect(PreparedReads.type(of: number).value == number)
        }
    }

    @Test func aTextKeepsItsNumberAndPastTheCapacityGoesUnnamed() {
        let reads = PreparedReads(capacity: 2)
        func number(_ sql: String) -> Int? {
            if case .named(let statement) = reads.sending(sql) { statement.value } else { nil }
        }
        #expect(number("SELECT 1") == 0 && number("SELECT 2") == 1)
        #expect(number("SELECT 1") == 0, "a text sent again has the number it had")
        guard case .unnamed(first: true) = reads.sending("SELECT 3") else { Issue.record("past the capacity: unnamed, first"); return }
        guard case .unnamed(first: false) = reads.sending("SELECT 4") else { Issue.record("past the capacity: unnamed"); return }
        #expect(number("SELECT 2") == 1 && reads.count == 2)
    }

    /// Two answers of one query in one snapshot (one connection): its statement prepared there once, run twice on one
    /// generic plan, never planned for the values.
    @Test func aQueryAnsweredTwiceIsPreparedOnceAndPlannedOnce() async throws {
        let database = try await TestEnvironment.freshDatabase("prepared")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let days = QueryInterval(
                from: try #require(RFC3339.parseTimestamp("2026-10-01T00:00:00Z")), to: try #require(RFC3339.parseTimestamp("2026-10-29T00:00:00Z")))
            let streams = Query(dataset: .streams, interval: days, granularity: .day, filters: [.artistID: ["a1"]])
            let plans = try await store.withReadSnapshot {
                _ = try await store.rows(for: streams)
                _ = try await store.rows(for: streams)
                var plans: [(String, Int64, Int64)] = []
                let rows = try await store.read("""
                    SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
                    WHERE statement LIKE '%FROM retention_horizons%' AND statement NOT LIKE '%pg_prepared_statements%'
                    """)
                for try await plan in rows.decode((String, Int64, Int64).self) { plans.append(plan) }
                return plans
            }
            #expect(plans.count == 1, "one prepared statement for the query: \(plans)")
            #expect(plans.first?.0.hasPrefix("backbeat_read_") == true)
            #expect(plans.first?.1 == 2 && plans.first?.2 == 0, "two runs of one generic plan, no custom plan: \(plans)")
        }
    }
}
