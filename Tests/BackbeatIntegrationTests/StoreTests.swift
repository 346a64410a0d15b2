import BackbeatCore
import BackbeatStore
import PostgresNIO
import Testing

/// The flush transaction against a real PostgreSQL: offsets move only from the expected value, atomically with data.
@Suite(.serialized) struct StoreTests {
    let partition = TopicPartition(topic: "social", partition: 0)

    func batch(expected: Int64?, new: Int64) -> FlushBatch? {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: expected)
        let json = #"{"event_id":"e","type":"social","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a1","platform":"x","action":"like","count":5}"#
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
}
