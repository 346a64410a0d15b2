import BackbeatCore
import BackbeatTestSupport
import Testing

/// The archive's line format: every message, however malformed its bytes, comes back exactly as consumed.
@Suite struct ArchiveLineTests {
    let partition = TopicPartition(topic: "streams", partition: 7)
    let consumedAt = Timestamp(microseconds: 1_763_700_000_123_456)

    func roundTrip(_ message: ConsumedMessage) throws -> ArchiveLine {
        var bytes: [UInt8] = []
        ArchiveLine.appendMessage(message, consumedAt: consumedAt, to: &bytes)
        #expect(bytes.last == UInt8(ascii: "\n"))
        #expect(bytes.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "one line, whatever the value holds")
        return try bytes.dropLast().withUnsafeBytes { try ArchiveLine.decode($0) }
    }

    @Test(arguments: [
        Array(#"{"event_id":"e1","type":"stream","artist_id":"a\"b\\c"}"#.utf8),
        Array("line\nbreak\ttab\r\u{01}\u{1F} é 日本 🎵".utf8),
        [0xFF, 0xFE, 0x00, 0x80, 0x0A],  // not UTF-8: base64
        [0xC3],  // a truncated UTF-8 sequence
        [],
        Array("{".utf8),
    ])
    func valuesComeBackByteForByte(_ value: [UInt8]) throws {
        let message = ConsumedMessage(
            position: MessagePosition(topicPartition: partition, offset: 1234), key: Array("artist-0001".utf8), value: value,
            timestampMilliseconds: 1_763_700_000_123)
        #expect(try roundTrip(message) == .message(ArchivedMessage(message: message, consumedAt: consumedAt)))
    }

    @Test func nullKeysValuesAndTimestampsStayNull() throws {
        let message = ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: 0), key: nil, value: nil)
        #expect(try roundTrip(message) == .message(ArchivedMessage(message: message, consumedAt: consumedAt)))
        let binaryKey = ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: 1), key: [0xFF, 0x00], value: nil)
        #expect(try roundTrip(binaryKey) == .message(ArchivedMessage(message: binaryKey, consumedAt: consumedAt)))
    }

    @Test func headersNameTheRunAndAreRecognised() throws {
        for from in [nil, Int64(0), Int64(98_765)] {
            var bytes: [UInt8] = []
            ArchiveLine.appendHeader(ArchiveRun(topicPartition: partition, fromOffset: from), to: &bytes)
            let line = Array(bytes.dropLast())
            #expect(line.withUnsafeBytes { ArchiveLine.isHeader($0) })
            #expect(try line.withUnsafeBytes { try ArchiveLine.decode($0) } == .header(ArchiveRun(topicPartition: partition, fromOffset: from)))
        }
        let event = Array(#"{"event_id":"e1","type":"stream"}"#.utf8)
        #expect(!event.withUnsafeBytes { ArchiveLine.isHeader($0) })
    }

    @Test func unknownVersionsAndBrokenLinesAreErrors() {
        for text in [#"{"backbeat_archive":2,"topic":"t","partition":0,"from_offset":null}"#,
                     #"{"topic":"t","partition":0,"offset":"x","timestamp_ms":null,"consumed_us":1,"key":null,"value":null}"#,
                     #"{"topic":"t","partition":0,"offset":1,"timestamp_ms":null,"consumed_us":1,"key":null,"value_base64":"%%%%"}"#,
                     #"{"topic":"t","partition":99999999999,"offset":1,"consumed_us":1}"#,
                     "not json"] {
            #expect(throws: ArchiveLineError.self, "\(text)") { try Array(text.utf8).withUnsafeBytes { try ArchiveLine.decode($0) } }
        }
    }

    @Test func theLedgerKeepsArchiveLinesWithItsDeltasThroughFailedFlushes() throws {
        var ledger = IngestLedger(archiving: true)
        ledger.assign(partition, storedOffset: 5)
        let json = Array(#"{"event_id":"e","type":"social","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","platform":"x","action":"like"}"#.utf8)
        for offset in Int64(4)...7 {
            ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: offset), key: nil, value: offset == 6 ? [0xFF] : json), now: consumedAt)
        }
        let taken = ledger.takeBatch()
        let batch = try #require(taken)
        let lines = batch.parts[0].archive.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == 3, "offsets 5, 6 (invalid, archived too) and 7; 4 was stored already")
        ledger.restore(batch)
        ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: 8), key: nil, value: json), now: consumedAt)
        let retaken = ledger.takeBatch()
        let again = try #require(retaken)
        let offsets = try again.parts[0].archive.split(separator: UInt8(ascii: "\n")).map { line -> Int64 in
            guard case .message(let archived) = try Array(line).withUnsafeBytes({ try ArchiveLine.decode($0) }) else { return -1 }
            return archived.message.position.offset
        }
        #expect(offsets == [5, 6, 7, 8], "a restored batch comes back in order before newer messages")
    }
}
