import BackbeatCore
import BackbeatStore

/// An archive: each message is applied unless its partition's stored offset already covers it, and the offset
/// moves with the aggregates, so neither a second replay nor the live consumer counts it again.
struct ArchiveApplier: LineApplier {
    let path: String
    let republish: Republisher?
    /// The next offset of each partition: stored, or as far as this replay has applied.
    private var positions: [TopicPartition: Int64]
    /// The stored offset of each partition touched since the last flush (the expected value of its move).
    private var touched: [TopicPartition: Int64?] = [:]
    /// Partitions whose run header has been read.
    private var runs: Set<TopicPartition> = []
    /// What the messages applied since the last write add, by partition.
    private var deltas: [TopicPartition: InternedDelta] = [:]
    private var line: Int64 = 0
    private(set) var linesSinceFlush = 0

    init(path: String, stored: [TopicPartition: Int64], republish: Republisher?) {
        self.path = path
        self.positions = stored
        self.republish = republish
    }

    /// What one archive line says on its own.
    enum Decoded: Sendable {
        case empty
        case damaged(ArchiveLineError)
        case header(ArchiveRun)
        /// A message, with its value decoded unless the stored offsets at the start already covered it.
        case message(ArchivedMessage, Result<EventRecord, Rejection>?)
    }

    var decoder: @Sendable (UnsafeRawBufferPointer, Int64) -> Decoded {
        { [stored = positions] bytes, _ in
            guard !bytes.isEmpty else { return .empty }
            switch Result(catching: { () throws(ArchiveLineError) in try ArchiveLine.decode(bytes) }) {
            case .failure(let error): return .damaged(error)
            case .success(.header(let run)): return .header(run)
            case .success(.message(let archived)):
                let position = archived.message.position
                if let at = stored[position.topicPartition], position.offset < at { return .message(archived, nil) }
                return .message(archived, EventDecoder.decodeRecord(archived.message.value, now: archived.consumedAt))
            }
        }
    }

    mutating func apply(_ decoded: Decoded, line bytes: UnsafeRawBufferPointer, report: inout ReplayReport) throws {
        line += 1
        switch decoded {
        case .empty:
            return
        case .damaged(let error):
            throw ReplayError("\(path): line \(line): \(error)")
        case .header(let run):
            let partition = run.topicPartition
            if let at = positions[partition], let from = run.fromOffset, from > at {
                throw ReplayError("\(path): line \(line): the archive continues \(partition) from offset \(from), "
                    + "but the database holds it only up to offset \(at); replay the archive's earlier segments first")
            }
            runs.insert(partition)
        case .message(let archived, let event):
            let message = archived.message
            let partition = message.position.topicPartition
            guard runs.contains(partition) else {
                throw ReplayError("\(path): line \(line): a message of \(partition) before the header of its run")
            }
            if let at = positions[partition], message.position.offset < at {
                report.alreadyApplied += 1
                return
            }
            if touched[partition] == nil { touched[partition] = .some(positions[partition]) }
            positions[partition] = message.position.offset + 1
            // Decoded ahead unless the offsets stored at the start covered it, and those are skipped above.
            switch event ?? EventDecoder.decodeRecord(message.value, now: archived.consumedAt) {
            case .success(let record):
                // A record is decoded from a value, so an accepted message has one.
                try (message.value ?? []).withUnsafeBytes { value in
                    if let republish { try republish.send(record.event(in: value), value: value) } else { deltas[partition, default: InternedDelta()].add(record, in: value) }
                }
                report.accepted += 1
            case .failure(let rejection):
                deltas[partition, default: InternedDelta()].rejected.append(RejectedMessage(position: message.position, key: message.key, value: message.value, rejection: rejection))
                report.rejected[rejection.reason, default: 0] += 1
            }
            linesSinceFlush += 1
        }
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        guard !touched.isEmpty else { return nil }
        let parts = touched.map { partition, expected in
            FlushBatch.Part(
                topicPartition: partition, generation: 0, expectedOffset: expected, newOffset: positions[partition]!,
                delta: deltas[partition] ?? InternedDelta())
        }.sorted { $0.topicPartition < $1.topicPartition }
        let batch = FlushBatch(parts: parts)
        touched = [:]
        deltas = [:]
        linesSinceFlush = 0
        return { [path] store in
            do {
                try await store.write(batch)
            } catch let conflict as OffsetConflict {
                throw ReplayError("\(path): the stored offset of \(conflict.topicPartition) moved during the replay (is a consumer "
                    + "running on it?); run the replay again: what was applied stays applied, nothing is counted twice")
            }
        }
    }
}
