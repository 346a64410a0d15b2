import BackbeatKafka
import Foundation
import PostgresNIO
import Testing

/// PostgreSQL down for longer than many flush intervals: consumption pauses at the pending bound instead of growing,
/// readiness says so, and once the database is back every event is counted exactly once.
@Suite(.serialized) struct PostgresOutageTests {
    /// Runs scripts/lib/pg-instance with `arguments`; returns its output. (Output goes through a file: the server
    /// it starts must not hold a pipe of ours open.)
    @discardableResult
    static func pgInstance(_ arguments: [String]) throws -> String {
        let outputPath = NSTemporaryDirectory() + "pg-instance-\(UInt32.random(in: 0...UInt32.max)).out"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = Process()
        process.executableURL = TestEnvironment.packageRoot.appendingPathComponent("scripts/lib/pg-instance")
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        return try String(contentsOfFile: outputPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The offsets a stopping service logged as those the next start resumes from equal what PostgreSQL stored.
    static func expectLoggedOffsetsStored(_ log: String, in database: String) async throws {
        let line = try #require(log.split(separator: "\n").last { $0.contains("the next start resumes from the offsets PostgreSQL stored") })
        let logged = try #require(line.firstRange(of: /resume_offsets=([^ ]*)/).map { String(line[$0]).dropFirst("resume_offsets=".count) })
        let stored = try await TestEnvironment.withStore(url: database) { store in
            var stored: [String] = []
            for try await (topic, partition, offset) in try await store.client.query(
                "SELECT topic, partition, next_offset FROM kafka_offsets ORDER BY topic, partition").decode((String, Int32, Int64).self) {
                stored.append("\(topic)/\(partition):\(offset)")
            }
            return stored
        }
        #expect(!stored.isEmpty)
        #expect(logged.split(separator: ",").map(String.init) == stored, "\(line)")
    }

    /// Waits until `service` has consumed `count` messages (`/metrics`), flushed or not.
    static func waitUntilConsumed(_ count: Int, by service: ServiceProcess) async throws {
        try await waitUntil(timeout: .seconds(60), "\(count) messages to be consumed") {
            let samples = prometheusSamples(try await HTTP.get(service.baseURL + "/metrics", token: nil).text)
            return samples.total("backbeat_events_consumed_total") == Double(count)
        }
    }

    static func readiness(_ service: ServiceProcess) async throws -> [String: Any] {
        try #require(try await HTTP.get(service.baseURL + "/readyz", token: nil).json() as? [String: Any])
    }

    /// A throw-away PostgreSQL, a dev broker (three topics of four partitions) and a service flushing to them every
    /// 200 ms, with the first `flushed` messages of its workload published and flushed.
    struct Flushing {
        var directory: String
        var port: String
        var database: String
        var broker: DevBroker
        var service: ServiceProcess

        init(_ workload: Workload, upTo flushed: Int, arguments: [String]) async throws {
            let instance = try PostgresOutageTests.pgInstance(["start"]).split(separator: " ").map(String.init)
            (directory, port) = (instance[0], instance[1])
            database = "postgres://postgres@127.0.0.1:\(port)/backbeat"
            do {
                broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
                service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms",
                                             arguments: arguments)
                try await service.waitUntilHealthy()
                try await service.waitForLog("partitions assigned")
                try workload.publish(0..<flushed, to: broker.bootstrapServers)
                try await TestEnvironment.withStore(url: database) { [database] store in
                    try await waitUntil(timeout: .seconds(60), "the first \(flushed) messages to be flushed") {
                        try await storedOffsetTotal(store.client) == Int64(flushed)
                    }
                }
            } catch {
                Self.remove(directory)
                throw error
            }
        }

        /// A service (memory off) that flushed the first half of `workload`, then consumed the rest while PostgreSQL
        /// hangs.
        static func consumingWhilePostgresHangs(_ workload: Workload) async throws -> Flushing {
            let half = workload.messages.count / 2
            let run = try await Flushing(workload, upTo: half, arguments: ["--memory-days", "0"])
            do {
                try run.freezeAndPublish(workload, half..<workload.messages.count)
                try await PostgresOutageTests.waitUntilConsumed(workload.messages.count, by: run.service)
            } catch {
                remove(run.directory)
                throw error
            }
            return run
        }

        /// Makes PostgreSQL hang (`pg-instance freeze`), then publishes `range` of `workload`.
        func freezeAndPublish(_ workload: Workload, _ range: Range<Int>) throws {
            try PostgresOutageTests.pgInstance(["freeze", directory])
            try workload.publish(range, to: broker.bootstrapServers)
        }

        /// Lets the frozen PostgreSQL run again; then a new instance counts every event of `workload` once.
        func thawAndExpectTheNextInstanceToCountEverything(_ workload: Workload) async throws {
            try PostgresOutageTests.pgInstance(["thaw", directory])
            let next = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms", arguments: ["--memory-days", "0"])
            try await next.waitUntilHealthy()
            try await TestEnvironment.withStore(url: database) { store in
                try await expectGroundTruth(workload, in: store, within: .seconds(60))
            }
            #expect(next.terminate() == 0)
            withExtendedLifetime(broker) {}
        }

        /// Deletes a PostgreSQL instance, frozen or not.
        static func remove(_ directory: String) {
            _ = try? PostgresOutageTests.pgInstance(["thaw", directory])
            _ = try? PostgresOutageTests.pgInstance(["remove", directory])
        }
    }

    @Test func anOutageLongerThanTheFlushIntervalPausesConsumptionAndLosesNothing() async throws {
        let workload = Workload(events: 30_000, seed: 31, invalidFraction: 0.01)
        let third = workload.messages.count / 3
        let limit = 256 * 1024
        let run = try await Flushing(workload, upTo: third,
                                     arguments: ["--pending-limit", String(limit), "--memory-days", "0",
                                                 // Fast failover as in every test, and a small prefetch: what librdkafka
                                                 // fetched before the pause still arrives, on top of the bound.
                                                 "--kafka-property", "session.timeout.ms=6000", "--kafka-property", "heartbeat.interval.ms=500",
                                                 "--kafka-property", "queued.max.messages.kbytes=64", "--kafka-property", "fetch.max.bytes=1048576",
                                                 "--kafka-property", "max.partition.fetch.bytes=16384"])
        let (directory, port, database, broker, service) = (run.directory, run.port, run.database, run.broker, run.service)
        defer { Flushing.remove(directory) }

        // The database goes away; events keep coming.
        try Self.pgInstance(["stop", directory])
        try workload.publish(third..<workload.messages.count, to: broker.bootstrapServers)
        try await service.waitForLog("pausing consumption", timeout: .seconds(60))
        try await Task.sleep(for: .seconds(5))  // 25 flush intervals
        let down = try await Self.readiness(service)
        #expect(down["status"] as? String == "not_ready" && down["postgres"] as? String == "unreachable", "\(down)")
        #expect(down["ingest"] as? String == "paused", "\(down)")
        let pending = try #require(down["pending_bytes"] as? Int)
        #expect(pending < 8 * limit, "memory stays near the bound while paused: \(pending) bytes pending, limit \(limit)")

        try Self.pgInstance(["resume", directory, port])
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
        }
        try await service.waitForLog("resuming consumption")
        try await waitUntil(timeout: .seconds(30), "readiness to recover") {
            (try await Self.readiness(service))["status"] as? String == "ready"
        }
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    /// PostgreSQL refuses connections when the service is told to stop, with consumed events not yet flushed: at
    /// default settings the stop ends within 5 s (nothing can be flushed, and what was not is consumed again from the
    /// stored offsets, which the log names), and the next instance counts every event once.
    @Test func aStopWhilePostgreSQLRefusesConnectionsIsQuickAndLosesNothing() async throws {
        let workload = Workload(events: 6_000, seed: 43, invalidFraction: 0.01)
        let half = workload.messages.count / 2
        let run = try await Flushing(workload, upTo: half, arguments: ["--memory-days", "0"])
        defer { Flushing.remove(run.directory) }
        let service = run.service

        try Self.pgInstance(["stop", run.directory])
        try workload.publish(half..<workload.messages.count, to: run.broker.bootstrapServers)
        try await Self.waitUntilConsumed(workload.messages.count, by: service)
        let stopping = ContinuousClock.now
        let status = service.terminate(deadline: .seconds(40))
        let took = ContinuousClock.now - stopping
        #expect(status != -1 && took < .seconds(5), "stopped after \(took) (status \(status)); log: \(service.log())")
        #expect(service.log().contains("the next start resumes from the offsets PostgreSQL stored"), "\(service.log())")

        try Self.pgInstance(["resume", run.directory, run.port])
        try await Self.expectLoggedOffsetsStored(service.log(), in: run.database)
        try await run.thawAndExpectTheNextInstanceToCountEverything(workload)
    }

    /// PostgreSQL hangs while the group rebalances twice (a second member joins and takes a share of the partitions,
    /// then leaves and hands them back): the service's rebalance callbacks return within 100 ms each, since none waits
    /// for PostgreSQL, and the group never evicts it (none of its partitions is lost); once PostgreSQL answers again,
    /// every event is counted exactly once.
    @Test func aRebalanceWhilePostgreSQLHangsDoesNotWaitForIt() async throws {
        let workload = Workload(events: 6_000, seed: 43, invalidFraction: 0.01)
        let run = try await Flushing.consumingWhilePostgresHangs(workload)
        defer { Flushing.remove(run.directory) }
        let service = run.service

        let member = try GroupMember(brokers: run.broker.bootstrapServers, group: "backbeat-test")
        try await waitUntil(timeout: .seconds(60), "the second member to be assigned partitions") { member.owned > 0 }
        try await service.waitForLog("partitions revoked")
        member.leave()
        try await service.waitForLog("partitions assigned", count: 2, timeout: .seconds(60))
        let callbacks = service.log().split(separator: "\n").filter {
            $0.hasSuffix("partitions assigned") || $0.hasSuffix("partitions revoked") || $0.hasSuffix("partitions lost")
        }
        let took = callbacks.compactMap { $0.firstMatch(of: /callback_ms=([0-9]+)/).flatMap { Int($0.1) } }
        print("rebalances while PostgreSQL hangs: the callbacks took \(took) ms")
        #expect(took.count == callbacks.count && took.count >= 3, "\(callbacks)")
        #expect(took.allSatisfy { $0 < 100 }, "each callback returned within 100 ms: \(callbacks)")
        #expect(!callbacks.contains { $0.hasSuffix("partitions lost") }, "the group did not evict the service: \(callbacks)")

        try await run.thawAndExpectTheNextInstanceToCountEverything(workload)
    }

    /// PostgreSQL hangs (its processes stopped: connections stay open, nothing answers) when the service is told to
    /// stop, with a flush stuck on it: at default settings the stop ends within `--shutdown-timeout` (30 s) + 5 s,
    /// naming the offsets the next start resumes from, and nothing is lost: the next instance consumes what was not
    /// flushed and counts everything once.
    @Test func aStopWhilePostgreSQLHangsIsBoundedAndLosesNothing() async throws {
        let workload = Workload(events: 6_000, seed: 37, invalidFraction: 0.01)
        let run = try await Flushing.consumingWhilePostgresHangs(workload)
        defer { Flushing.remove(run.directory) }
        let service = run.service

        try await Task.sleep(for: .seconds(1))  // five flush intervals: a flush is stuck on the hung database
        let stopping = ContinuousClock.now
        let status = service.terminate(deadline: .seconds(60))
        let took = ContinuousClock.now - stopping
        #expect(status != -1 && took < .seconds(35), "stopped after \(took) (status \(status)); log: \(service.log())")
        #expect(service.log().contains("the next start resumes from the offsets PostgreSQL stored"), "\(service.log())")

        try await run.thawAndExpectTheNextInstanceToCountEverything(workload)
    }

    /// A rebalance hands the service partitions whose days memory must then read from PostgreSQL, and that read
    /// waits (a lock held on a table it reads): a stop gives the read up at once rather than waiting out
    /// `--shutdown-timeout`, past which the process would end by crashing. Nothing is lost.
    @Test func aStopWhileMemoryWaitsForPostgreSQLIsQuick() async throws {
        let workload = Workload(events: 6_000, seed: 47, invalidFraction: 0.01)
        let run = try await Flushing(workload, upTo: workload.messages.count, arguments: [])
        defer { Flushing.remove(run.directory) }
        let service = run.service
        try await service.waitForLog("answering from memory: loaded the retained window")

        try await TestEnvironment.withStore(url: run.database) { store in
            try await store.client.withConnection { holder in
                try await holder.query("BEGIN")
                try await holder.query("LOCK TABLE track_listeners_days IN ACCESS EXCLUSIVE MODE")
                let member = try GroupMember(brokers: run.broker.bootstrapServers, group: "backbeat-test")
                try await waitUntil(timeout: .seconds(60), "the second member to be assigned partitions") { member.owned > 0 }
                try await service.waitForLog("partitions revoked")
                member.leave()
                try await service.waitForLog("partitions assigned", count: 2, timeout: .seconds(60))
                try await waitUntil(timeout: .seconds(30), "the window's read to wait for the lock") {
                    let rows = try await store.client.query("""
                        SELECT count(*)::bigint FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%track_listeners_daily%'
                        """).collect()
                    return try rows[0].decode(Int64.self) == 1
                }
                let stopping = ContinuousClock.now
                let status = service.terminate(deadline: .seconds(60))
                let took = ContinuousClock.now - stopping
                #expect(status == 0 && took < .seconds(10), "stopped after \(took) (status \(status)); log: \(service.log())")
                #expect(service.log().contains("the read of the in-memory window is given up"), "\(service.log())")
                try await holder.query("ROLLBACK")
            }
        }
        try await run.thawAndExpectTheNextInstanceToCountEverything(workload)
    }

    /// PostgreSQL hangs while the service runs (its processes stopped: connections stay open, nothing answers), so a
    /// flush never returns: past `--flush-timeout` the service exits with an error instead of waiting forever, and
    /// nothing is lost: once PostgreSQL answers again, the next instance counts every event once.
    @Test func aFlushThatHangsEndsTheServiceAndLosesNothing() async throws {
        let workload = Workload(events: 6_000, seed: 41, invalidFraction: 0.01)
        let half = workload.messages.count / 2
        let run = try await Flushing(workload, upTo: half, arguments: ["--memory-days", "0", "--flush-timeout", "3s"])
        defer { Flushing.remove(run.directory) }
        let service = run.service

        let frozen = ContinuousClock.now
        try run.freezeAndPublish(workload, half..<workload.messages.count)
        // The flush of the second half hangs; 3 s later the service gives up and exits on its own.
        try await waitUntil(timeout: .seconds(40), "serve to exit after its flush hung (log: \(service.logPath))") { !service.process.isRunning }
        let took = ContinuousClock.now - frozen
        #expect(service.process.terminationStatus != 0)
        #expect(took >= .seconds(3), "exited after \(took), before the flush timeout")
        #expect(service.log().contains("a flush did not return within --flush-timeout"), "\(service.log())")

        try await run.thawAndExpectTheNextInstanceToCountEverything(workload)
    }
}
