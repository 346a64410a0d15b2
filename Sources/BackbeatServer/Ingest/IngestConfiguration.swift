import BackbeatCore
import BackbeatKafka

/// How the ingest path consumes and flushes.
public struct IngestConfiguration: Sendable {
    /// Kafka bootstrap servers, `host:port[,host:port...]`.
    public var brokers: String
    public var topics: [String]
    public var groupID: String
    /// How often pending deltas are written to PostgreSQL.
    public var flushInterval: Duration
    /// How long one flush may take before the ingest gives up on PostgreSQL (or the connection to it) as hung and
    /// stops with an error (`FlushHung`): a restart resumes from the offsets PostgreSQL stored.
    public var flushTimeout: Duration
    /// Most messages taken from librdkafka per poll.
    public var pollBatchSize: Int
    /// Extra librdkafka consumer properties.
    public var kafka: KafkaConfiguration
    /// What is kept in memory to answer queries.
    public var memory: MemoryConfiguration
    /// Where every consumed message is archived (nil: no archive); see `ArchiveWriter`.
    public var archiveDirectory: String?
    /// Size at which an archive segment is sealed before its hour ends.
    public var archiveSegmentBytes: Int64
    /// Unflushed work (`IngestLedger.pendingBytes`) beyond which consumption pauses until flushes bring it under half.
    public var pendingLimitBytes: Int
    /// Topic that receives every rejected message with its reason in headers (nil: `rejected_events` only).
    public var deadLetterTopic: String?
    /// This instance's name in the group across restarts (Kafka's static membership, `group.instance.id`): restarted
    /// within `session.timeout.ms` it gets its partitions back without a rebalance (nil: a new member each start).
    public var groupInstanceID: String?
    /// What happens when a partition's position is no longer on the broker.
    public var gapPolicy: OffsetGapPolicy
    /// Whether each flush's offsets are also committed to Kafka's group offsets, for lag tools (never read back).
    /// Off by default: librdkafka treats a commit refused for a stale generation, which a rebalance can cause, as
    /// the loss of the whole assignment (its unflushed work dropped), and the dev broker refuses them at every
    /// rebalance. `backbeat_consumer_lag_messages` in `/metrics` tells the lag without them.
    public var commitGroupOffsets: Bool
    /// How long each family's event ids are remembered to tell resends from new events (nil: dedup off, every valid
    /// message counted): docs/events.md, "Resent events".
    public var dedup: DedupSpans?
    /// Most bytes the owned partitions' dedup windows hold together, counted at `DedupWindow.bytesPerID` an id;
    /// beyond it the ids nearest their expiry are forgotten early.
    public var dedupBudgetBytes: Int
    /// Where the artists' recorded zones are looked up (the system's IANA database by default, `ZoneDatabase`).
    public var zoneDatabase = ZoneDatabase()

    /// Unflushed work at which a flush starts before `flushInterval` has passed: a sixteenth of `pendingLimitBytes`,
    /// so that a backlog is written in batches of bounded size, which bounds the memory a flush holds while it
    /// writes (its batch, its rows, the batch's cubes).
    public var earlyFlushBytes: Int { pendingLimitBytes / 16 }

    /// The consumer's librdkafka properties: its prefetch bounded by `pendingLimitBytes`, then `kafka`, which wins.
    ///
    /// librdkafka's defaults let the consumer queue hold 64 MB of fetched messages (and 100,000 of them) and each
    /// broker answer a fetch with up to 50 MB, whatever the pending limit. Here the queue holds at most an eighth
    /// of the limit and a fetch a sixteenth (1 to 64 MB), so librdkafka's share of memory follows the
    /// limit: docs/deployment.md, "Sizing".
    ///
    /// The bound is in bytes only: `queued.min.messages` is set out of reach. librdkafka (2.0.2) compares that
    /// count with the consumer's whole queue, to which every partition's queue is forwarded, so one fetch bringing
    /// more messages than it stops fetching from every partition until its broker thread looks again: measured
    /// with 20,000, a 1M-event backlog arrived in bursts one second apart (six alternated pairs, 13.6-18.1 s
    /// against 10.4-13.6 s).
    public var consumerProperties: KafkaConfiguration {
        let queueKilobytes = min(max(pendingLimitBytes / 8 / 1024, 1024), 2_097_151)
        let fetchBytes = min(max(pendingLimitBytes / 16, 1 << 20), 64 << 20)
        var properties = KafkaConfiguration([
            "queued.max.messages.kbytes": String(queueKilobytes),
            "queued.min.messages": "1000000",
            "fetch.max.bytes": String(fetchBytes),
        ])
        if let groupInstanceID { properties["group.instance.id"] = groupInstanceID }
        return properties.merging(kafka)
    }

    public init(
        brokers: String, topics: [String] = ["streams", "revenue", "social"], groupID: String = "backbeat",
        flushInterval: Duration = .seconds(1), flushTimeout: Duration = .seconds(300), pollBatchSize: Int = 10_000, kafka: KafkaConfiguration = KafkaConfiguration(),
        memory: MemoryConfiguration = MemoryConfiguration(), archiveDirectory: String? = nil,
        archiveSegmentBytes: Int64 = 128 << 20, pendingLimitBytes: Int = 128 << 20,
        deadLetterTopic: String? = nil, groupInstanceID: String? = nil, gapPolicy: OffsetGapPolicy = .resume,
        commitGroupOffsets: Bool = false, dedup: DedupSpans? = .standard, dedupBudgetBytes: Int = 512 << 20
    ) {
        self.dedup = dedup
        self.dedupBudgetBytes = dedupBudgetBytes
        self.commitGroupOffsets = commitGroupOffsets
        self.groupInstanceID = groupInstanceID
        self.gapPolicy = gapPolicy
        self.brokers = brokers
        self.topics = topics
        self.groupID = groupID
        self.flushInterval = flushInterval
        self.flushTimeout = flushTimeout
        self.pollBatchSize = pollBatchSize
        self.kafka = kafka
        self.memory = memory
        self.archiveDirectory = archiveDirectory
        self.archiveSegmentBytes = archiveSegmentBytes
        self.pendingLimitBytes = pendingLimitBytes
        self.deadLetterTopic = deadLetterTopic
    }
}
