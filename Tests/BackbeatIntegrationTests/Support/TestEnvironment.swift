import BackbeatStore
import Foundation
import Logging
import PostgresNIO

/// Where the integration tests find PostgreSQL and the `backbeat` binary (scripts/test sets both).
enum TestEnvironment {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static var postgresURL: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["BACKBEAT_TEST_POSTGRES_URL"] else {
                throw Missing(description: "BACKBEAT_TEST_POSTGRES_URL is not set: run the tests through scripts/test")
            }
            return url
        }
    }

    static var binary: String {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["BACKBEAT_BIN"], FileManager.default.isExecutableFile(atPath: path) else {
                throw Missing(description: "BACKBEAT_BIN does not name the built backbeat binary: run the tests through scripts/test")
            }
            return path
        }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var logger: Logger {
        var logger = Logger(label: "backbeat.tests")
        logger.logLevel = .warning
        return logger
    }

    /// Creates an empty database for one test and returns its URL.
    static func freshDatabase(_ prefix: String) async throws -> String {
        let base = try postgresURL
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        try await withStore(url: base) { store in
            try await store.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        guard var components = URLComponents(string: base) else { throw Missing(description: "bad BACKBEAT_TEST_POSTGRES_URL") }
        components.path = "/" + name
        return components.string!
    }

    /// Runs `body` with a store whose pool runs for as long as the body.
    static func withStore<T: Sendable>(url: String, _ body: @Sendable (Store) async throws -> T) async throws -> T {
        let store = Store(url: try PostgresURL(url), logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            return try await body(store)
        }
    }

    /// The migrations of this checkout's sql/ directory.
    static func migrations() throws -> [Migration] {
        try Migration.load(from: packageRoot.appendingPathComponent("sql"))
    }
}

/// Polls `condition` every 200 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(200))
    }
    throw TestEnvironment.Missing(description: "timed out after \(timeout) waiting for \(what)")
}
