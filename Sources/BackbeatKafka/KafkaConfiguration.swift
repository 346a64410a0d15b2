import BackbeatCore
import CRdKafka

/// librdkafka properties (see librdkafka's CONFIGURATION.md), turned into an `rd_kafka_conf_t` when a client is made.
public struct KafkaConfiguration: Sendable {
    public var properties: [String: String]

    public init(_ properties: [String: String] = [:]) {
        self.properties = properties
    }

    public subscript(key: String) -> String? {
        get { properties[key] }
        set { properties[key] = newValue }
    }

    /// These properties with `overrides` taking precedence.
    public func merging(_ overrides: KafkaConfiguration) -> KafkaConfiguration {
        KafkaConfiguration(properties.merging(overrides.properties) { _, new in new })
    }

    /// A new `rd_kafka_conf_t` holding every property. The caller owns it until it is passed to `rd_kafka_new`.
    func makeConf() throws -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError(message: "Kafka setting \(key): \(String(decoding: errorText.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))")
            }
        }
        return conf
    }
}

/// Makes an `rd_kafka_t`; on success librdkafka owns `conf`, on failure we destroy it.
func makeClient(type: rd_kafka_type_t, conf: OpaquePointer) throws -> OpaquePointer {
    var errorText = [CChar](repeating: 0, count: 512)
    guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
        rd_kafka_conf_destroy(conf)
        throw KafkaError(message: "cannot create Kafka client: \(String(decoding: errorText.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))")
    }
    return handle
}

/// Makes an `rd_kafka_t` whose opaque is `box`, retained for as long as the client lives (the caller releases it
/// after `rd_kafka_destroy`); `installCallbacks` sets the C callbacks on the configuration first.
func makeClient<Box: AnyObject>(
    type: rd_kafka_type_t, configuration: KafkaConfiguration, opaque box: Box, installCallbacks: (OpaquePointer) -> Void
) throws -> (handle: OpaquePointer, opaque: Unmanaged<Box>) {
    let conf = try configuration.makeConf()
    let opaque = Unmanaged.passRetained(box)
    rd_kafka_conf_set_opaque(conf, opaque.toOpaque())
    installCallbacks(conf)
    do {
        return (try makeClient(type: type, conf: conf), opaque)
    } catch {
        opaque.release()
        throw error
    }
}

/// Builds a C partition list. The caller owns the result and frees it with `rd_kafka_topic_partition_list_destroy`.
func makePartitionList(_ partitions: [(TopicPartition, Int64)]) -> UnsafeMutablePointer<rd_kafka_topic_partition_list_t> {
    let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
    for (partition, offset) in partitions {
        let element = rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition)!
        element.pointee.offset = offset
    }
    return list
}

/// Reads a C partition list into Swift values.
func readPartitionList(_ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> [TopicPartition] {
    (0..<Int(list.pointee.cnt)).map { index in
        let element = list.pointee.elems[index]
        return TopicPartition(topic: String(cString: element.topic), partition: element.partition)
    }
}
