import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// Kill -9 and rebalances must neither lose nor double count: the rollups end equal to the ground truth.
@Suite(.serialized) struct ExactlyOnceTests {
    @Test func sigkillMidIngestStillEndsAtTheGroundTruth() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("crash")
        let workload = Workload(events: 30_000, seed: 7, invalidFraction: 0.01)
        let chunks = 6
        let chunkSize = workload.messages.count / chunks
        let (service, kills) = try await TestEnvironment.withStore(url: database) { store in
            var kills = 0
            var service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms")
            try await service.waitUntilHealthy()
            for chunk in 0..<chunks {
                try workload.publish(chunk * chunkSize..<(chunk + 1) * chunkSize, to: broker.bootstrapServers)
                guard chunk < chunks - 1 else { break }
                // Kill while the service is somewhere inside consuming and flushing this chunk.
                try await Task.sleep(for: .milliseconds(Int.random(in: 300...2500)))
                let before = try await storedOffsetTotal(store.client)
                service.kill()
                kills += 1
                let after = try await storedOffsetTotal(store.client)
                #expect(before <= after)
                service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms")
                try await service.waitUntilHealthy()
            }
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
            return (service, kills)
        }
        #expect(kills == chunks - 1)
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
        try await second.waitForLog("partitions assigned")
        try await first.waitForLog("partitions assigned", count: 2)
        #expect(first.log().contains("partitions revoked"), "the first instance gave up partitions when the second joined")
        try workload.publish(2 * quarter..<3 * quarter, to: broker.bootstrapServers)
        try await Task.sleep(for: .seconds(2))

        // The first leaves: the second takes everything over.
        #expect(first.terminate() == 0)
        try workload.publish(3 * quarter..<workload.messages.count, to: broker.bootstrapServers)

        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(90))
        }
        #expect(second.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
