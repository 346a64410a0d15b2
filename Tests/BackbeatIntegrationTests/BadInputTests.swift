import BackbeatCore
import BackbeatKafka
import Foundation
import PostgresNIO
import Testing

/// Malformed messages among valid ones: each is recorded in rejected_events with its reason and sent whole to the
/// dead-letter topic with its reason in headers, consumption goes on, every valid neighbour is counted, `/metrics`
/// counts them by reason, and no raw value or token reaches the log.
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
        let broker = try DevBroker(topics: ["streams", "revenue", "social", "dead-letters"], partitions: 1)
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

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--dead-letter-topic", "dead-letters"])
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
        try expectDeadLetters(expected, brokers: broker.bootstrapServers)
        try await expectMetrics(service, total: Int(total), valid: validCount)
        #expect(service.terminate() == 0)
        let log = service.log()
        #expect(!log.contains(ServiceProcess.adminToken))
        #expect(!log.contains("xxxxxxxxxxxxxxxx") && !log.contains("podcast") && !log.contains("1.1234567"), "raw event values stay out of the log")
        withExtendedLifetime(broker) {}
    }

    /// Every rejected message is on the dead-letter topic once, whole, with its reason and position in headers.
    func expectDeadLetters(_ expected: [Int64: Rejection.Reason], brokers: String) throws {
        let printed = try kcat(["-C", "-b", brokers, "-t", "dead-letters", "-o", "beginning", "-c", String(expected.count),
                                "-f", "%k\t%S\t%h\n"])
        var seen: [Int64: Rejection.Reason] = [:]
        for line in printed.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            #expect(fields.count == 3)
            guard fields.count == 3 else { continue }
            var headers: [String: String] = [:]
            for header in fields[2].split(separator: ",") {
                let parts = header.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { headers[String(parts[0])] = String(parts[1]) }
            }
            #expect(headers["backbeat-topic"] == "streams" && headers["backbeat-partition"] == "0")
            #expect(headers["backbeat-detail"].map { !$0.isEmpty } == true)
            guard let offset = headers["backbeat-offset"].flatMap({ Int64($0) }), let reason = headers["backbeat-reason"] else { continue }
            #expect(seen[offset] == nil, "offset \(offset) sent to the dead-letter topic twice")
            seen[offset] = Rejection.Reason(rawValue: reason)
            let original = Self.malformed[Int(offset - 1) / 2]
            #expect(fields[0] == "key-\((offset - 1) / 2)")
            #expect(Int(fields[1]) == (original.value?.count ?? -1), "the whole value, as consumed (kcat prints -1 for null)")
        }
        #expect(seen == expected)
    }

    /// `/metrics` counts what was consumed, accepted and rejected by reason, and shows no lag once all is flushed.
    func expectMetrics(_ service: ServiceProcess, total: Int, valid: Int) async throws {
        _ = try await HTTP.get(service.baseURL + "/v1/artists/artist-bad/streams?from=2026-10-01&to=2026-10-03")
        _ = try await HTTP.get(service.baseURL + "/v1/artists/artist-bad/streams", token: "wrong-token")
        let samples = prometheusSamples(try await HTTP.get(service.baseURL + "/metrics", token: nil).text)
        #expect(samples.total("backbeat_events_consumed_total", #"topic="streams""#) == Double(total))
        #expect(samples.total("backbeat_events_accepted_total", #"topic="streams""#) == Double(valid))
        for reason in Set(Self.malformed.map(\.reason)) {
            let count = Self.malformed.filter { $0.reason == reason }.count
            #expect(samples.total("backbeat_events_rejected_total", #"reason="\#(reason.rawValue)""#) == Double(count), "\(reason)")
        }
        #expect(samples.total("backbeat_dead_letters_total") == Double(Self.malformed.count))
        // The lag gauge is sampled every second (IngestGauges): it reads 0 within a period of the last flush.
        try await waitUntil(timeout: .seconds(10), "the lag gauge to read 0") {
            let current = prometheusSamples(try await HTTP.get(service.baseURL + "/metrics", token: nil).text)
            return current[#"backbeat_consumer_lag_messages{partition="0",topic="streams"}"#] == 0
        }
        #expect(samples.total("backbeat_flushes_total", #"outcome="committed""#) >= 1)
        #expect(samples.total("backbeat_flush_rows_total") >= 1)
        #expect(samples.total("backbeat_http_requests_total", #"route="/v1/artists/{artist_id}/streams""#, #"status="200""#) == 1)
        #expect(samples.total("backbeat_http_requests_total", #"route="/v1/artists/{artist_id}/streams""#, #"status="401""#) == 1)
        #expect(samples.total("backbeat_http_request_duration_seconds_count", #"route="/v1/artists/{artist_id}/streams""#) == 2)
        #expect(samples["backbeat_ingest_paused"] == 0)
    }
}
