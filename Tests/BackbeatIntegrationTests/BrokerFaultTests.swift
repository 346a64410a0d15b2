import BackbeatKafka
import Dispatch
import Foundation
import Testing

/// Broker faults through the mock cluster's fault API: failed requests of every kind the service sends, and each
/// broker taken down in turn while events arrive. The aggregates still end equal to the ground truth.
@Suite(.serialized) struct BrokerFaultTests {
    // Kafka error codes.
    static let requestTimedOut: Int32 = 7, notLeader: Int32 = 6, networkException: Int32 = 13, storageError: Int32 = 56
    static let coordinatorNotAvailable: Int32 = 15, notCoordinator: Int32 = 16, coordinatorLoading: Int32 = 14
    static let rebalanceInProgress: Int32 = 27, unknownMember: Int32 = 25

    /// The errors pushed per request kind: retriable ones, and group errors that force the consumer to rejoin.
    static let injected: [(DevBroker.Request, [Int32])] = [
        (.fetch, Array(repeating: requestTimedOut, count: 10) + Array(repeating: notLeader, count: 10)
            + Array(repeating: networkException, count: 5) + Array(repeating: storageError, count: 5)),
        (.produce, Array(repeating: requestTimedOut, count: 5) + Array(repeating: notLeader, count: 5)),
        (.metadata, Array(repeating: requestTimedOut, count: 5)),
        (.offsetCommit, [coordinatorNotAvailable, notCoordinator, coordinatorLoading, requestTimedOut, requestTimedOut]),
        (.heartbeat, [rebalanceInProgress, notCoordinator, unknownMember, rebalanceInProgress]),
        (.findCoordinator, [coordinatorNotAvailable, coordinatorNotAvailable]),
        (.joinGroup, [coordinatorLoading, notCoordinator]),
        (.syncGroup, [rebalanceInProgress]),
    ]

    @Test func requestErrorsAndBrokersGoingDownLoseNothing() async throws {
        let broker = try DevBroker(brokers: 3, topics: ["streams", "revenue", "social"], partitions: 6)
        let database = try await TestEnvironment.freshDatabase("brokerfaults")
        let workload = Workload(events: 25_000, seed: 23, invalidFraction: 0.01)
        let fifth = workload.messages.count / 5

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms",
                                         arguments: ["--log-format", "json"])
        try await service.waitUntilHealthy()
        try await service.waitForLog("partitions assigned")
        try workload.publish(0..<fifth, to: broker.bootstrapServers)

        // Each broker down in turn for 3 s (15 flush intervals) while a chunk is published: the publish waits for
        // the broker to come back, the service reconnects.
        for id in Int32(1)...3 {
            try broker.setBroker(id, up: false)
            DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
                do { try broker.setBroker(id, up: true) } catch { Issue.record(error) }
            }
            try workload.publish(Int(id) * fifth..<(Int(id) + 1) * fifth, to: broker.bootstrapServers)
            try await Task.sleep(for: .seconds(1))
        }
        try await Task.sleep(for: .seconds(3))  // every broker is up again

        // Then request errors, pushed while the last events are published and consumed. Not both at once: the
        // group errors make the service rejoin, and the dev broker (librdkafka 2.0.2's mock cluster) aborts the
        // process when a member's SyncGroup is sent again after its coordinator went down while holding the first
        // (rdkafka_mock_cgrp.c: `!member->resp`), a fault of the mock, not of the protocol.
        for (request, errors) in Self.injected { broker.failNextRequests(request, with: errors) }
        try workload.publish(4 * fifth..<workload.messages.count, to: broker.bootstrapServers)

        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
        }
        #expect(service.terminate() == 0)
        try expectJSONLines(service.log())
        let faults = Self.injected.reduce(0) { $0 + $1.1.count }
        print("broker faults: \(workload.messages.count) messages, \(faults) request errors, 3 brokers down 3 s each")
        withExtendedLifetime(broker) {}
    }

    /// The broker stops answering while the service consumes (it takes requests and answers none), then the service
    /// is told to stop: leaving the group cannot finish (librdkafka waits for the broker), but the stop is bounded and
    /// ends with status 0 after the final flush. (What was consumed and not flushed is consumed again by the next
    /// instance: the exactly-once tests cover that.)
    @Test func aStopWhileTheBrokerDoesNotAnswerIsBounded() async throws {
        var broker: DevBroker? = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 12)
        let bootstrap = try #require(broker).bootstrapServers
        let database = try await TestEnvironment.freshDatabase("brokergone")
        let workload = Workload(events: 30_000, seed: 29, invalidFraction: 0.01)
        // librdkafka's default session timeout (45 s), not the tests' short one: closing waits up to that long. A
        // dynamic member: a static one (`--group-instance-id`) does not leave the group when it closes, so its close
        // has nothing to wait for.
        let service = try ServiceProcess(brokers: bootstrap, postgresURL: database, flushInterval: "200ms",
                                         arguments: ["--kafka-property", "session.timeout.ms=45000", "--group-instance-id", "none"])
        try await service.waitUntilHealthy()
        try await service.waitForLog("partitions assigned")
        try workload.publish(0..<workload.messages.count, to: bootstrap)
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "some events to be flushed") { try await storedOffsetTotal(store.client) > 0 }
        }

        // The broker takes requests and answers none (a hung network): leaving the group cannot complete, whatever
        // librdkafka knows of its coordinator. (A broker destroyed instead sometimes lets the close return at once.)
        try #require(broker).delayResponses(of: -1, milliseconds: 600_000)
        try await Task.sleep(for: .seconds(2))
        let stopping = ContinuousClock.now
        let status = service.terminate(deadline: .seconds(60))
        let took = ContinuousClock.now - stopping
        #expect(status == 0 && took < .seconds(25), "stopped after \(took) with status \(status); log: \(service.log())")
        #expect(service.log().contains("ingest stopped"))
        // The leave never completed: the stop's own limit ended the wait, or librdkafka's request timeout did first.
        let log = service.log()
        #expect(log.contains("could not leave the consumer group") || log.contains("Timed out LeaveGroupRequest"),
                "the stop did not wait for the group")
        broker = nil
    }

    /// With `--log-format json` every line of the log, librdkafka's included, is one JSON object with the fixed fields.
    func expectJSONLines(_ log: String) throws {
        let lines = log.split(separator: "\n")
        #expect(lines.count > 10)
        var fromLibrdkafka = 0
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            #expect(object != nil, "not a JSON object of strings: \(line.prefix(200))")
            guard let object else { continue }
            #expect(["time", "level", "label", "message", "source"].allSatisfy { object[$0] != nil })
            if object["librdkafka"] != nil { fromLibrdkafka += 1 }
        }
        #expect(fromLibrdkafka > 0, "brokers going down make librdkafka log, through the same logger")
    }
}
