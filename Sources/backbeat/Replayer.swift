import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation

/// Replays inputs one by one with fixed settings.
struct Replayer: Sendable {
    let batchLines: Int
    let dryRun: Bool
    let inputID: String?
    /// Where valid events go instead of PostgreSQL (`--to-kafka`).
    var republish: Republisher?

    /// Replays one input; returns its report. Events before a damaged part are applied, then the error is thrown.
    func replay(_ path: String, store: Store?) async throws -> ReplayReport {
        let identity = path == "-" ? inputID! : try InputIdentity.of(path: path)
        let position = TopicPartition(topic: "replay:" + identity, partition: 0)
        let stored = try await store?.storedOffsets(for: [position])[position]
        var report = ReplayReport(path: path, identity: identity, alreadyApplied: stored ?? 0)
        var progress = ReplayProgress(path: path)
        let reader = try InputReader(path: path)
        let now = Timestamp(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000))

        var expected = stored
        var line: Int64 = 0
        var delta = RollupDelta()
        var linesInBatch = 0
        func flush() async throws {
            guard let store, line > (expected ?? 0) else { return }
            let part = FlushBatch.Part(topicPartition: position, generation: 0, expectedOffset: expected, newOffset: line, delta: delta)
            do {
                try await store.write(FlushBatch(parts: [part]))
            } catch is OffsetConflict {
                throw ValidationError("\(path): another replay of the same input is running (its stored position moved)")
            }
            expected = line
            delta = RollupDelta()
            linesInBatch = 0
        }
        func handle(_ bytes: UnsafeRawBufferPointer) throws {
            defer { line += 1 }
            guard line >= report.alreadyApplied, !bytes.isEmpty else { return }
            switch EventDecoder.decode(bytes: bytes, now: now) {
            case .success(let event):
                if let republish {
                    try republish.send(event, value: bytes)
                } else {
                    delta.add(event)
                }
                report.accepted += 1
            case .failure(let rejection):
                delta.rejected.append(RejectedMessage(
                    position: MessagePosition(topicPartition: position, offset: line), key: nil, value: Array(bytes), rejection: rejection))
                report.rejected[rejection.reason, default: 0] += 1
            }
            linesInBatch += 1
        }

        var assembler = LineAssembler()
        do {
            while let chunk = try reader.next() {
                try chunk.withUnsafeBytes { try assembler.feed($0, handle) }
                progress.update(reader: reader, report: report)
                if linesInBatch >= batchLines { try await flush() }
            }
            try assembler.finish(handle)
        } catch let damage as ArchiveError {
            // Everything before the damage is applied; the incomplete line at the damage is not.
            try await flush()
            report.lines = line
            progress.finish(report, dryRun: dryRun, republished: republish != nil)
            throw damage
        }
        try await flush()
        report.lines = line
        progress.finish(report, dryRun: dryRun, republished: republish != nil)
        return report
    }
}

/// Sends valid events back to Kafka: to their family's topic, keyed by artist.
struct Republisher: Sendable {
    let producer: KafkaProducer
    let topics: [String]

    func send(_ event: Event, value: UnsafeRawBufferPointer) throws {
        let topic = topics.count == 1 ? topics[0] : topics[EventType.allCases.firstIndex(of: event.type)!]
        try producer.send(topic: topic, key: Array(event.artistID.utf8), value: Array(value))
    }
}
