import BackbeatCore
import BackbeatKafka

/// Sends valid events back to Kafka: to their family's topic, keyed by artist.
public struct Republisher: Sendable {
    let producer: KafkaProducer
    /// The topic of each event family (stream, revenue, social, page: `EventType.topic(among:)`), or one topic for all.
    let topics: [String]

    public init(producer: KafkaProducer, topics: [String]) {
        self.producer = producer
        self.topics = topics
    }

    func send(_ event: Event, value: UnsafeRawBufferPointer) throws {
        guard let topic = event.type.topic(among: topics) else {
            throw ReplayError("a \(event.type) event and no topic for it: --topics lists one topic, or four (streams, revenue, social, page)")
        }
        try producer.send(topic: topic, key: Array(event.artistID.utf8), value: Array(value))
    }
}
