import BackbeatCore
import BackbeatKafka
import BackbeatStore
import BackbeatTestSupport
import Foundation
import Testing

/// A stored offset that falls off the broker: the dev broker keeps about 5 MB per partition, so events published
/// past that while no instance runs delete the oldest unread. The gap must be recorded (row, error log, metric,
/// `/readyz`) with its exact range, and consumption goes on from the log's start or waits for an operator.
@Suite(.serialized) struct OffsetGapTests {
    /// The stream events of a generated workload, all published to streams/0: the first `before` while an
    /// instance consumes, the rest (about 10 MB) while none does.
    struct Scenario {
        static let before = 1_000
        static let after = 40_000
        let broker: DevBroker
        let database: String
        let messages: [EventGenerator.Message]

        init(_ name: String) async throws {
            broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 1)
            database = try await TestEnvironment.freshDatabase(name)
            var generator = EventGenerator(.init(seed: 34, artists: 6, days: 5, start: CivilDate(year: 2026, month: 10, day: 1)))
            var streams: [EventGenerator.Message] = []
            while streams.count < Self.before + Self.after {
                let message = generator.next()
                if message.topic == .stream { streams.append(message) }
            }
            messages = streams
        }

        func publish(_ range: Range<Int>) throws {
            let producer = try KafkaProducer(brokers: broker.bootstrapServers)
            for message in messages[range] {
                try producer.send(topic: "streams", key: Array(message.key.utf8), value: message.value, partition: 0)
            }
            let deliveries = try producer.flush()
            #expect(deliveries.failed == 0)
        }

        var partition: TopicPartition { TopicPartition(topic: "streams", partition: 0) }

        /// Consumes the first events, stops, publishes the rest: answers the broker's log start and end after.
        func stopAndOverflow(store: Store, arguments: [String]) async throws -> (low: Int64, high: Int64) {
            let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: arguments)
            try await service.waitForLog("partitions assigned")
            try publish(0..<Self.before)
            try await waitForStoredOffset(Int64(Self.before), store: store)
            #expect(service.terminate() == 0)
            try publish(Self.before..<messages.count)
            let log = try brokerLogOffsets(brokers: broker.bootstrapServers, partition: partition)
            try #require(log.high == Int64(messages.count))
            try #require(log.low > Int64(Self.before), "the dev broker kept every message: nothing to test")
            return log
        }

        func waitForStoredOffset(_ offset: Int64, store: Store, timeout: Duration = .seconds(60)) async throws {
            try await waitUntil(timeout: timeout, "streams/0's stored offset to reach \(offset)") {
                try await store.storedOffsets(for: [partition])[partition] == offset
            }
        }

        /// The aggregates of the events at the offsets the broker still had, and of those consumed before.
        func expectCounted(logStart: Int64, store: Store) async throws {
            let counted = messages[0..<Self.before] + messages[Int(logStart)...]
            let stored = try await GroundTruth.read(from: store)
            let expected = Workload(messages: Array(counted)).truth
            #expect(stored == expected, "\(stored.difference(from: expected))")
        }
    }

    @Test func aGapIsRecordedWithItsExactRangeAndConsumptionResumesAtTheLogStart() async throws {
        let scenario = try await Scenario("gap_resume")
        try await TestEnvironment.withStore(url: scenario.database) { store in
            let log = try await scenario.stopAndOverflow(store: store, arguments: [])
            let service = try ServiceProcess(brokers: scenario.broker.bootstrapServers, postgresURL: scenario.database)
            try await scenario.waitForStoredOffset(log.high, store: store)
            let first = Int64(Scenario.before)
            let last = log.low - 1

            let gaps = try await store.offsetGaps()
            #expect(gaps.count == 1)
            #expect(gaps.first?.topicPartition == scenario.partition)
            #expect(gaps.first?.firstMissing == first)
            #expect(gaps.first?.lastMissing == last)
            #expect(gaps.first?.resumedFrom == log.low)
            #expect(gaps.first?.resumedAt != nil)
            #expect(service.log().contains("messages are missing: streams/0 offsets \(first)-\(last) were deleted"))

            let metrics = prometheusSamples(String(decoding: try await HTTP.get(service.baseURL + "/metrics", token: nil).body, as: UTF8.self))
            #expect(metrics.total("backbeat_offset_gaps_total", "topic=\"streams\"") == 1)
            #expect(metrics.total("backbeat_offset_gap_messages_total", "topic=\"streams\"") == Double(log.low - first))
            let ready = try await HTTP.get(service.baseURL + "/readyz", token: nil).json() as? [String: Any]
            let reported = (ready?["offset_gaps"] as? [[String: Any]])?.first
            #expect(reported?["first_missing"] as? Int == Int(first))
            #expect(reported?["last_missing"] as? Int == Int(last))
            #expect(reported?["resumed_from"] as? Int == Int(log.low))
            #expect(ready?["status"] as? String == "ready")

            try await scenario.expectCounted(logStart: log.low, store: store)
            print("offset gap: streams/0 offsets \(first)-\(last) deleted unread (\(log.low - first) of \(log.high)), recorded, consumed on from \(log.low)")
            #expect(service.terminate() == 0)
        }
        withExtendedLifetime(scenario.broker) {}
    }

    @Test func withTheStopPolicyThePartitionWaitsUntilAnOperatorResetsIt() async throws {
        let scenario = try await Scenario("gap_stop")
        try await TestEnvironment.withStore(url: scenario.database) { store in
            let arguments = ["--offset-gap-policy", "stop"]
            let log = try await scenario.stopAndOverflow(store: store, arguments: arguments)
            let service = try ServiceProcess(brokers: scenario.broker.bootstrapServers, postgresURL: scenario.database, arguments: arguments)
            let first = Int64(Scenario.before)
            try await service.waitForLog("the partition waits until `backbeat offsets reset`")
            try await waitUntil(timeout: .seconds(30), "the waiting gap to be stored") {
                try await store.offsetGaps(waitingOnly: true).count == 1
            }
            let waiting = try await store.offsetGaps(waitingOnly: true).first
            #expect(waiting?.firstMissing == first)
            #expect(waiting?.lastMissing == log.low - 1)
            #expect(waiting?.resumedFrom == nil)
            #expect(service.log().contains("messages are missing: streams/0 offsets \(first)-\(log.low - 1); the partition waits"))
            let ready = try await HTTP.get(service.baseURL + "/readyz", token: nil).json() as? [String: Any]
            #expect(ready?["status"] as? String == "degraded")
            #expect(ready?["ingest"] as? String == "waiting_at_gap")
            #expect(((ready?["waiting_partitions"] as? [[String: Any]])?.first?["first_missing"]) as? Int == Int(first))
            let metrics = prometheusSamples(String(decoding: try await HTTP.get(service.baseURL + "/metrics", token: nil).body, as: UTF8.self))
            #expect(metrics.total("backbeat_offset_gap_messages_total", "topic=\"streams\"") == Double(log.low - first))
            // It waits: nothing past the gap is counted.
            try await Task.sleep(for: .seconds(2))
            #expect(try await store.storedOffsets(for: [scenario.partition])[scenario.partition] == first)

            let reset = try runToCompletion(try TestEnvironment.binary, [
                "offsets", "reset", "--topic", "streams", "--partition", "0", "--to", "earliest", "--brokers", scenario.broker.bootstrapServers,
            ], environment: ["BACKBEAT_POSTGRES_URL": scenario.database,
                             "BACKBEAT_MIGRATIONS_DIR": TestEnvironment.packageRoot.appendingPathComponent("sql").path])
            #expect(reset.status == 0, "\(reset.output)")
            #expect(reset.output.contains("streams/0: stored offset \(first) -> \(log.low); 1 waiting gap(s) resumed"))
            try await scenario.waitForStoredOffset(log.high, store: store)
            let resumed = try await store.offsetGaps().first
            #expect(resumed?.resumedFrom == log.low)
            #expect(try await store.offsetGaps(waitingOnly: true).isEmpty)
            try await scenario.expectCounted(logStart: log.low, store: store)
            try await waitUntil(timeout: .seconds(10), "/readyz to say ready again") {
                (try await HTTP.get(service.baseURL + "/readyz", token: nil).json() as? [String: Any])?["status"] as? String == "ready"
            }
            #expect(service.terminate() == 0)
        }
        withExtendedLifetime(scenario.broker) {}
    }
}
