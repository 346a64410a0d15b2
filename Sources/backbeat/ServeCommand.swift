import ArgumentParser
import Foundation
import BackbeatCore
import BackbeatKafka
import BackbeatServer
import BackbeatStore
import Hummingbird
import Logging
import ServiceLifecycle

/// `backbeat serve`: consume, aggregate, flush and answer queries.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Consume events, flush rollups to PostgreSQL, serve the query API.")

    @Option(help: "Kafka bootstrap servers (env BACKBEAT_KAFKA_BROKERS). Empty: start the embedded dev broker in process.")
    var brokers: String?

    @Option(help: "Comma-separated topics to consume (env BACKBEAT_TOPICS; default streams,revenue,social).")
    var topics: String?

    @Option(help: "Kafka consumer group id (env BACKBEAT_GROUP_ID; default backbeat).")
    var group: String?

    @Option(name: .customLong("http-port"), help: "HTTP port (env BACKBEAT_HTTP_PORT; default 8080).")
    var httpPort: Int?

    @Option(name: .customLong("flush-interval"), help: "How often rollups are flushed, e.g. 1s or 500ms, or sooner once unflushed work reaches a sixteenth of --pending-limit (env BACKBEAT_FLUSH_INTERVAL; default 1s).")
    var flushInterval: String?

    @Option(name: .customLong("flush-timeout"), help: "How long one flush to PostgreSQL may take before serve treats PostgreSQL or the connection to it as hung and exits with an error, e.g. 300s (env BACKBEAT_FLUSH_TIMEOUT; default 300s). Nothing is lost: a restart consumes again from the offsets PostgreSQL stored.")
    var flushTimeout: String?

    @Option(name: .customLong("shutdown-timeout"), help: "On SIGTERM or SIGINT, how long the final flush and closing may take before the rest is cancelled, e.g. 30s (env BACKBEAT_SHUTDOWN_TIMEOUT; default 30s). Work cut off is not lost: unflushed events are consumed again.")
    var shutdownTimeout: String?

    @Option(name: .customLong("admin-token"), help: "Bearer token that reads every artist (env BACKBEAT_ADMIN_TOKEN; required).")
    var adminToken: String?

    @Option(name: .customLong("kafka-property"), help: "Extra librdkafka consumer property key=value, repeatable (env BACKBEAT_KAFKA_PROPERTIES, comma-separated).")
    var kafkaProperties: [String] = []

    @Option(name: .customLong("memory-days"), help: "Days answered from memory besides the current month (env BACKBEAT_MEMORY_DAYS; default 62, what the summary reads with a week to spare; 0: PostgreSQL answers everything).")
    var memoryDays: Int?

    @Option(name: .customLong("memory-budget"), help: "Most bytes of cubes held in memory, e.g. 512MB; the oldest days go first (env BACKBEAT_MEMORY_BUDGET; default 512MB; 0: PostgreSQL answers everything).")
    var memoryBudget: String?

    @Option(name: .customLong("answer-cache"), help: "Most bytes of encoded dashboard answers kept and served again while nothing they read changed, e.g. 64MB, and half as many again of the parts of them read from PostgreSQL (env BACKBEAT_ANSWER_CACHE; default 64MB; 0: none kept).")
    var answerCache: String?

    @Option(name: .customLong("archive-dir"), help: "Archive every consumed message, valid or not, as zstd NDJSON segments in this directory (env BACKBEAT_ARCHIVE_DIR; default: no archive). One directory per instance.")
    var archiveDirectory: String?

    @Option(name: .customLong("archive-segment-size"), help: "Seal an archive segment at this size even before its hour ends, e.g. 128MB (env BACKBEAT_ARCHIVE_SEGMENT_SIZE; default 128MB).")
    var archiveSegmentSize: String?

    @Option(name: .customLong("pending-limit"), help: "Unflushed work (estimated bytes) beyond which consumption pauses until flushes catch up, e.g. 128MB; a sixteenth of it starts a flush before --flush-interval ends (env BACKBEAT_PENDING_LIMIT; default 128MB).")
    var pendingLimit: String?

    @Option(name: .customLong("artist-rate-limit"), help: "Requests per second each artist token may make on average, bursts of twice that; 429 beyond (env BACKBEAT_ARTIST_RATE_LIMIT; default 20; 0: no limit). The admin token is not limited.")
    var artistRateLimit: Double?

    @Option(name: .customLong("dead-letter-topic"), help: "Also send every rejected message to this Kafka topic, with its reason in headers (env BACKBEAT_DEAD_LETTER_TOPIC; default: none, rejected_events only).")
    var deadLetterTopic: String?

    @Option(name: .customLong("web-dir"), help: "The web dashboard's files, served at / (env BACKBEAT_WEB_DIR; default ./dashboards/web, then share/backbeat/web beside the binary; none found: no dashboard).")
    var webDirectory: String?

    @Option(name: .customLong("detail-days"), help: "Days of full-dimension detail (by quarter hour) kept; older months are summed into daily rows and their partitions dropped (env BACKBEAT_DETAIL_DAYS; default 90; 0: kept forever).")
    var detailDays: Int?

    @Option(name: .customLong("cube-months"), help: "Months of dashboard cubes, listener sketches and daily rows kept before the current one; older months are dropped (env BACKBEAT_CUBE_MONTHS; default 0: kept forever).")
    var cubeMonths: Int?

    @Option(name: .customLong("advertise-url"), help: "The base URL the other instances of the group reach this one at, to forward it the queries for the artists it holds in memory (env BACKBEAT_ADVERTISE_URL; default http://<hostname>:<http-port>).")
    var advertiseURL: String?

    @Option(name: .customLong("group-instance-id"), help: "This instance's name in the consumer group across restarts (Kafka static membership): restarted within session.timeout.ms it gets its partitions back without a rebalance. Unique per instance (env BACKBEAT_GROUP_INSTANCE_ID; default <hostname>-<http-port>; none: a new member at each start).")
    var groupInstanceID: String?

    @Option(name: .customLong("offset-gap-policy"), help: "When a partition's stored offset is no longer on the broker (retention deleted messages unread): resume (record the gap, go on from the first offset left) or stop (record it, consume nothing more of the partition until `backbeat offsets reset`) (env BACKBEAT_OFFSET_GAP_POLICY; default resume).")
    var offsetGapPolicy: String?

    @Flag(name: .customLong("commit-group-offsets"), help: "Also commit each flush's offsets to the Kafka consumer group, for lag tools; never read back (env BACKBEAT_COMMIT_GROUP_OFFSETS=1). Off by default: a commit that races a rebalance makes librdkafka drop the whole assignment.")
    var commitGroupOffsets = false

    @Option(name: .customLong("dev-broker-partitions"), help: "Partitions per topic of the embedded broker (default 12).")
    var devBrokerPartitions: Int32 = 12

    @Option(name: .customLong("dedup-budget"), help: "Most memory the dedup windows of the partitions this instance owns may hold together, counted at 64 bytes an id, such as 512MB; beyond it the ids nearest their expiry are forgotten early (a resend of one is counted again; backbeat_dedup_ids_forgotten_early) (env BACKBEAT_DEDUP_BUDGET; default 512MB).")
    var dedupBudget: String?

    @OptionGroup var dedupOptions: DedupOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger("backbeat")
        let topicList = (setting(topics, "BACKBEAT_TOPICS") ?? "streams,revenue,social")
            .split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !topicList.isEmpty else { throw ValidationError("--topics lists no topic") }
        guard let token = setting(adminToken, "BACKBEAT_ADMIN_TOKEN"), token.utf8.count >= 16 else {
            throw ValidationError("--admin-token or BACKBEAT_ADMIN_TOKEN is required (at least 16 characters)")
        }
        let port = try setting(httpPort.map(String.init), "BACKBEAT_HTTP_PORT", default: "8080", name: "--http-port",
                               expected: "a port 0-65535", wholeNumber(in: 0...65535))
        let interval = try setting(flushInterval, "BACKBEAT_FLUSH_INTERVAL", default: "1s", name: "--flush-interval",
                                   expected: "a duration such as 1s or 500ms", parseDuration)
        let flushLimit = try setting(flushTimeout, "BACKBEAT_FLUSH_TIMEOUT", default: "300s", name: "--flush-timeout",
                                     expected: "a duration such as 300s", parseDuration)
        let shutdownLimit = try setting(shutdownTimeout, "BACKBEAT_SHUTDOWN_TIMEOUT", default: "30s", name: "--shutdown-timeout",
                                        expected: "a duration such as 30s", parseDuration)
        let days = try setting(memoryDays.map(String.init), "BACKBEAT_MEMORY_DAYS", default: "62", name: "--memory-days",
                               expected: "a number of days 0-3660", wholeNumber(in: 0...3660))
        let budget = try setting(memoryBudget, "BACKBEAT_MEMORY_BUDGET", default: "512MB", name: "--memory-budget",
                                 expected: "a size such as 512MB", parseByteSize)
        let answerCacheBytes = try setting(answerCache, "BACKBEAT_ANSWER_CACHE", default: "64MB", name: "--answer-cache",
                                           expected: "a size such as 64MB", parseByteSize)
        let segmentBytes = try setting(archiveSegmentSize, "BACKBEAT_ARCHIVE_SEGMENT_SIZE", default: "128MB", name: "--archive-segment-size",
                                       expected: "a positive size such as 128MB", positiveByteSize)
        let rate = try setting(artistRateLimit.map { String($0) }, "BACKBEAT_ARTIST_RATE_LIMIT", default: "20", name: "--artist-rate-limit",
                               expected: "a number >= 0") { Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } }
        let pendingBytes = try setting(pendingLimit, "BACKBEAT_PENDING_LIMIT", default: "128MB", name: "--pending-limit",
                                       expected: "a positive size such as 128MB", positiveByteSize)

        let advertised = setting(advertiseURL, "BACKBEAT_ADVERTISE_URL") ?? "http://\(ProcessInfo.processInfo.hostName):\(port)"
        guard let advertisedURL = URL(string: advertised), ["http", "https"].contains(advertisedURL.scheme ?? ""), advertisedURL.host != nil else {
            throw ValidationError("--advertise-url \(advertised) is not an http(s) base URL such as http://backbeat-2:8080")
        }
        let cluster = ClusterConfiguration(
            instanceID: "\(ProcessInfo.processInfo.hostName)-\(port)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))",
            advertisedURL: advertised.hasSuffix("/") ? String(advertised.dropLast()) : advertised)

        let detail = try setting(detailDays.map(String.init), "BACKBEAT_DETAIL_DAYS", default: "90", name: "--detail-days",
                                 expected: "a number of days 0-36500", wholeNumber(in: 0...36_500))
        let cubes = try setting(cubeMonths.map(String.init), "BACKBEAT_CUBE_MONTHS", default: "0", name: "--cube-months",
                                expected: "a number of months 0-1200", wholeNumber(in: 0...1_200))
        if cubes > 0 && (detail == 0 || detail > cubes * 28) {
            throw ValidationError("--cube-months \(cubes) would drop days whose hourly detail --detail-days \(detail) keeps: keep detail at most \(cubes * 28) days")
        }

        let deadLetters = setting(deadLetterTopic, "BACKBEAT_DEAD_LETTER_TOPIC").flatMap { $0.isEmpty ? nil : $0 }
        if let deadLetters, topicList.contains(deadLetters) {
            throw ValidationError("--dead-letter-topic \(deadLetters) is also a consumed topic: rejected messages would be consumed again")
        }

        var kafka = KafkaConfiguration()
        let propertyList = kafkaProperties.isEmpty
            ? (setting(nil, "BACKBEAT_KAFKA_PROPERTIES") ?? "").split(separator: ",").map(String.init)
            : kafkaProperties
        for property in propertyList {
            let parts = property.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--kafka-property \(property) is not key=value") }
            kafka[parts[0]] = parts[1]
        }

        let instanceName = setting(groupInstanceID, "BACKBEAT_GROUP_INSTANCE_ID") ?? "\(ProcessInfo.processInfo.hostName)-\(port)"
        guard !instanceName.isEmpty, instanceName.utf8.count <= 249 else { throw ValidationError("--group-instance-id must be 1-249 characters (none: no static membership)") }
        let dedup = try dedupOptions.spans()
        let dedupBudgetBytes = try setting(dedupBudget, "BACKBEAT_DEDUP_BUDGET", default: "512MB", name: "--dedup-budget",
                                           expected: "a positive size such as 512MB", positiveByteSize)
        let gapPolicy = try setting(offsetGapPolicy, "BACKBEAT_OFFSET_GAP_POLICY", default: "resume", name: "--offset-gap-policy",
                                    expected: "resume or stop", OffsetGapPolicy.init(rawValue:))

        var devBroker: DevBroker?
        var brokerList = setting(brokers, "BACKBEAT_KAFKA_BROKERS") ?? ""
        if brokerList.isEmpty {
            let broker = try DevBroker(topics: topicList + [deadLetters].compactMap { $0 }, partitions: devBrokerPartitions)
            brokerList = broker.bootstrapServers
            devBroker = broker
            logger.notice("started the embedded dev broker (in memory, not durable)", metadata: ["bootstrap": "\(brokerList)"])
        }

        let url = try database.url()
        let migrations = try database.migrations()
        _ = try await withStore(url: url, logger: logger) { store in
            try await store.migrate(migrations)
        }

        let store = Store(url: try PostgresURL(url), logger: logger)
        let configuration = ServeConfiguration(
            ingest: IngestConfiguration(brokers: brokerList, topics: topicList, groupID: setting(group, "BACKBEAT_GROUP_ID") ?? "backbeat", flushInterval: interval, flushTimeout: flushLimit, kafka: kafka,
                memory: MemoryConfiguration(retentionDays: days, budgetBytes: budget),
                archiveDirectory: setting(archiveDirectory, "BACKBEAT_ARCHIVE_DIR"), archiveSegmentBytes: Int64(segmentBytes),
                pendingLimitBytes: pendingBytes, deadLetterTopic: deadLetters,
                groupInstanceID: instanceName == "none" ? nil : instanceName, gapPolicy: gapPolicy,
                commitGroupOffsets: commitGroupOffsets || setting(nil, "BACKBEAT_COMMIT_GROUP_OFFSETS") == "1", dedup: dedup,
                dedupBudgetBytes: dedupBudgetBytes),
            httpPort: port, adminToken: token, artistRequestsPerSecond: rate, webDirectory: try locateWebDirectory(logger: logger),
            cluster: cluster, retention: RetentionSettings(detailDays: detail, cubeMonths: cubes), answerCacheBytes: answerCacheBytes)
        let app = buildApplication(configuration: configuration, store: store, logger: logger)
        // A stop is bounded: past `shutdownLimit` what still runs is cancelled, and whatever ignores its
        // cancellation for 10 s more ends the process (a stop must never hang: a supervisor would kill it anyway).
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = shutdownLimit
        group.maximumCancellationDuration = .seconds(10)
        try await ServiceGroup(configuration: group).run()
        withExtendedLifetime(devBroker) {}
        logger.info("stopped")
    }
}

extension ServeCommand {
    /// The web dashboard's directory: `--web-dir` (which must exist), else the first of the usual places that has an
    /// index.html, else none.
    func locateWebDirectory(logger: Logger) throws -> String? {
        if let explicit = setting(webDirectory, "BACKBEAT_WEB_DIR") {
            guard FileManager.default.fileExists(atPath: explicit + "/index.html") else {
                throw ValidationError("--web-dir \(explicit) has no index.html")
            }
            return explicit
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            FileManager.default.currentDirectoryPath + "/dashboards/web",
            executable.deletingLastPathComponent().appendingPathComponent("../share/backbeat/web").standardized.path,
            "/usr/share/backbeat/web",
        ]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/index.html") }) else {
            logger.notice("no web dashboard found; pass --web-dir to serve one", metadata: ["looked_in": "\(candidates.joined(separator: ", "))"])
            return nil
        }
        return found
    }
}
