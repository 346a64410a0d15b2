import BackbeatCore
import BackbeatStore

/// Plain event NDJSON: the position is the number of lines applied, stored under `replay:<identity>`.
struct PlainApplier: LineApplier {
    let path: String
    let position: TopicPartition
    let republish: Republisher?
    let skipBefore: Int64
    /// What `future_timestamp` is judged against: the input's replay clock.
    let now: Timestamp
    private var expected: Int64?
    private var line: Int64 = 0
    private var delta = InternedDelta()
    private(set) var linesSinceFlush = 0

    init(path: String, position: TopicPartition, stored: Int64?, now: Timestamp, republish: Republisher?) {
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
            delta.rejected.append(RejectedMessage(
                position: MessagePosition(topicPartition: position, offset: line), key: nil, value: Array(bytes), rejection: rejection))
            report.rejected[rejection.reason, default: 0] += 1
        }
        linesSinceFlush += 1
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        guard line > (expected ?? 0) else { return nil }
        let part = FlushBatch.Part(topicPartition: position, generation: 0, expectedOffset: expected, newOffset: line, delta: delta)
        expected = line
        delta = InternedDelta()
        linesSinceFlush = 0
        return { [path] store in
            do {
                try await store.write(FlushBatch(parts: [part]))
            } catch is OffsetConflict {
                throw ReplayError("\(path): another replay of the same input is running (its stored position moved)")
            }
        }
    }
}
