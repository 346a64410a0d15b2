import ArgumentParser

/// `backbeat migrate`: applies pending sql/ migrations.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply pending sql/ migrations (idempotent).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger("backbeat.migrate")
        let migrations = try database.migrations()
        let applied = try await withStore(url: try database.url(), logger: logger) { store in
            try await store.migrate(migrations)
        }
        print(applied.isEmpty ? "schema is up to date (\(migrations.count) migrations)" : "applied: \(applied.joined(separator: ", "))")
    }
}
