import BackbeatCore
import BackbeatKafka
import BackbeatStore
import BackbeatTestSupport
import Foundation
import PostgresNIO
import Testing

/// Producers resend: every event is counted once within its window, whether the resend reaches the instance that
/// counted the event, the same instance after a SIGKILL, another instance the partition moved to, or a replay of
/// the archive; an event under a counted id with other fields is rejected; one older than the window is counted.
@Suite(.serialized) struct DedupTests {
    static let partitions: Int32 = 8
    /// The windows the instances run with: short for social and page events, so that many events arrive beyond them.
    static let spans = DedupSpans(stream: 48 * 3600, revenue: 30 * 86400, social: 12 * 3600, page: 6 * 3600)
    static let arguments = ["--dedup-stream-window", "48h", "--dedup-revenue-window", "30d", "--dedup-social-window", "12h",
                            "--dedup-page-window", "6h"]

    /// A message as published: to an explicit partition (its event id's, as a producer keying by event id would: a
    /// resend goes where its event went, and the dev broker's partitions, which keep about 5 MB each, fill evenly),
    /// with the event it encodes (nil: invalid).
    struct Published {
        var topic: String
        var partition: Int32
        var key: String
        var value: [UInt8]
        var event: Event?
    }

    /// 90,000 generated messages over three days (a fifth of the valid ones page events), with 9,000 resends of earlier ones (half the same bytes, half with
    /// white space and a field Backbeat ignores added) and 1,000 events under an earlier event's id with an
    /// `occurred_at` ten seconds apart, each up to 20,000 messages after the one it copies.
    static func messages() -> [Published] {
        var generator = EventGenerator(.init(
            seed: 39, artists: 12, days: 3, start: CivilDate(year: 2026, month: 10, day: 1), invalidFraction: 0.005, pageFraction: 0.2))
        var random = TestRandom(seed: 39, stream: "dedup")
        var published: [Published] = []
        for _ in 0..<90_000 {
            let message = generator.next()
            let topic = Workload.topic(message.topic)
            published.append(Published(
                topic: topic, partition: Int32(StableKey.hash(message.event?.eventID ?? message.key) % UInt64(partitions)), key: message.key,
                value: message.value ?? [], event: message.event))
        }
        // Each copy goes after its original, up to 20,000 messages later: ordered by a place in the originals' order.
        let valid = published.indices.filter { published[$0].event != nil }
        var placed = published.enumerated().map { (place: Double($0.offset), message: $0.element) }
        for copy in 0..<10_000 {
            let original = valid.randomElement(using: &random)!
            var resend = published[original]
            if copy >= 9_000 {
                resend.value = changedOccurredAt(resend.value)
                resend.event = try? EventDecoder.decode(resend.value, now: Timestamp.wallClock()).get()
            } else if copy % 2 == 1 {
                resend.value = Array("{ \"client_retry\": 1, ".utf8) + resend.value.dropFirst()
            }
            placed.append((Double(original) + Double.random(in: 0.5..<20_000, using: &random), resend))
        }
        published = placed.sorted { $0.place < $1.place }.map(\.message)
        return published
    }

    /// `value` with the tens of its `occurred_at` seconds changed: another event under the same id.
    static func changedOccurredAt(_ value: [UInt8]) -> [UInt8] {
        var bytes = value
        let marker = Array("\"occurred_at\":\"".utf8)
        guard let start = (0...(bytes.count - marker.count)).first(where: { Array(bytes[$0..<$0 + marker.count]) == marker }) else { return bytes }
        let tens = start + marker.count + 17  // YYYY-MM-DDTHH:MM:S
        bytes[tens] = bytes[tens] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        return bytes
    }

    /// What must be counted, worked out here from the messages in each partition's order: an event is counted when
    /// it is older than the window (its `occurred_at` plus its family's span before the newest counted), or when its
    /// id is not remembered (never counted, or its own expiry passed); a remembered id with the same event is a
    /// resend, with another a conflict.
    /// Answers too the newest event time counted on each partition ("topic/partition").
    static func expected(_ messages: [Published]) -> (counted: [Event], conflicts: Int, invalid: Int, resends: Int, newest: [String: Int64]) {
        struct Partition {
            var newest: Int64?
            var seen: [String: (event: Event, expires: Int64)] = [:]
        }
        var partitions: [String: Partition] = [:]
        var counted: [Event] = []
        var conflicts = 0, invalid = 0, resends = 0
        for message in messages {
            guard let event = message.event else {
                invalid += 1
                continue
            }
            let span = switch event {
            case .stream: spans.stream
            case .revenue: spans.revenue
            case .social: spans.social
            case .page: spans.page
            }
            let expires = event.occurredAt.seconds + span
            var partition = partitions["\(message.topic)/\(message.partition)", default: Partition()]
            defer { partitions["\(message.topic)/\(message.partition)"] = partition }
            if let newest = partition.newest, expires < newest {
                counted.append(event)
            } else if let seen = partition.seen[event.eventID], seen.expires >= partition.newest ?? .min {
                if seen.event == event { resends += 1 } else { conflicts += 1 }
            } else {
                counted.append(event)
                partition.seen[event.eventID] = (event, expires)
                partition.newest = max(partition.newest ?? .min, event.occurredAt.seconds)
            }
        }
        return (counted, conflicts, invalid, resends, partitions.compactMapValues(\.newest))
    }

    static func publish(_ messages: ArraySlice<Published>, to brokers: String) throws {
        let producer = try KafkaProducer(brokers: brokers)
        for message in messages {
            try producer.send(topic: message.topic, key: Array(message.key.utf8), value: message.value, partition: message.partition)
        }
        let deliveries = try producer.flush()
        guard deliveries.failed == 0 else { throw TestEnvironment.Missing(description: "\(deliveries.failed) deliveries failed") }
    }

    @Test func resendsAreCountedOnceThroughAKillAHandOverAndAReplayOfTheArchive() async throws {
        let messages = Self.messages()
        let expected = Self.expected(messages)
        #expect(expected.resends > 4_000 && expected.conflicts > 400, "the workload resends within the window and conflicts")
        #expect(expected.counted.count > 89_000 && expected.counted.count < 99_000)
        let truth = Workload(messages: expected.counted.map { EventGenerator.Message(topic: .stream, key: $0.artistID, value: nil, event: $0) })

        let broker = try DevBroker(topics: ["streams", "revenue", "social", "page"], partitions: Self.partitions)
        let database = try await TestEnvironment.freshDatabase("dedup")
        let archives = (0..<2).map { NSTemporaryDirectory() + "backbeat-dedup-archive-\($0)-\(UInt32.random(in: 0...UInt32.max))" }
        func start(_ instance: Int) throws -> ServiceProcess {
            try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "dedup", flushInterval: "200ms",
                               arguments: Self.arguments + ["--archive-dir", archives[instance], "--topics", "streams,revenue,social,page"])
        }
        let third = messages.count / 3
        var first = try start(0)
        try await first.waitForLog("partitions assigned")
        try Self.publish(messages[0..<third], to: broker.bootstrapServers)
        // Killed while it consumes the second third: what it counted and flushed is remembered, the rest is counted
        // again after the restart, each event once.
        try Self.publish(messages[third..<2 * third], to: broker.bootstrapServers)
        try await Task.sleep(for: .milliseconds(700))
        first.kill()
        first = try start(0)
        try await first.waitForLog("partitions assigned")
        // A second instance joins: half the partitions move to it, with their windows.
        let second = try start(1)
        try await second.waitForLog("partitions assigned")
        try Self.publish(messages[(2 * third)...], to: broker.bootstrapServers)

        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(180), "all \(messages.count) messages to be flushed") {
                try await storedOffsetTotal(store.client) == Int64(messages.count)
            }
            let stored = try await GroundTruth.read(from: store)
            let counted = stored == truth.truth
            #expect(counted, "\(stored.difference(from: truth.truth))")
            #expect(try await Self.count("offset_gaps", store) == 0, "no message was lost on the broker")
            let reasons = try await Self.rejectedReasons(store)
            #expect(reasons["conflicting_event_id"] == expected.conflicts)
            #expect(reasons.values.reduce(0, +) == expected.conflicts + expected.invalid)
        }
        let checks = EndpointChecks(truth)
        for instance in [first, second] { try await checks.checkEverything(instance.baseURL) }
        for instance in [first, second] {
            let metrics = prometheusSamples(try await HTTP.get(instance.baseURL + "/metrics", token: nil).text)
            #expect(metrics.total("backbeat_events_duplicate_total") > 0, "resends told apart on each instance")
            #expect(metrics.total("backbeat_dedup_ids") > 0)
            #expect(metrics.total("backbeat_last_flush_age_seconds") < 60)
        }
        try await Self.checkIngestStatus(of: [first, second], expected: expected, messages: messages.count)
        #expect(first.terminate() == 0)
        #expect(second.terminate() == 0)

        // The archives hold every message once, resends included: replayed into an empty database they count what
        // the live instances counted, and a second replay counts nothing more.
        let replayed = try await TestEnvironment.freshDatabase("dedup_replayed")
        for _ in 0..<2 {
            let replay = try ReplayTests.run(["replay"] + Self.arguments + archives, postgresURL: replayed)
            #expect(replay.status == 0, "\(replay.output)")
        }
        try await TestEnvironment.withStore(url: replayed) { store in
            let stored = try await GroundTruth.read(from: store)
            let counted = stored == truth.truth
            #expect(counted, "\(stored.difference(from: truth.truth))")
            #expect(try await Self.rejectedReasons(store)["conflicting_event_id"] == expected.conflicts)
        }
        withExtendedLifetime(broker) {}
    }

    /// A plain NDJSON file goes through a window per artist: its resends are counted once and its conflicts
    /// rejected, whether it is replayed whole or first in part and then, grown, again (the resumed run reads the
    /// lines applied before into the windows); a third replay counts nothing, and a rebuild from the file counts the
    /// same.
    @Test func aPlainFileIsCountedOncePerEventThroughAResumedReplayAndARebuild() async throws {
        // The same workload, each message in its artist's window (one "partition" per artist).
        let messages = Self.messages().filter { !$0.value.isEmpty }.map { message in
            Published(topic: message.event?.artistID ?? "", partition: 0, key: message.key, value: message.value, event: message.event)
        }
        let expected = Self.expected(messages)
        #expect(expected.resends > 4_000 && expected.conflicts > 400)
        let truth = Workload(messages: expected.counted.map { EventGenerator.Message(topic: .stream, key: $0.artistID, value: nil, event: $0) })

        let path = NSTemporaryDirectory() + "backbeat-dedup-plain-\(UInt32.random(in: 0...UInt32.max)).ndjson"
        defer { try? FileManager.default.removeItem(atPath: path) }
        func lines(_ part: ArraySlice<Published>) -> Data { Data(part.flatMap { $0.value + [UInt8(ascii: "\n")] }) }
        let split = messages.count * 3 / 5
        try lines(messages[..<split]).write(to: URL(fileURLWithPath: path))
        let database = try await TestEnvironment.freshDatabase("dedup_plain")
        let first = try ReplayTests.run(["replay"] + Self.arguments + [path], postgresURL: database)
        #expect(first.status == 0, "\(first.output)")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: lines(messages[split...]))
        try handle.close()
        for _ in 0..<2 {
            let again = try ReplayTests.run(["replay"] + Self.arguments + [path], postgresURL: database)
            #expect(again.status == 0, "\(again.output)")
        }
        func check(_ what: String) async throws {
            try await TestEnvironment.withStore(url: database) { store in
                let stored = try await GroundTruth.read(from: store)
                let counted = stored == truth.truth
                #expect(counted, "\(what): \(stored.difference(from: truth.truth))")
            }
        }
        try await check("replayed")
        try await TestEnvironment.withStore(url: database) { store in
            let reasons = try await Self.rejectedReasons(store)
            #expect(reasons["conflicting_event_id"] == expected.conflicts)
            #expect(reasons.values.reduce(0, +) == expected.conflicts + expected.invalid)
        }
        let rebuilt = try ReplayTests.run(["rebuild", "--from", "2026-10-01", "--to", "2026-10-03"] + Self.arguments + [path], postgresURL: database)
        #expect(rebuilt.status == 0, "\(rebuilt.output)")
        try await check("rebuilt")
    }

    /// The rows a partition's flushes store: merged once 32 are small, deleted once every id in them expired, and
    /// loaded back into the window the flushes had.
    @Test func aPartitionsStoredIDsAreMergedExpiredAndLoadedWhole() async throws {
        let database = try await TestEnvironment.freshDatabase("dedup_rows")
        try await TestEnvironment.withStore(url: database) { store in
            try await store.migrate(try TestEnvironment.migrations())
            let partition = TopicPartition(topic: "streams", partition: 0)
            let start = RFC3339.parseTimestamp("2026-10-01T00:00:00Z")!.seconds
            var window = DedupWindow()
            var offset: Int64 = 0
            func flush(_ ids: Range<UInt64>, at time: Int64) async throws {
                for id in ids { #expect(window.admit(EventFingerprint(id: id, payload: id * 7), occurredAt: time, span: 3600) == .new) }
                let part = FlushBatch.Part(
                    topicPartition: partition, generation: 0, expectedOffset: offset == 0 ? nil : offset, newOffset: offset + Int64(ids.count),
                    remembered: window.takeAdded(), newestEventTime: window.newestEventTime)
                try await store.write(FlushBatch(parts: [part]))
                offset += Int64(ids.count)
            }
            func rows() async throws -> Int { Int(try await Self.count("dedup_ids", store)) }
            for round in 0..<40 { try await flush(UInt64(round * 10)..<UInt64(round * 10 + 10), at: start + Int64(round) * 60) }
            #expect(try await rows() == 9, "the first 32 rows merged into one, 8 since")
            var loaded = try #require(try await store.storedDedupWindows(for: [partition])[partition])
            #expect(loaded.count == 400 && loaded.newestEventTime == window.newestEventTime)
            for id in UInt64(0)..<400 {
                #expect(loaded.admit(EventFingerprint(id: id, payload: id * 7), occurredAt: start + Int64(id / 10) * 60, span: 3600) == .duplicate)
            }
            // Three hours later every id stored before expired: only the new flush's row is left.
            try await flush(1000..<1001, at: start + 3 * 3600)
            #expect(try await rows() == 1)
            #expect(try await store.storedDedupWindows(for: [partition])[partition]?.count == 1)
        }
    }

    /// `/v1/ingest` of the instances sharing the partitions: each partition owned by one, at the end of its
    /// messages, with the newest event time the workload counted on it; resends and conflicts counted since each
    /// start (a message consumed again after a hand-over is counted by both instances, so no sum is exact).
    static func checkIngestStatus(of instances: [ServiceProcess], expected: (counted: [Event], conflicts: Int, invalid: Int, resends: Int, newest: [String: Int64]), messages: Int) async throws {
        var seen: [String: [String: Any]] = [:]
        var duplicates = 0, conflicts = 0, remembered = 0
        for instance in instances {
            let status = try #require(try await HTTP.get(instance.baseURL + "/v1/ingest").json() as? [String: Any])
            #expect(status["enabled"] as? Bool == true && status["last_flush_at"] is String)
            // The windows' memory as held: at least a 24-byte slot an id, at most 128 bytes an id and the ids
            // waiting for a flush (none once everything is stored).
            let dedup = try #require(status["dedup"] as? [String: Any])
            let ids = try #require(dedup["ids"] as? Int), bytes = try #require(dedup["bytes"] as? Int)
            #expect(bytes >= ids * 24 && bytes <= ids * 128 + 1_024 * 24 * Int(Self.partitions) * 4, "\(dedup)")
            remembered += ids
            for partition in try #require(status["partitions"] as? [[String: Any]]) {
                let name = "\(partition["topic"] ?? "")/\(partition["partition"] ?? "")"
                #expect(seen[name] == nil, "\(name) is owned by one instance")
                seen[name] = partition
            }
            for topic in try #require(status["topics"] as? [[String: Any]]) {
                duplicates += topic["duplicates"] as? Int ?? 0
                conflicts += topic["conflicting_event_ids"] as? Int ?? 0
            }
        }
        #expect(seen.count == 4 * Int(Self.partitions))
        #expect(seen.values.reduce(0) { $0 + ($1["stored_offset"] as? Int ?? 0) } == messages)
        for (name, newest) in expected.newest {
            #expect(seen[name]?["newest_event_time"] as? String == RFC3339.format(Timestamp(seconds: newest)), "\(name)")
            #expect((seen[name]?["event_time_lag_seconds"] as? Double ?? -1) >= 0)
        }
        #expect(duplicates > 0 && conflicts > 0 && remembered > 0)
    }

    static func count(_ table: String, _ store: Store) async throws -> Int64 {
        for try await count in try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(table)")).decode(Int64.self) {
            return count
        }
        return 0
    }

    static func rejectedReasons(_ store: Store) async throws -> [String: Int] {
        var reasons: [String: Int] = [:]
        for try await (reason, count) in try await store.client.query("SELECT reason, count(*) FROM rejected_events GROUP BY reason").decode((String, Int).self) {
            reasons[reason] = count
        }
        return reasons
    }
}

/// A hash of a message key the same in every run: which of the test's partitions an artist's messages go to.
enum StableKey {
    static func hash(_ key: String) -> UInt64 {
        key.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }
}
