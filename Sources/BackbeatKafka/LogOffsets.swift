import BackbeatCore
import CRdKafka

/// The first offset the brokers at `brokers` still have for `partition` and the offset after its last message,
/// asked of the partition's leader with a short-lived client (for commands; a consumer asks with
/// `KafkaConsumer.queryWatermarks`).
public func brokerLogOffsets(
    brokers: String, partition: TopicPartition, extra: KafkaConfiguration = KafkaConfiguration(), timeoutMs: Int32 = 10_000
) throws -> (low: Int64, high: Int64) {
    let configuration = KafkaConfiguration(["bootstrap.servers": brokers, "client.id": "backbeat-offsets", "log_level": "3"]).merging(extra)
    let handle = try makeClient(type: RD_KAFKA_PRODUCER, conf: try configuration.makeConf())
    defer { rd_kafka_destroy(handle) }
    return try queryLogOffsets(handle, partition, timeoutMs: timeoutMs)
}

/// Asks `partition`'s leader, through client `handle`, for its log start and end (blocks up to `timeoutMs`).
func queryLogOffsets(_ handle: OpaquePointer, _ partition: TopicPartition, timeoutMs: Int32) throws -> (low: Int64, high: Int64) {
    var low: Int64 = 0
    var high: Int64 = 0
    let error = rd_kafka_query_watermark_offsets(handle, partition.topic, partition.partition, &low, &high, timeoutMs)
    guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, context: "cannot read the offsets \(partition) has") }
    return (low, high)
}
