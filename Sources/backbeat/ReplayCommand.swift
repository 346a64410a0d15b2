import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatReplay
import BackbeatServer
import BackbeatStore
import Foundation
import Logging

/// `backbeat replay`: applies archived event logs to PostgreSQL through the same validation, rollups and flush as
/// the live path, never counting an event twice.
///
/// An archive (written by `serve --archive-dir` or `generate --archive`) moves the stored offsets of the partitions
/// its messages came from, so it skips what live consumption or an earlier replay applied. A plain event file is
/// named by its content (`InputIdentity`); its position (lines applied) is stored in `kafka_offsets` under the
/// pseudo-topic `replay:<identity>`, partition 0. Either way the position moves in the same transaction as the
/// aggregates, so a replay of the same input, or a resumed one, starts after what is already applied.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Apply archives or NDJSON event files (.zst or not) to PostgreSQL exactly once (safe to run again).")

    @Argument(help: "Inputs: archive segments or directories of them (serve --archive-dir), NDJSON event files, zstd-compressed either way (detected by content), or '-' for stdin (plain events need --input-id).")
    var paths: [String]

    @Flag(name: .customLong("dry-run"), help: "Validate and count only; write nothing.")
    var dryRun = false

    @Option(name: .customLong("input-id"), help: "Identity of plain events on stdin, for resuming (files are identified by a hash of their first MiB, checked against the lines applied; archives by their offsets).")
    var inputID: String?

    @Option(name: .customLong("batch-lines"), help: "Lines per transaction (default 1000000).")
    var batchLines: Int = 1_000_000

    @Flag(name: .customLong("to-kafka"), help: "Republish the valid events to Kafka (keyed by artist_id, idempotent producer) instead of PostgreSQL. Not resumable: meant for filling a fresh cluster once.")
    var toKafka = false

    @Option(help: "Kafka bootstrap servers for --to-kafka.")
    var brokers: String?

    @Option(help: "Topics for stream, revenue, social and page events with --to-kafka, in that order (one topic: all go there; three: a page event stops the replay).")
    var topics: String = "streams,revenue,social,page"

    @OptionGroup var dedupOptions: DedupOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("give at least one input") }
        guard batchLines > 0 else { throw ValidationError("--batch-lines must be positive") }
        if toKafka {
            guard brokers?.isEmpty == false else { throw ValidationError("--to-kafka needs --brokers") }
            guard !dryRun else { throw ValidationError("--to-kafka and --dry-run exclude each other") }
            let count = topics.split(separator: ",").count
            guard [1, 3, 4].contains(count) else { throw ValidationError("--topics lists one topic, three (streams, revenue, social) or four (and page)") }
        }
    }

    func run() async throws {
        let logger = try logging.makeLogger("backbeat-replay")
        do {
            let paths = try InputPaths.expand(self.paths)
            let dedup = try dedupOptions.spans()
            if toKafka, let brokers {
                let producer = try KafkaProducer(brokers: brokers, extra: KafkaConfiguration(["enable.idempotence": "true"]))
                var replayer = Replayer(batchLines: batchLines, inputID: inputID,
                                        republish: Republisher(producer: producer, topics: topics.split(separator: ",").map(String.init)))
                replayer.dedup = dedup
                var progress = ReplayProgress(.kafka)
                for path in paths { _ = try await replayer.replay(path, store: nil, observer: &progress) }
                let deliveries = try producer.flush()
                guard deliveries.failed == 0 else {
                    throw ValidationError("\(deliveries.failed) messages failed delivery: \(deliveries.lastError ?? "")")
                }
                FileHandle.standardError.write(Data("published \(deliveries.delivered) messages to \(brokers)\n".utf8))
                return
            }
            var configured = Replayer(batchLines: batchLines, inputID: inputID)
            configured.dedup = dedup
            if dryRun {
                var progress = ReplayProgress(.dryRun)
                for path in paths { _ = try await configured.replay(path, store: nil, observer: &progress) }
            } else {
                let migrations = try database.migrations()
                try await withStore(url: try database.url(), logger: logger) { [configured] store in
                    try await store.migrate(migrations)
                    // Each event on its artist's local day, as the live ingest counts it.
                    var replayer = configured
                    replayer.zones = try await ZoneDatabase().artistZones(recordedIn: store)
                    var progress = ReplayProgress(.postgres)
                    for path in paths { _ = try await replayer.replay(path, store: store, observer: &progress) }
                }
            }
        } catch {
            FileHandle.standardError.write(Data("replay stopped: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
