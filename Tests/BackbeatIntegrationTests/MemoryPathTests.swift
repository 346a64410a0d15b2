import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// The in-memory path: answers from memory alone, from memory and PostgreSQL across an evicted range, and from
/// PostgreSQL plus pending events when another instance owns some partitions; always the ground truth.
@Suite(.serialized) struct MemoryPathTests {
    /// Days of memory that reach back to 2026-08-01 from today, so that the workload's days and the summary's
    /// windows (back to 2026-08-16) are all inside the retained window whatever day the tests run.
    static var coveringDays: String {
        let today = Int64(Date().timeIntervalSince1970) / 86_400
        return String(today - CivilDate(year: 2026, month: 8, day: 1).daysSinceEpoch + 1)
    }

    @Test func memoryAloneAndMemoryWithAnEvictedRangeAnswerLikePostgresAlone() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("memory")
        let workload = Workload(events: 20_000, seed: 43, invalidFraction: 0.01)
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        let checks = EndpointChecks(workload)

        // 1. Everything held in memory: dashboard queries never reach PostgreSQL.
        let full = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--memory-days", Self.coveringDays])
        try await full.waitUntilHealthy()
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(60))
        }
        try await waitUntil(timeout: .seconds(30), "memory to be complete and sealed") {
            let memory = try await Self.memory(full)
            return memory["complete"] as? Bool == true && (memory["days_sealed"] as? Int ?? 0) >= 10
        }
        let before = try await Self.memory(full)
        try await checks.checkEverything(full.baseURL)
        let after = try await Self.memory(full)
        #expect(Self.count(after, "answered_from_memory") > Self.count(before, "answered_from_memory") + 20)
        #expect(Self.count(after, "answered_from_memory_and_postgres") == 0)
        // Only the general query grouping by artist and country (no dashboard cube has both) goes to PostgreSQL.
        #expect(Self.count(after, "answered_from_postgres") - Self.count(before, "answered_from_postgres") == 1)
        let heldBytes = Self.count(after, "bytes")
        #expect(heldBytes > 0)
        #expect(full.terminate() == 0)

        // 2. A budget of half of that: the oldest days are evicted and answered by PostgreSQL, the rest by memory.
        let split = try ServiceProcess(
            brokers: broker.bootstrapServers, postgresURL: database,
            arguments: ["--memory-days", Self.coveringDays, "--memory-budget", String(heldBytes / 2)])
        try await split.waitUntilHealthy()
        try await waitUntil(timeout: .seconds(30), "the oldest days to be evicted") {
            let memory = try await Self.memory(split)
            return memory["complete"] as? Bool == true && (memory["days_dropped"] as? Int ?? 0) > 0
        }
        let horizon = try #require(try await Self.memory(split)["horizon"] as? String)
        #expect(horizon > "2026-10-01" && horizon < "2026-10-11", "the horizon \(horizon) splits the workload's days")
        try await checks.checkEverything(split.baseURL)
        #expect(Self.count(try await Self.memory(split), "answered_from_memory_and_postgres") > 10)

        // 3. The same answers from PostgreSQL alone (another group; offsets live in PostgreSQL, so it re-counts nothing).
        let postgresOnly = try ServiceProcess(
            brokers: broker.bootstrapServers, postgresURL: database, group: "postgres-only", arguments: ["--memory-days", "0"])
        try await postgresOnly.waitUntilHealthy()
        for path in Self.dashboardPaths {
            let fromSplit = try await HTTP.get(split.baseURL + path)
            let fromPostgres = try await HTTP.get(postgresOnly.baseURL + path)
            #expect(fromSplit.status == 200, "\(path): \(fromSplit.text)")
            #expect(try Self.canonical(fromSplit) == Self.canonical(fromPostgres), "\(path)")
        }
        #expect(try await Self.memory(postgresOnly)["enabled"] as? Bool == false)
        #expect(split.terminate() == 0)
        #expect(postgresOnly.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    @Test func twoInstancesInOneGroupBothAnswerEveryQuery() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("two")
        let workload = Workload(events: 20_000, seed: 44, invalidFraction: 0.005)
        let arguments = ["--memory-days", Self.coveringDays]
        let first = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "pair", arguments: arguments)
        let second = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "pair", arguments: arguments)
        try await first.waitUntilHealthy()
        try await second.waitUntilHealthy()
        try await first.waitForLog("partitions assigned")
        try await second.waitForLog("partitions assigned")
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(90))
        }
        let checks = EndpointChecks(workload)
        for instance in [first, second] {
            // Each owns only some partitions: its memory is not complete, so PostgreSQL (plus its pending events) answers.
            #expect(try await Self.memory(instance)["complete"] as? Bool == false)
            try await checks.checkEverything(instance.baseURL)
        }
        #expect(first.terminate() == 0)
        #expect(second.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    // MARK: - Helpers

    static var dashboardPaths: [String] {
        let range = "from=\(EndpointChecks.from)&to=\(EndpointChecks.to)"
        return EndpointChecks.artists.flatMap { artist in
            let base = "/v1/artists/\(artist)"
            return [
                "\(base)/streams?\(range)&granularity=day", "\(base)/streams?\(range)&granularity=week&platform=tidal",
                "\(base)/streams?from=2026-10-03T00:00:00Z&to=2026-10-08T12:00:00Z&granularity=hour",
                "\(base)/platforms?\(range)", "\(base)/demographics?\(range)", "\(base)/tracks/top?\(range)&limit=8",
                "\(base)/revenue?\(range)&granularity=month", "\(base)/social?\(range)&granularity=day",
                "\(base)/summary?as_of=2026-10-11", "\(base)/summary?as_of=2026-10-06", "\(base)/summary?as_of=2026-11-08",
            ]
        }
    }

    static func memory(_ service: ServiceProcess) async throws -> [String: Any] {
        try #require(try await HTTP.get(service.baseURL + "/v1/memory").json() as? [String: Any])
    }

    static func count(_ memory: [String: Any], _ key: String) -> Int {
        memory[key] as? Int ?? -1
    }

    /// A JSON body with its keys sorted, so that two answers compare by content.
    static func canonical(_ reply: HTTP.Reply) throws -> Data {
        try JSONSerialization.data(withJSONObject: try reply.json(), options: [.sortedKeys])
    }
}
