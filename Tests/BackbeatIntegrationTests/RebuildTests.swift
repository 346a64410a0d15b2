import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import Foundation
import PostgresNIO
import Synchronization
import Testing

/// `backbeat rebuild` replaces an interval's aggregates from archives in one swap and touches nothing else.
@Suite(.serialized) struct RebuildTests {
    static let days = ["2026-10-03", "2026-10-04", "2026-10-05"]
    static let untouchedDay = "2026-10-08"

    /// Makes `days` wrong: stream counters doubled in every stream cube, every other aggregate (revenue, social,
    /// listener sketches) deleted. The doubled counters are non-zero, so a rebuild that deleted before it inserted
    /// in separate steps would show a third answer (zeros) to the queries running beside it. Each aggregate is
    /// damaged in the table that holds it by artist-day (`_days`); a stream cube's block is decoded, its counters
    /// doubled and encoded again.
    static func damage(_ client: PostgresClient, days: [String]) async throws {
        for cube in Cube.all where cube.dataset == .streams {
            var doubled: [(artist: String, day: String, block: [UInt8])] = []
            let rows = try await client.query(PostgresQuery(
                unsafeSQL: "SELECT artist_id, day::text, block FROM \(cube.table)_days WHERE day = ANY($1::date[])", binds: binds(days)))
            for try await (artist, day, block) in rows.decode((String, String, ByteBuffer).self) {
                var decoded = try CubeBlock.decode(Array(block.readableBytesView), of: cube)
                for row in decoded.sums.indices {
                    let (streams, skips, listening) = decoded.sums[row].integers
                    decoded.sums[row].integers = (streams * 2, skips * 2, listening * 2)
                }
                doubled.append((artist, day, CubeBlock.encode(decoded, of: cube)))
            }
            for (artist, day, block) in doubled {
                try await client.query("""
                    UPDATE \(unescaped: cube.table)_days SET block = \(ByteBuffer(bytes: block)) WHERE artist_id = \(artist) AND day = \(day)::date
                    """)
            }
        }
        for table in ["revenue_hourly_days", "social_hourly_days", "revenue_by_artist_day_days", "social_by_artist_day_days", "artist_listeners_days", "track_listeners_days"] {
            try await client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE day = ANY($1::date[])", binds: binds(days)))
        }
    }

    static func binds(_ days: [String]) -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(days)
        return bindings
    }

    /// The day series of one artist's streams, as sorted-key JSON text.
    static func streamsSeries() async throws -> String {
        let reply = try await HTTP.get(servicePort.withLock { "http://127.0.0.1:\($0)" } + "/v1/artists/artist-0001/streams?from=2026-10-01&to=2026-10-11&granularity=day")
        #expect(reply.status == 200)
        let body = try #require(try reply.json() as? [String: Any])
        let series = try #require(body["series"] as? [Any])
        return String(decoding: try JSONSerialization.data(withJSONObject: series, options: [.sortedKeys]), as: UTF8.self)
    }

    static let servicePort = Mutex(0)

    /// One artist's revenue or social answer (`route`) over the interval, as sorted-key JSON text, after checking
    /// that its totals are the sums of its series: an answer whose series and totals came from different
    /// snapshots (before and after a swap) fails that check.
    static func seriesWithTotals(_ route: String) async throws -> String {
        let reply = try await HTTP.get(servicePort.withLock { "http://127.0.0.1:\($0)" } + "/v1/artists/artist-0001/\(route)?from=2026-10-01&to=2026-10-11&granularity=day")
        #expect(reply.status == 200)
        let body = try #require(try reply.json() as? [String: Any])
        let series = try #require(body["series"] as? [[String: Any]])
        let totals = try #require(body["totals"] as? [[String: Any]])
        let (keys, measure) = route == "revenue" ? (["currency"], "amount") : (["platform", "action"], "count")
        func sums(_ rows: [[String: Any]]) -> [String: Decimal] {
            var sums: [String: Decimal] = [:]
            for row in rows {
                let value = row[measure].map { Decimal(string: "\($0)") ?? .nan } ?? .nan
                sums[keys.map { "\(row[$0] ?? "")" }.joined(separator: "|"), default: 0] += value
            }
            return sums
        }
        #expect(sums(series).filter { $0.value != 0 } == sums(totals).filter { $0.value != 0 }, "\(route): the totals are the series summed")
        return String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The answers `seen` in order, as runs of old, new and others (each other answer written out once): what a
    /// failure of the swap looked like.
    static func sequence(_ seen: [String], old: String, new: String) -> String {
        var others: [String] = []
        var runs: [(name: String, count: Int)] = []
        for answer in seen {
            let name: String
            if answer == old {
                name = "old"
            } else if answer == new {
                name = "new"
            } else {
                if !others.contains(answer) { others.append(answer) }
                name = "other\(others.firstIndex(of: answer)!)"
            }
            if runs.last?.name == name { runs[runs.count - 1].count += 1 } else { runs.append((name, 1)) }
        }
        return runs.map { "\($0.name)×\($0.count)" }.joined(separator: " ")
            + others.enumerated().map { "\nother\($0.offset): \($0.element)" }.joined() + "\nold: \(old)\nnew: \(new)"
    }

    @Test func rebuildSwapsAnIntervalAtomicallyWhileQueriesRun() async throws {
        let (directory, workload) = try ArchiveTests.generateArchive(seed: 9)
        let database = try await TestEnvironment.freshDatabase("rebuild")
        let replayed = try ReplayTests.run(["replay", directory], postgresURL: database)
        #expect(replayed.status == 0, "\(replayed.output)")
        try await TestEnvironment.withStore(url: database) { store in
            try await Self.damage(store.client, days: Self.days + [Self.untouchedDay])
        }
        let before = try await ArchiveTests.everything(database)

        // Missing segments: the rebuild refuses and changes nothing.
        let partial = try InputPaths.expand([directory]).filter { !$0.contains("/streams/") }
        let refused = try ReplayTests.run(["rebuild", "--from", Self.days.first!, "--to", Self.days.last!] + partial, postgresURL: database)
        #expect(refused.status != 0)
        #expect(refused.output.contains("add the missing archive segments"), "\(refused.output)")
        #expect(try await ArchiveTests.everything(database).truth == before.truth)

        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        Self.servicePort.withLock { $0 = service.port }
        // Streams (a series with its listeners), revenue and social (each a series with its totals), read in loops
        // while the rebuild computes and swaps.
        let reads: [@Sendable () async throws -> String] = [
            { try await Self.streamsSeries() }, { try await Self.seriesWithTotals("revenue") }, { try await Self.seriesWithTotals("social") },
        ]
        var old: [String] = []
        for read in reads { old.append(try await read()) }
        let stop = StopFlag()
        let loops = reads.map { read in
            Task {
                var seen: [String] = []
                while !stop.isSet { seen.append(try await read()) }
                return seen
            }
        }
        let rebuilt = try ReplayTests.run(["rebuild", "--from", Self.days.first!, "--to", Self.days.last!, directory], postgresURL: database)
        #expect(rebuilt.status == 0, "\(rebuilt.output)")
        // Progress: the last line before the result counts every input read.
        #expect(rebuilt.output.contains("rebuild: ") && rebuilt.output.contains(" inputs read, "), "\(rebuilt.output)")
        // The service notices the rebuild at its next flush: memory gives way to PostgreSQL, and every read is new.
        try await waitUntil(timeout: .seconds(30), "every read to answer the rebuilt numbers") {
            for (index, read) in reads.enumerated() where try await read() == old[index] { return false }
            return true
        }
        stop.set()
        for (index, loop) in loops.enumerated() {
            let seen = try await loop.value
            let new = try await reads[index]()
            #expect(new != old[index], """
                the rebuild restored the damaged days (read \(index)): \(Self.sequence(seen + [new], old: old[index], new: new))
                serve's log of memory and stored changes: \(service.log().split(separator: "\n").filter { $0.contains("memory") || $0.contains("rebuild") || $0.contains("snapshot") }.joined(separator: "\n"))
                """)
            #expect(seen.count > 3, "queries ran during the rebuild: \(seen.count) (read \(index))")
            #expect(seen.allSatisfy { $0 == old[index] || $0 == new },
                    "every answer is wholly the old or wholly the new numbers (read \(index)): \(Self.sequence(seen + [new], old: old[index], new: new))")
        }

        // Inside the interval: the ground truth. Outside: untouched (the damaged day stays as damaged). Rejections too.
        let after = try await ArchiveTests.everything(database)
        let interval = Set(Self.days.map { RFC3339.parseDate($0)!.daysSinceEpoch })
        #expect(after.truth != workload.truth, "the day outside the interval stays damaged")
        #expect(after.truth.filtered { interval.contains($0) } == workload.truth.filtered { interval.contains($0) })
        #expect(after.truth.filtered { !interval.contains($0) } == before.truth.filtered { !interval.contains($0) }, "nothing outside the interval changed")
        #expect(after.rejected == before.rejected)
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}

/// A flag that loops running in other tasks poll until it is set.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
