import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import Testing

/// Kill -9 and rebalances must neither lose nor double count: the rollups end equal to the ground truth.
@Suite(.serialized) struct ExactlyOnceTests {
    /// The crash loop: 20 SIGKILLs, each at a random moment up to 1.5 s after a chunk of events starts arriving
    /// (inside consuming, flushing or committing), each followed by a restart.
    @Test(.seeded) func twentySigkillsAtRandomMomentsStillEndAtTheGroundTruth() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("crash")
        let workload = Workload(events: 42_000, seed: 7, invalidFraction: 0.01)
        let service = try await TestEnvironment.withStore(url: database) { store in
            var random = TestRandom()
            let service = try await publishKillingServe(workload, kills: 20, to: broker.bootstrapServers, random: &random) {
                try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms")
            }
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
            return service
        }
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    @Test func twoConsumersInOneGroupSplitAndHandOverPartitions() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("rebalance")
        let workload = Workload(events: 24_000, seed: 11, invalidFraction: 0.005)
        let quarter = workload.messages.count / 4

        let first = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "shared")
        try await first.waitUntilHealthy()
        try await first.waitForLog("partitions assigned")
        try workload.publish(0..<quarter, to: broker.bootstrapServers)

        // A second instance joins: the group rebalances while events flow.
        let second = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "shared")
        try await second.waitUntilHealthy()
        try workload.publish(quarter..<2 * quarter, to: broker.bootstrapServers)
        // Incremental rebalancing: the first hands over half its partitions and keeps consuming the others.
        try await first.waitForLog("partitions revoked")
        try await second.waitForLog("partitions assigned")
        #expect(first.log().components(separatedBy: "partitions assigned").count == 2, "the first instance was assigned once: it kept what it did not hand over")
        #expect(!first.log().contains("partitions lost"), "nothing was lost to a stale generation")
        try workload.publish(2 * quarter..<3 * quarter, to: broker.bootstrapServers)
        try await Task.sleep(for: .seconds(2))  // ten flush intervals of both consuming before the first leaves

        // The first leaves: the second takes everything over.
        #expect(first.terminate() == 0)
        try workload.publish(3 * quarter..<workload.messages.count, to: broker.bootstrapServers)

        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(90))
        }
        // Each of the 12 partitions started on the second instance (half at its join, half when the first left),
        // each start observed once with the age of its first message, all within the test's minute and a half.
        let metrics = prometheusSamples(try await HTTP.get(second.baseURL + "/metrics", token: nil).text)
        let starts = metrics.total("backbeat_partition_resume_wait_seconds_count")
        #expect(starts >= 12, "every partition's start on the second instance was measured")
        #expect(metrics.total("backbeat_partition_resume_wait_seconds_bucket", "le=\"120.0\"") == starts)
        #expect(metrics.total("backbeat_partition_resume_wait_seconds_bucket", "le=\"0.5\"") < starts, "the hand-overs took time")
        #expect(second.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
