import BackbeatCore
import BackbeatKafka

/// Sends valid events back to Kafka: to their family's topic, keyed by artist.
public struct Republisher: Sendable {
    let producer: KafkaProducer
    /// The topic of each event family (stream, revenue, social), or one topic for all.
    let topics: [String]

    public init(producer: KafkaProducer, topics: [String]) {
        self.producer = producer
        self.topics = topics
    }

    func send(_ event: Event, value: UnsafeRawBufferPointer) throws {
        let topic = topics.count == 1 ? topics[0] : topics[EventType.allCases.firstIndex(of: event.type)!]
        try producer.send(topic: topic, key: Array(event.artistID.utf8), value: Array(value))
    }
}
