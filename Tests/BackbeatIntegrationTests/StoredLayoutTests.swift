import BackbeatCore
import BackbeatStore
import BackbeatTestSupport
import Logging
import PostgresNIO
import Testing

/// How aggregates are stored (migrations 0017 and 0018) against a real PostgreSQL: flushes merge every cube's rows
/// and every listener sketch into its artist-days, so the views answer exactly, once per key, when each flush
/// commits. The older layouts' migrations (0010, 0011, 0014, 0017, 0018) carry their rows over to this one.
@Suite(.serialized) struct StoredLayoutTests {
    static let partition = TopicPartition(topic: "streams", partition: 0)
    /// The cubes of the schemas these tests migrate from: every cube but the page datasets' (migrations 0027, 0029).
    static let cubes = Cube.all.filter { $0.dataset != .page && $0.dataset != .funnel }
    /// Every aggregate view of those schemas (the cubes, the full hourly tables and the listener sketches).
    static let aggregates = cubes.map(\.table) + listeners
    /// The listener sketches' views; before migration 0018 each was a `_merged` table and a `_delta` table
    /// flushes appended to.
    static let listeners = ["artist_listeners_daily", "track_listeners_daily"]

    /// A cube's columns as its view has them, and as its `_merged` table had them before migration 0017.
    static func columns(_ cube: Cube) -> String {
        (["artist_id", cube.grain != .day ? "hour" : "day"] + cube.dimensions.map(\.rawValue) + cube.dataset.metrics.map(\.rawValue))
            .joined(separator: ", ")
    }

    /// A cube's rows as the layouts before migration 0025 kept them: a full table's by hour (its quarter hours summed).
    static func rowsAsBefore(_ cube: Cube) -> String {
        guard cube.isFull else { return "(SELECT \(columns(cube)) FROM \(cube.table))" }
        let keys = ["artist_id", "hour"] + cube.dimensions.map(\.rawValue)
        let sums = cube.dataset.metrics.map { "sum(\($0.rawValue)) AS \($0.rawValue)" }
        return "(SELECT \((keys + sums).joined(separator: ", ")) FROM \(cube.table) GROUP BY \(keys.joined(separator: ", ")))"
    }

    /// Writes `events` generated events (over `days` days from `start`) as `flushes` batches of one partition, calling
    /// `afterEach` after each; returns the valid events.
    /// `firstOffset` is the partition's stored offset (0: none yet), where these flushes go on from; each starting
    /// offset draws other events.
    static func writeFlushes(
        _ store: Store, events: Int, flushes: Int, start: CivilDate = CivilDate(year: 2026, month: 10, day: 1), days: Int = 3,
        firstOffset: Int = 0, afterEach: () async throws -> Void = {}
    ) async throws -> [Event] {
        var generator = EventGenerator(.init(seed: 11 + UInt64(firstOffset), artists: 5, days: days, start: start))
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: firstOffset == 0 ? nil : Int64(firstOffset))
        var valid: [Event] = []
        let perFlush = events / flushes
        for flush in 0..<flushes {
            for offset in (firstOffset + flush * perFlush)..<(firstOffset + (flush + 1) * perFlush) {
                let message = generator.next()
                if let event = message.event { valid.append(event) }
                ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: Int64(offset)), key: nil,
                                              value: message.value), now: Timestamp(seconds: 1_900_000_000))
            }
            try await store.write(try #require(ledger.takeBatch()))
            try await afterEach()
        }
        return valid
    }

    /// Per aggregate: the view summed per key (sketches as their cardinality), as one digest; per listener sketch
    /// whose `_delta` table exists (before migration 0018), its rows.
    static func answers(_ client: PostgresClient) async throws -> (digests: [String: String], deltaRows: [String: Int64]) {
        var digests: [String: String] = [:]
        var deltaRows: [String: Int64] = [:]
        for table in aggregates {
            let measures = table.hasSuffix("listeners_daily")
                ? "hll_cardinality(hll_union_agg(listeners))"
                : Cube.all.first { $0.table == table }!.dataset.metrics.map { "sum(\($0.rawValue))" }.joined(separator: ", ")
            // A cube's view finer than a day gained its rows' `day` in 0017 (the hour says it already), and a full
            // table's its `quarter_start` in 0025 (summed per hour here, its rows are the hourly rows of before).
            let timed = (Cube.all.first { $0.table == table }?.grain).map { $0 != .day } ?? false
            let sql = """
                SELECT count(*)::text || ':' || coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '')
                FROM (SELECT to_jsonb(t) - ARRAY['streams', 'skips', 'listening_ms', 'amount', 'events', 'count', 'listeners'\(timed ? ", 'day', 'quarter_start'" : "")] AS key, \(measures)
                      FROM \(table) t GROUP BY 1) r
                """
            for try await digest in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) { digests[table] = digest }
            guard listeners.contains(table) else { continue }
            for try await exists in try await client.query(PostgresQuery(unsafeSQL: "SELECT to_regclass('\(table)_delta') IS NOT NULL")).decode(Bool.self) where exists {
                for try await count in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(table)_delta")).decode(Int64.self) {
                    deltaRows[table] = count
                }
            }
        }
        return (digests, deltaRows)
    }

    /// Four flushes over the same three days: each merges its cube rows and its listener sketches into the
    /// artist-days the ones before stored; the views hold the events' exact aggregates, one row per key, with nothing
    /// left to merge afterwards.
    @Test func flushesOfTheSameDaysMergeIntoOneRowPerKey() async throws {
        let database = try await TestEnvironment.freshDatabase("stored_layout")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let truth = GroundTruth(try await Self.writeFlushes(store, events: 6_000, flushes: 4))
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            try await expectCubesMatchFullTables(store.client)
            // Compacted (the detail and the sketches are appended as deltas, migration 0032), a track is named once
            // in its artist-day, whichever flushes added to it.
            _ = try #require(try await store.compactAllDetail())
            let repeated = try await store.client.query("""
                SELECT count(*)::bigint FROM track_listeners_days WHERE cardinality(track_id) <> (SELECT count(DISTINCT t) FROM unnest(track_id) t)
                """)
            for try await count in repeated.decode(Int64.self) { #expect(count == 0) }
            for table in ["artist_listeners_days", "track_listeners_days"] {
                let days = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(table)"))
                for try await count in days.decode(Int64.self) { #expect(count == 5 * 3, "\(table): five artists, three days") }
            }
            #expect(try await Self.answers(store.client).deltaRows.isEmpty)
        }
    }

    /// Writes `events` generated events as `flushes` batches into `store`, whose schema is an older one (before
    /// migration 0011), as flushes did then: every full hourly table's and sketch's rows, as texts, in its `_delta`
    /// table. The rows are the ones today's flushes write in a database of the current schema (`scratch`), whose full
    /// hourly tables are emptied after each flush, so that each flush's rows are copied alone.
    static func writeFlushesAsBefore(_ store: Store, scratch: Store, events: Int, flushes: Int) async throws -> [Event] {
        try await writeFlushes(scratch, events: events, flushes: flushes) {
            for cube in Self.cubes where cube.isFull {
                try await copyRows(of: rowsAsBefore(cube), in: scratch, into: "\(cube.table)_delta", in: store)
                try await emptyDetail(cube, of: scratch)
            }
            try await copySketches(from: scratch, into: "_delta", in: store)
        }
    }

    /// Empties the full hourly table `cube` of `scratch`: its blocks and their deltas (migration 0032).
    static func emptyDetail(_ cube: Cube, of scratch: Store) async throws {
        for table in ["\(cube.table)_days", "\(cube.table)_deltas"] {
            try await scratch.client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table)"))
        }
    }

    /// Appends the rows of the full hourly table `cube` in `scratch` to its `_delta` in `store`, whose schema is
    /// from migration 0011 to 0016, as a flush wrote them then: the dimension values named by integers of a new flush
    /// number, their texts in `_delta_values`.
    static func appendInterned(_ cube: Cube, from scratch: Store, into store: Store) async throws {
        let carried = "carried_\(cube.table)"
        try await store.client.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(carried) (LIKE \(cube.table)_merged)"))
        try await copyRows(of: rowsAsBefore(cube), in: scratch, into: carried, in: store)
        let dimensions = ["artist_id"] + cube.dimensions.map(\.rawValue)
        let joins = dimensions.enumerated().map { "JOIN v v\($0.offset) ON v\($0.offset).value = r.\($0.element)" }
        let selected = ["v0.id", "r.hour"] + (1..<dimensions.count).map { "v\($0).id" } + cube.dataset.metrics.map { "r.\($0.rawValue)" }
        try await store.client.query(PostgresQuery(unsafeSQL: """
            WITH f AS (SELECT nextval('delta_flushes') << 32 AS base),
                 v AS (INSERT INTO \(cube.table)_delta_values
                       SELECT f.base | row_number() OVER (), d.value
                       FROM f, (SELECT DISTINCT unnest(ARRAY[\(dimensions.joined(separator: ", "))]) AS value FROM \(carried)) d
                       RETURNING id, value)
            INSERT INTO \(cube.table)_delta SELECT \(selected.joined(separator: ", ")) FROM \(carried) r \(joins.joined(separator: " "))
            """))
        try await store.client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(carried)"))
    }

    /// Copies every row of `source` in `from` into `table` in `to`, through their text form (the row types of two
    /// schema versions).
    /// Copies the listener sketches of `scratch` (a database of the current schema) into the `_merged` or `_delta`
    /// tables (`suffix`) of `store` (a schema before migration 0018), as those tables held them, and empties
    /// `scratch`'s, so that each flush's sketches are copied alone.
    static func copySketches(from scratch: Store, into suffix: String, in store: Store) async throws {
        for table in listeners { try await copyRows(of: table, in: scratch, into: table + suffix, in: store) }
        try await scratch.client.query("DELETE FROM track_listeners_days")
    }

    static func copyRows(of source: String, in from: Store, into table: String, in to: Store) async throws {
        var rows: [String] = []
        for try await row in try await from.client.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \(source) t")).decode(String.self) {
            rows.append(row)
        }
        var binds = PostgresBindings()
        binds.append(rows)
        try await to.client.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table) SELECT (r::\(table)).* FROM unnest($1::text[]) r", binds: binds))
    }

    /// Runs `body` with a store whose schema stops before migration `version`, a scratch store of the current schema
    /// (for `writeFlushesAsBefore`), and the migrations.
    static func withSchemaBefore(_ version: Int, _ body: @Sendable (Store, Store, [Migration]) async throws -> Void) async throws {
        let database = try await TestEnvironment.freshDatabase("migration_\(version)")
        let scratch = try await TestEnvironment.freshDatabase("migration_\(version)_scratch")
        try await TestEnvironment.withStore(url: database) { store in
            try await TestEnvironment.withStore(url: scratch) { scratch in
                let migrations = try TestEnvironment.migrations()
                try await scratch.migrate(migrations)
                try await store.migrate(migrations.filter { $0.version < version })
                try await body(store, scratch, migrations)
            }
        }
    }

    /// Migration 0010 takes the derived cubes' delta tables away: the rows flushes had appended to them, and to the
    /// full tables, are merged first, so every aggregate answers as before, once.
    @Test func migration0010CarriesFlushedRowsOver() async throws {
        try await Self.withSchemaBefore(10) { store, scratch, migrations in
            let truth = GroundTruth(try await Self.writeFlushesAsBefore(store, scratch: scratch, events: 4_000, flushes: 2))
            // What flushes before 0010 also wrote: each derived cube's rows of the full rows, in its own delta table.
            for cube in Self.cubes where !cube.isFull {
                let full = Cube.all.first { $0.isFull && $0.dataset == cube.dataset }!
                let key = ["artist_id", cube.grain != .day ? "hour" : "(hour AT TIME ZONE 'UTC')::date"] + cube.dimensions.map(\.rawValue)
                let metrics = cube.dataset.metrics.map(\.rawValue)
                try await store.client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO \(cube.table)_delta SELECT \(key.joined(separator: ", ")), \(metrics.map { "sum(\($0))" }.joined(separator: ", "))
                    FROM \(full.table)_delta GROUP BY \((1...key.count).map(String.init).joined(separator: ", "))
                    """))
            }
            let before = try await Self.answers(store.client)

            try await store.migrate(migrations)
            #expect(try await Self.answers(store.client).digests == before.digests)
            for table in Self.cubes.filter({ !$0.isFull }).map(\.table) {
                let remaining = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM pg_class WHERE relname = '\(table)_delta'"))
                for try await count in remaining.decode(Int64.self) { #expect(count == 0, "\(table)_delta is still there") }
            }
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Migration 0011 named the values of the full hourly deltas by integers, and 0017 carries them into artist-days
    /// (0018 the sketches): the rows flushes had appended as texts answer as before, and today's flushes merge beside them exactly.
    @Test func migration0011CarriesFlushedRowsOver() async throws {
        try await Self.withSchemaBefore(11) { store, scratch, migrations in
            let carried = try await Self.writeFlushesAsBefore(store, scratch: scratch, events: 4_000, flushes: 2)
            let before = try await Self.answers(store.client)
            #expect(before.deltaRows.values.allSatisfy { $0 > 0 })

            try await store.migrate(migrations)
            let after = try await Self.answers(store.client)
            #expect(after.digests == before.digests)
            // The sketches' deltas were carried into their artist-days too (0018).
            #expect(after.deltaRows.isEmpty)
            // A flush of today's kind beside the carried rows: both are merged.
            let more = try await Self.writeFlushes(store, events: 1_000, flushes: 1)
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(carried + more)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Stores in `store` (a schema before `version`, from migration 0011 on) the aggregates of two flushes over three
    /// days across September's end, merged, as that schema kept them (every aggregate's `_merged` rows, copied from a
    /// database of the current schema), and of one more flush left unmerged at November's end (the full hourly rows
    /// interned in their deltas, the sketches in theirs). Returns the events of both.
    static func storeAsBefore(_ store: Store, scratch: Store) async throws -> (merged: [Event], appended: [Event]) {
        let merged = try await writeFlushes(scratch, events: 4_000, flushes: 2, start: CivilDate(year: 2026, month: 9, day: 30))
        // From 0014 on, the merged tables are partitioned by month: September's and October's are made first.
        var partitioned = false
        for try await exists in try await store.client.query("SELECT to_regproc('backbeat_month_partition') IS NOT NULL").decode(Bool.self) {
            partitioned = exists
        }
        if partitioned {
            try await store.client.query("""
                SELECT backbeat_month_partition(c.relname, m) FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid,
                       unnest(ARRAY['2026-09-01', '2026-10-01']::date[]) m
                WHERE c.relname LIKE '%\\_merged'
                """)
        }
        try await copySketches(from: scratch, into: "_merged", in: store)
        for cube in Self.cubes {
            try await copyRows(of: rowsAsBefore(cube), in: scratch, into: "\(cube.table)_merged", in: store)
        }
        for cube in Self.cubes where cube.isFull {
            try await emptyDetail(cube, of: scratch)
        }
        let appended = try await writeFlushes(scratch, events: 1_000, flushes: 1, start: CivilDate(year: 2026, month: 11, day: 29), firstOffset: 4_000) {
            for cube in Self.cubes where cube.isFull { try await appendInterned(cube, from: scratch, into: store) }
            try await copySketches(from: scratch, into: "_delta", in: store)
        }
        return (merged, appended)
    }

    /// The month partitions of each table whose name ends in `suffix` (`_merged`, `_days`).
    static func monthPartitions(_ store: Store, endingIn suffix: String) async throws -> [String: Int64] {
        let partitioned = try await store.client.query(PostgresQuery(unsafeSQL: """
            SELECT p.relname, count(*)::bigint FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
            WHERE p.relname LIKE '%\\\(suffix)' GROUP BY 1
            """))
        var months: [String: Int64] = [:]
        for try await (table, count) in partitioned.decode((String, Int64).self) { months[table] = count }
        return months
    }

    /// Every cube's `_days` table, and from migration 0018 on each listener sketch's, has a partition for each month
    /// its rows span, and no other.
    static func expectDayPartitionsSpanTheRows(_ store: Store, sketches: Bool = true) async throws {
        let months = try await monthPartitions(store, endingIn: "_days")
        let sketchTables = [("artist_listeners_daily", "artist_listeners_days"), ("track_listeners_daily", "track_listeners_days")]
        let tables = Self.cubes.map { (view: $0.table, days: $0.table + "_days") } + (sketches ? sketchTables : [])
        #expect(months.count == tables.count, "\(months)")
        for (view, days) in tables {
            let spanned = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(DISTINCT date_trunc('month', day))::bigint FROM \(view)"))
            for try await count in spanned.decode(Int64.self) { #expect(months[days] == count, "\(view): \(months)") }
        }
    }

    /// Migration 0014 partitions every merged table by month: the merged rows are carried over and every aggregate
    /// answers as before (the cubes' rows go to their artist-days with migration 0017, the sketches' with 0018).
    @Test func migration0014PartitionsEveryMergedTableByMonth() async throws {
        try await Self.withSchemaBefore(14) { store, scratch, migrations in
            let (merged, appended) = try await Self.storeAsBefore(store, scratch: scratch)
            let before = try await Self.answers(store.client)

            try await store.migrate(migrations.filter { $0.version < 18 })
            let after = try await Self.answers(store.client)
            #expect(after.digests == before.digests)
            let months = try await Self.monthPartitions(store, endingIn: "_merged")
            #expect(months.count == Self.listeners.count, "\(months)")
            #expect(months.values.allSatisfy { $0 == 2 }, "September and October: \(months)")
            try await Self.expectDayPartitionsSpanTheRows(store, sketches: false)

            try await store.migrate(migrations)
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(merged + appended)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Migration 0017 stores every cube by artist-day, 0018 every listener sketch: merged rows, full hourly rows still
    /// in their interned deltas and sketches flushes appended since the last compaction are carried over, one row
    /// per key, and every aggregate answers as before after each (the artists' listeners, after 0018, as the union of
    /// their tracks'); the tables of the old layouts are gone, and today's flushes merge into the carried artist-days.
    @Test func migrations0017And0018CarryEveryAggregateOverByArtistDay() async throws {
        try await Self.withSchemaBefore(17) { store, scratch, migrations in
            let (merged, appended) = try await Self.storeAsBefore(store, scratch: scratch)
            let before = try await Self.answers(store.client)
            func expectNone(_ pattern: String) async throws {
                let left = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM pg_class WHERE relname ~ '\(pattern)'"))
                for try await count in left.decode(Int64.self) { #expect(count == 0, "tables of the old layout are left: \(pattern)") }
            }

            try await store.migrate(migrations.filter { $0.version < 18 })
            let cubesCarried = try await Self.answers(store.client)
            #expect(cubesCarried.digests == before.digests)
            #expect(cubesCarried.deltaRows.count == Self.listeners.count && cubesCarried.deltaRows.values.allSatisfy { $0 > 0 }, "\(cubesCarried.deltaRows)")
            try await expectNone("(hourly|_by_artist_[a-z_]+)_(merged|delta|delta_values|delta_rows)$|^delta_flushes$")
            try await Self.expectDayPartitionsSpanTheRows(store, sketches: false)

            try await store.migrate(migrations)
            let sketchesCarried = try await Self.answers(store.client)
            #expect(sketchesCarried.digests == before.digests)
            // Rows counted by the hour were carried: days from the second after today's on are by quarter hour alone.
            #expect(try await store.quarterHourDetailFrom() == Timestamp.wallClock().seconds.floorDiv(86_400) + 2)
            #expect(try await scratch.quarterHourDetailFrom() == .min)
            #expect(sketchesCarried.deltaRows.isEmpty)
            try await expectNone("listeners_daily_(merged|delta)")
            try await Self.expectDayPartitionsSpanTheRows(store)

            // A flush of today's kind over the same days: merged into the carried artist-days, once per key.
            let more = try await Self.writeFlushes(store, events: 1_000, flushes: 1, start: CivilDate(year: 2026, month: 9, day: 30))
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(merged + appended + more)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Flushes of the same artist-days from two partitions at once, as two instances write them: whichever commits
    /// second merges into what the first stored (read and locked, or, for an artist-day the first inserted meanwhile,
    /// summed by the insert itself); every event counts once.
    @Test func concurrentFlushesOfTheSameArtistDaysEachCount() async throws {
        let database = try await TestEnvironment.freshDatabase("concurrent_days")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var events: [Event] = []
            let perFlush = 400
            for round in 0..<4 {
                var batches: [FlushBatch] = []
                for partition in 0..<2 {
                    let topicPartition = TopicPartition(topic: "streams", partition: Int32(partition))
                    var generator = EventGenerator(.init(seed: UInt64(300 + round * 2 + partition), artists: 2, days: 2, start: CivilDate(year: 2026, month: 10, day: 1)))
                    var ledger = IngestLedger()
                    ledger.assign(topicPartition, storedOffset: round == 0 ? nil : Int64(round * perFlush))
                    for offset in (round * perFlush)..<((round + 1) * perFlush) {
                        let message = generator.next()
                        if let event = message.event { events.append(event) }
                        ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: topicPartition, offset: Int64(offset)), key: nil,
                                                      value: message.value), now: Timestamp(seconds: 1_900_000_000))
                    }
                    let batch = ledger.takeBatch()
                    batches.append(try #require(batch))
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for batch in batches { group.addTask { try await store.write(batch) } }
                    try await group.waitForAll()
                }
            }
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(events)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// A flush finds its artist-days unstored, but another flush has inserted them and not committed: its COPY waits
    /// for the other, fails on the primary key when the other commits, is undone to its savepoint, and merges into
    /// what the other stored, cube blocks and listener sketches alike. The first flush is held just before its commit
    /// by a lock on `artist_partitions`, which it writes last.
    @Test func aBlockStoredMeanwhileIsMergedNotOverwritten() async throws {
        let database = try await TestEnvironment.freshDatabase("stored_meanwhile")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            // October's partitions made and committed beforehand (another day), so that neither flush waits on the
            // other's new partitions.
            var events = try await Self.writeFlushes(store, events: 50, flushes: 1, start: CivilDate(year: 2026, month: 10, day: 20))
            func batch(partition: Int32, seed: UInt64) throws -> FlushBatch {
                let topicPartition = TopicPartition(topic: "streams", partition: partition)
                var generator = EventGenerator(.init(seed: seed, artists: 2, days: 2, start: CivilDate(year: 2026, month: 10, day: 1)))
                var ledger = IngestLedger()
                ledger.assign(topicPartition, storedOffset: nil)
                for offset in 0..<400 {
                    let message = generator.next()
                    if let event = message.event { events.append(event) }
                    ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: topicPartition, offset: Int64(offset)), key: nil,
                                                  value: message.value), now: Timestamp(seconds: 1_900_000_000))
                }
                let taken = ledger.takeBatch()
                return try #require(taken)
            }
            let first = try batch(partition: 1, seed: 501)
            let second = try batch(partition: 2, seed: 502)
            func waiting() async throws -> Int64 {
                let rows = try await store.client.query("""
                    SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """).collect()
                return try rows[0].decode(Int64.self)
            }
            try await store.client.withConnection { holder in
                try await holder.query("BEGIN")
                try await holder.query("LOCK TABLE artist_partitions IN EXCLUSIVE MODE")
                let firstWrite = Task {
                    try await store.write(first, artistPartitions: [ArtistPartition(artistID: "held", topicPartition: TopicPartition(topic: "streams", partition: 1))])
                }
                try await waitUntil(timeout: .seconds(30), "the first flush to wait for artist_partitions") { try await waiting() == 1 }
                let secondWrite = Task { try await store.write(second) }
                try await waitUntil(timeout: .seconds(30), "the second flush to wait for the first's rows") { try await waiting() == 2 }
                try await holder.query("COMMIT")
                try await firstWrite.value
                try await secondWrite.value
            }
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(events)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }
}
