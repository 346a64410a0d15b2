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
