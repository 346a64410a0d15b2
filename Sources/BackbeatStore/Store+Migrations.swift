import BackbeatCore
import Foundation
import PostgresNIO

/// A numbered migration file from `sql/`.
public struct Migration: Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    /// Reads `NNNN_name.sql` files from `directory`, sorted by number.
    public static func load(from directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var migrations: [Migration] = []
        for file in files where file.hasSuffix(".sql") {
            guard let version = Int(file.prefix(while: \.isNumber)) else {
                throw MigrationError(description: "migration file \(file) does not start with a number")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            migrations.append(Migration(version: version, name: file, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) where a.version == b.version {
            throw MigrationError(description: "migrations \(a.name) and \(b.name) share the number \(a.version)")
        }
        guard !migrations.isEmpty else {
            throw MigrationError(description: "no migration files (NNNN_name.sql) in \(directory.path)")
        }
        return migrations
    }

    /// Finds the `sql/` directory: the given path, else `./sql`, else `share/backbeat/sql` beside the executable.
    public static func locateDirectory(_ explicit: String?) throws -> URL {
        if let explicit { return URL(fileURLWithPath: explicit) }
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("sql")]
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("../share/backbeat/sql").standardized)
        candidates.append(URL(fileURLWithPath: "/usr/share/backbeat/sql"))
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("0001_rollups.sql").path) {
            return candidate
        }
        throw MigrationError(description: "cannot find the sql/ migrations; pass --migrations-dir (looked in \(candidates.map(\.path).joined(separator: ", ")))")
    }
}

/// A migration that cannot be read or applied.
public struct MigrationError: Error, CustomStringConvertible {
    public var description: String
}

extension Store {
    /// Applies every migration not yet recorded in `schema_migrations`, each in its own transaction, under an
    /// advisory lock so that instances starting together apply each one once. Returns the names applied.
    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [String] {
        // Under the lock too: two concurrent CREATE TABLE IF NOT EXISTS can both try to create the table.
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7245)", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
        }
        var applied: [String] = []
        for migration in migrations {
            let done = try await client.withTransaction(logger: logger) { connection -> Bool in
                try await connection.query("SELECT pg_advisory_xact_lock(7245)", logger: logger)
                let rows = try await connection.query(
                    "SELECT 1 FROM schema_migrations WHERE version = \(migration.version)", logger: logger)
                for try await _ in rows { return true }
                for statement in SQLScript.statements(in: migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
                return false
            }
            if !done {
                applied.append(migration.name)
                logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
            }
        }
        return applied
    }
}
