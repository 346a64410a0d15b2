import BackbeatKafka
import BackbeatTestSupport
import Foundation
import Testing

/// A rebalance storm: instances join and leave one group again and again (clean stops and SIGKILLs) while events
/// arrive. After each change the test waits for the group to hand partitions out again, then lets the instances
/// consume for a random moment before the next change, so that every handover moves partitions with work in flight.
/// Every handover is exact: the aggregates end equal to the ground truth, and each instance's first message of a
/// partition it starts is the one at the stored offset.
@Suite(.serialized) struct RebalanceStormTests {
    enum Step { case join, leave, kill }

    static let steps: [Step] = [.join, .join, .leave, .join, .kill, .join, .leave, .join, .join, .leave, .kill, .leave]

    @Test(.seeded) func instancesJoiningAndLeavingRepeatedlyLoseNothing() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 6)
        let database = try await TestEnvironment.freshDatabase("storm")
        let workload = Workload(events: 26_000, seed: 31, invalidFraction: 0.01)
        let chunk = workload.messages.count / (Self.steps.count + 1)

        func start() throws -> ServiceProcess {
            try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "storm", flushInterval: "200ms")
        }
        var instances = [try start()]
        var stopped: [ServiceProcess] = []
        try await instances[0].waitForLog("partitions assigned")
        var rebalances = 0
        var random = TestRandom()
        for (index, step) in Self.steps.enumerated() {
            try workload.publish(index * chunk..<(index + 1) * chunk, to: broker.bootstrapServers)
            let before = Dictionary(uniqueKeysWithValues: instances.map { (ObjectIdentifier($0), Self.assignments($0)) })
            switch step {
            case .join:
                instances.append(try start())
            case .leave:
                stopped.append(instances.removeFirst())
                #expect(stopped.last?.terminate() == 0)
            case .kill:
                stopped.append(instances.removeFirst())
                stopped.last?.kill()
            }
            try await waitUntil(timeout: .seconds(40), "the group to assign partitions after step \(index) (\(step))") {
                instances.contains { Self.assignments($0) > before[ObjectIdentifier($0), default: 0] }
            }
            rebalances += 1
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...1500, using: &random)))
        }
        #expect(!instances.isEmpty)
        try workload.publish(Self.steps.count * chunk..<workload.messages.count, to: broker.bootstrapServers)

        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
        }
        for instance in instances { #expect(instance.terminate() == 0) }
        let skipped = PartitionOwnership.startsPastTheStoredOffset((stopped + instances).map { $0.log() })
        #expect(skipped.isEmpty, "every partition consumed from its stored offset on: \(skipped)")
        print("rebalance storm: \(workload.messages.count) messages, \(rebalances) membership changes")
        withExtendedLifetime(broker) {}
    }

    /// Assignments `instance` has logged so far.
    static func assignments(_ instance: ServiceProcess) -> Int {
        instance.log().components(separatedBy: "partitions assigned").count - 1
    }
}
