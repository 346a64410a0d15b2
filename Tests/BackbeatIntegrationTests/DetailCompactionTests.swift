import BackbeatCore
import BackbeatStore
import BackbeatTestSupport
import PostgresNIO
import Testing

/// The full-dimension tables' and the sketches' deltas (migration 0032) against a real PostgreSQL: a flush appends
/// its blocks of the detail and its sketches, which count at once; compaction merges them into one block an artist-day, by its bounds, beside flushes,
/// and never while maintenance holds its lock; the numbers are the events' before, during and after.
@Suite(.serialized) struct DetailCompactionTests {
    /// Every table with deltas: the full-dimension tables and the sketches.
    static let full = Cube.all.filter(\.isFull).map(\.table) + ["artist_listeners", "track_listeners", "artist_visitors", "page_visitors"]

    /// Per full table: its deltas, its blocks, and the artist-days with `many` deltas or more.
    static func layout(_ store: Store, many: Int = 2) async throws -> [String: (deltas: Int64, blocks: Int64, many: Int64)] {
        var layout: [String: (Int64, Int64, Int64)] = [:]
        for table in full {
            let rows = try await store.client.query(PostgresQuery(unsafeSQL: """
                SELECT (SELECT count(*) FROM \(table)_deltas), (SELECT count(*) FROM \(table)_days),
                       (SELECT count(*) FROM (SELECT 1 FROM \(table)_deltas GROUP BY artist_id, day HAVING count(*) >= \(many)) r)
                """)).decode((Int64, Int64, Int64).self)
            for try await row in rows { layout[table] = row }
        }
        return layout
    }

    /// A first flush of an artist-day writes its block and its sketches' row, no delta. Three more flushes over the
    /// same days add deltas beside them, counted at once: a compaction whose bounds none passes
    /// merges nothing, one by count sums the deltas of each artist-day with three or more into one, one by a quiet
    /// day merges that day's into their rows, and compacting all leaves no delta; the numbers are the events' at
    /// every step.
    @Test func flushesAppendDeltasThatCompactionMergesByItsBounds() async throws {
        let database = try await TestEnvironment.freshDatabase("detail_compaction")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var events = try await StoredLayoutTests.writeFlushes(store, events: 1_500, flushes: 1)
            let first = try await Self.layout(store)
            #expect(first["stream_hourly"]!.blocks == 5 * 3 && first["track_listeners"]!.blocks == 5 * 3, "\(first)")
            #expect(first.values.allSatisfy { $0.deltas == 0 }, "\(first)")
            #expect(try await GroundTruth.read(from: store) == GroundTruth(events))
            #expect(try await store.compactAllDetail() == 0)

            events += try await StoredLayoutTests.writeFlushes(store, events: 4_500, flushes: 3, firstOffset: 1_500)
            let truth = GroundTruth(events)
            let before = try await Self.layout(store, many: 3)
            #expect(before["stream_hourly"]!.many > 0 && before["artist_listeners"]!.many > 0, "\(before)")
            #expect(try await GroundTruth.read(from: store) == truth)
            // No byte share passes a block that exists: by count alone.
            #expect(try await store.compactDetail(bounds: DetailCompactionBounds(count: 100, bytesShare: 0)) == 0)
            // By count, each artist-day's deltas are summed into one delta: no row is rewritten or added.
            func rowBytes() async throws -> Int64 {
                let sums = try await store.client.query("""
                    SELECT (SELECT sum(length(block)) FROM stream_hourly_days) + (SELECT sum(pg_column_size(listeners)) FROM track_listeners_days)
                    """).decode(Int64.self)
                for try await sum in sums { return sum }
                return 0
            }
            let bytesBefore = try await rowBytes()
            let merged = try #require(try await store.compactDetail(bounds: DetailCompactionBounds(count: 3, bytesShare: 0), limit: 1_000))
            let byCount = try await Self.layout(store, many: 3)
            #expect(merged > 0 && byCount.values.allSatisfy { $0.many == 0 }, "\(byCount)")
            #expect(byCount.allSatisfy { table, now in now.blocks == before[table]!.blocks && (now.deltas > 0) == (before[table]!.deltas > 0) }, "\(byCount)")
            #expect(byCount["stream_hourly"]!.deltas < before["stream_hourly"]!.deltas, "\(byCount)")
            #expect(try await rowBytes() == bytesBefore)
            #expect(try await GroundTruth.read(from: store) == truth)
            // Days before `quietBefore` go into their rows, however few their deltas: the first of the three here.
            let firstDay = CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch
            let quiet = DetailCompactionBounds(count: 100, bytesShare: 0, quietBefore: firstDay + 1)
            #expect(try #require(try await store.compactDetail(bounds: quiet, limit: 1_000)) > 0)
            let firstDayDeltas = try await store.client.query(
                "SELECT count(*) FROM stream_hourly_deltas WHERE day = date '2026-10-01'").decode(Int64.self)
            for try await left in firstDayDeltas { #expect(left == 0) }
            #expect(try await GroundTruth.read(from: store) == truth)

            _ = try #require(try await store.compactAllDetail(limit: 7))
            let after = try await Self.layout(store)
            #expect(after["stream_hourly"]!.blocks == 5 * 3 && after["artist_listeners"]!.blocks == 5 * 3, "\(after)")
            #expect(after.values.allSatisfy { $0.deltas == 0 }, "\(after)")
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            try await expectCubesMatchFullTables(store.client)
        }
    }

    /// Compaction passes run while flushes append to the same artist-days: every event counts once, whichever pass
    /// took which deltas, and compacting all at the end leaves one block an artist-day.
    @Test func compactionBesideFlushesCountsEveryEventOnce() async throws {
        let database = try await TestEnvironment.freshDatabase("detail_compaction_beside")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let passes = Task {
                // Small passes (three artist-days a table) while the flushes go on, so that they interleave.
                var merged = 0
                for _ in 0..<60 {
                    merged += try await store.compactDetail(bounds: .everything, limit: 3) ?? 0
                    try await Task.sleep(for: .milliseconds(10))
                }
                return merged
            }
            let events = try await StoredLayoutTests.writeFlushes(store, events: 8_000, flushes: 8)
            let merged = try await passes.value
            #expect(merged > 0)
            _ = try #require(try await store.compactAllDetail())
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == GroundTruth(events), "\(stored.difference(from: GroundTruth(events)))")
            #expect(try await Self.layout(store).values.allSatisfy { $0.deltas == 0 })
        }
    }

    /// While a rebuild or retention holds the maintenance lock, a compaction pass merges nothing and says so (nil);
    /// once it is released, the next pass merges the deltas.
    @Test func compactionWaitsForNoMaintenance() async throws {
        let database = try await TestEnvironment.freshDatabase("detail_compaction_lock")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let events = try await StoredLayoutTests.writeFlushes(store, events: 3_000, flushes: 2)
            try await store.client.withConnection { holder in
                try await holder.query("BEGIN")
                try await holder.query("SELECT pg_advisory_xact_lock(\(Store.maintenanceLock))")
                #expect(try await store.compactDetail(bounds: .everything) == nil)
                #expect(try await store.compactAllDetail() == nil)
                try await holder.query("COMMIT")
            }
            #expect(try await Self.layout(store)["stream_hourly"]!.deltas == 5 * 3)
            #expect(try await store.compactAllDetail() ?? 0 >= 5 * 3)
            #expect(try await Self.layout(store).values.allSatisfy { $0.deltas == 0 })
            #expect(try await GroundTruth.read(from: store) == GroundTruth(events))
        }
    }
}
