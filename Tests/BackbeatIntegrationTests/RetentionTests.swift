import BackbeatCore
import Foundation
import BackbeatStore
import PostgresNIO
import Testing

/// Retention against a real PostgreSQL (migrations 0014 and 0015): a month of full-dimension hourly detail is summed
/// into daily rows and its partition dropped, and every question answers as a database that kept everything does
/// (the same flushes, no retention): by day from the daily rows inside the dropped month, from the hours outside it;
/// an hourly question inside it is refused with the reason. Late events of a dropped month are counted once.
@Suite(.serialized) struct RetentionTests {
    static let september30 = CivilDate(year: 2026, month: 9, day: 30)
    static let october1 = CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch
    static let artists = (1...5).map { String(format: "artist-%04d", $0) }

    /// Day-aligned questions on the full dimensions (answered by `<dataset>_daily`), across the dropped month and
    /// after it, and an hourly one after it.
    static func questions(_ artist: String) throws -> [Query] {
        func query(_ dataset: String, _ from: String, _ to: String, _ granularity: String, _ groupBy: [String]) throws -> Query {
            var builder = QueryBuilder()
            builder.dataset = dataset
            builder.from = from
            builder.to = to
            builder.granularity = granularity
            builder.groupBy = groupBy
            builder.filters = [("artist_id", [artist])]
            return try builder.build()
        }
        return [
            try query("streams", "2026-09-30", "2026-10-03", "day", ["track_id", "country"]),
            try query("streams", "2026-09-30", "2026-10-03", "all", ["platform", "age_range", "gender"]),
            try query("streams", "2026-10-01", "2026-10-03", "day", ["track_id", "platform"]),
            try query("revenue", "2026-09-30", "2026-10-03", "day", ["currency", "platform", "track_id"]),
            try query("streams", "2026-10-01", "2026-10-03", "hour", ["track_id", "platform"]),
        ]
    }

    /// Every question's rows, sorted, for every artist.
    static func answers(_ store: Store) async throws -> [String] {
        var answers: [String] = []
        for artist in artists {
            for question in try questions(artist) {
                let rows = try await store.rows(for: question).map { "\($0)" }.sorted()
                #expect(!rows.isEmpty, "\(artist): \(question)")
                answers.append("\(artist) \(question.dataset) \(question.interval) \(question.groupBy): \(rows.joined(separator: "; "))")
            }
        }
        return answers
    }

    @Test func aMonthOfDetailIsRolledIntoDailyRowsAndItsPartitionDropped() async throws {
        let kept = try await TestEnvironment.freshDatabase("retention_none")
        let rolled = try await TestEnvironment.freshDatabase("retention")
        try await TestEnvironment.withStore(url: kept) { reference in
            try await TestEnvironment.withStore(url: rolled) { store in
                for database in [reference, store] {
                    try await database.migrate(try TestEnvironment.migrations())
                    _ = try await StoredLayoutTests.writeFlushes(database, events: 6_000, flushes: 3, start: Self.september30)
                }
                #expect(try await Self.answers(store) == Self.answers(reference))

                // September's detail ends on or before the horizon: rolled and dropped; October's stays.
                let outcome = try await store.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: nil)
                #expect(outcome.rolled == ["stream_hourly_days_2026_09", "revenue_hourly_days_2026_09", "social_hourly_days_2026_09"])
                #expect(outcome.dropped.isEmpty)
                #expect(try await Self.count(store, "SELECT count(*) FROM pg_class WHERE relname LIKE '%hourly\\_days\\_2026\\_09'") == 0)
                #expect(try await Self.count(store, "SELECT count(*) FROM stream_daily_rolled WHERE day = '2026-09-30'") > 0)
                #expect(try await store.keptFrom("stream_hourly") == Self.october1)
                #expect(try await Self.answers(store) == Self.answers(reference))
                #expect(try await store.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: nil) == RetentionOutcome())

                // An hourly question on the dropped days is refused, saying why and what to ask instead.
                var hourly = try Self.questions(Self.artists[0])[4]
                hourly.interval.from = Timestamp(seconds: (Self.october1 - 1) * 86_400)
                do {
                    _ = try await store.rows(for: hourly)
                    Issue.record("an hourly question on dropped detail was answered")
                } catch let error as QueryError {
                    #expect(error.code == .droppedByRetention && error.message.contains("2026-10-01"), "\(error)")
                }

                // Late events of September: merged into a September partition made again, counted beside the daily
                // rows, then rolled into them by the next pass; never twice.
                for database in [reference, store] {
                    _ = try await StoredLayoutTests.writeFlushes(database, events: 1_500, flushes: 1, start: Self.september30, firstOffset: 6_000)
                }
                #expect(try await Self.answers(store) == Self.answers(reference))
                #expect(try await store.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: nil).rolled.count == 3)
                #expect(try await Self.answers(store) == Self.answers(reference))

                // Cube retention drops September's cubes and daily rows: questions from before are refused.
                let dropped = try await store.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: Self.october1)
                #expect(dropped.dropped.contains("streams_by_artist_day_platform_days_2026_09"))
                #expect(dropped.dropped.contains("stream_daily_rolled_2026_09"))
                var fromSeptember = try Self.questions(Self.artists[0])[0]
                fromSeptember.groupBy = []
                await #expect(throws: QueryError.self) { _ = try await store.rows(for: fromSeptember) }
                fromSeptember.interval.from = Timestamp(seconds: Self.october1 * 86_400)
                #expect(try await store.rows(for: fromSeptember).count == 2)
            }
        }
    }

    /// Two instances' passes list the same month partitions, then wait for the maintenance lock: the first to take it
    /// rolls (or drops) a partition, the other finds it gone and goes on; neither fails, and nothing is counted twice.
    @Test func passesOfTwoInstancesAtOnceEachSkipWhatTheOtherDid() async throws {
        let kept = try await TestEnvironment.freshDatabase("retention_none")
        let shared = try await TestEnvironment.freshDatabase("retention_shared")
        try await TestEnvironment.withStore(url: kept) { reference in
            try await TestEnvironment.withStore(url: shared) { first in
                try await TestEnvironment.withStore(url: shared) { second in
                    for database in [reference, first] {
                        try await database.migrate(try TestEnvironment.migrations())
                        _ = try await StoredLayoutTests.writeFlushes(database, events: 6_000, flushes: 3, start: Self.september30)
                    }
                    // The lock held while both passes list the partitions and come to wait for it, then let go.
                    let passes = [first, second].map { store in
                        Task { try await store.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: Self.october1) }
                    }
                    let database = String(URLComponents(string: shared)!.path.dropFirst())
                    try await first.client.withTransaction(logger: TestEnvironment.logger) { holder in
                        try await holder.query("SELECT pg_advisory_xact_lock(\(Store.maintenanceLock))", logger: TestEnvironment.logger)
                        var waiting: Int64 = 0
                        for _ in 0..<500 where waiting < 2 {
                            try await Task.sleep(for: .milliseconds(10))
                            waiting = try await Self.count(reference, """
                                SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                                WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = '\(database)'
                                """)
                        }
                        #expect(waiting == 2)
                    }
                    let outcomes = (try await passes[0].value, try await passes[1].value)
                    let rolled = outcomes.0.rolled + outcomes.1.rolled, dropped = outcomes.0.dropped + outcomes.1.dropped
                    #expect(rolled.sorted() == ["revenue_hourly_days_2026_09", "social_hourly_days_2026_09", "stream_hourly_days_2026_09"])
                    #expect(Set(dropped).count == dropped.count && dropped.contains("stream_daily_rolled_2026_09"))
                    _ = try await reference.applyRetention(detailKeptFrom: Self.october1, cubesKeptFrom: Self.october1)
                    var october = try Self.questions(Self.artists[0])
                    for index in october.indices { october[index].interval.from = Timestamp(seconds: Self.october1 * 86_400) }
                    for question in october {
                        #expect(try await first.rows(for: question).map { "\($0)" }.sorted() == reference.rows(for: question).map { "\($0)" }.sorted())
                    }
                }
            }
        }
    }

    static func count(_ store: Store, _ sql: String) async throws -> Int64 {
        for try await count in try await store.client.query(PostgresQuery(unsafeSQL: "SELECT (\(sql))::bigint")).decode(Int64.self) { return count }
        return -1
    }
}
