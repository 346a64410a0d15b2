import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import Synchronization
import Testing

/// A rolling deploy with crashes under continuous production, with Backbeat's own group settings: three instances
/// in one group, events published all along, and every 20 s one instance SIGKILLed or stopped with SIGTERM, then
/// started again. Every acknowledged event ends counted exactly once, no partition stays without an owner for 30 s
/// (read from the assignments in the logs), no message waits 30 s to be consumed again after a hand-over (as the
/// instances report it), and nothing falls off the broker unread (no `offset_gaps` row).
///
/// The instances are dynamic members (`--group-instance-id none`): the dev broker does not implement static
/// membership, so there a static member that stops is waited for until its session times out even though it comes
/// back at once under its name, which a real broker recognizes (docs/operations.md). A dynamic member leaves when it
/// stops, which is what the dev broker can show.
@Suite(.serialized) struct ChurnTests {
    static let duration: Duration = .seconds(240)
    static let churnEvery: Duration = .seconds(20)
    static let eventsPerSecond = 400

    @Test(.seeded) func killingOrStoppingAnInstanceEvery20SecondsLosesNothingAndStallsNoPartition() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("churn")
        let seconds = Int(Self.duration.components.seconds)
        let workload = Workload(events: Self.eventsPerSecond * seconds, seed: 41, invalidFraction: 0.005)

        func start(_: Int) throws -> ServiceProcess {
            try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "churn",
                               arguments: ["--group-instance-id", "none"], kafkaProperties: "")
        }
        var instances = try (0..<3).map(start)
        for instance in instances { try await instance.waitUntilHealthy() }
        try await instances[0].waitForLog("partitions assigned")
        var lives: [PartitionOwnership.Life] = []
        let begin = Date()

        // Publishes at a steady pace, in tenths of a second, until every message is acknowledged.
        let producing = Task.detached { () throws -> Int in
            let producer = try KafkaProducer(brokers: broker.bootstrapServers)
            let perTick = Self.eventsPerSecond / 10
            let clock = ContinuousClock()
            var next = clock.now
            for start in stride(from: 0, to: workload.messages.count, by: perTick) {
                for message in workload.messages[start..<min(start + perTick, workload.messages.count)] {
                    try producer.send(topic: Workload.topic(message.topic), key: Array(message.key.utf8), value: message.value)
                }
                next += .milliseconds(100)
                try await clock.sleep(until: next)
            }
            return try producer.flush().failed
        }

        var random = TestRandom()
        var changes: [String] = []
        let clock = ContinuousClock()
        let end = clock.now + Self.duration
        var round = 0
        while clock.now + Self.churnEvery <= end {
            try await Task.sleep(for: Self.churnEvery)
            let slot = round % 3
            let crash = Bool.random(using: &random)
            if crash {
                instances[slot].kill()
            } else {
                #expect(instances[slot].terminate() == 0)
            }
            lives.append(.init(log: instances[slot].log(), end: Date()))
            changes.append("\(crash ? "kill" : "stop") churn-\(slot)")
            instances[slot] = try start(slot)
            round += 1
        }
        let failed = try await producing.value
        #expect(failed == 0, "every message acknowledged by the broker")
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(180))
            let gaps = try await store.offsetGaps()
            #expect(gaps.isEmpty, "nothing fell off the broker unread: \(gaps)")
        }
        let checks = EndpointChecks(workload)
        for instance in instances { try await checks.checkEverything(instance.baseURL) }
        let finish = Date()
        lives += instances.map { .init(log: $0.log(), end: nil) }
        let stall = try #require(PartitionOwnership.longestUnowned(lives, from: begin, to: finish))
        let wait = try #require(PartitionOwnership.longestResumeWait(lives), "the instances report each partition's wait")
        print("churn: \(workload.messages.count) messages at \(Self.eventsPerSecond)/s, \(changes.count) changes (\(changes.joined(separator: ", "))); longest unowned stretch \(stall.seconds) s (\(stall.partition)); longest wait reported by an instance \(wait.seconds) s (\(wait.partition))")
        #expect(stall.seconds < 30, "partition \(stall.partition) had no owner for \(stall.seconds) s")
        #expect(wait.seconds < 30, "a message of \(wait.partition) waited \(wait.seconds) s to be consumed")
        let skipped = PartitionOwnership.startsPastTheStoredOffset(lives.map(\.log))
        #expect(skipped.isEmpty, "every partition consumed from its stored offset on: \(skipped)")
        for instance in instances { #expect(instance.terminate() == 0) }
        withExtendedLifetime(broker) {}
    }
}
