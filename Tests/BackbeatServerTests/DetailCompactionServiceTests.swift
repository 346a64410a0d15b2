import BackbeatCore
import BackbeatStore
import Foundation
import PostgresNIO
import Testing

@testable import BackbeatServer

/// Serve's compaction of the detail's and the sketches' deltas (`DetailCompactionService`, migration 0032): passes of at most `rounds` of `limit`
/// artist-days a table merge a second flush's deltas into the first's rows until none is left, counting what they merged
/// (`backbeat_detail_compacted_total`), and the answers stay the events'.
@Suite struct DetailCompactionServiceTests {
    @Test func passesMergeTheFlushDeltasAndCountThem() async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            // The same events again, on another partition: their artist-days are stored, so their rows are deltas.
            let events = RouteTests.events()
            try await store.write(FlushBatch(parts: [FlushBatch.Part(
                topicPartition: TopicPartition(topic: "streams", partition: 1), generation: 0, expectedOffset: nil,
                newOffset: Int64(events.count), delta: InternedDelta(events: events))]))
            func deltas() async throws -> Int64 {
                let sums = Cube.all.filter(\.isFull).map { "(SELECT count(*) FROM \($0.table)_deltas)" }.joined(separator: " + ")
                for try await count in try await store.client.query(PostgresQuery(unsafeSQL: "SELECT \(sums)")).decode(Int64.self) { return count }
                return 0
            }
            let start = CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch * 86_400
            let query = Query(dataset: .streams, interval: QueryInterval(from: Timestamp(seconds: start), to: Timestamp(seconds: start + 10 * 86_400)),
                              granularity: .hour, groupBy: [.trackID, .country])
            func answer() async throws -> [String] { try await store.rows(for: query).map { "\($0)" }.sorted() }
            let before = try await answer()
            #expect(!before.isEmpty)
            let written = try await deltas()
            #expect(written > 2)
            let metrics = ServiceMetrics()
            let service = DetailCompactionService(store: store, logger: RouteTests.logger, limit: 1, metrics: metrics)
            var merged = 0
            for _ in 0..<Int(written) where try await deltas() > 0 {
                let pass = try #require(await service.pass())
                // Tables with deltas: the full-dimension ones and four of sketches (two families, of artists and keyed).
                #expect((1...service.rounds * (Cube.all.filter(\.isFull).count + 4)).contains(pass), "at most one artist-day a table a round")
                merged += pass
            }
            #expect(try await deltas() == 0)
            #expect(await service.pass() == 0)
            let text = String(decoding: metrics.exposition(), as: UTF8.self)
            #expect(text.contains("backbeat_detail_compacted_total \(merged)"), "\(text)")
            #expect(try await answer() == before)
        }
    }
}
