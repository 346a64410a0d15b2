import BackbeatArchive
import BackbeatCore
import BackbeatStore
import Foundation

/// Counts the events of an interval from archives and plain files, exactly as far and as the database has counted
/// them: archive messages below their partition's stored offset, judged against when they were consumed; plain lines
/// below their input's stored position, judged against the input's replay clock. With `dedup`, each archive message
/// goes through its partition's dedup window from the partition's first message on, as the live consumer's did, and
/// each plain line through its input's window of its artist, as the replay's did: a resend is not counted again, an
/// event under a counted id with other fields not at all.
public struct IntervalRollup {
    public let days: ClosedRange<Int64>
    /// The one artist whose events are counted (nil: every artist's), as UTF-8.
    private let artist: [UInt8]?
    /// How long event ids are remembered (nil: no dedup).
    public let dedup: DedupSpans?
    /// Each archived partition's dedup window, as far as read.
    private var windows: [TopicPartition: DedupWindow] = [:]
    /// The dedup windows of the plain input being read, one per artist (`EventRecord.artistKey`), from its first line
    /// on, as its replay had them.
    private var artistWindows = ArtistDedupWindows()
    let stored: [TopicPartition: Int64]
    let replayClocks: [TopicPartition: Timestamp]
    let appliedLinesHashes: [TopicPartition: String]
    /// The interval's aggregates, as far as read.
    public private(set) var delta: InternedDelta
    /// The interval's valid events, as far as read.
    public private(set) var events: Int64 = 0
    /// How far the inputs reached in each Kafka partition (one past the last offset counted).
    private var reached: [TopicPartition: Int64] = [:]
    /// Plain inputs read, by their position key (`replay:<identity>`).
    private var plainInputs: Set<TopicPartition> = []

    /// The days (since 1970, each artist's local days in `zones`) to count, of `artist` alone or of every artist, and
    /// what the database counted (`Store.rebuild` hands it over).
    public init(
        days: ClosedRange<Int64>, of artist: String? = nil, counted: Store.CountedInputs, dedup: DedupSpans? = nil, zones: ArtistZones = .allUTC
    ) {
        self.days = days
        self.artist = artist.map { Array($0.utf8) }
        self.delta = InternedDelta(zones: zones)
        self.dedup = dedup
        self.stored = counted.offsets
        self.replayClocks = counted.replayClocks
        self.appliedLinesHashes = counted.appliedLinesHashes
    }

    /// Reads every input `paths` name (directories stand for their segments, open ones too: `InputPaths`) and checks
    /// that they held everything the database counted; answers how many inputs were read. Call it once the offsets are
    /// locked (inside `Store.rebuild`): no flush commits messages to a segment listed then. `afterEach` is told after
    /// each input how many of how many are read, and the events counted so far (progress).
    public mutating func readAll(
        _ paths: [String], afterEach: (_ read: Int, _ of: Int, _ events: Int64) -> Void = { _, _, _ in }
    ) throws -> Int {
        let files = try InputPaths.expand(paths, includingOpen: true)
        for (index, file) in files.enumerated() {
            try read(file)
            afterEach(index + 1, files.count, events)
        }
        try checkCoverage()
        return files.count
    }

    /// Reads one input: an archive segment (open or sealed) or a plain event file. An open segment a running serve
    /// sealed since it was listed is read under its sealed name; one it removed held nothing committed.
    public mutating func read(_ path: String) throws {
        var path = path
        if path.hasSuffix(ArchiveWriter.openSuffix), !FileManager.default.fileExists(atPath: path) {
            path = String(path.dropLast(ArchiveWriter.openSuffix.count))
            guard FileManager.default.fileExists(atPath: path) else { return }
        }
        let reader = try InputReader(path: path)
        var assembler = LineAssembler()
        var isArchive: Bool?
        var plainLimit: Int64 = 0
        var plainKey: TopicPartition?
        // A plain input's lines up to its stored position must be the ones the replay applied (`AppliedLinesHash`).
        var hash = AppliedLinesHash()
        var line: Int64 = 0
        // Inputs replayed before replay clocks were stored are judged against this rebuild's clock.
        var now = Timestamp.wallClock()
        func handle(_ bytes: UnsafeRawBufferPointer) throws {
            defer { line += 1 }
            if isArchive == true {
                guard !bytes.isEmpty else { return }
                guard case .message(let archived) = try ArchiveLine.decode(bytes) else { return }
                let position = archived.message.position
                guard let limit = stored[position.topicPartition], position.offset < limit else { return }
                reached[position.topicPartition] = max(reached[position.topicPartition] ?? 0, position.offset + 1)
                guard let value = archived.message.value else { return }
                value.withUnsafeBytes { count(EventDecoder.decodeRecord(bytes: $0, now: archived.consumedAt), in: $0, on: position.topicPartition) }
            } else {
                guard line < plainLimit, !bytes.isEmpty else { return }
                count(EventDecoder.decodeRecord(bytes: bytes, now: now), in: bytes)
            }
        }
        do {
            while let chunk = try reader.next() {
                if isArchive == nil {
                    isArchive = chunk.withUnsafeBytes { ArchiveLine.isHeader($0) }
                    if isArchive == false {
                        let key = try plainInputKey(path)
                        plainInputs.insert(key)
                        plainLimit = stored[key] ?? 0
                        now = replayClocks[key] ?? now
                        hash = AppliedLinesHash(expecting: appliedLinesHashes[key].map { (plainLimit, $0) })
                        plainKey = key
                        artistWindows = ArtistDedupWindows()
                    }
                }
                let block = assembler.block(chunk)
                if isArchive == false { try hash.add(block) }
                try block.forEachLine(handle)
            }
            if let last = assembler.finishBlock() {
                if isArchive == false { try hash.add(last) }
                try last.forEachLine(handle)
            }
            if isArchive == false { try hash.finish() }
        } catch let mismatch as AppliedLinesHash.Mismatch {
            throw ReplayError(
                "\(path): its first \(mismatch.lines) lines are not the ones the database counted under its name (\(plainKey?.topic ?? "")): another input that begins the same, or this one edited")
        } catch let error as ArchiveError where path.hasSuffix(ArchiveWriter.openSuffix) {
            // The tail of an open segment may be a frame being written: its messages are not counted yet.
            _ = error
        } catch let error as ArchiveLineError {
            throw ReplayError("\(path): line \(line + 1): \(error)")
        }
    }

    /// The position key of the plain file at `path`: its head's name, or its whole content's when a version that
    /// named files so stored a position under that name (as `replay` finds it).
    private func plainInputKey(_ path: String) throws -> TopicPartition {
        let head = TopicPartition(topic: "replay:" + (try InputIdentity.of(path: path)), partition: 0)
        let unhashed = stored.keys.contains { $0.topic.hasPrefix("replay:") && appliedLinesHashes[$0] == nil }
        guard unhashed, stored[head] == nil else { return head }
        let whole = TopicPartition(topic: "replay:" + (try InputIdentity.ofWholeContent(path: path)), partition: 0)
        return stored[whole] == nil ? head : whole
    }

    /// Counts a valid event of the interval, decoded from `value` (of an archive's `partition`: once, with dedup).
    private mutating func count(_ decoded: Result<EventRecord, Rejection>, in value: UnsafeRawBufferPointer, on partition: TopicPartition? = nil) {
        guard case .success(let record) = decoded else { return }
        if let dedup {
            let decision = if let partition {
                windows[partition, default: .unstored].admit(record, in: value, spans: dedup)
            } else {
                artistWindows.admit(record, in: value, spans: dedup)
            }
            switch decision {
            case .count, .countBeyondWindow: break
            case .duplicate, .reject: return
            }
        }
        // After the dedup window saw it: the window is the partition's, every artist's.
        if let artist, !record.withBytes(of: record.artist, in: value, { $0.elementsEqual(artist) }) { return }
        if delta.add(record, in: value, onDaysIn: days) { events += 1 }
    }

    /// Fails unless the inputs held everything the database counted.
    public func checkCoverage() throws {
        for (partition, offset) in stored.sorted(by: { $0.key < $1.key }) {
            if partition.topic.hasPrefix("replay:") {
                guard plainInputs.contains(partition) else {
                    throw ReplayError("the database holds \(offset) lines replayed from a plain file named \(partition.topic.dropFirst(7)) that is not among the inputs")
                }
            } else if reached[partition] != offset {
                throw ReplayError("the inputs hold \(partition) up to offset \(reached[partition] ?? 0), but the database counted it up to \(offset): add the missing archive segments")
            }
        }
    }
}
