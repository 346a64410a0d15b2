import ArgumentParser
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation

/// `backbeat offsets`: the gaps consumers found (messages the broker deleted before they were read) and the
/// operator's way past one (docs/operations.md, "Restarts, crashes and retention").
struct OffsetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offsets", abstract: "List offset gaps, or move a partition's stored offset past one.",
        subcommands: [Gaps.self, Reset.self])

    struct Gaps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gaps", abstract: "List the messages consumers found deleted from the broker before they read them.")

        @Flag(help: "Only the gaps partitions still wait at (--offset-gap-policy stop).")
        var waiting = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let logger = try logging.makeLogger("backbeat.offsets")
            let migrations = try database.migrations()
            let waitingOnly = waiting
            let gaps = try await withStore(url: try database.url(), logger: logger) { store in
                try await store.migrate(migrations)
                return try await store.offsetGaps(waitingOnly: waitingOnly)
            }
            print("topic\tpartition\tfirst_missing\tlast_missing\tmissing\tlog_start\tlog_end\tdetected_at\tresumed_from\tresumed_at")
            for gap in gaps {
                let missing = gap.lastMissing.map { String($0 - gap.firstMissing + 1) } ?? "unknown"
                print([gap.topicPartition.topic, String(gap.topicPartition.partition), String(gap.firstMissing),
                       gap.lastMissing.map(String.init) ?? "past_log_end", missing, String(gap.logStart), String(gap.logEnd),
                       gap.detectedAt, gap.resumedFrom.map(String.init) ?? "waiting", gap.resumedAt ?? "-"].joined(separator: "\t"))
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset",
            abstract: "Move a partition's stored offset (and resume the gap it waits at); the instance that owns it consumes from there.")

        @Option(help: "The topic.")
        var topic: String

        @Option(help: "The partition.")
        var partition: Int32

        @Option(help: "earliest (the first offset the broker still has), latest (its log end: nothing there is counted) or an offset.")
        var to: String = "earliest"

        @Option(help: "Kafka bootstrap servers, for earliest and latest (env BACKBEAT_KAFKA_BROKERS).")
        var brokers: String?

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let logger = try logging.makeLogger("backbeat.offsets")
            guard partition >= 0 else { throw ValidationError("--partition must be 0 or more") }
            let target = TopicPartition(topic: topic, partition: partition)
            let offset: Int64
            switch to {
            case "earliest", "latest":
                guard let brokerList = setting(brokers, "BACKBEAT_KAFKA_BROKERS"), !brokerList.isEmpty else {
                    throw ValidationError("--to \(to) reads the broker's log: give --brokers or BACKBEAT_KAFKA_BROKERS")
                }
                let log = try brokerLogOffsets(brokers: brokerList, partition: target)
                offset = to == "earliest" ? log.low : log.high
            default:
                guard let value = Int64(to), value >= 0 else { throw ValidationError("--to must be earliest, latest or an offset >= 0, not \(to)") }
                offset = value
            }
            let migrations = try database.migrations()
            let reset = try await withStore(url: try database.url(), logger: logger) { store in
                try await store.migrate(migrations)
                return try await store.resetOffset(of: target, to: offset)
            }
            let previous = reset.previous.map(String.init) ?? "none"
            print("\(target): stored offset \(previous) -> \(offset); \(reset.resumedGaps) waiting gap(s) resumed")
        }
    }
}
