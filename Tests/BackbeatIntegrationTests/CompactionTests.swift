import BackbeatCore
import BackbeatStore
import BackbeatTestSupport
import Logging
import PostgresNIO
import Testing

/// Append-only flushes and compaction (migrations 0008 and 0010) against a real PostgreSQL: flushes append rows per
/// key to the `_delta` tables of the full hourly tables and the sketches, the views (the derived cubes' too) answer
/// the sums, and compaction moves the rows into one row per key, the derived cubes' included, without changing any
/// answer.
@Suite(.serialized) struct CompactionTests {
    static let partition = TopicPartition(topic: "streams", partition: 0)
    /// Every aggregate view (the cubes, the full hourly tables and the listener sketches).
    static let aggregates = Cube.all.map(\.table) + listeners
    static let listeners = ["artist_listeners_daily", "track_listeners_daily"]
    /// The aggregates flushes append to: the full hourly tables and the listener sketches.
    static let appended = Cube.all.filter(\.isFull).map(\.table) + listeners

    /// Writes `events` generated events as `flushes` batches of one partition, calling `afterEach` after each;
    /// returns the valid events.
    /// `firstOffset` is the partition's stored offset (0: none yet), where these flushes go on from; each starting
    /// offset draws other events.
    static func writeFlushes(
        _ store: Store, events: Int, flushes: Int, start: CivilDate = CivilDate(year: 2026, month: 10, day: 1), firstOffset: Int = 0,
        afterEach: () async throws -> Void = {}
    ) async throws -> [Event] {
        var generator = EventGenerator(.init(seed: 11 + UInt64(firstOffset), artists: 5, days: 3, start: start))
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

    /// Per aggregate: the view summed per key (sketches as their cardinality), as one digest; per appended aggregate,
    /// its delta's rows.
    static func answers(_ client: PostgresClient) async throws -> (digests: [String: String], deltaRows: [String: Int64]) {
        var digests: [String: String] = [:]
        var deltaRows: [String: Int64] = [:]
        for table in aggregates {
            let measures = table.hasSuffix("listeners_daily")
                ? "hll_cardinality(hll_union_agg(listeners))"
                : Cube.all.first { $0.table == table }!.dataset.metrics.map { "sum(\($0.rawValue))" }.joined(separator: ", ")
            let sql = """
                SELECT count(*)::text || ':' || coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '')
                FROM (SELECT to_jsonb(t) - ARRAY['streams', 'skips', 'listening_ms', 'amount', 'events', 'count', 'listeners'] AS key, \(measures)
                      FROM \(table) t GROUP BY 1) r
                """
            for try await digest in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) { digests[table] = digest }
            guard appended.contains(table) else { continue }
            for try await count in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(table)_delta")).decode(Int64.self) {
                deltaRows[table] = count
            }
        }
        return (digests, deltaRows)
    }

    @Test func compactionMovesFlushedRowsIntoOneRowPerKeyWithoutChangingAnyAnswer() async throws {
        let database = try await TestEnvironment.freshDatabase("compaction")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let truth = GroundTruth(try await Self.writeFlushes(store, events: 6_000, flushes: 4))

            let before = try await Self.answers(store.client)
            // Four flushes over the same three days: the same keys were appended several times.
            for table in Self.appended {
                let distinctKeys = Int64(before.digests[table]!.split(separator: ":")[0])!
                #expect(before.deltaRows[table]! > distinctKeys, "\(table): \(before.deltaRows[table]!) delta rows, \(distinctKeys) keys")
            }

            let moved = try await store.compact()
            #expect(moved == Int(before.deltaRows.values.reduce(0, +)))
            let after = try await Self.answers(store.client)
            #expect(after.digests == before.digests)
            #expect(after.deltaRows.values.allSatisfy { $0 == 0 })
            // Vacuumed at once: readers do not scan the moved rows' dead pages (nothing was appended meanwhile, so
            // every page is empty and the vacuum gives them back).
            for table in Self.appended {
                let pages = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT pg_relation_size('\(table)_delta')::bigint"))
                for try await bytes in pages.decode(Int64.self) { #expect(bytes == 0, "\(table)_delta keeps \(bytes) bytes") }
            }
            #expect(try await store.compact() == 0)

            // The merged tables hold the events' exact aggregates, one row per key (their primary keys say so).
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Writes `events` generated events as `flushes` batches into `store`, whose schema is an older one (before
    /// migration 0011), as flushes did then: every appended aggregate's rows as texts in its `_delta` table. The rows are
    /// the ones today's flushes write, read with their texts from a database of the current schema (`scratch`).
    static func writeFlushesAsBefore(_ store: Store, scratch: Store, events: Int, flushes: Int) async throws -> [Event] {
        let sources = Cube.all.filter(\.isFull).map { ($0.table, "\($0.table)_delta_rows") } + listeners.map { ($0, "\($0)_delta") }
        return try await writeFlushes(scratch, events: events, flushes: flushes) {
            for (table, source) in sources {
                try await copyRows(of: source, in: scratch, into: "\(table)_delta", in: store)
            }
            _ = try await scratch.compact(waitingForOthers: true)
        }
    }

    /// Copies every row of `source` in `from` into `table` in `to`, through their text form (the row types of two
    /// schema versions).
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
            for cube in Cube.derived {
                let full = Cube.all.first { $0.isFull && $0.dataset == cube.dataset }!
                let key = ["artist_id", cube.grain == .hour ? "hour" : "(hour AT TIME ZONE 'UTC')::date"] + cube.dimensions.map(\.rawValue)
                let metrics = cube.dataset.metrics.map(\.rawValue)
                try await store.client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO \(cube.table)_delta SELECT \(key.joined(separator: ", ")), \(metrics.map { "sum(\($0))" }.joined(separator: ", "))
                    FROM \(full.table)_delta GROUP BY \((1...key.count).map(String.init).joined(separator: ", "))
                    """))
            }
            let before = try await Self.answers(store.client)

            try await store.migrate(migrations)
            #expect(try await Self.answers(store.client).digests == before.digests)
            for table in Cube.derived.map(\.table) {
                let remaining = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM pg_class WHERE relname = '\(table)_delta'"))
                for try await count in remaining.decode(Int64.self) { #expect(count == 0, "\(table)_delta is still there") }
            }
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Migration 0011 names the values of the full hourly deltas by integers: the rows flushes had appended as texts
    /// are carried over, not merged, and every aggregate answers as before; compaction then merges them exactly.
    @Test func migration0011CarriesFlushedRowsOver() async throws {
        try await Self.withSchemaBefore(11) { store, scratch, migrations in
            let carried = try await Self.writeFlushesAsBefore(store, scratch: scratch, events: 4_000, flushes: 2)
            let before = try await Self.answers(store.client)
            #expect(before.deltaRows.values.allSatisfy { $0 > 0 })

            try await store.migrate(migrations)
            let after = try await Self.answers(store.client)
            #expect(after.digests == before.digests)
            #expect(after.deltaRows == before.deltaRows)
            // SQL of an older version, which names the text columns, fails on the integers instead of reading
            // them as texts (an older compaction would merge rows keyed by their digits).
            await #expect(throws: (any Error).self) {
                try await store.client.query("SELECT artist_id FROM stream_hourly_delta")
            }
            // A flush of today's kind beside the carried rows: both are merged.
            let more = try await Self.writeFlushes(store, events: 1_000, flushes: 1)
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(carried + more)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Migration 0014 partitions every merged table by month: the merged rows are carried over, every aggregate
    /// answers as before, and compaction merges the rows flushes appended since into the month partitions, creating
    /// the months it meets.
    @Test func migration0014PartitionsEveryMergedTableByMonth() async throws {
        try await Self.withSchemaBefore(14) { store, scratch, migrations in
            // Three days across a month's end, merged (in a database of the current schema, whose merged rows are
            // copied over as they were); then one more flush left in the deltas.
            let merged = try await Self.writeFlushes(scratch, events: 4_000, flushes: 2, start: CivilDate(year: 2026, month: 9, day: 30))
            try await scratch.compact(waitingForOthers: true)
            for table in Self.aggregates {
                try await Self.copyRows(of: "\(table)_merged", in: scratch, into: "\(table)_merged", in: store)
            }
            let appended = try await Self.writeFlushes(store, events: 1_000, flushes: 1, start: CivilDate(year: 2026, month: 11, day: 29))
            let before = try await Self.answers(store.client)

            try await store.migrate(migrations)
            let after = try await Self.answers(store.client)
            #expect(after.digests == before.digests)
            let partitioned = try await store.client.query(PostgresQuery(unsafeSQL: """
                SELECT p.relname, count(*)::bigint FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                WHERE p.relname LIKE '%\\_merged' GROUP BY 1
                """))
            var months: [String: Int64] = [:]
            for try await (table, count) in partitioned.decode((String, Int64).self) { months[table] = count }
            #expect(months.count == Self.aggregates.count, "\(months)")
            #expect(months.values.allSatisfy { $0 == 2 }, "September and October: \(months)")

            // Compaction creates November's partitions for the rows appended before the migration, and merges them.
            try await store.compact(waitingForOthers: true)
            #expect(try await Self.answers(store.client).deltaRows.values.allSatisfy { $0 == 0 })
            let november = try await store.client.query("SELECT count(*)::bigint FROM pg_class WHERE relname LIKE '%\\_merged\\_2026\\_11'")
            for try await count in november.decode(Int64.self) { #expect(count == Int64(Self.aggregates.count)) }
            let stored = try await GroundTruth.read(from: store)
            let expected = GroundTruth(merged + appended)
            #expect(stored == expected, "\(stored.difference(from: expected))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    @Test func oneCompactionAtATime() async throws {
        let database = try await TestEnvironment.freshDatabase("compaction_lock")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            _ = try await Self.writeFlushes(store, events: 1_000, flushes: 2)
            // While another session holds the compaction lock (another instance compacting, or a rebuild), this one
            // skips every table; after it is released, everything moves.
            let logger = Logger(label: "test")
            let skipped = try await store.client.withTransaction(logger: logger) { connection in
                _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Store.compactionLock))", logger: logger)
                return try await store.compact()
            }
            #expect(skipped == 0)

            // A compaction that waits for the lock does the work once the holder lets go.
            let released = ContinuousClock.now + .milliseconds(500)
            let holder = Task {
                try await store.client.withTransaction(logger: logger) { connection in
                    _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Store.compactionLock))", logger: logger)
                    try await Task.sleep(until: released)
                }
            }
            try await waitUntil(timeout: .seconds(10), "the other session to hold the compaction lock") {
                let held = try await store.client.query(
                    "SELECT count(*)::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
                for try await count in held.decode(Int64.self) { return count > 0 }
                return false
            }
            #expect(ContinuousClock.now < released, "the lock was taken late; raise the hold time")
            let waited = try await store.compact(waitingForOthers: true)
            try await holder.value
            #expect(waited > 0)
            #expect(ContinuousClock.now >= released)
        }
    }
}
