import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation

/// Replays inputs one by one with fixed settings.
///
/// An input that starts with an archive header (`ArchiveLine`) is an archive: its messages are applied against the
/// stored Kafka offsets of their partitions (`ArchiveApplier`). Anything else is plain event NDJSON, named by its
/// content (`PlainApplier`).
struct Replayer: Sendable {
    let batchLines: Int
    let dryRun: Bool
    let inputID: String?
    /// Where valid events go instead of PostgreSQL (`--to-kafka`).
    var republish: Republisher?
    /// The clock a plain input's first replay stores as the instant its lines are judged against.
    var clock: @Sendable () -> Timestamp = Timestamp.wallClock

    /// Replays one input; returns its report. Events before a damaged part are applied, then the error is thrown.
    func replay(_ path: String, store: Store?) async throws -> ReplayReport {
        let reader = try InputReader(path: path)
        var progress = ReplayProgress(path: path)
        var report = ReplayReport(path: path)
        var applier: (any LineApplier)?
        var assembler = LineAssembler()
        // The write of one batch runs while the next is decoded; a batch is written only after the one before it
        // committed (each moves the position the previous one stored).
        var writing: Task<Void, Error>?
        func flush() async throws {
            guard let store else { return }
            try await writing?.value
            writing = nil
            guard let write = applier?.takeWrite() else { return }
            writing = Task { try await write(store) }
        }
        func finish() async throws {
            try await flush()
            try await writing?.value
            writing = nil
            progress.finish(report, dryRun: dryRun, republished: republish != nil)
        }
        do {
            while let chunk = try reader.next() {
                if applier == nil { applier = try await makeApplier(path, firstChunk: chunk, store: store, report: &report) }
                try chunk.withUnsafeBytes { bytes in
                    try assembler.feed(bytes) { line in
                        report.lines += 1
                        try applier!.handle(line, report: &report)
                    }
                }
                progress.update(reader: reader, report: report)
                if applier!.linesSinceFlush >= batchLines { try await flush() }
            }
            try assembler.finish { line in
                report.lines += 1
                try applier!.handle(line, report: &report)
            }
        } catch let damage as ReplayStop {
            // Everything before the damage is applied; the line at the damage is not.
            try await finish()
            throw damage
        } catch let damage as ArchiveError {
            try await finish()
            throw damage
        } catch {
            // The batch taken before the error is written (or not) before the error is reported.
            _ = try? await writing?.value
            throw error
        }
        try await finish()
        return report
    }

    private func makeApplier(_ path: String, firstChunk: [UInt8], store: Store?, report: inout ReplayReport) async throws -> any LineApplier {
        if firstChunk.withUnsafeBytes({ ArchiveLine.isHeader($0) }) {
            report.kind = .archive
            return ArchiveApplier(path: path, stored: try await store?.storedKafkaOffsets() ?? [:], republish: republish)
        }
        guard path != "-" || inputID != nil else {
            throw ValidationError("stdin holds plain events: give --input-id NAME, so that a second run can resume")
        }
        let identity = path == "-" ? inputID! : try InputIdentity.of(path: path)
        let position = TopicPartition(topic: "replay:" + identity, partition: 0)
        let stored = try await store?.storedOffsets(for: [position])[position]
        let now = try await store?.replayClock(for: position, now: clock()) ?? clock()
        report.kind = .plain(identity: identity)
        report.alreadyApplied = stored ?? 0
        return PlainApplier(path: path, position: position, stored: stored, now: now, republish: republish)
    }
}

/// A replay that stops at a line it cannot apply (after applying the lines before it).
struct ReplayStop: Error, CustomStringConvertible {
    var description: String
}

/// Applies the lines of one input and flushes them to PostgreSQL in batches.
protocol LineApplier {
    /// Lines handled since the last flush.
    var linesSinceFlush: Int { get }
    mutating func handle(_ line: UnsafeRawBufferPointer, report: inout ReplayReport) throws
    /// Takes what was handled since the last flush: the write that stores it with the input's position in one
    /// transaction (nil when there is nothing to write).
    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)?
}

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
    private var delta = RollupDelta()
    private(set) var linesSinceFlush = 0

    init(path: String, position: TopicPartition, stored: Int64?, now: Timestamp, republish: Republisher?) {
        self.path = path
        self.position = position
        self.now = now
        self.expected = stored
        self.skipBefore = stored ?? 0
        self.republish = republish
    }

    mutating func handle(_ bytes: UnsafeRawBufferPointer, report: inout ReplayReport) throws {
        defer { line += 1 }
        guard line >= skipBefore, !bytes.isEmpty else { return }
        switch EventDecoder.decode(bytes: bytes, now: now) {
        case .success(let event):
            if let republish { try republish.send(event, value: bytes) } else { delta.add(event) }
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
        delta = RollupDelta()
        linesSinceFlush = 0
        return { [path] store in
            do {
                try await store.write(FlushBatch(parts: [part]))
            } catch is OffsetConflict {
                throw ValidationError("\(path): another replay of the same input is running (its stored position moved)")
            }
        }
    }
}

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
    private var delta = RollupDelta()
    private var line: Int64 = 0
    private(set) var linesSinceFlush = 0

    init(path: String, stored: [TopicPartition: Int64], republish: Republisher?) {
        self.path = path
        self.positions = stored
        self.republish = republish
    }

    mutating func handle(_ bytes: UnsafeRawBufferPointer, report: inout ReplayReport) throws {
        line += 1
        guard !bytes.isEmpty else { return }
        let decoded: ArchiveLine
        do {
            decoded = try ArchiveLine.decode(bytes)
        } catch {
            throw ReplayStop(description: "\(path): line \(line): \(error)")
        }
        switch decoded {
        case .header(let run):
            let partition = run.topicPartition
            if let at = positions[partition], let from = run.fromOffset, from > at {
                throw ReplayStop(description: "\(path): line \(line): the archive continues \(partition) from offset \(from), "
                    + "but the database holds it only up to offset \(at); replay the archive's earlier segments first")
            }
            runs.insert(partition)
        case .message(let archived):
            let message = archived.message
            let partition = message.position.topicPartition
            guard runs.contains(partition) else {
                throw ReplayStop(description: "\(path): line \(line): a message of \(partition) before the header of its run")
            }
            if let at = positions[partition], message.position.offset < at {
                report.alreadyApplied += 1
                return
            }
            if touched[partition] == nil { touched[partition] = .some(positions[partition]) }
            positions[partition] = message.position.offset + 1
            switch EventDecoder.decode(message.value, now: archived.consumedAt) {
            case .success(let event):
                if let republish, let value = message.value {
                    try value.withUnsafeBytes { try republish.send(event, value: $0) }
                } else {
                    delta.add(event)
                }
                report.accepted += 1
            case .failure(let rejection):
                delta.rejected.append(RejectedMessage(position: message.position, key: message.key, value: message.value, rejection: rejection))
                report.rejected[rejection.reason, default: 0] += 1
            }
            linesSinceFlush += 1
        }
    }

    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)? {
        guard !touched.isEmpty else { return nil }
        var parts = touched.map { partition, expected in
            FlushBatch.Part(topicPartition: partition, generation: 0, expectedOffset: expected, newOffset: positions[partition]!, delta: RollupDelta())
        }.sorted { $0.topicPartition < $1.topicPartition }
        // The store writes every part's delta; the batch's rows, of whichever partitions, travel in its first part.
        parts[0].delta = delta
        let batch = FlushBatch(parts: parts)
        touched = [:]
        delta = RollupDelta()
        linesSinceFlush = 0
        return { [path] store in
            do {
                try await store.write(batch)
            } catch let conflict as OffsetConflict {
                throw ValidationError("\(path): the stored offset of \(conflict.topicPartition) moved during the replay (is a consumer "
                    + "running on it?); run the replay again: what was applied stays applied, nothing is counted twice")
            }
        }
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
