import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// The in-memory path: answers from memory alone, from memory and PostgreSQL across an evicted range, from the
/// instance that holds an artist in memory when several share the partitions, and from PostgreSQL plus pending
/// events while no live instance holds it; always the ground truth.
@Suite(.serialized) struct MemoryPathTests {
    /// Days of memory that reach back to 2026-08-01 from today, so that the workload's days and the summary's
    /// windows (back to 2026-08-16) are all inside the retained window whatever day the tests run.
    static var coveringDays: String {
        let today = Timestamp.wallClock().daysSinceEpoch
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
        // Answers kept from an earlier request were made from memory too.
        let fromMemory = { (memory: [String: Any]) in Self.count(memory, "answered_from_memory") + Self.count(memory, "answered_from_cache") }
        #expect(fromMemory(after) > fromMemory(before) + 20)
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
        // Reads by day across the horizon take both; reads by month or in all of ended months before it, PostgreSQL's
        // month rows (docs/api.md).
        let splitCounts = try await Self.memory(split)
        #expect(Self.count(splitCounts, "answered_from_memory_and_postgres") > 0)
        #expect(Self.count(splitCounts, "answered_from_memory_and_postgres") + Self.count(splitCounts, "answered_from_postgres") > 10)

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

    /// A large answer asked of an instance that does not hold the artist, by a client that accepts zstd (curl
    /// `--compressed`): the holder's zstd frame comes back through the forwarding instance, `Content-Encoding: zstd`,
    /// and decodes to the answer a client that accepts nothing gets.
    static func expectForwardedInZstd(_ artist: String, through instance: ServiceProcess, answeredBy: String?) throws {
        let uri = instance.baseURL + "/v1/artists/\(artist)/social?from=\(EndpointChecks.from)&to=\(EndpointChecks.to)&granularity=day"
        func curl(_ options: [String]) throws -> (headers: String, body: String) {
            let headers = FileManager.default.temporaryDirectory.appendingPathComponent("headers-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: headers) }
            let (status, body) = try runToCompletion(
                "/usr/bin/curl", options + ["-sS", "-D", headers, "-H", "Authorization: Bearer \(ServiceProcess.adminToken)", uri], keepingErrors: false)
            #expect(status == 0, "curl \(options) exited \(status)")
            return (try String(contentsOfFile: headers, encoding: .utf8).lowercased(), body)
        }
        let compressed = try curl(["--compressed"])
        let plain = try curl([])
        #expect(compressed.headers.contains("content-encoding: zstd"), "\(compressed.headers)")
        #expect(compressed.headers.contains("backbeat-answered-by: \(answeredBy?.lowercased() ?? "?")"), "\(compressed.headers)")
        #expect(!plain.headers.contains("content-encoding"), "\(plain.headers)")
        #expect(plain.body.utf8.count >= 4_096 && compressed.body == plain.body, "\(plain.body.prefix(200))")
    }

    @Test func threeInstancesAnswerEveryArtistFromMemoryAndStayExactWhileOneIsKilled() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 6)
        let database = try await TestEnvironment.freshDatabase("three")
        let workload = Workload(events: 20_000, seed: 44, invalidFraction: 0.005)
        let arguments = ["--memory-days", Self.coveringDays]
        let instances = try (0..<3).map { _ in
            try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "trio", arguments: arguments)
        }
        for instance in instances {
            try await instance.waitUntilHealthy()
            try await instance.waitForLog("partitions assigned")
        }
        // Messages keyed by artist: each artist's messages arrive on one partition number of each topic, which the
        // first cooperative-sticky assignment of 18 partitions to 3 instances gives to one instance (docs/scaling.md).
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(90))
        }
        try await Self.waitUntilEveryPartitionIsLoaded(instances, count: 18)
        let checks = EndpointChecks(workload)
        let before = try await Self.totals(instances)
        for instance in instances {
            #expect(try await Self.memory(instance)["complete"] as? Bool == false, "each owns only some partitions")
            try await checks.checkEverything(instance.baseURL)
        }
        let after = try await Self.totals(instances)
        // Every dashboard answer came from memory, here or at the instance holding the artist; only the general
        // queries (not for one artist) were answered by PostgreSQL.
        #expect(after["forwarded"]! > before["forwarded"]!, "\(after)")
        #expect(after["answered_from_memory"]! + after["answered_from_cache"]! > before["answered_from_memory"]! + before["answered_from_cache"]! + 3 * 20, "\(after)")
        #expect(after["answered_from_memory_and_postgres"] == before["answered_from_memory_and_postgres"], "\(after)")
        #expect(after["answered_from_postgres"]! - before["answered_from_postgres"]! <= 3 * 2, "\(after)")
        #expect(after["forward_failures"] == 0, "\(after)")

        // Kill the instance holding the first checked artist: until its partitions are loaded elsewhere, the others
        // answer its artists from PostgreSQL; every answer on the way stays exact.
        let artist = EndpointChecks.artists[0]
        let reply = try await HTTP.get(instances[0].baseURL + "/v1/artists/\(artist)/platforms?from=\(EndpointChecks.from)&to=\(EndpointChecks.to)")
        let answeredBy = reply.headers.first { ($0.key as? String)?.lowercased() == "backbeat-answered-by" }?.value as? String
        var holderIndex = 0
        for (index, instance) in instances.enumerated() where try await Self.memory(instance)["instance_id"] as? String == answeredBy {
            holderIndex = index
        }
        let holderID = try await Self.memory(instances[holderIndex])["instance_id"] as? String
        try Self.expectForwardedInZstd(artist, through: instances[(holderIndex + 1) % 3], answeredBy: holderID)
        instances[holderIndex].kill()
        let survivors = instances.enumerated().filter { $0.offset != holderIndex }.map(\.element)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(90)
        var rounds = 0
        while clock.now < deadline {
            for survivor in survivors { try await checks.checkEverything(survivor.baseURL) }
            rounds += 1
            if try await Self.totals(survivors)["loaded_partitions"] == 18 { break }
        }
        #expect(rounds >= 2, "checked while the partitions moved")
        try await Self.waitUntilEveryPartitionIsLoaded(survivors, count: 18, timeout: .seconds(10))
        let settled = try await Self.totals(survivors)
        for survivor in survivors { try await checks.checkEverything(survivor.baseURL) }
        let last = try await Self.totals(survivors)
        #expect(last["answered_from_memory_and_postgres"] == settled["answered_from_memory_and_postgres"], "\(last)")
        #expect(last["answered_from_postgres"]! - settled["answered_from_postgres"]! <= 2 * 2, "\(last)")
        for survivor in survivors { #expect(survivor.terminate() == 0) }
        withExtendedLifetime(broker) {}
    }

    /// Waits until the instances together hold `count` partitions whole in memory, and each has read that from the
    /// others' heartbeats (so forwards where the partitions are held).
    static func waitUntilEveryPartitionIsLoaded(_ instances: [ServiceProcess], count: Int, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil(timeout: timeout, "the instances to load all \(count) partitions and see it") {
            guard try await totals(instances)["loaded_partitions"] == count else { return false }
            for instance in instances {
                let seen = try await memory(instance)["instances"] as? [[String: Any]] ?? []
                guard seen.count == instances.count, seen.reduce(0, { $0 + ($1["loaded_partitions"] as? Int ?? 0) }) == count else { return false }
            }
            return true
        }
    }

    /// The `/v1/memory` counters of some instances, added up.
    static func totals(_ instances: [ServiceProcess]) async throws -> [String: Int] {
        var sums: [String: Int] = [:]
        for instance in instances {
            for (key, value) in try await memory(instance) {
                if let number = value as? Int { sums[key, default: 0] += number }
            }
        }
        return sums
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
                // Whole months, which PostgreSQL answers from its month rows (docs/events.md "Month rows").
                "\(base)/streams?from=2026-09-01&to=2026-11-01&granularity=month", "\(base)/platforms?from=2026-09-01&to=2026-11-01",
                "\(base)/tracks/top?from=2026-08-20&to=2026-11-01&limit=8", "\(base)/revenue?from=2026-09-15&to=2026-11-01&granularity=month",
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
