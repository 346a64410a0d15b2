import BackbeatCore
import BackbeatStore

/// Plain event NDJSON: the position is the number of lines applied, stored under `replay:<identity>`.
struct PlainApplier: LineApplier {
    /// Where the input's position is stored: known from the start, or confirmed before the first write by a first
    /// replay that began while the input's identity was still being computed (`Replayer`).
    enum Position: Sendable {
        case known(TopicPartition)
        case confirming(identity: Task<String, Error>, position: Task<TopicPartition, Error>)

        var resolved: TopicPartition {
            get async throws {
                switch self {
                case .known(let position): position
                case .confirming(_, let position): try await position.value
                }
            }
        }
    }

    let path: String
    let position: Position
    let republish: Republisher?
    let skipBefore: Int64
    /// What `future_timestamp` is judged against: the input's replay clock.
    let now: Timestamp
    private var expected: Int64?
    private var line: Int64 = 0
    private var delta = InternedDelta()
    /// Rejected lines since the last write, by line number (their position is the input's, known at the write).
    private var rejected: [(line: Int64, value: [UInt8], rejection: Rejection)] = []
    private(set) var linesSinceFlush = 0

    init(path: String, position: Position, stored: Int64?, now: Timestamp, republish: Republisher?) {
        self.path = path
        self.position = position
        self.now = now
        self.expected = stored
        self.skipBefore = stored ?? 0
        self.republish = republish
    }

    /// The line's event or rejection; nil for a line already applied or empty.
    var decoder: @Sendable (UnsafeRawBufferPointer, Int64) -> Result<EventRecord, Rejection>? {
        { [skipBefore, now] bytes, number in
            guard number >= skipBefore, !bytes.isEmpty else { return nil }
            return EventDecoder.decodeRecord(bytes: bytes, now: now)
        }
    }

    mutating func apply(_ decoded: Result<EventRecord, Rejection>?, line bytes: UnsafeRawBufferPointer, report: inout ReplayReport) throws {
        defer { line += 1 }
        switch decoded {
        case nil: return
        case .success(let record):
            if let republish { try republish.send(record.event(in: bytes), value: bytes) } else { delta.add(record, in: bytes) }
            report.accepted += 1
        case .failure(let rejection):
            rejected.append((line, Array(bytes), rejection))
            report.rejected[rejection.reason, default: 0] += 1
        }
        linesSinceFlush += 1
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        guard line > (expected ?? 0) else { return nil }
        let batch = (expected: expected, newOffset: line, delta: delta, rejected: rejected)
        expected = line
        delta = InternedDelta(sizedLike: batch.delta)
        rejected = []
        linesSinceFlush = 0
        return { [path, position] store in
            let topicPartition = try await position.resolved
            var delta = batch.delta
            delta.rejected = batch.rejected.map {
                RejectedMessage(position: MessagePosition(topicPartition: topicPartition, offset: $0.line), key: nil, value: $0.value, rejection: $0.rejection)
            }
            let part = FlushBatch.Part(
                topicPartition: topicPartition, generation: 0, expectedOffset: batch.expected, newOffset: batch.newOffset, delta: delta)
            do {
                try await store.write(FlushBatch(parts: [part]))
            } catch is OffsetConflict {
                throw ReplayError("\(path): another replay of the same input is running (its stored position moved)")
            }
        }
    }

    func complete(_ report: inout ReplayReport) async throws {
        if case .confirming(let identity, _) = position { report.kind = .plain(identity: try await identity.value) }
    }
}
