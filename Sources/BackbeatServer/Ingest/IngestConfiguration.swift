import BackbeatKafka

/// How the ingest path consumes and flushes.
public struct IngestConfiguration: Sendable {
    /// Kafka bootstrap servers, `host:port[,host:port...]`.
    public var brokers: String
    public var topics: [String]
    public var groupID: String
    /// How often pending deltas are written to PostgreSQL.
    public var flushInterval: Duration
    /// Most messages taken from librdkafka per poll.
    public var pollBatchSize: Int
    /// Extra librdkafka consumer properties.
    public var kafka: KafkaConfiguration
    /// What is kept in memory to answer queries.
    public var memory: MemoryConfiguration

    public init(
        brokers: String, topics: [String] = ["streams", "revenue", "social"], groupID: String = "backbeat",
        flushInterval: Duration = .seconds(1), pollBatchSize: Int = 10_000, kafka: KafkaConfiguration = KafkaConfiguration(),
        memory: MemoryConfiguration = MemoryConfiguration()
    ) {
        self.brokers = brokers
        self.topics = topics
        self.groupID = groupID
        self.flushInterval = flushInterval
        self.pollBatchSize = pollBatchSize
        self.kafka = kafka
        self.memory = memory
    }
}
