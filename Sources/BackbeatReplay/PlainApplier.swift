import BackbeatArchive
import BackbeatCore
import BackbeatStore

/// Plain event NDJSON: the position is the number of lines applied, stored under `replay:<identity>` with the hash
/// of those lines (`AppliedLinesHash`).
///
/// With `dedup`, each event goes through its artist's dedup window of this input (`EventRecord.artistKey`), from the
/// input's first line on: a resend within the input is counted once, another event under a counted id is rejected.
/// A run that resumes an input reads the lines applied before only into the windows. The windows are the input's
/// own: a resend in another file is counted again (docs/events.md).
struct PlainApplier: LineApplier {
    let path: String
    let position: TopicPartition
    let republish: Republisher?
    let skipBefore: Int64
    /// How long event ids are remembered (nil: no dedup).
    let dedup: DedupSpans?
    /// The input's dedup windows, one per artist, as far as read.
    private var windows = ArtistDedupWindows()
    /// What `future_timestamp` is judged against: the input's replay clock.
    let now: Timestamp
    private var expected: Int64?
    private var line: Int64 = 0
    /// The lines read so far, checked against the hash stored with the position they resume from.
    private let hash: AppliedLinesHash
    private var delta: InternedDelta
    /// The generation of the zones the lines are counted in (`FlushBatch.zonesGeneration`).
    private let zonesGeneration: Int64
    /// Rejected lines since the last write, by line number (their position is the input's, known at the write).
    private var rejected: [(line: Int64, value: [UInt8], rejection: Rejection)] = []
    private(set) var linesSinceFlush = 0

    init(
        path: String, position: TopicPartition, stored: (lines: Int64, appliedLinesHash: String?)?, now: Timestamp, dedup: DedupSpans?,
        republish: Republisher?, zones: ArtistZones = .allUTC
    ) {
        self.path = path
        self.delta = InternedDelta(zones: zones)
        self.zonesGeneration = zones.generation
        self.dedup = dedup
        self.position = position
        self.now = now
        self.expected = stored?.lines
        self.skipBefore = stored?.lines ?? 0
        self.republish = republish
        // Positions stored before their lines were hashed are named by their input's whole content: nothing to check.
        hash = AppliedLinesHash(expecting: stored.flatMap { stored in stored.appliedLinesHash.map { (stored.lines, $0) } })
    }

    mutating func read(_ block: LineBlock) throws {
        do {
            try hash.add(block)
        } catch {
            throw mismatch(error)
        }
    }

    func inputEnded() throws {
        do {
            try hash.finish()
        } catch {
            throw mismatch(error)
        }
    }

    private func mismatch(_ error: AppliedLinesHash.Mismatch) -> ReplayError {
        ReplayError("""
            \(path): its first \(error.lines) lines are not the ones applied under its name (\(position.topic)): another \
            input that begins with the same \(InputIdentity.headBytes >> 20) MiB, or this one edited; nothing of it is \
            applied
            """)
    }

    /// What one line says on its own.
    struct Decoded: Sendable {
        /// The line's event or rejection; nil for a line empty, or applied already when there is no dedup (with
        /// it, a line applied already is read into its artist's window).
        let event: Result<EventRecord, Rejection>?
        /// The event's dedup key, with dedup.
        let key: ArtistDedupKey?
    }

    var decoder: @Sendable (UnsafeRawBufferPointer, Int64) -> Decoded {
        { [skipBefore, now, windowed = dedup != nil] bytes, number in
            guard number >= skipBefore || windowed, !bytes.isEmpty else { return Decoded(event: nil, key: nil) }
            let event = EventDecoder.decodeRecord(bytes: bytes, now: now)
            guard windowed, case .success(let record) = event else { return Decoded(event: event, key: nil) }
            return Decoded(event: event, key: ArtistDedupKey(record, in: bytes))
        }
    }

    mutating func apply(_ decoded: Decoded, line bytes: UnsafeRawBufferPointer, report: inout ReplayReport) throws {
        defer { line += 1 }
        guard let event = decoded.event else { return }
        guard line >= skipBefore else {
            // Applied by an earlier run (decoded only with dedup): only read into its artist's window.
            if case .success(let record) = event, let dedup, let key = decoded.key {
                _ = windows.admit(record, key: key, in: bytes, spans: dedup)
            }
            return
        }
        switch event {
        case .success(let record):
            if let dedup, let key = decoded.key {
                switch windows.admit(record, key: key, in: bytes, spans: dedup) {
                case .count: break
                case .countBeyondWindow: report.beyondWindow += 1
                case .duplicate:
                    report.duplicates += 1
                    linesSinceFlush += 1
                    return
                case .reject(let conflict):
                    return reject(bytes, conflict, &report)
                }
            }
            if let republish { try republish.send(record.event(in: bytes), value: bytes) } else { delta.add(record, in: bytes) }
            report.accepted += 1
            linesSinceFlush += 1
        case .failure(let rejection):
            reject(bytes, rejection, &report)
        }
    }

    private mutating func reject(_ bytes: UnsafeRawBufferPointer, _ rejection: Rejection, _ report: inout ReplayReport) {
        rejected.append((line, Array(bytes), rejection))
        report.rejected[rejection.reason, default: 0] += 1
        linesSinceFlush += 1
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        guard line > (expected ?? 0) else { return nil }
        assert(hash.lines == line, "a write is taken between blocks")
        let batch = (expected: expected, newOffset: line, delta: delta, rejected: rejected, appliedLinesHash: hash.value)
        expected = line
        delta = InternedDelta(sizedLike: batch.delta)
        rejected = []
        linesSinceFlush = 0
        return { [path, position, zonesGeneration] store in
            let topicPartition = position
            var delta = batch.delta
            delta.rejected = batch.rejected.map {
                RejectedMessage(position: MessagePosition(topicPartition: topicPartition, offset: $0.line), key: nil, value: $0.value, rejection: $0.rejection)
            }
            let part = FlushBatch.Part(
                topicPartition: topicPartition, generation: 0, expectedOffset: batch.expected, newOffset: batch.newOffset, delta: delta,
                appliedLinesHash: batch.appliedLinesHash)
            do {
                try await store.write(FlushBatch(parts: [part], zonesGeneration: zonesGeneration))
            } catch is OffsetConflict {
                throw ReplayError("\(path): another replay of the same input is running (its stored position moved)")
            } catch let changed as ZonesChanged {
                throw ReplayError.zonesChanged(path, changed)
            }
        }
    }
}
