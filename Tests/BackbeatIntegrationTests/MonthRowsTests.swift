import BackbeatCore
import BackbeatStore
import PostgresNIO
import Testing

/// Month rows (migration 0020) against a real PostgreSQL: once the ended months are rolled, a read over whole months
/// sums one block per month and series, and every answer (by month, in all, by day, listeners, track listeners)
/// equals that of a database whose months were never rolled, given the same writes: after the roll, after late
/// events in a rolled month, after a rebuild of days inside one, and after retention dropped the oldest.
@Suite(.serialized) struct MonthRowsTests {
    static let artists = (1...5).map { String(format: "artist-%04d", $0) }

    /// The first days of the month four months before today's and of the three after it: four ended months.
    static let months: [Int64] = {
        let today = CivilDate(daysSinceEpoch: Timestamp.wallClock().daysSinceEpoch)
        return (0...4).map { back in
            let index = today.year * 12 + (today.month - 1) - 4 + back
            return CivilDate(year: index / 12, month: index % 12 + 1, day: 1).daysSinceEpoch
        }
    }()

    static func date(_ day: Int64) -> String { RFC3339.formatDate(CivilDate(daysSinceEpoch: day)) }

    static func query(_ dataset: String, _ from: Int64, _ to: Int64, _ granularity: String, _ groupBy: [String], artist: String) throws -> Query {
        var builder = QueryBuilder()
        builder.dataset = dataset
        builder.from = date(from)
        builder.to = date(to)
        builder.granularity = granularity
        builder.groupBy = groupBy
        builder.filters = [("artist_id", [artist])]
        return try builder.build()
    }

    /// Questions over whole months, over months and part of the ones around them, and by day.
    static func questions(_ artist: String) throws -> [Query] {
        let whole = (months[0], months[4]), ragged = (months[0] + 9, months[3] + 12)
        return [
            try query("streams", whole.0, whole.1, "month", [], artist: artist),
            try query("streams", ragged.0, ragged.1, "month", ["platform"], artist: artist),
            try query("streams", ragged.0, ragged.1, "all", ["track_id"], artist: artist),
            try query("streams", ragged.0, ragged.1, "all", ["age_range", "gender"], artist: artist),
            try query("revenue", ragged.0, ragged.1, "month", ["source", "currency"], artist: artist),
            try query("social", whole.0, whole.1, "all", ["platform", "action"], artist: artist),
            try query("streams", months[1] - 3, months[2] + 3, "day", ["country"], artist: artist),
        ]
    }

    /// Every answer for every artist: rows sorted, listener counts per month and in all, track listeners.
    static func answers(_ store: Store) async throws -> [String] {
        var answers: [String] = []
        for artist in artists {
            let questions = try questions(artist)
            var alone: [[String]] = []
            for question in questions {
                let rows = try await store.rows(for: question).map { "\($0)" }.sorted()
                alone.append(rows)
                answers.append("\(artist) \(question.dataset) \(question.interval) \(question.groupBy): \(rows.joined(separator: "; "))")
            }
            // All of them asked at once, in one statement, answer each as asked alone; so do they with sketches.
            #expect(try await store.rows(for: questions).map { $0.map { "\($0)" }.sorted() } == alone)
            let scope = ListenerScope(artistID: artist, days: (months[0] + 9)..<(months[3] + 12))
            let tracks = (1...20).map { artist + ":track-" + String(format: "%02d", $0) }
            let together = try await store.rowsAndSketches(
                questions, [.periods(scope, .month), .periods(scope, .all), .keyed(.listeners, artistID: artist, keys: tracks, days: scope.days)])
            #expect(together.rows.map { $0.map { "\($0)" }.sorted() } == alone)
            #expect(Store.periods(together.sketches[0]) == (try await store.listenerSketches(scope, granularity: .month)))
            #expect(Store.periods(together.sketches[1]) == (try await store.listenerSketches(scope, granularity: .all)))
            #expect(Store.keyed(together.sketches[2]) == (try await store.keyedSketches(.listeners, artistID: artist, keys: tracks, days: scope.days)))
            #expect(Store.keyed(together.sketches[2]).count == 20)
            for (from, to) in [(months[0], months[4]), (months[0] + 9, months[3] + 12)] {
                for granularity in [Granularity.month, .all] {
                    let sketches = try await store.listenerSketches(ListenerScope(artistID: artist, days: from..<to), granularity: granularity)
                    answers.append("\(artist) listeners \(granularity) \(from)..<\(to): " + sketches.map { "\($0.key.map { "\($0)" } ?? "all")=\($0.value.cardinality)" }.sorted().joined(separator: " "))
                }
                let tracks = (1...20).map { artist + ":track-" + String(format: "%02d", $0) }
                let perTrack = try await store.keyedSketches(.listeners, artistID: artist, keys: tracks, days: from..<to)
                #expect(!perTrack.isEmpty)
                answers.append("\(artist) track listeners \(from)..<\(to): " + perTrack.map { "\($0.key)=\($0.value.cardinality)" }.sorted().joined(separator: " "))
            }
        }
        return answers
    }

    /// Blocks summed answering streams by month over the four ended months, for one artist.
    static func blocksOfWholeMonths(_ store: Store) async throws -> Int {
        let before = store.blocksSummedCount
        _ = try await store.rows(for: try query("streams", months[0], months[4], "month", [], artist: artists[0]))
        return store.blocksSummedCount - before
    }

    @Test func readsOverRolledMonthsSumOneBlockPerMonthAndAnswerAsTheDays() async throws {
        let plain = try await TestEnvironment.freshDatabase("months_none")
        let rolled = try await TestEnvironment.freshDatabase("months")
        try await TestEnvironment.withStore(url: plain) { reference in
            try await TestEnvironment.withStore(url: rolled) { store in
                let start = CivilDate(daysSinceEpoch: Self.months[0])
                let span = Int(Self.months[4] - Self.months[0])
                for database in [reference, store] {
                    try await database.migrate(try TestEnvironment.migrations())
                    _ = try await StoredLayoutTests.writeFlushes(database, events: 8_000, flushes: 4, start: start, days: span)
                }
                #expect(!(try await Self.answers(reference)).contains { $0.hasSuffix(": ") })
                let daily = try await Self.blocksOfWholeMonths(store)
                #expect(daily >= 100, "\(daily) day blocks")

                // Every ended month is rolled, oldest first; a second pass has nothing to do.
                #expect(try await store.rollMonths(today: Timestamp.wallClock().daysSinceEpoch).rolled == Array(Self.months[0..<4]))
                #expect(try await store.rollMonths(today: Timestamp.wallClock().daysSinceEpoch).rolled.isEmpty)
                #expect(try await Self.blocksOfWholeMonths(store) == 4)
                #expect(try await Self.answers(store) == Self.answers(reference))

                // Late events in rolled months count in their months as in their days.
                for database in [reference, store] {
                    _ = try await StoredLayoutTests.writeFlushes(
                        database, events: 900, flushes: 3, start: CivilDate(daysSinceEpoch: Self.months[1] + 20), days: 15, firstOffset: 8_000)
                }
                #expect(try await Self.blocksOfWholeMonths(store) == 4)
                #expect(try await Self.answers(store) == Self.answers(reference))

                // A rebuild of days inside a rolled month (here to nothing) rolls that month again.
                let rebuilt = (Self.months[2] + 4)...(Self.months[2] + 9)
                for database in [reference, store] {
                    try await database.rebuild(fromDay: rebuilt.lowerBound, toDay: rebuilt.upperBound) { _ in (InternedDelta(), 0) }
                }
                #expect(try await Self.answers(store) == Self.answers(reference))

                // Retention drops the oldest month's rows with its days.
                for database in [reference, store] {
                    _ = try await database.applyRetention(detailKeptFrom: nil, cubesKeptFrom: Self.months[1])
                }
                #expect(try await RetentionTests.count(store, "SELECT count(*) FROM streams_by_artist_hour_months WHERE day < '\(Self.date(Self.months[1]))'") == 0)
                #expect(try await RetentionTests.count(store, "SELECT count(*) FROM streams_by_artist_hour_months") == 15)
                // Asked at once, a question from before what retention kept is refused as it is alone.
                let kept = try Self.query("social", Self.months[1], Self.months[4], "all", [], artist: Self.artists[0])
                let dropped = try Self.query("streams", Self.months[0], Self.months[4], "month", [], artist: Self.artists[0])
                _ = try await store.rows(for: [kept])
                for questions in [[dropped], [kept, dropped]] {
                    let refusal = await #expect(throws: QueryError.self) { _ = try await store.rows(for: questions) }
                    #expect(refusal?.code == .droppedByRetention)
                }
            }
        }
    }
}
