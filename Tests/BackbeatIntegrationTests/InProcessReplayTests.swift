import BackbeatArchive
import BackbeatCore
import BackbeatReplay
import BackbeatStore
import BackbeatTestSupport
import Foundation
import Testing

/// Replay and rebuild through the `BackbeatReplay` library, in this process, against the real PostgreSQL: what
/// the `replay` and `rebuild` commands run, with the clock injected instead of waited for.
@Suite(.serialized) struct InProcessReplayTests {
    /// Remembers every input's final report.
    struct Reports: ReplayObserver {
        var finished: [ReplayReport] = []
        var progressCalls = 0
        mutating func read(_ report: ReplayReport, bytesRead: Int, of size: Int?) { progressCalls += 1 }
        mutating func finished(_ report: ReplayReport) { finished.append(report) }
    }

    static func writeFile(_ lines: [[UInt8]]) throws -> String {
        let path = NSTemporaryDirectory() + "backbeat-inprocess-\(UInt32.random(in: 0...UInt32.max)).ndjson"
        try Data(lines.flatMap { $0 + [UInt8(ascii: "\n")] }).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A replay counts in the zones it read at its start: when a zone was set since, its batch is refused
    /// (`ZonesChanged`) and the replay stops saying so, nothing of that batch applied; run again with the zones recorded
    /// now, it applies the input in them.
    @Test func aReplayCountedInZonesSinceChangedStopsAndRunsAgainInTheNewOnes() async throws {
        let workload = Workload(events: 3_000, seed: 33, invalidFraction: 0)
        let path = try Self.writeFile(workload.messages.compactMap(\.value))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await TestEnvironment.freshDatabase("inprocess_replay_zones")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let stale = Replayer(batchLines: 1_000)
            _ = try await store.setZone(try #require(ZoneName("Asia/Kathmandu")), of: "artist-0001") { try SystemZones.rules($0) }
            var reports = Reports()
            do {
                _ = try await stale.replay(path, store: store, observer: &reports)
                Issue.record("a replay counted in the zones before the set was applied")
            } catch let error as ReplayError {
                #expect(error.description.contains("an artist's zone was set during the replay"), "\(error)")
            }
            for try await positions in try await store.client.query("SELECT count(*)::bigint FROM kafka_offsets").decode(Int64.self) {
                #expect(positions == 0, "nothing of the refused batch applied")
            }
            var current = Replayer(batchLines: 1_000)
            let kathmandu = try SystemZones.rules("Asia/Kathmandu")
            current.zones = ArtistZones(["artist-0001": kathmandu], generation: try await store.recordedZones().generation)
            let report = try await current.replay(path, store: store, observer: &reports)
            #expect(report.accepted == workload.messages.count)
        }
    }

    @Test func aPlainFileIsAppliedOnceAndItsReportSaysWhatHappened() async throws {
        // About 4 MB: lines cross the boundaries of the 1 MB reads, with a partial line carried into each read.
        let generated = Workload(events: 16_000, seed: 31, invalidFraction: 0.02)
        let workload = Workload(messages: generated.messages.filter { $0.value != nil })
        let path = try Self.writeFile(workload.messages.map { $0.value! })
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await TestEnvironment.freshDatabase("inprocess_replay")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            // Small batches: several transactions, each moving the stored position.
            let replayer = Replayer(batchLines: 1_000)
            var reports = Reports()
            let first = try await replayer.replay(path, store: store, observer: &reports)
            #expect(first.lines == Int64(workload.messages.count))
            #expect(first.accepted == workload.messages.count - workload.invalidCount)
            #expect(first.rejectedCount == workload.invalidCount && workload.invalidCount > 0)
            #expect(first.alreadyApplied == 0)
            #expect(reports.finished.count == 1 && reports.progressCalls > 0)
            guard case .plain(let identity) = first.kind else { Issue.record("\(first.kind)"); return }
            #expect(identity == (try InputIdentity.of(path: path)))

            let second = try await replayer.replay(path, store: store, observer: &reports)
            #expect(second.alreadyApplied == Int64(workload.messages.count))
            #expect(second.accepted == 0 && second.rejectedCount == 0)

            let stored = try await GroundTruth.read(from: store)
            #expect(stored == workload.truth, "\(stored.difference(from: workload.truth))")
            #expect(try await rejectedCount(store.client).total == Int64(workload.invalidCount))
        }
    }

    /// A plain input's lines are judged against one clock, its first replay's, by the replay and by a rebuild: a
    /// line more than an hour ahead of the replay's clock is rejected by both, though it is in the past by the time
    /// the rebuild runs.
    @Test func aRebuildJudgesAPlainInputsLinesByItsReplaysClock() async throws {
        let replayClock = Timestamp.wallClock() + -3 * 3600
        let ahead = replayClock + (EventDecoder.maxFutureSkewSeconds + 20)
        func line(_ id: String, _ at: Timestamp) -> [UInt8] {
            Array(#"{"event_id":"\#(id)","type":"stream","occurred_at":"\#(RFC3339.format(at))","artist_id":"artist-clock","track_id":"t1","platform":"spotify","duration_ms":31000}"#.utf8)
        }
        let path = try Self.writeFile([line("past", replayClock + -7200), line("then", replayClock), line("ahead", ahead)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await TestEnvironment.freshDatabase("inprocess_clock")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var replayer = Replayer(batchLines: 2)
            replayer.clock = { replayClock }
            var reports = Reports()
            let report = try await replayer.replay(path, store: store, observer: &reports)
            #expect(report.accepted == 2 && report.rejected[.futureTimestamp] == 1)
            let replayed = try await GroundTruth.read(from: store)

            let days = (replayClock + -7200).daysSinceEpoch...ahead.daysSinceEpoch
            try await Self.rebuild(store, days: days, from: path)
            let rebuilt = try await GroundTruth.read(from: store)
            #expect(rebuilt == replayed, "\(rebuilt.difference(from: replayed))")
            #expect(rebuilt.streams.values.map { $0[0] }.reduce(0, +) == 2)
        }
    }

    /// A file's replay decodes its lines while the file's identity is computed, as if it were the file's first; when
    /// an earlier run had stored the file's clock (and was stopped before its first commit) or its position, the
    /// replay starts over from them.
    @Test func aReplayStartsOverFromWhatAnEarlierRunStored() async throws {
        let earlierClock = Timestamp.wallClock() + -5 * 3600
        let ahead = earlierClock + (EventDecoder.maxFutureSkewSeconds + 20)
        func line(_ id: String, _ at: Timestamp) -> [UInt8] {
            Array(#"{"event_id":"\#(id)","type":"stream","occurred_at":"\#(RFC3339.format(at))","artist_id":"artist-restart","track_id":"t1","platform":"spotify","duration_ms":31000}"#.utf8)
        }
        let path = try Self.writeFile([line("then", earlierClock), line("ahead", ahead), line("later", earlierClock + 60)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await TestEnvironment.freshDatabase("inprocess_restart")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let position = TopicPartition(topic: "replay:" + (try InputIdentity.of(path: path)), partition: 0)
            #expect(try await store.replayClock(for: position, now: earlierClock) == earlierClock)
            // By this run's own clock (now), the line "ahead" is in the past and would count.
            let replayer = Replayer(batchLines: 1)
            var reports = Reports()
            let report = try await replayer.replay(path, store: store, observer: &reports)
            #expect(report.accepted == 2 && report.rejected[.futureTimestamp] == 1 && report.alreadyApplied == 0)
            #expect(try await store.storedOffsets(for: [position]) == [position: 3])
            #expect(try await GroundTruth.read(from: store).streams.values.map { $0[0] }.reduce(0, +) == 2)

            // Again, with the stored clock as this run's own: only the stored position says the file was replayed.
            var again = Replayer(batchLines: 1)
            again.clock = { earlierClock }
            let second = try await again.replay(path, store: store, observer: &reports)
            #expect(second.alreadyApplied == 3 && second.accepted == 0)
            #expect(try await GroundTruth.read(from: store).streams.values.map { $0[0] }.reduce(0, +) == 2)
        }
    }

    /// Rebuilds `days` from the input at `path`, as `backbeat rebuild` does.
    static func rebuild(_ store: Store, days: ClosedRange<Int64>, from path: String, checkingCoverage: Bool = true) async throws {
        try await store.rebuild(fromDay: days.lowerBound, toDay: days.upperBound) { inputs in
            var rollup = IntervalRollup(days: days, counted: inputs)
            try rollup.read(path)
            if checkingCoverage { try rollup.checkCoverage() }
            return (rollup.delta, rollup.events)
        }
    }

    /// Every day a default `Workload` has events on, with a margin.
    static let workloadDays = RFC3339.parseDate("2026-09-25")!.daysSinceEpoch...RFC3339.parseDate("2026-10-20")!.daysSinceEpoch

    /// Valid generated lines, more than `InputIdentity.headBytes` in all: an input named by its head.
    static func linesBeyondTheHead(_ count: Int, seed: UInt64) -> [EventGenerator.Message] {
        let messages = Workload(events: count, seed: seed).messages.filter { $0.value != nil }
        #expect(messages.reduce(0) { $0 + $1.value!.count + 1 } > InputIdentity.headBytes + 200_000)
        return messages
    }

    /// An input named by its head resumes after the lines applied when it grew (lines appended, or a damaged file
    /// repaired), and is refused when its lines up to the stored position are not the ones applied: nothing is
    /// counted twice or skipped.
    @Test func anInputThatGrewResumesAndOneEditedBeforeItsPositionIsRefused() async throws {
        let messages = Self.linesBeyondTheHead(9_000, seed: 41)
        let applied = Array(messages.prefix(7_000))
        let first = try Self.writeFile(applied.map { $0.value! })
        let grown = try Self.writeFile(messages.map { $0.value! })
        // One line changed past the head, before the stored position: the same name, other lines.
        var edited = applied.map { $0.value! }
        edited[6_000] = edited[6_001]
        let editedPath = try Self.writeFile(edited)
        defer { for file in [first, grown, editedPath] { try? FileManager.default.removeItem(atPath: file) } }
        #expect(try InputIdentity.of(path: first) == (try InputIdentity.of(path: grown)))
        #expect(try InputIdentity.of(path: first) == (try InputIdentity.of(path: editedPath)))
        let database = try await TestEnvironment.freshDatabase("inprocess_grown")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var reports = Reports()
            _ = try await Replayer(batchLines: 2_500).replay(first, store: store, observer: &reports)
            #expect(try await GroundTruth.read(from: store) == Workload(messages: applied).truth)

            await #expect(throws: ReplayError.self) {
                var reports = Reports()
                _ = try await Replayer(batchLines: 2_500).replay(editedPath, store: store, observer: &reports)
            }
            #expect(try await GroundTruth.read(from: store) == Workload(messages: applied).truth, "nothing of the edited input counts")

            let report = try await Replayer(batchLines: 2_500).replay(grown, store: store, observer: &reports)
            #expect(report.alreadyApplied == 7_000 && report.accepted == messages.count - 7_000)
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == Workload(messages: messages).truth, "\(stored.difference(from: Workload(messages: messages).truth))")

            // A rebuild counts the grown input as the replay did, and refuses the edited one.
            let days = Self.workloadDays
            try await Self.rebuild(store, days: days, from: grown)
            #expect(try await GroundTruth.read(from: store) == stored)
            await #expect(throws: ReplayError.self) {
                try await Self.rebuild(store, days: days, from: editedPath, checkingCoverage: false)
            }
        }
    }

    /// A position stored by a version that named files by their whole content (no hash of its lines) is found
    /// under that name, by a replay and by a rebuild.
    @Test func aPositionNamedByTheWholeContentIsStillFound() async throws {
        let messages = Self.linesBeyondTheHead(7_000, seed: 43)
        let path = try Self.writeFile(messages.map { $0.value! })
        defer { try? FileManager.default.removeItem(atPath: path) }
        let head = "replay:" + (try InputIdentity.of(path: path))
        let whole = "replay:" + (try InputIdentity.ofWholeContent(path: path))
        #expect(head != whole)
        let database = try await TestEnvironment.freshDatabase("inprocess_whole")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var reports = Reports()
            _ = try await Replayer(batchLines: 3_000).replay(path, store: store, observer: &reports)
            let truth = Workload(messages: messages).truth
            // What the earlier version left: the position and clock under the whole content's name, no hash.
            try await store.client.query(
                "UPDATE kafka_offsets SET topic = \(whole), applied_lines_hash = NULL WHERE topic = \(head)")
            try await store.client.query("UPDATE replay_clocks SET input = \(whole) WHERE input = \(head)")

            let again = try await Replayer(batchLines: 3_000).replay(path, store: store, observer: &reports)
            #expect(again.alreadyApplied == Int64(messages.count) && again.accepted == 0)
            let stored = try await GroundTruth.read(from: store)
            #expect(stored == truth, "\(stored.difference(from: truth))")
            let days = Self.workloadDays
            try await Self.rebuild(store, days: days, from: path)
            #expect(try await GroundTruth.read(from: store) == truth)
        }
    }

    /// A rebuild refuses inputs that miss what the database counted, and changes nothing.
    @Test func aRebuildWithoutTheReplayedFileChangesNothing() async throws {
        let path = try Self.writeFile([Array(#"{"event_id":"e1","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist-1","track_id":"t1","platform":"spotify","duration_ms":31000}"#.utf8)])
        let other = try Self.writeFile([])
        defer { for file in [path, other] { try? FileManager.default.removeItem(atPath: file) } }
        let database = try await TestEnvironment.freshDatabase("inprocess_coverage")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            var reports = Reports()
            _ = try await Replayer(batchLines: 10).replay(path, store: store, observer: &reports)
            let before = try await GroundTruth.read(from: store)
            let day = RFC3339.parseDate("2026-10-02")!.daysSinceEpoch
            await #expect(throws: ReplayError.self) {
                try await Self.rebuild(store, days: day...day, from: other)
            }
            #expect(try await GroundTruth.read(from: store) == before)
        }
    }
}
