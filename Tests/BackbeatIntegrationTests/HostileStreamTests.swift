import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import PostgresNIO
import Testing

/// Generated hostile messages through a live service: every other message of a generated stream is mutated
/// (`HostileMutation`, the generator of the property-based test). The service must stay up, record each mutant
/// that does not validate with the reason validation gives it in process, and count every valid message, mutants
/// that happen to stay valid included: the aggregates equal the ground truth of exactly the valid ones.
@Suite(.serialized) struct HostileStreamTests {
    @Test(.seeded) func generatedHostileMessagesAreAllAnsweredByALiveService() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 6)
        let database = try await TestEnvironment.freshDatabase("hostile")
        var generator = EventGenerator(.init(seed: 41, artists: 8, days: 10, start: CivilDate(year: 2026, month: 10, day: 1)))
        let now = Timestamp.wallClock()
        var positions = TestRandom()
        var messages: [EventGenerator.Message] = []
        var expectedReasons: [String: Int64] = [:]
        for index in 0..<4_000 {
            let message = generator.next()
            guard index % 2 == 1 else {
                messages.append(message)
                continue
            }
            let mutation = HostileMutation.allCases[(index / 2) % HostileMutation.allCases.count]
            let mutant = mutation.apply(to: message.value ?? [], at: Int.random(in: 0...1_000_000, using: &positions))
            switch EventDecoder.decode(mutant, now: now) {
            case .success(let event):
                messages.append(.init(topic: message.topic, key: message.key, value: mutant, event: event))
            case .failure(let rejection):
                expectedReasons[rejection.reason.rawValue, default: 0] += 1
                messages.append(.init(topic: message.topic, key: message.key, value: mutant, event: nil))
            }
        }
        let workload = Workload(messages: messages)

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        let recordedReasons = try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(90))
            var reasons: [String: Int64] = [:]
            let rows = try await store.client.query("SELECT reason, count(*) FROM rejected_events GROUP BY reason")
            for try await (reason, count) in rows.decode((String, Int64).self) { reasons[reason] = count }
            return reasons
        }
        #expect(recordedReasons == expectedReasons)
        #expect(service.process.isRunning, "the service survived every mutant")
        #expect(service.terminate() == 0)
        print("hostile stream: \(workload.messages.count) messages, \(workload.messages.count / 2) mutants over \(HostileMutation.allCases.count) kinds, \(workload.invalidCount) rejected: \(expectedReasons.sorted { $0.key < $1.key })")
        withExtendedLifetime(broker) {}
    }
}
