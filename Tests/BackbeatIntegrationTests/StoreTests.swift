import BackbeatCore
import Foundation
import BackbeatStore
import BackbeatTestSupport
import PostgresNIO
import Testing

/// The store against a real PostgreSQL: the flush transaction (offsets move only from the expected value, atomically
/// with data, in the zones they were counted in), the migrations and the read snapshot.
@Suite(.serialized) struct StoreTests {
    let partition = TopicPartition(topic: "social", partition: 0)

    /// Messages `expected..<new` of `partition`, each a like of count 5 for a1 at `occurredAt`, as a flush batch.
    func batch(expected: Int64?, new: Int64, occurredAt: String = "2026-10-02T10:00:00Z") -> FlushBatch? {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: expected)
        let json = #"{"event_id":"e","type":"social","occurred_at":"\#(occurredAt)","artist_id":"a1","platform":"x","action":"like","count":5}"#
        for offset in (expected ?? 0)..<new {
            ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: offset), key: nil, value: Array(json.utf8)),
                          now: Timestamp(seconds: 1_900_000_000))
        }
        return ledger.takeBatch()
    }

    func socialTotal(_ store: Store) async throws -> Int64 {
        for try await total in try await store.client.query("SELECT coalesce(sum(count), 0)::bigint FROM social_hourly").decode(Int64.self) {
            return total
        }
        return -1
    }

    @Test func migrationsAreIdempotent() async throws {
        let database = try await TestEnvironment.freshDatabase("migrate")
        try await TestEnvironment.withStore(url: database) { store in
            let first = try await store.migrate(try TestEnvironment.migrations())
            let second = try await store.migrate(try TestEnvironment.migrations())
            #expect(first.count == (try TestEnvironment.migrations()).count)
            #expect(second.isEmpty)
        }
    }

    @Test func staleOffsetConflictsAndWritesNothing() async throws {
        let database = try await TestEnvironment.freshDatabase("conflict")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            try await store.write(try #require(batch(expected: nil, new: 3)))
            #expect(try await store.storedOffsets(for: [partition]) == [partition: 3])
            #expect(try await socialTotal(store) == 15)

            // A consumer that still believes nothing was stored must not add its delta again.
            await #expect(throws: OffsetConflict.self) { try await store.write(try #require(batch(expected: nil, new: 3))) }
            // Nor one that starts from an offset other than the stored one.
            await #expect(throws: OffsetConflict.self) { try await store.write(try #require(batch(expected: 1, new: 4))) }
            #expect(try await socialTotal(store) == 15)
            #expect(try await store.storedOffsets(for: [partition]) == [partition: 3])

            try await store.write(try #require(batch(expected: 3, new: 5)))
            #expect(try await socialTotal(store) == 25)
            #expect(try await store.storedOffsets(for: [partition]) == [partition: 5])
        }
    }

    /// Reads inside `withReadSnapshot` see the database as of its first read, whatever commits meanwhile: its BEGIN,
    /// sent without waiting for the answer, runs before the body's first statement.
    @Test func aReadSnapshotSeesNoCommitMadeAfterItsFirstRead() async throws {
        let database = try await TestEnvironment.freshDatabase("snapshot")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            try await store.write(try #require(batch(expected: nil, new: 3)))
            let day = QueryInterval(from: try #require(RFC3339.parseTimestamp("2026-10-02T00:00:00Z")), to: try #require(RFC3339.parseTimestamp("2026-10-03T00:00:00Z")))
            let likes = Query(dataset: .social, interval: day, granularity: .all, filters: [.artistID: ["a1"]])
            @Sendable func count(_ rows: [QueryRow]) -> Int64 { rows.reduce(0) { $0 + $1.metrics[0].integer } }
            let (first, second) = try await store.withReadSnapshot {
                let first = count(try await store.rows(for: likes))
                // Committed by another task, outside the snapshot (a detached task does not join it).
                try await Task.detached { try await store.write(try #require(self.batch(expected: 3, new: 5))) }.value
                return (first, count(try await store.rows(for: likes)))
            }
            #expect(first == 15 && second == 15, "both reads of the snapshot: \(first) and \(second)")
            #expect(count(try await store.rows(for: likes)) == 25, "after the snapshot, the commit is read")
        }
    }

    /// A batch carries the generation of the zones it was counted in: once another is recorded (a zone set), it is
    /// refused and writes nothing, also when the zone is set while it waits for its offsets (an artist's recount
    /// holds them); setting the zone an artist has changes no generation.
    @Test func aBatchCountedInZonesSinceChangedIsRefused() async throws {
        let database = try await TestEnvironment.freshDatabase("zones_changed")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            try await store.write(try #require(batch(expected: nil, new: 3)))
            let kathmandu = try #require(ZoneName("Asia/Kathmandu"))
            _ = try await store.setZone(kathmandu, of: "a1", keepingCountedDays: true) { try SystemZones.rules($0) }
            let generation = try await store.recordedZones().generation
            #expect(generation > 0)
            await #expect(throws: ZonesChanged.self) { try await store.write(try #require(batch(expected: 3, new: 5))) }
            #expect(try await socialTotal(store) == 15)
            #expect(try await store.storedOffsets(for: [partition]) == [partition: 3])
            _ = try await store.setZone(kathmandu, of: "a1", keepingCountedDays: true) { try SystemZones.rules($0) }
            #expect(try await store.recordedZones().generation == generation, "the same zone again: no new generation")

            // A recount of the artist holds the offsets while it counts; the batch waits for them, then is refused.
            var counted = try #require(batch(expected: 3, new: 5))
            counted.zonesGeneration = generation
            let recount = Task {
                try await store.rebuild(.artist("a1", zone: try #require(ZoneName("Asia/Kolkata")))) { _ in
                    try await Task.sleep(for: .milliseconds(1500))
                    return (InternedDelta(), 0)
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            let flushed = ContinuousClock.now
            await #expect(throws: ZonesChanged.self) { try await store.write(counted) }
            #expect(ContinuousClock.now - flushed > .milliseconds(500), "the write waited for the recount's offsets")
            try await recount.value
            #expect(try await socialTotal(store) == 0, "the recount found none of a1's events in no inputs")
            counted.zonesGeneration = try await store.recordedZones().generation
            try await store.write(counted)
            #expect(try await socialTotal(store) == 10)
            #expect(try await store.storedOffsets(for: [partition]) == [partition: 5])
        }
    }

    /// A change of zone counted again from the detail moves only what the quarter-hour detail holds whole: days kept
    /// by the hour (before `quarter_hour_detail`) are not moved, and the first day of the new zone that begins inside the
    /// detail is the first with counts; a second change carries that gap over to the next zone's days.
    @Test func aRecountFromTheDetailCountsFromTheFirstWholeDay() async throws {
        let database = try await TestEnvironment.freshDatabase("recount_detail_gaps")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            try await store.write(try #require(batch(expected: nil, new: 1, occurredAt: "2026-10-02T10:00:00Z")))
            try await store.write(try #require(batch(expected: 1, new: 2, occurredAt: "2026-10-10T10:00:00Z")))
            try await store.client.query("UPDATE quarter_hour_detail SET from_day = '2026-10-05'")
            let day = { (text: String) in RFC3339.parseDate(text)!.daysSinceEpoch }
            let now = Timestamp(seconds: day("2026-11-20") * 86_400)
            let kolkata = try #require(ZoneName("Asia/Kolkata"))
            // Kolkata's 2026-10-05 begins at 18:30Z the day before, inside UTC's 10-04: 10-06 is its first whole day.
            let first = try await store.recountFromDetail("a1", to: kolkata, now: now) { try SystemZones.rules($0) }
            guard case .recounted(let gaps, let rows, _) = first else { Issue.record("\(first)"); return }
            #expect(gaps == RecountGaps(countsFrom: day("2026-10-06"), listenersFrom: day("2026-11-21")) && rows == 1)
            #expect(try await socialTotal(store) == 5, "the 10-02 row, kept by the hour, is not moved")
            for try await quarter in try await store.client.query("SELECT quarter_start FROM social_hourly").decode(Date.self) {
                #expect(quarter == Date(timeIntervalSince1970: Double(day("2026-10-10") * 86_400 + 15 * 3600 + 30 * 60)), "10:00Z is 15:30 in Kolkata")
            }
            #expect(try await store.zoneRecord(of: "a1")?.gaps == gaps)
            // Kolkata's 10-06 begins at 18:30Z on 10-05: UTC's first whole day after it is 10-06.
            let second = try await store.recountFromDetail("a1", to: try #require(ZoneName("UTC")), now: now) { try SystemZones.rules($0) }
            guard case .recounted(let carried, _, _) = second else { Issue.record("\(second)"); return }
            #expect(carried == RecountGaps(countsFrom: day("2026-10-06"), listenersFrom: day("2026-11-21")))
            #expect(try await socialTotal(store) == 5)
            #expect(try await store.recountFromDetail("a1", to: try #require(ZoneName("UTC")), now: now) { try SystemZones.rules($0) } == .unchanged)
            // A change keeping the days counted clears the gaps.
            #expect(try await store.setZone(kolkata, of: "a1", keepingCountedDays: true) { try SystemZones.rules($0) } == .set)
            #expect(try await store.zoneRecord(of: "a1")?.gaps == RecountGaps())
        }
    }

    /// An artist counted again (`rebuild(.artist(...))`, a zone change with the archives) replaces its month rows of
    /// a rolled month too, also the month whose first day comes before the first day counted: counted again from the
    /// same events, the month's row is as it was, not doubled.
    @Test func anArtistCountedAgainKeepsItsRolledMonthsRows() async throws {
        let database = try await TestEnvironment.freshDatabase("artist_recount_months")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let written = try #require(batch(expected: nil, new: 1, occurredAt: "2026-10-15T10:00:00Z"))
            try await store.write(written)
            _ = try await store.rollMonths(today: CivilDate(year: 2026, month: 11, day: 29).daysSinceEpoch)
            func monthBlocks() async throws -> [String] {
                var blocks: [String] = []
                let rows = try await store.client.query("SELECT day::text || ':' || encode(block, 'hex') FROM social_by_artist_day_months WHERE artist_id = 'a1' ORDER BY day")
                for try await block in rows.decode(String.self) { blocks.append(block) }
                return blocks
            }
            let before = try await monthBlocks()
            #expect(before.count == 1 && before[0].hasPrefix("2026-10-01:"), "\(before)")
            let delta = written.parts[0].delta
            try await store.rebuild(.artist("a1", zone: try #require(ZoneName("UTC")))) { _ in (delta, 1) }
            #expect(try await monthBlocks() == before)
            #expect(try await socialTotal(store) == 5)
        }
    }

    /// The flush's COPY writes each column in its type's binary form: what PostgreSQL stores reads back as the events
    /// said, for times before and after PostgreSQL's epoch (2000-01-01), amounts of every sign and size and their
    /// sums, sketches, and a rejected message with NUL bytes.
    @Test func everyColumnIsStoredAsTheEventsSaid() async throws {
        let database = try await TestEnvironment.freshDatabase("binary")
        let position = TopicPartition(topic: "mixed", partition: 7)
        let events: [String] = [
            ("0001-01-01T00:59:59Z", "0.000001"), ("1970-01-01T00:00:00Z", "-34.992286"), ("1999-12-31T23:30:00Z", "0"),
            ("2000-01-01T00:00:00Z", "12"), ("2026-10-02T10:30:00Z", "999999999999.999999"), ("2026-10-02T10:44:59Z", "999999999999.999999"),
        ].enumerated().map { n, event in
            #"{"event_id":"r\#(n)","type":"revenue","occurred_at":"\#(event.0)","artist_id":"a1","source":"merch","amount":"\#(event.1)","currency":"EUR"}"#
        } + [
            #"{"event_id":"s1","type":"stream","occurred_at":"1999-12-31T23:59:00Z","artist_id":"a1","track_id":"a1:t","platform":"deezer","listener_id":"l1","country":"SE","age_range":"25-34","gender":"female","duration_ms":40000}"#,
            #"{"event_id":"s2","type":"stream","occurred_at":"1999-12-31T23:59:00Z","artist_id":"a1","track_id":"a1:t","platform":"deezer","listener_id":"l2","country":"SE","age_range":"25-34","gender":"female","duration_ms":1000}"#,
            "{\"event_id\":\"bad\u{0}",
        ]
        var ledger = IngestLedger()
        ledger.assign(position, storedOffset: nil)
        for (offset, event) in events.enumerated() {
            ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: position, offset: Int64(offset)), key: [0, 1, 0], value: Array(event.utf8)),
                          now: Timestamp(seconds: 1_900_000_000))
        }
        let taken = ledger.takeBatch()
        let batch = try #require(taken)
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            try await store.write(batch)
            func texts(_ sql: String) async throws -> [String] {
                var rows: [String] = []
                for try await text in try await store.client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) { rows.append(text) }
                return rows
            }
            #expect(try await texts("SELECT concat_ws(' ', artist_id, quarter_start AT TIME ZONE 'UTC', source, currency, amount, events) FROM revenue_hourly ORDER BY quarter_start") == [
                "a1 0001-01-01 00:45:00 merch EUR 0.000001 1", "a1 1970-01-01 00:00:00 merch EUR -34.992286 1",
                "a1 1999-12-31 23:30:00 merch EUR 0.000000 1", "a1 2000-01-01 00:00:00 merch EUR 12.000000 1",
                "a1 2026-10-02 10:30:00 merch EUR 1999999999999.999998 2",
            ])
            #expect(try await texts("SELECT concat_ws(' ', hour AT TIME ZONE 'UTC', quarter_start AT TIME ZONE 'UTC', track_id, platform, country, age_range, gender, streams, skips, listening_ms) FROM stream_hourly") == [
                "1999-12-31 23:00:00 1999-12-31 23:45:00 a1:t deezer SE 25-34 female 1 1 41000",
            ])
            #expect(try await texts("SELECT concat_ws(' ', artist_id, day, hll_cardinality(listeners)) FROM artist_listeners_daily") == ["a1 1999-12-31 2"])
            #expect(try await texts("SELECT concat_ws(' ', track_id, day, hll_cardinality(listeners)) FROM track_listeners_daily") == ["a1:t 1999-12-31 2"])
            #expect(try await texts("SELECT concat_ws(' ', topic, partition, \"offset\", encode(key, 'hex'), length(value), reason) FROM rejected_events") == [
                "mixed 7 8 000100 \(events[8].utf8.count) invalid_json",
            ])
        }
    }
}
