import BackbeatArchive
import BackbeatCore
import Foundation
import Testing

/// The archive writer's answers to a flush whose outcome was unknown: settled as committed or not, then retried.
@Suite struct ArchiveWriterTests {
    static let partition = TopicPartition(topic: "streams", partition: 0)
    static let now = Timestamp(seconds: 1_790_000_000)

    static func part(expected: Int64?, new: Int64) -> FlushBatch.Part {
        FlushBatch.Part(topicPartition: partition, generation: 1, expectedOffset: expected, newOffset: new,
                        archive: Array("lines \(expected ?? -1)..<\(new)\n".utf8))
    }

    static func withWriter(_ body: (ArchiveWriter, URL) throws -> Void) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory() + "backbeat-writer-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(try ArchiveWriter(directory: directory, segmentBytes: 1 << 20), directory)
    }

    static func length(_ position: ArchiveSegmentPosition, in directory: URL) throws -> Int64 {
        let path = directory.appendingPathComponent(position.name + ArchiveWriter.openSuffix).path
        return Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
    }

    @Test(arguments: [nil, 40] as [Int64?])
    func aRetriedBatchWhoseLostAnswerHadCommittedAppendsNothing(firstExpected: Int64?) throws {
        try Self.withWriter { writer, directory in
            let first = try #require(try writer.append([Self.part(expected: firstExpected, new: 100)], now: Self.now).first)
            // The answer was lost; PostgreSQL stored the segment's length, so the flush had committed.
            #expect(writer.unsettled == [first.name])
            #expect(try writer.settle(stored: [first.name: first.bytes]) == [Self.partition])
            #expect(writer.unsettled.isEmpty)
            // The batch comes back merged with newer messages and is retried from the same expected offset: the
            // segment already holds those messages, so nothing is appended (PostgreSQL answers with a conflict).
            #expect(try writer.append([Self.part(expected: firstExpected, new: 150)], now: Self.now).isEmpty)
            #expect(try Self.length(first, in: directory) == first.bytes)
            // After the partition is sought again from its stored offset, the run goes on in the same segment.
            let next = try #require(try writer.append([Self.part(expected: 100, new: 150)], now: Self.now).first)
            #expect(next.name == first.name && next.fromOffset == first.fromOffset && next.nextOffset == 150 && next.bytes > first.bytes)
        }
    }

    @Test func aFlushThatHadNotCommittedIsCutOffAndAppendedAgain() throws {
        try Self.withWriter { writer, directory in
            let committed = try #require(try writer.append([Self.part(expected: nil, new: 100)], now: Self.now).first)
            writer.committed()
            let failed = try #require(try writer.append([Self.part(expected: 100, new: 150)], now: Self.now).first)
            #expect(try writer.settle(stored: [committed.name: committed.bytes]).isEmpty)
            #expect(try Self.length(committed, in: directory) == committed.bytes)
            let retried = try #require(try writer.append([Self.part(expected: 100, new: 160)], now: Self.now).first)
            #expect(retried.name == failed.name && retried.nextOffset == 160)
        }
    }
}
