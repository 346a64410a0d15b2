import BackbeatCore
import BackbeatStore
import PostgresNIO
import Testing

/// The service's sketches are postgresql-hll's: same hash, same bytes, same cardinality, in every mode.
@Suite(.serialized) struct HyperLogLogCompatibilityTests {
    @Test(arguments: [0, 1, 7, 1_280, 1_281, 4_000, 30_000, 200_000])
    func sketchesMatchPostgresBytesAndCardinality(count: Int) async throws {
        let database = try await TestEnvironment.freshDatabase("hll")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var sketch = HyperLogLog()
            for index in 0..<count { sketch.add("listener-\(index)") }
            let rows = try await store.client.query("""
                SELECT coalesce(hll_add_agg(hll_hash_text('listener-' || i), 14, 5), hll_empty(14, 5))::text,
                       hll_cardinality(coalesce(hll_add_agg(hll_hash_text('listener-' || i), 14, 5), hll_empty(14, 5))),
                       hll_hash_text('listener-0')::text::bigint
                FROM generate_series(0, \(count - 1)) AS i
                """)
            for try await (hex, cardinality, firstHash) in rows.decode((String, Double, Int64).self) {
                let bytes = try #require(Store.bytes(fromHexText: hex))
                #expect(MurmurHash3.hash64("listener-0") == firstHash)
                #expect(sketch.serialized() == bytes, "bytes differ at \(count) listeners")
                #expect(sketch.cardinality == cardinality, "cardinality \(sketch.cardinality) vs PostgreSQL's \(cardinality)")
                #expect(try HyperLogLog(serialized: bytes) == sketch)
                if count <= HyperLogLog.explicitLimit { #expect(cardinality == Double(count)) }
                if count >= 10_000 { #expect(abs(cardinality - Double(count)) / Double(count) <= 0.02) }
            }
        }
    }

    @Test func unionsInEitherPlaceAgree() async throws {
        let database = try await TestEnvironment.freshDatabase("hllunion")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            // Three overlapping days of listeners, unioned by the service and by PostgreSQL.
            let days = [(0, 1_000), (900, 5_000), (4_000, 60_000)]
            var merged = HyperLogLog()
            for (start, end) in days {
                var day = HyperLogLog()
                for index in start..<end { day.add("l\(index)") }
                merged.formUnion(day)
                let hex = day.serialized().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                try await store.client.query("CREATE TABLE IF NOT EXISTS days (listeners hll(14, 5))")
                try await store.client.query("INSERT INTO days VALUES (decode(\(hex), 'hex')::hll)")
            }
            let rows = try await store.client.query("SELECT hll_cardinality(hll_union_agg(listeners)), hll_union_agg(listeners)::text FROM days")
            for try await (cardinality, hex) in rows.decode((Double, String).self) {
                #expect(abs(cardinality - 60_000) / 60_000 <= 0.02)
                let bytes = try #require(Store.bytes(fromHexText: hex))
                #expect(merged.cardinality == cardinality)
                #expect(merged.serialized() == bytes)
            }
        }
    }
}

