import BackbeatKafka
import Foundation
import Synchronization

/// A plain member of a consumer group, with Backbeat's group settings, polled on a thread of its own until it
/// leaves: it takes its share of the partitions at each rebalance, at once, and counts nothing.
final class GroupMember: Sendable {
    private final class Owning: Sendable {
        let count = Atomic<Int>(0)
    }

    private let consumer: KafkaConsumer
    private let owning = Owning()
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(brokers: String, group: String, topics: [String] = ["streams", "revenue", "social"]) throws {
        let owning = owning
        consumer = try KafkaConsumer(
            brokers: brokers, groupID: group, topics: topics, logger: TestEnvironment.logger,
            onAssign: { partitions in
                owning.count.add(partitions.count, ordering: .relaxed)
                return [:]
            },
            onRevoke: { partitions, _ in owning.count.subtract(partitions.count, ordering: .relaxed) })
        Thread { [self] in
            while !stopping.load(ordering: .relaxed) { _ = consumer.poll(timeoutMs: 100, maxMessages: 1_000) }
            consumer.close()
            stopped.signal()
        }.start()
    }

    /// How many partitions it owns now.
    var owned: Int { owning.count.load(ordering: .relaxed) }

    /// Leaves the group (its partitions go back to the other members) and stops polling.
    func leave() {
        stopping.store(true, ordering: .relaxed)
        stopped.wait()
    }
}
