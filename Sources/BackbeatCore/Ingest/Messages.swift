/// A Kafka topic partition.
public struct TopicPartition: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)/\(partition)" }

    public static func < (lhs: TopicPartition, rhs: TopicPartition) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}

/// Where a message sits in Kafka.
public struct MessagePosition: Hashable, Sendable {
    public var topicPartition: TopicPartition
    public var offset: Int64

    public init(topicPartition: TopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }
}

/// A consumed message, owned by Swift (the C buffers are copied out).
public struct ConsumedMessage: Equatable, Sendable {
    public var position: MessagePosition
    public var key: [UInt8]?
    public var value: [UInt8]?
    /// The message's Kafka timestamp (create or log-append time), in milliseconds since 1970; nil when unknown.
    public var timestampMilliseconds: Int64?

    public init(position: MessagePosition, key: [UInt8]?, value: [UInt8]?, timestampMilliseconds: Int64? = nil) {
        self.position = position
        self.key = key
        self.value = value
        self.timestampMilliseconds = timestampMilliseconds
    }
}
