import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// Generated events with a known ground truth go through Kafka and `backbeat serve`; every endpoint must
/// answer exactly what the events add up to.
@Suite(.serialized) struct EndToEndTests {
    @Test func everyEndpointMatchesTheGroundTruth() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("e2e")
        let workload = Workload(events: 20_000, seed: 42, invalidFraction: 0.01)
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        try await TestEnvironment.withStore(url: database) { store in
            try await expectGroundTruth(workload, in: store, within: .seconds(60))
        }

        try await EndpointChecks(workload).checkEverything(service.baseURL)
        #expect(service.terminate() == 0, "SIGTERM must end serve with status 0")
        withExtendedLifetime(broker) {}
    }

    /// A backlog does not wait for the flush interval: once unflushed work reaches a sixteenth of `--pending-limit`
    /// a flush starts, so the backlog is written in bounded batches (here long before the interval of ten minutes).
    /// The tail under that share waits for the interval; here a second instance takes over after the first stops,
    /// and every event is counted once.
    @Test func aBacklogIsFlushedInBoundedBatchesBeforeTheIntervalEnds() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("early_flush")
        let workload = Workload(events: 20_000, seed: 43)
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)

        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "600s",
                                         arguments: ["--pending-limit", "16MB", "--memory-days", "0"])
        try await service.waitUntilHealthy()
        try await TestEnvironment.withStore(url: database) { store in
            let half = Int64(workload.messages.count / 2)
            try await waitUntil(timeout: .seconds(60), "half of the backlog to be flushed before the flush interval") {
                try await storedOffsetTotal(store.client) >= half
            }
            #expect(service.terminate() == 0)
            let next = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--memory-days", "0"])
            try await expectGroundTruth(workload, in: store, within: .seconds(60))
            #expect(next.terminate() == 0)
        }
        withExtendedLifetime(broker) {}
    }

    @Test func badRequestsGetClearErrorsNeverA500() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 1)
        let database = try await TestEnvironment.freshDatabase("errors")
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        let base = service.baseURL
        let streams = base + "/v1/artists/artist-0001/streams"
        let cases: [(String, Int, String, String?)] = [
            (streams + "?from=2026-10-01&to=2026-10-02", 401, "unauthorized", nil),
            (streams + "?from=2026-10-01&to=2026-10-02", 401, "unauthorized", "wrong-token"),
            (streams + "?to=2026-10-02", 400, "missing_parameter", ServiceProcess.adminToken),
            (streams + "?from=yesterday&to=2026-10-02", 400, "invalid_parameter", ServiceProcess.adminToken),
            (streams + "?from=2026-10-01T10:30:00Z&to=2026-10-02", 400, "invalid_interval", ServiceProcess.adminToken),
            (streams + "?from=2026-10-03&to=2026-10-02", 400, "invalid_interval", ServiceProcess.adminToken),
            (streams + "?from=2026-10-01&to=2026-10-02&granularity=fortnight", 400, "invalid_parameter", ServiceProcess.adminToken),
            (streams + "?from=2025-01-01&to=2026-10-02&granularity=hour", 400, "too_many_points", ServiceProcess.adminToken),
            (streams + "?from=1990-01-01&to=2026-10-02&granularity=month", 400, "interval_too_long", ServiceProcess.adminToken),
            (streams + "?from=2026-10-01&to=2026-10-02&platform=x'%3B%20DROP%20TABLE%20stream_hourly%3B--", 400, "invalid_parameter", ServiceProcess.adminToken),
            (base + "/v1/artists/bad%20artist/streams?from=2026-10-01&to=2026-10-02", 400, "invalid_parameter", ServiceProcess.adminToken),
            (base + "/v1/artists/artist-0001/tracks/top?from=2026-10-01&to=2026-10-02&limit=-3", 400, "invalid_parameter", ServiceProcess.adminToken),
            (base + "/v1/nothing-here", 404, "not_found", ServiceProcess.adminToken),
        ]
        for (url, status, code, token) in cases {
            let reply = try await HTTP.get(url, token: token)
            #expect(reply.status == status, "\(url): \(reply.text)")
            let error = (try? reply.json() as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(url): \(reply.text)")
            #expect((error?["message"] as? String)?.isEmpty == false)
        }
        let bodies: [(String, Int, String)] = [
            ("not json", 400, "invalid_body"),
            (#"{"dataset":"plays","from":"2026-10-01","to":"2026-10-02"}"#, 400, "unknown_dataset"),
            (#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-02","group_by":["listener_id"]}"#, 400, "unknown_dimension"),
            (#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-02","order_by":{"metric":"amount"}}"#, 400, "unknown_metric"),
            (#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-02","filters":{"country":[1]}}"#, 400, "invalid_body"),
            (#"{"dataset":"revenue","from":"2026-10-01","to":"2026-10-02"}"#, 400, "currency_required"),
            (#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-02","pad":""# + String(repeating: "x", count: 70_000) + #""}"#, 413, "body_too_large"),
        ]
        for (body, status, code) in bodies {
            let reply = try await HTTP.post(base + "/v1/query", json: body)
            #expect(reply.status == status, "\(body.prefix(80)): \(reply.text)")
            #expect(((try? reply.json() as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == code, "\(body.prefix(80))")
        }
        let empty = try await HTTP.get(streams + "?from=2026-10-01&to=2026-10-03&granularity=day")
        #expect(empty.status == 200)
        let series = (try empty.json() as? [String: Any])?["series"] as? [[String: Any]]
        #expect(series?.count == 2, "an artist with no data gets a zero-filled series")
        #expect(series?.allSatisfy { $0["streams"] as? Int == 0 } == true)
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
