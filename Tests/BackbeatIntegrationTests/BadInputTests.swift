import BackbeatCore
import BackbeatKafka
import Foundation
import PostgresNIO
import Testing

/// Malformed messages among valid ones: each is recorded in rejected_events with its reason, consumption goes on,
/// and every valid neighbour is counted.
@Suite(.serialized) struct BadInputTests {
    static func valid(_ n: Int) -> [UInt8] {
        Array(#"{"event_id":"ok-\#(n)","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist-bad","track_id":"t\#(n % 3)","platform":"spotify","duration_ms":\#(30_000 + n)}"#.utf8)
    }

    static let malformed: [(value: [UInt8]?, reason: Rejection.Reason)] = [
        (Array(#"{"event_id":"x","type":"stream""#.utf8), .invalidJSON),
        (nil, .emptyValue),
        (Array("[1,2,3]".utf8), .notObject),
        (Array("null".utf8), .notObject),
        (Array(#"{"event_id":"x","type":"stream","bad":"\#u{FF}"}"#.utf8).map { $0 == 0xC3 ? 0xFF : $0 }, .invalidJSON),
        ([0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D], .invalidJSON),
        (Array((#"{"a":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}").utf8), .invalidJSON),
        (Array((#"{"event_id":""# + String(repeating: "x", count: 70_000) + #""}"#).utf8), .tooLarge),
        (Array(#"{"event_id":"x","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a","track_id":"t","platform":"spotify","duration_ms":"long"}"#.utf8), .invalidType),
        (Array(#"{"event_id":"x","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a","track_id":"t"}"#.utf8), .missingField),
        (Array(#"{"event_id":"x","type":"stream","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a","track_id":"t","platform":"spotify"}"#.utf8), .duplicateField),
        (Array(#"{"event_id":"x","type":"stream","occurred_at":"2099-10-02T10:00:00Z","artist_id":"a","track_id":"t","platform":"spotify"}"#.utf8), .futureTimestamp),
        (Array(#"{"event_id":"x","type":"revenue","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a","source":"merch","currency":"EUR","amount":"1.1234567"}"#.utf8), .invalidValue),
        (Array(#"{"event_id":"x","type":"podcast","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a"}"#.utf8), .unknownType),
        (Array(#"{"event_id":"x","type":"social","occurred_at":"2026-10-02T10:00:00Z","artist_id":"a","platform":"x","action":"like","count":1e400}"#.utf8), .invalidValue),
    ]

    @Test func malformedMessagesAreRecordedAndValidNeighboursCounted() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 1)
        let database = try await TestEnvironment.freshDatabase("badinput")
        let producer = try KafkaProducer(brokers: broker.bootstrapServers)
        var expected: [Int64: Rejection.Reason] = [:]
        var offset: Int64 = 0
        var validCount = 0
        var listening: Int64 = 0
        for (index, bad) in Self.malformed.enumerated() {
            try producer.send(topic: "streams", key: Array("key-\(index)".utf8), value: Self.valid(index), partition: 0)
            validCount += 1
            listening += Int64(30_000 + index)
            offset += 1
            try producer.send(topic: "streams", key: Array("key-\(index)".utf8), value: bad.value, partition: 0)
            expected[offset] = bad.reason
            offset += 1
        }
        try producer.send(topic: "streams", key: nil, value: Self.valid(99), partition: 0)
        validCount += 1
        listening += 30_099
        offset += 1
        #expect(try producer.flush().failed == 0)
        let (total, expectedReasons, expectedValid, expectedListening) = (offset, expected, validCount, listening)

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "all \(total) messages to be flushed") {
                try await storedOffsetTotal(store.client) == total
            }
            var recorded: [Int64: Rejection.Reason] = [:]
            var keys: [Int64: String] = [:]
            let rows = try await store.client.query(
                "SELECT \"offset\", reason, detail, coalesce(convert_from(key, 'UTF8'), ''), coalesce(length(value), -1) FROM rejected_events WHERE topic = 'streams' AND partition = 0")
            for try await (position, reason, detail, key, valueLength) in rows.decode((Int64, String, String, String, Int32).self) {
                recorded[position] = Rejection.Reason(rawValue: reason)
                keys[position] = key
                #expect(!detail.isEmpty)
                #expect(valueLength <= 65_536)
            }
            #expect(recorded == expectedReasons)
            #expect(keys[1] == "key-0")
            let totals = try await store.client.query("SELECT sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint FROM stream_hourly")
            for try await (streams, skips, listeningMs) in totals.decode((Int64, Int64, Int64).self) {
                #expect(streams == Int64(expectedValid))
                #expect(skips == 0)
                #expect(listeningMs == expectedListening)
            }
        }
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
