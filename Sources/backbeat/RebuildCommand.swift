import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatStore
import Foundation
import Synchronization

/// `backbeat rebuild`: recomputes the aggregates of an interval of days from archives and swaps them in atomically.
struct RebuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Recompute the aggregates of the days --from..--to from archives and swap them in atomically.",
        discussion: """
            The inputs must hold every message the database has counted: the archive of each partition up to its \
            stored offset (open segments of a running serve are read too) and every plain event file it replayed. \
            The interval's cubes and listener sketches are replaced in one transaction; other days, offsets and \
            rejected events are not touched. Live flushes wait while the new numbers are computed.
            """)

    @Argument(help: "Archive directories or segments (serve --archive-dir), and the plain NDJSON files the database replayed.")
    var paths: [String]

    @Option(help: "First day of the interval (YYYY-MM-DD, UTC).") var from: String
    @Option(help: "Last day of the interval, included (YYYY-MM-DD, UTC).") var to: String

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard !paths.isEmpty, !paths.contains("-") else { throw ValidationError("give archive directories or files (not stdin)") }
        guard let first = RFC3339.parseDate(from), let last = RFC3339.parseDate(to) else { throw ValidationError("--from and --to are YYYY-MM-DD") }
        guard first.daysSinceEpoch <= last.daysSinceEpoch else { throw ValidationError("--from \(from) is after --to \(to)") }
    }

    func run() async throws {
        let logger = try logging.makeLogger("backbeat-rebuild")
        let fromDay = RFC3339.parseDate(from)!.daysSinceEpoch
        let toDay = RFC3339.parseDate(to)!.daysSinceEpoch
        do {
            let files = try InputPaths.expand(paths, includingOpen: true)
            let migrations = try database.migrations()
            let started = ContinuousClock.now
            let (id, events) = try await withStore(url: try database.url(), logger: logger) { store in
                try await store.migrate(migrations)
                let counted = Mutex<Int64>(0)
                let id = try await store.rebuild(fromDay: fromDay, toDay: toDay) { inputs in
                    var rollup = IntervalRollup(days: fromDay...toDay, counted: inputs)
                    for file in files { try rollup.read(file) }
                    try rollup.checkCoverage()
                    counted.withLock { $0 = rollup.events }
                    return (rollup.delta, rollup.events)
                }
                return (id, counted.withLock { $0 })
            }
            FileHandle.standardError.write(Data(
                "rebuilt \(from)..\(to) from \(files.count) inputs: \(events) events in the interval, swapped in as rebuild \(id) in \(ContinuousClock.now - started)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("rebuild stopped, nothing changed: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// Counts the events of an interval from archives and plain files, exactly as far and as the database has counted
/// them: archive messages below their partition's stored offset, judged against when they were consumed; plain lines
/// below their input's stored position, judged against the input's replay clock.
struct IntervalRollup {
    let days: ClosedRange<Int64>
    let stored: [TopicPartition: Int64]
    let replayClocks: [TopicPartition: Timestamp]
    private(set) var delta = RollupDelta()
    private(set) var events: Int64 = 0
    /// How far the inputs reached in each Kafka partition (one past the last offset counted).
    private var reached: [TopicPartition: Int64] = [:]
    /// Plain inputs read, by their position key (`replay:<identity>`).
    private var plainInputs: Set<TopicPartition> = []

    init(days: ClosedRange<Int64>, counted: Store.CountedInputs) {
        self.days = days
        self.stored = counted.offsets
        self.replayClocks = counted.replayClocks
    }

    mutating func read(_ path: String) throws {
        let reader = try InputReader(path: path)
        var assembler = LineAssembler()
        var isArchive: Bool?
        var plainLimit: Int64 = 0
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
                if case .success(let event) = EventDecoder.decode(archived.message.value, now: archived.consumedAt) { count(event) }
            } else {
                guard line < plainLimit, !bytes.isEmpty else { return }
                if case .success(let event) = EventDecoder.decode(bytes: bytes, now: now) { count(event) }
            }
        }
        do {
            while let chunk = try reader.next() {
                if isArchive == nil {
                    isArchive = chunk.withUnsafeBytes { ArchiveLine.isHeader($0) }
                    if isArchive == false {
                        let key = TopicPartition(topic: "replay:" + (try InputIdentity.of(path: path)), partition: 0)
                        plainInputs.insert(key)
                        plainLimit = stored[key] ?? 0
                        now = replayClocks[key] ?? now
                    }
                }
                try chunk.withUnsafeBytes { try assembler.feed($0, handle) }
            }
            try assembler.finish(handle)
        } catch let error as ArchiveError where path.hasSuffix(ArchiveWriter.openSuffix) {
            // The tail of an open segment may be a frame being written: its messages are not counted yet.
            _ = error
        } catch let error as ArchiveLineError {
            throw ValidationError("\(path): line \(line + 1): \(error)")
        }
    }

    private mutating func count(_ event: Event) {
        guard days.contains(event.occurredAt.daysSinceEpoch) else { return }
        delta.add(event)
        events += 1
    }

    /// Fails unless the inputs held everything the database counted.
    func checkCoverage() throws {
        for (partition, offset) in stored.sorted(by: { $0.key < $1.key }) {
            if partition.topic.hasPrefix("replay:") {
                guard plainInputs.contains(partition) else {
                    throw ValidationError("the database holds \(offset) lines replayed from a plain file named \(partition.topic.dropFirst(7)) that is not among the inputs")
                }
            } else if reached[partition] != offset {
                throw ValidationError("the inputs hold \(partition) up to offset \(reached[partition] ?? 0), but the database counted it up to \(offset): add the missing archive segments")
            }
        }
    }
}
