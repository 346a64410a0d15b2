import BackbeatCore
import BackbeatKafka
import Logging

/// Sends each rejected message to a dead-letter topic: its key and whole value as consumed, and why and where from
/// in headers (`backbeat-reason`, `backbeat-detail`, `backbeat-topic`, `backbeat-partition`, `backbeat-offset`).
///
/// A flush sends its batch's rejections and waits for every acknowledgement before PostgreSQL commits, so a
/// rejection recorded in `rejected_events` is on the topic too. The topic is at least once: a crash or failed
/// flush after sending sends the same messages again on retry; the position headers identify duplicates.
final class DeadLetterTopic: @unchecked Sendable {
    // @unchecked: only the flush loop sends, one batch at a time.
    let topic: String
    private let producer: KafkaProducer

    init(brokers: String, topic: String, extra: KafkaConfiguration, logger: Logger) throws {
        self.topic = topic
        producer = try KafkaProducer(
            brokers: brokers, extra: KafkaConfiguration(["client.id": "backbeat-dead-letters"]).merging(extra), logger: logger)
    }

    /// Sends `rejected` and waits until all are acknowledged; throws if any is not.
    func send(_ rejected: [RejectedMessage], timeoutMs: Int32 = 30_000) throws {
        guard !rejected.isEmpty else { return }
        let failedBefore = producer.deliveries.failed
        for message in rejected {
            try producer.send(topic: topic, key: message.key, value: message.value, headers: Self.headers(message))
        }
        let deliveries = try producer.flush(timeoutMs: timeoutMs)
        guard deliveries.failed == failedBefore else {
            throw KafkaError(message: "dead-letter topic \(topic): \(deliveries.failed - failedBefore) messages not delivered (\(deliveries.lastError ?? "no reason given"))")
        }
    }

    static func headers(_ message: RejectedMessage) -> [(name: String, value: [UInt8])] {
        [
            ("backbeat-reason", Array(message.rejection.reason.rawValue.utf8)),
            ("backbeat-detail", Array(message.rejection.detail.utf8)),
            ("backbeat-topic", Array(message.position.topicPartition.topic.utf8)),
            ("backbeat-partition", Array(String(message.position.topicPartition.partition).utf8)),
            ("backbeat-offset", Array(String(message.position.offset).utf8)),
        ]
    }
}
