import BackbeatCore
import Foundation
import PostgresNIO
import Testing

/// docker-compose.yml is a valid compose file for the whole stack (docker-compose.citus.yml for its Citus variant),
/// the Dockerfile builds with the same installer as scripts/test, and docs/deployment.md's settings reference equals
/// what the code defines.
@Suite struct DeploymentFilesTests {
    static let root = TestEnvironment.packageRoot

    /// Runs `executable` with `arguments` in the package root; returns its exit status and output.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try runToCompletion(executable, arguments, environment: environment, directory: root)
    }

    /// A duration setting that cannot be parsed stops `serve` before it connects, naming a form that parses.
    @Test func serveRejectsDurationsItCannotParse() throws {
        let token = ["--admin-token", "0123456789abcdef"]
        for (option, value, example) in [("--flush-timeout", "5m", "300s"), ("--shutdown-timeout", "0s", "30s"),
                                         ("--flush-interval", "soon", "1s or 500ms")] {
            let result = try Self.run(try TestEnvironment.binary, ["serve"] + token + [option, value])
            #expect(result.status != 0)
            #expect(result.output.contains("\(option) \(value) is not a duration such as \(example)"), "\(result.output)")
        }
        // The examples the messages give are accepted: serve gets past them to the next setting checked.
        let accepted = try Self.run(try TestEnvironment.binary, ["serve"] + token + ["--flush-timeout", "300s", "--shutdown-timeout", "30s", "--memory-days", "99999"])
        #expect(accepted.output.contains("--memory-days 99999 is not a number of days 0-3660"), "\(accepted.output)")
    }

    /// The scripts run whichever PostgreSQL major version Debian installed, with its hll package: the newest folder
    /// under /usr/lib/postgresql (here a fake layout in its place), and a clear error when there is none.
    @Test func theScriptsUseThePostgresVersionInstalled() throws {
        let fake = FileManager.default.temporaryDirectory.appendingPathComponent("pg-layout-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: fake) }
        for version in ["9.6", "15", "17"] {
            let bin = fake.appendingPathComponent(version).appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: bin.appendingPathComponent("postgres").path, contents: Data(), attributes: [.posixPermissions: 0o755])
        }
        let script = ". scripts/lib/postgres.sh && pg_major && pg_bindir && pg_hll_package"
        let found = try Self.run("/bin/bash", ["-c", script], environment: ["BACKBEAT_PG_ROOT": fake.path])
        #expect(found.status == 0, "\(found.output)")
        #expect(found.output == "17\n\(fake.path)/17/bin\npostgresql-17-hll\n")

        let empty = fake.appendingPathComponent("none")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let missing = try Self.run("/bin/bash", ["-c", script], environment: ["BACKBEAT_PG_ROOT": empty.path])
        #expect(missing.status != 0)
        #expect(missing.output.contains("no PostgreSQL server found under \(empty.path)"), "\(missing.output)")
    }

    /// BACKBEAT_CLOCK_OFFSET moves the wall clock of a backbeat process (what scripts/test's BACKBEAT_TEST_CLOCK
    /// relies on): `generate` without --start spreads its events over the days before the moved today.
    @Test func theClockOffsetMovesTheWallClockOfAProcess() throws {
        let offsetDays: Int64 = 400
        let generated = try Self.run(try TestEnvironment.binary, ["generate", "--events", "50", "--days", "1", "--out", "-"],
                                     environment: ["BACKBEAT_CLOCK_OFFSET": String(offsetDays * 86_400)])
        #expect(generated.status == 0, "\(generated.output)")
        let today = Timestamp.wallClock().daysSinceEpoch + offsetDays
        let days = Set(generated.output.matches(of: /"occurred_at":"(\d{4}-\d{2}-\d{2})T/).compactMap { RFC3339.parseDate(String($0.1))?.daysSinceEpoch })
        #expect(!days.isEmpty && days.allSatisfy { (today - 2)...today ~= $0 }, "\(days.sorted()) against \(today)")
        let bad = try Self.run(try TestEnvironment.binary, ["generate", "--events", "1", "--out", "-"], environment: ["BACKBEAT_CLOCK_OFFSET": "soon"])
        #expect(bad.status != 0 && bad.output.contains("BACKBEAT_CLOCK_OFFSET must be a whole number of seconds, not soon"), "\(bad.output)")
    }

    @Test func dockerComposeAcceptsTheStack() throws {
        let check = try Self.run("/usr/bin/docker-compose", ["-f", "docker-compose.yml", "config", "-q"])
        #expect(check.status == 0, "\(check.output)")
        // The resolved file, as JSON (PyYAML comes with Debian's docker-compose).
        let resolved = try Self.run("/bin/sh", ["-c", "docker-compose -f docker-compose.yml config | python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'"])
        #expect(resolved.status == 0, "\(resolved.output)")
        let compose = try JSONSerialization.jsonObject(with: Data(resolved.output.utf8)) as! [String: Any]
        let services = compose["services"] as! [String: [String: Any]]
        #expect(Set(services.keys) == ["kafka", "kafka-topics", "postgres", "backbeat", "prometheus", "grafana"])
        #expect((services["kafka"]?["image"] as? String)?.hasPrefix("apache/kafka:") == true)
        for name in ["kafka", "postgres", "backbeat", "prometheus", "grafana"] {
            #expect(services[name]?["healthcheck"] != nil, "\(name) has a health check")
        }
        let volumes = Set((compose["volumes"] as? [String: Any] ?? [:]).keys)
        #expect(volumes.isSuperset(of: ["kafka-data", "postgres-data", "backbeat-archive", "prometheus-data", "grafana-data"]))
        // Every file the stack mounts is in the repository.
        for (name, service) in services {
            for volume in service["volumes"] as? [Any] ?? [] {
                let source = (volume as? [String: Any])?["source"] as? String ?? (volume as? String)?.components(separatedBy: ":").first ?? ""
                guard source.hasPrefix("/") else { continue }
                #expect(FileManager.default.fileExists(atPath: source), "\(name) mounts \(source), which does not exist")
            }
        }
        let prometheus = try String(contentsOf: Self.root.appendingPathComponent("docker/prometheus.yml"), encoding: .utf8)
        #expect(prometheus.contains("backbeat:8080") && prometheus.contains("/metrics"))
    }

    /// The Citus variant is a valid compose file, and its distribution script places every table the migrations
    /// create (a new table must be placed there too: docs/scaling.md).
    @Test func theCitusVariantPlacesEveryTable() async throws {
        let check = try Self.run("/usr/bin/docker-compose", ["-f", "docker-compose.citus.yml", "config", "-q"])
        #expect(check.status == 0, "\(check.output)")
        let script = try String(contentsOf: Self.root.appendingPathComponent("docker/citus/distribute.sql"), encoding: .utf8)
        let placed = Set(script.split(separator: "\n").filter { $0.hasPrefix("SELECT create_") || $0.hasPrefix("SELECT citus_add_local") }
            .compactMap { line in line.split(separator: "'").dropFirst().first.map(String.init) })
        let database = try await TestEnvironment.freshDatabase("citus_layout")
        let tables = try await TestEnvironment.withStore(url: database) { store in
            _ = try await store.migrate(try TestEnvironment.migrations())
            var names: Set<String> = []
            // Month partitions (migration 0014) follow their table.
            let rows = try await store.client.query("""
                SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')
                AND NOT relispartition AND relname <> 'schema_migrations'
                """)
            for try await name in rows.decode(String.self) { names.insert(name) }
            return names
        }
        #expect(tables.count > 20)
        #expect(tables.subtracting(placed).isEmpty, "not placed in docker/citus/distribute.sql: \(tables.subtracting(placed).sorted())")
        #expect(placed.subtracting(tables).isEmpty, "placed but not created by the migrations: \(placed.subtracting(tables).sorted())")
    }

    @Test func theDockerfileBuildsWithTheInstallerOfScriptsTest() throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let deps = try String(contentsOf: Self.root.appendingPathComponent("scripts/lib/deps.sh"), encoding: .utf8)
        let test = try String(contentsOf: Self.root.appendingPathComponent("scripts/test"), encoding: .utf8)
        #expect(dockerfile.contains(". scripts/lib/deps.sh && install_build_deps"))
        // The image holds every script deps.sh sources before it runs it.
        let sourced = deps.matches(of: /\. "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/([a-z.-]+)"/).map { "scripts/lib/" + $0.1 }
        #expect(!sourced.isEmpty)
        let copied = dockerfile.split(separator: "\n").first { $0.hasPrefix("COPY scripts/lib/deps.sh") } ?? ""
        for script in sourced { #expect(copied.contains(script), "the Dockerfile copies \(script) before sourcing deps.sh") }
        #expect(dockerfile.contains("swift build -c release --product backbeat"))
        #expect(dockerfile.contains("COPY sql /usr/share/backbeat/sql") && dockerfile.contains("COPY dashboards/web /usr/share/backbeat/web"))
        #expect(test.contains("install_deps") && test.contains("swift build"))
        let installDeps = deps.components(separatedBy: "install_deps() {").last ?? ""
        #expect(installDeps.contains("install_build_deps"), "scripts/test installs what the Dockerfile installs")
    }

    @Test func theSettingsReferenceMatchesTheCode() throws {
        let generated = try Self.run(Self.root.appendingPathComponent("scripts/settings-reference").path, [],
                                     environment: ["BACKBEAT_BIN": try TestEnvironment.binary])
        #expect(generated.status == 0, "\(generated.output)")
        let document = try String(contentsOf: Self.root.appendingPathComponent("docs/deployment.md"), encoding: .utf8)
        let section = document.components(separatedBy: "<!-- settings:begin -->\n").last?.components(separatedBy: "<!-- settings:end -->").first
        #expect(section?.trimmingCharacters(in: .whitespacesAndNewlines) == generated.output.trimmingCharacters(in: .whitespacesAndNewlines),
                "docs/deployment.md is stale: run scripts/settings-reference --write")
        #expect(generated.output.contains("`--dead-letter-topic`") && generated.output.contains("`BACKBEAT_WEB_DIR`"))
    }
}
