import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation
import Logging

/// `backbeat replay`: applies archived event logs to PostgreSQL through the same validation, rollups and flush as
/// the live path, never counting an event twice.
///
/// Each input is named by its content (`InputIdentity`); its position (lines applied) is stored in
/// `kafka_offsets` under the pseudo-topic `replay:<identity>`, partition 0, in the same transaction as the
/// aggregates. A replay of the same content, or a resumed one, starts after the lines already applied.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Apply NDJSON or .ndjson.zst event files to PostgreSQL exactly once (safe to run again).")

    @Argument(help: "Input files: NDJSON, zstd-compressed NDJSON (detected by content), or '-' for stdin (needs --input-id).")
    var paths: [String]

    @Flag(name: .customLong("dry-run"), help: "Validate and count only; write nothing.")
    var dryRun = false

    @Option(name: .customLong("input-id"), help: "Identity of stdin for resuming (files are identified by a hash of their content).")
    var inputID: String?

    @Option(name: .customLong("batch-lines"), help: "Lines per transaction (default 200000).")
    var batchLines: Int = 200_000

    @Flag(name: .customLong("to-kafka"), help: "Republish the valid events to Kafka (keyed by artist_id, idempotent producer) instead of PostgreSQL. Not resumable: meant for filling a fresh cluster once.")
    var toKafka = false

    @Option(help: "Kafka bootstrap servers for --to-kafka.")
    var brokers: String?

    @Option(help: "Topics for stream, revenue and social events with --to-kafka, in that order (one topic: all go there).")
    var topics: String = "streams,revenue,social"

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("give at least one input") }
        if paths.contains("-") && inputID == nil { throw ValidationError("replaying stdin needs --input-id NAME, so that a second run can resume") }
        guard batchLines > 0 else { throw ValidationError("--batch-lines must be positive") }
        if toKafka {
            guard brokers?.isEmpty == false else { throw ValidationError("--to-kafka needs --brokers") }
            guard !dryRun else { throw ValidationError("--to-kafka and --dry-run exclude each other") }
            let count = topics.split(separator: ",").count
            guard count == 1 || count == 3 else { throw ValidationError("--topics lists one topic or three (streams, revenue, social)") }
        }
    }

    func run() async throws {
        let logger = try logging.makeLogger("backbeat-replay")
        let paths = paths
        do {
            if toKafka, let brokers {
                let producer = try KafkaProducer(brokers: brokers, extra: KafkaConfiguration(["enable.idempotence": "true"]))
                let replayer = Replayer(batchLines: batchLines, dryRun: false, inputID: inputID,
                                        republish: Republisher(producer: producer, topics: topics.split(separator: ",").map(String.init)))
                for path in paths { _ = try await replayer.replay(path, store: nil) }
                let deliveries = try producer.flush()
                guard deliveries.failed == 0 else {
                    throw ValidationError("\(deliveries.failed) messages failed delivery: \(deliveries.lastError ?? "")")
                }
                FileHandle.standardError.write(Data("published \(deliveries.delivered) messages to \(brokers)\n".utf8))
                return
            }
            let replayer = Replayer(batchLines: batchLines, dryRun: dryRun, inputID: inputID)
            if dryRun {
                for path in paths { _ = try await replayer.replay(path, store: nil) }
            } else {
                let migrations = try database.migrations()
                try await withStore(url: try database.url(), logger: logger) { store in
                    try await store.migrate(migrations)
                    for path in paths { _ = try await replayer.replay(path, store: store) }
                }
            }
        } catch {
            FileHandle.standardError.write(Data("replay stopped: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

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

/// What one input's replay did.
struct ReplayReport {
    var path: String
    var identity: String
    /// Lines applied by earlier runs, skipped now.
    var alreadyApplied: Int64
    var lines: Int64 = 0
    var accepted = 0
    var rejected: [Rejection.Reason: Int] = [:]

    var rejectedCount: Int { rejected.values.reduce(0, +) }
}

/// Progress on stderr: a bar redrawn in place on a terminal, a plain line every five seconds otherwise.
struct ReplayProgress {
    let path: String
    let started = ContinuousClock.now
    let terminal = isatty(STDERR_FILENO) == 1
    var lastPrinted = ContinuousClock.now

    init(path: String) {
        self.path = path
    }

    mutating func update(reader: InputReader, report: ReplayReport) {
        let now = ContinuousClock.now
        guard now - lastPrinted >= (terminal ? .milliseconds(200) : .seconds(5)) else { return }
        lastPrinted = now
        let seconds = max(0.001, Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18)
        let events = report.accepted + report.rejectedCount
        let rate = Double(events) / seconds
        var text = "\(path): \(events) events, \(Int(rate)) events/s, \(reader.storedBytesRead / 1_000_000) MB read"
        if let size = reader.storedSize, size > 0 {
            let fraction = Double(reader.storedBytesRead) / Double(size)
            let eta = fraction > 0 ? seconds * (1 - fraction) / fraction : 0
            text += ", \(Int(fraction * 100))%, ETA \(Int(eta)) s"
            if terminal {
                let width = 24
                let filled = Int(fraction * Double(width))
                text = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] " + text
            }
        }
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    func finish(_ report: ReplayReport, dryRun: Bool, republished: Bool = false) {
        let reasons = report.rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        var text = "\(path): \(report.lines) lines"
        if report.alreadyApplied > 0 { text += " (\(min(report.alreadyApplied, report.lines)) already applied, skipped)" }
        text += ", \(report.accepted) events accepted, \(report.rejectedCount) rejected"
        if !reasons.isEmpty { text += " (\(reasons.joined(separator: ", ")))" }
        text += dryRun ? "; dry run, nothing written" : republished ? "; valid events republished to Kafka" : (report.accepted + report.rejectedCount == 0 ? "; nothing new to apply" : "; applied to PostgreSQL")
        FileHandle.standardError.write(Data(((terminal ? "\r\u{1B}[K" : "") + text + "\n").utf8))
    }
}
