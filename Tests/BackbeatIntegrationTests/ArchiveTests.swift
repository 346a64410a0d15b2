import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import PostgresNIO
import Testing

/// `serve --archive-dir` keeps every consumed message exactly once, and replaying its archive rebuilds the same
/// aggregates without ever counting against live ingestion twice.
@Suite(.serialized) struct ArchiveTests {
    /// Every message line of the archive below `directory`, in file order, and the names of files still open.
    static func archivedMessages(in directory: String) throws -> (messages: [ArchivedMessage], open: [String]) {
        var messages: [ArchivedMessage] = []
        var open: [String] = []
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory))
        while let relative = enumerator.nextObject() as? String {
            if relative.hasSuffix(ArchiveWriter.openSuffix) { open.append(relative) }
        }
        for path in try InputPaths.expand([directory]) {
            let reader = try InputReader(path: path)
            var assembler = LineAssembler()
            while let chunk = try reader.next() {
                try assembler.block(chunk).forEachLine { line in
                    if case .message(let message) = try ArchiveLine.decode(line) { messages.append(message) }
                }
            }
        }
        return (messages, open)
    }

    /// Listener sketch cardinalities per artist (and track) and day, as PostgreSQL computes them.
    static func listenerCardinalities(_ client: PostgresClient) async throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let rows = try await client.query("""
            SELECT artist_id || '/' || day::text, hll_cardinality(listeners)::bigint FROM artist_listeners_daily
            UNION ALL
            SELECT artist_id || '/' || track_id || '/' || day::text, hll_cardinality(listeners)::bigint FROM track_listeners_daily
            """)
        for try await (key, value) in rows.decode((String, Int64).self) { result[key] = value }
        return result
    }

    @Test(.seeded) func anArchiveWrittenByServeThroughCrashesReplaysIntoAnEmptyDatabaseAsTheLiveOne() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let live = try await TestEnvironment.freshDatabase("archive_live")
        let archive = NSTemporaryDirectory() + "backbeat-archive-\(UInt32.random(in: 0...UInt32.max))"
        let workload = Workload(events: 30_000, seed: 21, invalidFraction: 0.01)
        let chunks = 4
        let chunkSize = workload.messages.count / chunks
        // Small segments, so that segments are sealed by size while the service runs, and crashes leave some open.
        let arguments = ["--archive-dir", archive, "--archive-segment-size", "64KB"]

        try await TestEnvironment.withStore(url: live) { store in
            var logs: [String] = []
            var random = TestRandom()
            var service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: live, flushInterval: "200ms", arguments: arguments)
            for chunk in 0..<chunks {
                try await service.waitForLog("partitions assigned")
                let committedBefore = try await storedOffsetTotal(store.client)
                try workload.publish(chunk * chunkSize..<(chunk + 1) * chunkSize, to: broker.bootstrapServers)
                guard chunk < chunks - 1 else { break }
                // Kill at a random moment once this instance has committed a flush of this chunk: its segments are
                // then open with committed frames (the small revenue and social ones never reach the segment size),
                // and more flushes may be under way.
                try await waitUntil(timeout: .seconds(60), "a committed flush of chunk \(chunk)") {
                    try await storedOffsetTotal(store.client) > committedBefore
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...600, using: &random)))
                service.kill()
                logs.append(service.log())
                service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: live, flushInterval: "200ms", arguments: arguments)
            }
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
            #expect(service.terminate() == 0)
            logs.append(service.log())
            let repaired = logs.filter { $0.contains("archive: repaired the segments left open by the last run") }.count
            #expect(repaired >= 1, "restarts after a kill repaired the open segments (\(repaired) of \(chunks - 1))")
        }

        // The archive holds each consumed message once: no gap, no duplicate, nothing left open after a clean stop.
        let (messages, open) = try Self.archivedMessages(in: archive)
        #expect(open.isEmpty, "open segments after a clean stop: \(open)")
        #expect(messages.count == workload.messages.count, "archived \(messages.count) of \(workload.messages.count) messages")
        #expect(Set(messages.map(\.message.position)).count == messages.count, "no message archived twice")
        let segments = try InputPaths.expand([archive]).count
        #expect(segments > 12, "segments were sealed by size: \(segments)")

        // Replayed into an empty database: the same aggregates, sketches and rejections as the live database.
        let fresh = try await TestEnvironment.freshDatabase("archive_replayed")
        let replay = try ReplayTests.run(["replay", "--batch-lines", "5000", archive], postgresURL: fresh)
        #expect(replay.status == 0, "\(replay.output)")
        let (liveTruth, liveRejected, liveListeners, liveCubes) = try await Self.everything(live)
        let (replayedTruth, replayedRejected, replayedListeners, replayedCubes) = try await Self.everything(fresh)
        #expect(replayedCubes == liveCubes, "every cube row equal")
        #expect(replayedTruth == liveTruth, "\(replayedTruth.difference(from: liveTruth))")
        #expect(replayedTruth == workload.truth)
        #expect(replayedRejected == liveRejected && liveRejected == Int64(workload.invalidCount))
        #expect(replayedListeners == liveListeners && !liveListeners.isEmpty)

        // Replayed into the live database: its stored offsets cover every message, nothing is counted again.
        let again = try ReplayTests.run(["replay", archive], postgresURL: live)
        #expect(again.status == 0, "\(again.output)")
        #expect(!again.output.contains("applied to PostgreSQL"), "\(again.output)")
        let after = try await Self.everything(live)
        #expect(after.truth == liveTruth && after.rejected == liveRejected && after.listeners == liveListeners && after.cubes == liveCubes)
        withExtendedLifetime(broker) {}
    }

    /// A flush whose COMMIT landed but whose answer was lost keeps its archive frames (PostgreSQL counted their
    /// messages): the archive still holds every message once, and a replay of it counts what the live one counts.
    @Test func aFlushWhoseCommitAnswerIsLostKeepsItsArchivedMessages() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let live = try await TestEnvironment.freshDatabase("archive_lost_answer")
        let proxy = try CommitAnswerLosingProxy(postgresURL: live)
        defer { proxy.close() }
        let archive = NSTemporaryDirectory() + "backbeat-archive-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: archive) }
        let workload = Workload(events: 6_000, seed: 27, invalidFraction: 0.01)
        let half = workload.messages.count / 2
        try await TestEnvironment.withStore(url: live) { store in
            let service = try ServiceProcess(
                brokers: broker.bootstrapServers, postgresURL: proxy.url, flushInterval: "200ms",
                arguments: ["--archive-dir", archive])
            try await service.waitForLog("partitions assigned")
            // First the very first flush loses its answer: its frames open the segments, and its retry starts where
            // they start. Then a flush in the middle of the segments does.
            for (round, range) in [0..<half, half..<workload.messages.count].enumerated() {
                proxy.arm()
                try workload.publish(range, to: broker.bootstrapServers)
                try await waitUntil(timeout: .seconds(60), "the messages of round \(round) counted (log: \(service.logPath))") {
                    try await storedOffsetTotal(store.client) == Int64(range.upperBound)
                }
                #expect(proxy.answersLost == round + 1)
            }
            // The next flush, or the stop, settles the archive; the stop seals it.
            #expect(service.terminate() == 0)
            let kept = service.log().components(separatedBy: "archive: the failed flush had committed (its answer was lost); its frames stay").count - 1
            #expect(kept == 2, "\(service.log())")
            // The partitions of a flush that had committed are sought again at once, not written again to conflict.
            #expect(!service.log().contains("offset conflict"), "\(service.log())")
            // (The first assignment found no offset stored: only a seek after a flush names a stored one.)
            let sought = service.log().split(separator: "\n").filter { $0.hasSuffix("consuming partitions from their stored offsets") }
            #expect(sought.contains { $0.contains(/partitions=[^ ]*:[0-9]/) }, "\(sought)")
        }
        let (messages, open) = try Self.archivedMessages(in: archive)
        #expect(open.isEmpty, "left open: \(open)")
        #expect(messages.count == workload.messages.count, "archived \(messages.count) of \(workload.messages.count) messages")
        #expect(Set(messages.map(\.message.position)).count == messages.count, "no message archived twice")
        let replayed = try await TestEnvironment.freshDatabase("archive_lost_answer_replayed")
        let replay = try ReplayTests.run(["replay", archive], postgresURL: replayed)
        #expect(replay.status == 0, "\(replay.output)")
        let (liveAll, replayedAll) = (try await Self.everything(live), try await Self.everything(replayed))
        #expect(liveAll.truth == workload.truth, "\(liveAll.truth.difference(from: workload.truth))")
        #expect(replayedAll.truth == liveAll.truth && replayedAll.rejected == liveAll.rejected)
        withExtendedLifetime(broker) {}
    }

    @Test func aGeneratedArchiveReplaysOnceAndRefusesAGapInAPartition() async throws {
        let (directory, workload) = try Self.generateArchive(seed: 3)
        let database = try await TestEnvironment.freshDatabase("archive_generated")
        for _ in 0..<2 {
            let result = try ReplayTests.run(["replay", directory], postgresURL: database)
            #expect(result.status == 0, "\(result.output)")
        }
        let stored = try await Self.everything(database)
        #expect(stored.truth == workload.truth, "\(stored.truth.difference(from: workload.truth))")
        #expect(stored.rejected == Int64(workload.invalidCount))

        // A run that starts after the stored offset would skip messages for good: replay refuses it.
        let segment = try #require(try InputPaths.expand([directory]).first { $0.contains("/streams/") })
        let gapDatabase = try await TestEnvironment.freshDatabase("archive_gap")
        try await TestEnvironment.withStore(url: gapDatabase) { store in
            _ = try await store.migrate(try TestEnvironment.migrations())
            let partition = Int32(URL(fileURLWithPath: segment).deletingLastPathComponent().lastPathComponent)!
            try await store.client.query("INSERT INTO kafka_offsets (topic, partition, next_offset) VALUES ('streams', \(partition), 0)")
        }
        let shifted = segment + ".shifted.ndjson"
        let original = try String(decoding: Self.decompress(segment), as: UTF8.self)
        try original.replacingOccurrences(of: "\"from_offset\":null", with: "\"from_offset\":500").write(toFile: shifted, atomically: true, encoding: .utf8)
        let refused = try ReplayTests.run(["replay", shifted], postgresURL: gapDatabase)
        #expect(refused.status != 0)
        #expect(refused.output.contains("replay the archive's earlier segments first"), "\(refused.output)")
    }

    /// `generate --archive` into a fresh directory, with the `Workload` of the same events (a third of the valid ones
    /// page events).
    static func generateArchive(seed: UInt64, events: Int = 12_000) throws -> (directory: String, workload: Workload) {
        let directory = NSTemporaryDirectory() + "backbeat-archive-\(UInt32.random(in: 0...UInt32.max))"
        let generated = try ReplayTests.run(["generate", "--events", String(events), "--seed", String(seed), "--artists", "8", "--days", "10",
                                             "--start", "2026-10-01", "--invalid-fraction", "0.01", "--page-fraction", "0.3",
                                             "--archive", directory])
        #expect(generated.status == 0, "\(generated.output)")
        return (directory, Workload(events: events, seed: seed, invalidFraction: 0.01, pageFraction: 0.3))
    }

    static func decompress(_ path: String) throws -> [UInt8] {
        let reader = try InputReader(path: path)
        var bytes: [UInt8] = []
        while let chunk = try reader.next() { bytes += chunk }
        return bytes
    }

    static func everything(_ database: String) async throws -> (truth: GroundTruth, rejected: Int64, listeners: [String: Int64], cubes: [String: String]) {
        try await TestEnvironment.withStore(url: database) { store in
            (try await GroundTruth.read(from: store), try await rejectedCount(store.client).total,
             try await listenerCardinalities(store.client), try await cubeDigests(store.client))
        }
    }

    /// A digest of every row of every cube table (the dashboards' answers come from these), by table.
    static func cubeDigests(_ client: PostgresClient) async throws -> [String: String] {
        var digests: [String: String] = [:]
        for cube in Cube.all {
            let rows = try await client.query(PostgresQuery(unsafeSQL:
                "SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM \(cube.table) t"))
            for try await digest in rows.decode(String.self) { digests[cube.table] = digest }
        }
        return digests
    }
}
