import ArgumentParser
import BackbeatStore
import Foundation
import Logging

/// Resolves a setting: the flag if given, else the environment variable, else nil.
/// Only the command line reads the environment; library code receives finished configuration.
func setting(_ flag: String?, _ variable: String) -> String? {
    if let flag { return flag }
    if let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty { return value }
    return nil
}

/// Resolves a setting and parses it: the flag if given, else the environment variable, else `fallback`. Text that
/// `parse` refuses stops the command with `<name> <text> is not <expected>`.
func setting<Value>(
    _ flag: String?, _ variable: String, default fallback: String, name: String, expected: String, _ parse: (String) -> Value?
) throws -> Value {
    let text = setting(flag, variable) ?? fallback
    guard let value = parse(text) else { throw ValidationError("\(name) \(text) is not \(expected)") }
    return value
}

/// Parses a whole number within `range`.
func wholeNumber(in range: ClosedRange<Int>) -> (String) -> Int? {
    { text in Int(text).flatMap { range.contains($0) ? $0 : nil } }
}

/// Parses a byte size above zero (`parseByteSize`).
func positiveByteSize(_ text: String) -> Int? {
    parseByteSize(text).flatMap { $0 > 0 ? $0 : nil }
}

/// Options every command that touches PostgreSQL shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("postgres-url"), help: "PostgreSQL URL, postgres://user:pass@host:port/db (env BACKBEAT_POSTGRES_URL).")
    var postgresURL: String?

    @Option(name: .customLong("migrations-dir"), help: "Directory of the sql/ migrations (env BACKBEAT_MIGRATIONS_DIR; default ./sql, then share/backbeat/sql beside the binary).")
    var migrationsDirectory: String?

    func url() throws -> String {
        guard let url = setting(postgresURL, "BACKBEAT_POSTGRES_URL") else {
            throw ValidationError("--postgres-url or BACKBEAT_POSTGRES_URL is required")
        }
        return url
    }

    func migrations() throws -> [Migration] {
        try Migration.load(from: Migration.locateDirectory(setting(migrationsDirectory, "BACKBEAT_MIGRATIONS_DIR")))
    }
}

/// Logging options shared by every command.
struct LoggingOptions: ParsableArguments {
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (env BACKBEAT_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "text (key=value metadata) or json (one object per line, for log collectors) (env BACKBEAT_LOG_FORMAT; default text).")
    var logFormat: String?

    func makeLogger(_ label: String) throws -> Logger {
        let text = setting(logLevel, "BACKBEAT_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: text) else { throw ValidationError("unknown log level \(text)") }
        var logger: Logger
        switch setting(logFormat, "BACKBEAT_LOG_FORMAT") ?? "text" {
        case "text": logger = Logger(label: label)
        case "json": logger = Logger(label: label) { JSONLogHandler(label: $0) }
        case let other: throw ValidationError("--log-format must be text or json, not \(other)")
        }
        logger.logLevel = level
        return logger
    }
}

/// Parses a duration: `250ms`, `2s` or a plain number of seconds (`1.5`).
func parseDuration(_ text: String) -> Duration? {
    if text.hasSuffix("ms"), let value = Double(text.dropLast(2)), value > 0 { return .milliseconds(value) }
    let seconds = text.hasSuffix("s") ? String(text.dropLast()) : text
    if let value = Double(seconds), value > 0 { return .milliseconds(value * 1000) }
    return nil
}

/// Runs `body` with a store whose connection pool runs for exactly as long as the body.
func withStore<T: Sendable>(url: String, logger: Logger, _ body: @Sendable (Store) async throws -> T) async throws -> T {
    let store = Store(url: try PostgresURL(url), logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await store.run() }
        defer { group.cancelAll() }
        // Give run() a moment to start, so the pool does not warn that it was used before running.
        try await Task.sleep(for: .milliseconds(20))
        return try await body(store)
    }
}

/// Parses a byte size: a plain number of bytes or one with a KB, MB or GB suffix (binary multiples: 1MB = 1048576).
func parseByteSize(_ text: String) -> Int? {
    let upper = text.uppercased().trimmingCharacters(in: .whitespaces)
    for (suffix, multiplier) in [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)] where upper.hasSuffix(suffix) {
        guard let value = Double(upper.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        return Int(value * Double(multiplier))
    }
    guard let value = Int(upper), value >= 0 else { return nil }
    return value
}
