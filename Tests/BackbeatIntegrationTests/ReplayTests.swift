import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import PostgresNIO
import Testing

/// `backbeat replay` applies files exactly once: again and again, compressed or not, and up to the damage in a
/// damaged file.
@Suite(.serialized) struct ReplayTests {
    /// Writes the generator's events to `name` in a fresh directory (zstd when it ends in .zst), a third of the valid
    /// ones page events.
    static func generate(_ name: String, events: Int = 30_000) throws -> String {
        let directory = NSTemporaryDirectory() + "backbeat-replay-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        let result = try run(["generate", "--events", String(events), "--seed", "5", "--artists", "8", "--days", "10",
                              "--start", "2026-10-01", "--invalid-fraction", "0.01", "--page-fraction", "0.3", "--out", path])
        #expect(result.status == 0, "\(result.output)")
        return path
    }

    /// Runs the binary to completion; returns its exit status and its stderr and stdout together.
    static func run(_ arguments: [String], postgresURL: String? = nil) throws -> (status: Int32, output: String) {
        var environment = ["BACKBEAT_MIGRATIONS_DIR": TestEnvironment.packageRoot.appendingPathComponent("sql").path]
        if let postgresURL { environment["BACKBEAT_POSTGRES_URL"] = postgresURL }
        return try runToCompletion(try TestEnvironment.binary, arguments, environment: environment)
    }

    /// The ground truth of the first `lines` lines of an NDJSON file (all when nil), and how many are invalid.
    static func truth(ofPlainFile path: String, lines: Int? = nil) throws -> (truth: GroundTruth, invalid: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))  // invalid events may hold invalid UTF-8
        var all = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if all.last?.isEmpty == true { all.removeLast() }
        let now = Timestamp.wallClock()
        var events: [Event] = []
        var invalid = 0
        for line in all.prefix(lines ?? all.count) {
            guard !line.isEmpty else { continue }
            switch EventDecoder.decode(Array(line), now: now) {
            case .success(let event): events.append(event)
            case .failure: invalid += 1
            }
        }
        return (GroundTruth(events), invalid)
    }

    static func stored(_ database: String) async throws -> (truth: GroundTruth, rejected: Int64, positions: [String: Int64]) {
        try await TestEnvironment.withStore(url: database) { store in
            var positions: [String: Int64] = [:]
            for try await (topic, offset) in try await store.client.query(
                "SELECT topic, next_offset FROM kafka_offsets WHERE topic LIKE 'replay:%'").decode((String, Int64).self) {
                positions[topic] = offset
            }
            return (try await GroundTruth.read(from: store), try await rejectedCount(store.client).total, positions)
        }
    }

    @Test func replayingTheSameEventsAgainCountsThemOnce() async throws {
        let plain = try Self.generate("events.ndjson")
        let compressed = try Self.generate("events.ndjson.zst")
        let database = try await TestEnvironment.freshDatabase("replay")
        try await TestEnvironment.withStore(url: database) { store in _ = try await store.migrate(try TestEnvironment.migrations()) }
        let (truth, invalid) = try Self.truth(ofPlainFile: plain)

        let dry = try Self.run(["replay", "--dry-run", compressed])
        #expect(dry.status == 0, "\(dry.output)")
        #expect(dry.output.contains("dry run, nothing written"))
        #expect(try await Self.stored(database).positions.isEmpty, "a dry run writes nothing")

        // Small batches: many transactions, each moving the stored position with its aggregates.
        for _ in 0..<2 {
            let result = try Self.run(["replay", "--batch-lines", "7000", compressed], postgresURL: database)
            #expect(result.status == 0, "\(result.output)")
        }
        let second = try Self.run(["replay", compressed], postgresURL: database)
        #expect(second.output.contains("already applied, skipped"), "\(second.output)")
        var stored = try await Self.stored(database)
        #expect(stored.truth == truth, "\(stored.truth.difference(from: truth))")
        #expect(stored.rejected == Int64(invalid))
        #expect(stored.positions.count == 1)

        // The same events uncompressed, and a copy under another name, are the same input: nothing more is counted.
        let copy = plain + ".copy"
        try FileManager.default.copyItem(atPath: plain, toPath: copy)
        let again = try Self.run(["replay", plain, copy], postgresURL: database)
        #expect(again.status == 0, "\(again.output)")
        stored = try await Self.stored(database)
        #expect(stored.truth == truth, "\(stored.truth.difference(from: truth))")
        #expect(stored.rejected == Int64(invalid))
        #expect(stored.positions.count == 1)
    }

    @Test func aTruncatedOrCorruptZstdFileStopsWithItsNameAndPositionAfterApplyingWhatCameBefore() async throws {
        let compressed = try Self.generate("big.ndjson.zst", events: 60_000)
        let plain = try Self.generate("big.ndjson", events: 60_000)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: compressed))

        /// Replays `damaged` into a fresh database: it must stop naming the file, `error` and the byte position,
        /// having applied exactly a prefix of the file's lines (none of the damaged part, not even as rejections).
        func expectPrefixApplied(_ damaged: Data, name: String, error: String) async throws {
            let path = compressed.replacingOccurrences(of: "big.ndjson.zst", with: name)
            try damaged.write(to: URL(fileURLWithPath: path))
            let database = try await TestEnvironment.freshDatabase(name.replacingOccurrences(of: ".ndjson.zst", with: ""))
            let result = try Self.run(["replay", "--batch-lines", "5000", path], postgresURL: database)
            #expect(result.status != 0)
            #expect(result.output.contains(path) && result.output.contains(error) && result.output.contains("at byte"), "\(result.output)")
            let stored = try await Self.stored(database)
            let applied = try #require(stored.positions.values.first)
            #expect(applied > 10_000 && applied < 60_000, "the lines before the damage are applied: \(applied)")
            let expected = try Self.truth(ofPlainFile: plain, lines: Int(applied))
            #expect(stored.truth == expected.truth, "exactly the first \(applied) lines: \(stored.truth.difference(from: expected.truth))")
            #expect(stored.rejected == Int64(expected.invalid))
        }

        try await expectPrefixApplied(bytes.prefix(bytes.count * 6 / 10), name: "truncated.ndjson.zst", error: "truncated zstd data")
        // Bytes overwritten in the middle: the frame's checksum or structure gives it away before any of its lines
        // is handed out.
        var damaged = bytes
        for index in damaged.count / 2..<damaged.count / 2 + 64 { damaged[index] ^= 0x5A }
        try await expectPrefixApplied(damaged, name: "corrupt.ndjson.zst", error: "corrupt zstd data")
    }

    @Test(.seeded) func killingAReplayAtRandomPointsThenRunningItAgainEndsAtTheGroundTruth() async throws {
        let compressed = try Self.generate("killed.ndjson.zst", events: 80_000)
        let plain = try Self.generate("killed.ndjson", events: 80_000)
        let database = try await TestEnvironment.freshDatabase("killed")
        try await TestEnvironment.withStore(url: database) { store in _ = try await store.migrate(try TestEnvironment.migrations()) }
        var positions: [Int64] = []
        var random = TestRandom()
        for round in 0..<4 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try TestEnvironment.binary)
            process.arguments = ["replay", "--batch-lines", "1000", "--postgres-url", database, compressed]
            process.environment = ["BACKBEAT_MIGRATIONS_DIR": TestEnvironment.packageRoot.appendingPathComponent("sql").path]
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Start-up (migrations, the identity pass) takes a second or two in a debug build; kill after that.
            try await Task.sleep(for: .milliseconds(Int.random(in: 2_000...5_000, using: &random) + round * 500))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            positions.append(try await Self.stored(database).positions.values.first ?? 0)
        }
        #expect(positions == positions.sorted(), "positions only move forward: \(positions)")
        let last = try Self.run(["replay", compressed], postgresURL: database)
        #expect(last.status == 0, "\(last.output)")
        let (truth, invalid) = try Self.truth(ofPlainFile: plain)
        let stored = try await Self.stored(database)
        #expect(stored.truth == truth, "after kills at positions \(positions): \(stored.truth.difference(from: truth))")
        #expect(stored.rejected == Int64(invalid))
        #expect(positions.contains { $0 > 0 }, "at least one kill came after a committed batch: \(positions)")
    }

    @Test func republishingToKafkaFillsAFreshClusterThatServeIngestsExactly() async throws {
        let plain = try Self.generate("republish.ndjson", events: 20_000)
        let broker = try DevBroker(topics: ["streams", "revenue", "social", "page"], partitions: 4)
        let result = try Self.run(["replay", "--to-kafka", "--brokers", broker.bootstrapServers, plain])
        #expect(result.status == 0, "\(result.output)")
        let (truth, invalid) = try Self.truth(ofPlainFile: plain)
        #expect(result.output.contains("\(invalid) rejected"), "\(result.output)")

        let database = try await TestEnvironment.freshDatabase("republished")
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--topics", "streams,revenue,social,page"])
        try await service.waitUntilHealthy()
        let lines = try Data(contentsOf: URL(fileURLWithPath: plain)).filter { $0 == UInt8(ascii: "\n") }.count
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "every valid event to be flushed") {
                try await storedOffsetTotal(store.client) == Int64(lines - invalid)
            }
        }
        let stored = try await Self.stored(database)
        #expect(stored.truth == truth, "\(stored.truth.difference(from: truth))")
        #expect(stored.rejected == 0, "invalid lines are not republished")
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
