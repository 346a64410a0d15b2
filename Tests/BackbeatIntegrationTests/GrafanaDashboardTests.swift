import BackbeatKafka
import Foundation
import PostgresNIO
import Testing

/// The Grafana dashboards in dashboards/grafana can never silently break: every panel's SQL, with Grafana's macros
/// expanded for a fixed range, runs against the schema the migrations build (and the artist panels find data),
/// every Prometheus query names metrics a running service exports, and every data source is provisioned.
@Suite(.serialized) struct GrafanaDashboardTests {
    static let directory = TestEnvironment.packageRoot.appendingPathComponent("dashboards/grafana")
    /// The range the macros are expanded for: the generated events' month.
    static let from = "2026-10-01T00:00:00Z", to = "2026-11-01T00:00:00Z"

    struct Target {
        var dashboard: String
        var panel: String
        var sql: String?
        var expr: String?
        var datasource: String
    }

    static func dashboards() throws -> [(name: String, json: [String: Any])] {
        let folder = directory.appendingPathComponent("dashboards")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted().map { name in
            (name, try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as! [String: Any])
        }
    }

    static func targets() throws -> [Target] {
        var targets: [Target] = []
        for (name, dashboard) in try dashboards() {
            for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    let datasource = (target["datasource"] as? [String: Any] ?? panel["datasource"] as? [String: Any])?["uid"] as? String ?? ""
                    targets.append(Target(dashboard: name, panel: panel["title"] as? String ?? "?", sql: target["rawSql"] as? String,
                                          expr: target["expr"] as? String, datasource: datasource))
                }
            }
            for variable in (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? [] {
                let datasource = (variable["datasource"] as? [String: Any])?["uid"] as? String ?? ""
                targets.append(Target(dashboard: name, panel: "variable \(variable["name"] ?? "?")", sql: variable["query"] as? String, datasource: datasource))
            }
        }
        return targets
    }

    /// Grafana's PostgreSQL macros and the dashboards' variables, as Grafana expands them for the fixed range.
    static func expand(_ sql: String) -> String {
        var expanded = sql.replacingOccurrences(of: "$artist", with: "artist-0001")
            .replacingOccurrences(of: "$__timeFrom()", with: "'\(from)'")
            .replacingOccurrences(of: "$__timeTo()", with: "'\(to)'")
        let filter = try! NSRegularExpression(pattern: #"\$__timeFilter\(([^)]+)\)"#)
        expanded = filter.stringByReplacingMatches(in: expanded, range: NSRange(expanded.startIndex..., in: expanded),
                                                   withTemplate: "$1 BETWEEN '\(from)' AND '\(to)'")
        return expanded
    }

    @Test func everyDashboardIsWellFormedAndItsDataSourcesProvisioned() throws {
        let provisioned = try String(contentsOf: Self.directory.appendingPathComponent("provisioning/datasources/backbeat.yaml"), encoding: .utf8)
        var uids = Set<String>()
        for (name, dashboard) in try Self.dashboards() {
            #expect((dashboard["schemaVersion"] as? Int ?? 0) >= 39, "\(name)")
            #expect(uids.insert(dashboard["uid"] as? String ?? "").inserted, "\(name) has a unique uid")
            let ids = (dashboard["panels"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            #expect(Set(ids).count == ids.count && !ids.isEmpty, "\(name): panel ids are unique")
        }
        let targets = try Self.targets()
        #expect(targets.count >= 20)
        for target in targets {
            #expect(provisioned.contains("uid: \(target.datasource)"), "\(target.dashboard) / \(target.panel): data source \(target.datasource) is provisioned")
            #expect((target.sql == nil) != (target.expr == nil), "\(target.dashboard) / \(target.panel) has one query")
        }
    }

    @Test func everyPanelsSQLRunsAgainstTheSchemaAndEveryMetricIsExported() async throws {
        let database = try await TestEnvironment.freshDatabase("grafana")
        let replay = try ReplayTests.run(["replay", try ReplayTests.generate("grafana.ndjson", events: 6_000)], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let targets = try Self.targets()

        try await TestEnvironment.withStore(url: database) { store in
            for target in targets {
                guard let sql = target.sql else { continue }
                let expanded = Self.expand(sql)
                #expect(!expanded.contains("$"), "\(target.dashboard) / \(target.panel): a macro or variable the test does not expand")
                do {
                    var rows = 0
                    for try await _ in try await store.client.query(PostgresQuery(unsafeSQL: expanded)) { rows += 1 }
                    if target.dashboard == "artist.json" {
                        #expect(rows > 0, "\(target.panel): no rows for an artist with data in the range")
                    }
                } catch {
                    Issue.record("\(target.dashboard) / \(target.panel): \(String(reflecting: error))\n\(expanded)")
                }
            }
        }

        // The Prometheus queries' metrics, against what a service that consumed and answered exports.
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, group: "grafana")
        try await service.waitForLog("partitions assigned")
        let workload = Workload(events: 500, seed: 9, invalidFraction: 0.05)
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        _ = try await HTTP.get(service.baseURL + "/v1/artists/artist-0001/summary")
        var exported = Set<String>()
        try await waitUntil(timeout: .seconds(60), "the service to consume, flush and export") {
            let samples = prometheusSamples(try await HTTP.get(service.baseURL + "/metrics", token: nil).text)
            exported = Set(samples.keys.map { String($0.prefix { $0 != "{" }) })
            // Gauges are set on the flush loop's turn after a flush.
            return samples.total("backbeat_events_consumed_total") == Double(workload.messages.count)
                && samples.total("backbeat_flushes_total") >= 1 && exported.contains("backbeat_consumer_lag_messages")
                && exported.contains("backbeat_event_time_lag_seconds")
        }
        let names = try NSRegularExpression(pattern: #"backbeat_[a-z_]+"#)
        for target in targets {
            guard let expr = target.expr else { continue }
            for match in names.matches(in: expr, range: NSRange(expr.startIndex..., in: expr)) {
                let name = String(expr[Range(match.range, in: expr)!])
                #expect(exported.contains(name), "\(target.dashboard) / \(target.panel): \(name) is not exported")
            }
        }
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
