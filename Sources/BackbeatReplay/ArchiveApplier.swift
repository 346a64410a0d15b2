import BackbeatCore
import BackbeatStore

/// An archive: each message is applied unless its partition's stored offset already covers it, and the offset
/// moves with the aggregates, so neither a second replay nor the live consumer counts it again. With `dedup`, each
/// message goes through its recorded partition's dedup window, loaded as the live consumer stored it and stored
/// with each write as a flush does: a resend is counted once, whether live or here.
struct ArchiveApplier: LineApplier {
    let path: String
    let republish: Republisher?
    /// The offsets stored when the replay started.
    private let stored: [TopicPartition: Int64]
    /// How long event ids are remembered (nil: no dedup).
    private let dedup: DedupSpans?
    /// The dedup windows as the input started: stored, or left by the replay's inputs before.
    private let startWindows: [TopicPartition: DedupWindow]
    /// The artists' reporting zones (`Replayer.zones`).
    private let zones: ArtistZones
    /// What this replay knows of each partition it has met, but the one in `current`.
    private var partitions: [TopicPartition: Progress] = [:]
    /// The partition of the last line, kept out of `partitions`: an archive holds runs of one partition's
    /// messages, so a line's partition is almost always the last one's, found without a hash.
    private var current: (partition: TopicPartition, progress: Progress)?
    private var line: Int64 = 0
    private(set) var linesSinceFlush = 0

    /// One partition's state in this replay.
    private struct Progress {
        /// The next offset: stored, or as far as this replay has applied (nil: neither).
        var position: Int64?
        /// Whether the header of its run has been read.
        var runStarted = false
        /// Whether a message was applied since the last write, and the stored offset it then expected.
        var touched = false
        var expected: Int64?
        /// What the messages applied since the last write add.
        var delta: InternedDelta
        /// The partition's dedup window (unused without `dedup`).
        var window = DedupWindow()
    }

    init(
        path: String, stored: [TopicPartition: Int64], dedup: DedupSpans? = nil, windows: [TopicPartition: DedupWindow] = [:],
        republish: Republisher?, zones: ArtistZones = .allUTC
    ) {
        self.path = path
        self.zones = zones
        self.stored = stored
        self.dedup = dedup
        self.startWindows = windows
        self.republish = republish
    }

    /// Runs `body` on `partition`'s progress, which it makes the current one.
    private mutating func withProgress<Result>(of partition: TopicPartition, _ body: (inout Progress) throws -> Result) rethrows -> Result {
        if current?.partition != partition {
            if let current { partitions[current.partition] = current.progress }
            current = (partition, partitions.removeValue(forKey: partition)
                ?? Progress(position: stored[partition], delta: InternedDelta(zones: zones), window: startWindows[partition] ?? DedupWindow()))
        }
        return try body(&current!.progress)
    }

    /// What one archive line says on its own.
    enum Decoded: Sendable {
        case empty
        case damaged(ArchiveLineError)
        case header(ArchiveRun)
        /// A message, with its value decoded unless the stored offsets at the start already covered it, and the
        /// event's fingerprint with dedup.
        case message(ArchivedMessage, Result<EventRecord, Rejection>?, EventFingerprint?)
    }

    var decoder: @Sendable (UnsafeRawBufferPointer, Int64) -> Decoded {
        { [stored, windowed = dedup != nil] bytes, _ in
            guard !bytes.isEmpty else { return .empty }
            switch Result(catching: { () throws(ArchiveLineError) in try ArchiveLine.decode(bytes) }) {
            case .failure(let error): return .damaged(error)
            case .success(.header(let run)): return .header(run)
            case .success(.message(let archived)):
                let position = archived.message.position
                if let at = stored[position.topicPartition], position.offset < at { return .message(archived, nil, nil) }
                let event = EventDecoder.decodeRecord(archived.message.value, now: archived.consumedAt)
                guard windowed, case .success(let record) = event, let value = archived.message.value else { return .message(archived, event, nil) }
                return .message(archived, event, value.withUnsafeBytes { record.fingerprint(in: $0) })
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
            try withProgress(of: run.topicPartition) { [path, line] progress in
                if let at = progress.position, let from = run.fromOffset, from > at {
                    throw ReplayError("\(path): line \(line): the archive continues \(run.topicPartition) from offset \(from), "
                        + "but the database holds it only up to offset \(at); replay the archive's earlier segments first")
                }
                progress.runStarted = true
            }
        case .message(let archived, let event, let fingerprint):
            let message = archived.message
            let applied = try withProgress(of: message.position.topicPartition) { [path, line, republish, dedup] progress -> Bool in
                guard progress.runStarted else {
                    throw ReplayError("\(path): line \(line): a message of \(message.position.topicPartition) before the header of its run")
                }
                if let at = progress.position, message.position.offset < at { return false }
                if !progress.touched { (progress.touched, progress.expected) = (true, progress.position) }
                progress.position = message.position.offset + 1
                // Decoded ahead unless the offsets stored at the start covered it, and those are skipped above.
                switch event ?? EventDecoder.decodeRecord(message.value, now: archived.consumedAt) {
                case .success(let record):
                    // A record is decoded from a value, so an accepted message has one.
                    let conflict = try (message.value ?? []).withUnsafeBytes { value -> Rejection? in
                        if let dedup {
                            let fingerprint = fingerprint ?? record.fingerprint(in: value)
                            switch progress.window.admit(record, fingerprint: fingerprint, in: value, spans: dedup) {
                            case .count: break
                            case .countBeyondWindow: report.beyondWindow += 1
                            case .duplicate:
                                report.duplicates += 1
                                return nil
                            case .reject(let conflict): return conflict
                            }
                        }
                        if let republish { try republish.send(record.event(in: value), value: value) } else { progress.delta.add(record, in: value) }
                        report.accepted += 1
                        return nil
                    }
                    if let conflict { Self.reject(message, conflict, &progress, &report) }
                case .failure(let rejection):
                    Self.reject(message, rejection, &progress, &report)
                }
                return true
            }
            if applied { linesSinceFlush += 1 } else { report.alreadyApplied += 1 }
        }
    }

    /// Each partition's dedup window as far as applied (what the next input of the same replay starts from).
    var windows: [TopicPartition: DedupWindow] {
        var all = startWindows
        for (partition, progress) in partitions { all[partition] = progress.window }
        if let current { all[current.partition] = current.progress.window }
        return all
    }

    private static func reject(_ message: ConsumedMessage, _ rejection: Rejection, _ progress: inout Progress, _ report: inout ReplayReport) {
        progress.delta.rejected.append(RejectedMessage(position: message.position, key: message.key, value: message.value, rejection: rejection))
        report.rejected[rejection.reason, default: 0] += 1
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        if let current { partitions[current.partition] = current.progress }
        current = nil
        var parts: [FlushBatch.Part] = []
        for (partition, var progress) in partitions where progress.touched {
            parts.append(FlushBatch.Part(
                topicPartition: partition, generation: 0, expectedOffset: progress.expected, newOffset: progress.position!,
                delta: progress.delta, remembered: progress.window.takeAdded(), newestEventTime: progress.window.newestEventTime))
            (progress.touched, progress.expected, progress.delta) = (false, nil, InternedDelta(zones: zones))
            partitions[partition] = progress
        }
        guard !parts.isEmpty else { return nil }
        parts.sort { $0.topicPartition < $1.topicPartition }
        let batch = FlushBatch(parts: parts, zonesGeneration: zones.generation)
        linesSinceFlush = 0
        return { [path] store in
            do {
                try await store.write(batch)
            } catch let conflict as OffsetConflict {
                throw ReplayError("\(path): the stored offset of \(conflict.topicPartition) moved during the replay (is a consumer "
                    + "running on it?); run the replay again: what was applied stays applied, nothing is counted twice")
            } catch let changed as ZonesChanged {
                throw ReplayError.zonesChanged(path, changed)
            }
        }
    }
}
