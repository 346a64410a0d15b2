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
public struct Replayer: Sendable {
    public let batchLines: Int
    /// The identity of plain events read from stdin (`-`), which have no file content to be named by.
    public let inputID: String?
    /// Where valid events go instead of PostgreSQL (`replay --to-kafka`).
    public var republish: Republisher?
    /// How long archived messages' event ids are remembered, per recorded partition as the live consumer does
    /// (nil: every valid message is counted).
    public var dedup: DedupSpans?
    /// The dedup windows of the archives' partitions, loaded from the store by the first archive input and carried
    /// from one input to the next (each archive segment is an input of its own: loading every window again for each
    /// would cost more than the segment).
    private let windows = DedupWindowCarry()
    /// The artists' reporting zones: each event is counted on its artist's local hour and day, as the live ingest
    /// counts it (`ZoneDatabase.artistZones(recordedIn:)`).
    public var zones = ArtistZones.allUTC
    /// The clock a plain input's first replay stores as the instant its lines are judged against.
    public var clock: @Sendable () -> Timestamp = Timestamp.wallClock

    public init(batchLines: Int, inputID: String? = nil, republish: Republisher? = nil) {
        self.batchLines = batchLines
        self.inputID = inputID
        self.republish = republish
    }

    /// Replays one input into `store` (nil: validate and count only, or republish); returns its report. Events
    /// before a damaged part are applied, then the error is thrown. `observer` hears of the progress.
    public func replay(_ path: String, store: Store?, observer: inout some ReplayObserver) async throws -> ReplayReport {
        let reader = try InputReader(path: path)
        var report = ReplayReport(path: path)
        guard let first = try reader.next() else {
            observer.finished(report)
            return report
        }
        // Each kind of input runs through the loop specialized for its applier (not an existential's generic code).
        switch try await makeApplier(path, firstChunk: first, store: store, report: &report) {
        case .archive(var applier):
            defer { if dedup != nil { windows.carry(applier.windows) } }
            try await replay(reader, first: first, into: &applier, store: store, report: &report, observer: &observer)
        case .plain(var applier):
            try await replay(reader, first: first, into: &applier, store: store, report: &report, observer: &observer)
        }
        return report
    }

    /// Reads `reader` to its end through `applier`, decoding each block of lines while the block before it is
    /// applied.
    private func replay<Applier: LineApplier>(
        _ reader: InputReader, first: [UInt8], into applier: inout Applier, store: Store?,
        report: inout ReplayReport, observer: inout some ReplayObserver
    ) async throws {
        var assembler = LineAssembler()
        var linesRead: Int64 = 0
        let decoder = applier.decoder
        func decodeAhead(_ block: LineBlock) -> Task<DecodedBlock<Applier.Decoded>, Never> {
            defer { linesRead += Int64(block.lines.count) }
            return Task { [linesRead] in DecodedBlock(block, first: linesRead, decoder: decoder) }
        }
        var ahead: Task<DecodedBlock<Applier.Decoded>, Never>?
        func applyAhead() async throws {
            guard let decoding = ahead else { return }
            ahead = nil
            let decoded = await decoding.value
            try applier.read(decoded.block)
            var index = 0
            try decoded.block.forEachLine { line in
                report.lines += 1
                try applier.apply(decoded.decoded[index], line: line, report: &report)
                index += 1
            }
        }
        // The write of one batch runs while the next is decoded; a batch is written only after the one before it
        // committed (each moves the position the previous one stored).
        var writing: Task<Void, Error>?
        func flush() async throws {
            guard let store else { return }
            try await writing?.value
            writing = nil
            guard let write = applier.takeWrite() else { return }
            writing = Task { try await write(store) }
        }
        func finish() async throws {
            try await flush()
            try await writing?.value
            writing = nil
            // The detail each batch wrote as deltas is merged into blocks (a failure leaves them to a serve's
            // compaction; readers sum them meanwhile).
            _ = try? await store?.compactAllDetail()
            try await applier.complete(&report)
            observer.finished(report)
        }
        do {
            var chunk: [UInt8]? = first
            while let bytes = chunk {
                let next = decodeAhead(assembler.block(bytes))
                try await applyAhead()
                ahead = next
                observer.read(report, bytesRead: reader.storedBytesRead, of: reader.storedSize)
                if applier.linesSinceFlush >= batchLines { try await flush() }
                do {
                    chunk = try reader.next()
                } catch {
                    // The lines read before damage in the input are applied.
                    try await applyAhead()
                    throw error
                }
            }
            try await applyAhead()
            if let last = assembler.finishBlock() {
                ahead = decodeAhead(last)
                try await applyAhead()
            }
            try applier.inputEnded()
        } catch let damage as ReplayError {
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
    }

    private func makeApplier(_ path: String, firstChunk: [UInt8], store: Store?, report: inout ReplayReport) async throws -> Applier {
        if firstChunk.withUnsafeBytes({ ArchiveLine.isHeader($0) }) {
            report.kind = .archive
            let stored = try await store?.storedKafkaOffsets() ?? [:]
            var carried: [TopicPartition: DedupWindow] = [:]
            if dedup != nil {
                if let earlier = windows.carried {
                    carried = earlier
                } else {
                    carried = try await store?.storedDedupWindows(for: Array(stored.keys)) ?? [:]
                }
            }
            return .archive(ArchiveApplier(path: path, stored: stored, dedup: dedup, windows: carried, republish: republish, zones: zones))
        }
        guard path != "-" || inputID != nil else {
            throw ReplayError("stdin holds plain events: give --input-id NAME, so that a second run can resume")
        }
        let identity = path == "-" ? inputID! : try await Self.identity(of: path, store: store)
        let position = TopicPartition(topic: "replay:" + identity, partition: 0)
        let stored = try await store?.storedReplayPosition(position)
        let now = try await store?.replayClock(for: position, now: clock()) ?? clock()
        report.kind = .plain(identity: identity)
        report.alreadyApplied = stored?.lines ?? 0
        return .plain(PlainApplier(path: path, position: position, stored: stored, now: now, dedup: dedup, republish: republish, zones: zones))
    }

    /// The name of the plain file at `path`: its head's (`InputIdentity.of`), unless a version that named files by
    /// their whole content stored a position for it under that name.
    private static func identity(of path: String, store: Store?) async throws -> String {
        let head = try InputIdentity.of(path: path)
        guard let store, try await store.hasPositionsNamedByWholeContent(),
              try await store.storedReplayPosition(TopicPartition(topic: "replay:" + head, partition: 0)) == nil
        else { return head }
        let whole = try InputIdentity.ofWholeContent(path: path)
        let stored = try await store.storedReplayPosition(TopicPartition(topic: "replay:" + whole, partition: 0))
        return stored == nil ? head : whole
    }

    /// How an input's lines are applied: as an archive's messages or as plain events.
    private enum Applier {
        case archive(ArchiveApplier)
        case plain(PlainApplier)
    }
}
