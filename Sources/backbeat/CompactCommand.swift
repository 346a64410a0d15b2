import ArgumentParser
import Foundation

/// `backbeat compact`: moves flushed rows from the append-only `_delta` tables into the merged ones now, as `serve`
/// does every few seconds (docs/events.md, "How aggregates are stored").
struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Merge the listener sketches flushes appended into one row per key (serve does this on its own; the cubes are final at each flush).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger("backbeat.compact")
        let started = ContinuousClock.now
        let migrations = try database.migrations()
        let moved = try await withStore(url: try database.url(), logger: logger) { store in
            try await store.migrate(migrations)
            return try await store.compact(waitingForOthers: true)
        }
        print("compacted \(moved) rows in \(ContinuousClock.now - started)")
    }
}
