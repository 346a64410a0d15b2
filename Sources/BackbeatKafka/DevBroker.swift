import CRdKafka

/// A local Kafka-protocol broker for development and tests, built on librdkafka's mock cluster.
///
/// It speaks the real protocol on loopback TCP (consumer groups, offset commits) but keeps everything in memory,
/// keeps only about 5 MB per partition (older messages are dropped), and is gone when the process exits.
public final class DevBroker: @unchecked Sendable {
    // @unchecked: the handles are created in init and destroyed in deinit; the mock cluster API is thread-safe.

    private let handle: OpaquePointer
    private let cluster: OpaquePointer
    /// The `host:port` list clients bootstrap from.
    public let bootstrapServers: String

    /// Starts `brokers` mock brokers and creates `topics` with `partitions` partitions each.
    public init(brokers: Int32 = 1, topics: [String], partitions: Int32) throws {
        let conf = try KafkaConfiguration(["client.id": "backbeat-dev-broker", "log_level": "3"]).makeConf()
        handle = try makeClient(type: RD_KAFKA_PRODUCER, conf: conf)
        guard let cluster = rd_kafka_mock_cluster_new(handle, brokers) else {
            rd_kafka_destroy(handle)
            throw KafkaError(message: "cannot start the mock Kafka cluster")
        }
        self.cluster = cluster
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        for topic in topics {
            let error = rd_kafka_mock_topic_create(cluster, topic, partitions, 1)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(error, context: "cannot create topic \(topic)")
            }
        }
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        rd_kafka_destroy(handle)
    }

    /// Protocol request kinds (Kafka API keys) whose next requests `failNextRequests` can fail.
    public enum Request: Int16, Sendable, CaseIterable {
        case produce = 0, fetch = 1, listOffsets = 2, metadata = 3, offsetCommit = 8, offsetFetch = 9,
             findCoordinator = 10, joinGroup = 11, heartbeat = 12, syncGroup = 14
    }

    /// Makes the next `errors.count` requests of kind `request`, from any client, fail with `errors` in order
    /// (Kafka error codes such as 7, request timed out), for fault tests.
    public func failNextRequests(_ request: Request, with errors: [Int32]) {
        let codes = errors.map { rd_kafka_resp_err_t(rawValue: $0) }
        codes.withUnsafeBufferPointer { buffer in
            rd_kafka_mock_push_request_errors_array(cluster, request.rawValue, buffer.count, buffer.baseAddress)
        }
    }

    /// Delays every response of broker `id` (1-based; -1: all) by `milliseconds` (0: none), for fault tests: a broker
    /// that takes requests and does not answer, as over a hung network.
    public func delayResponses(of id: Int32, milliseconds: Int32) throws {
        let error = rd_kafka_mock_broker_set_rtt(cluster, id, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, context: "cannot delay the responses of broker \(id)") }
    }

    /// Takes broker `id` (1-based; -1: all) down or brings it back, for fault tests. Down, a broker drops its
    /// connections and refuses new ones; its partitions keep it as leader.
    public func setBroker(_ id: Int32, up: Bool) throws {
        let error = up ? rd_kafka_mock_broker_set_up(cluster, id) : rd_kafka_mock_broker_set_down(cluster, id)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, context: "cannot take broker \(id) \(up ? "up" : "down")") }
    }
}
