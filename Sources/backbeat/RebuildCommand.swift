import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatReplay
import BackbeatServer
import BackbeatStore
import Foundation
import Synchronization

/// `backbeat rebuild`: recomputes the aggregates of an interval of days from archives and swaps them in atomically.
struct RebuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Recompute the aggregates of the days --from..--to from archives and swap them in atomically.",
        discussion: """
            The inputs must hold every message the database has counted: the archive of each partition up to its \
            stored offset (open segments of a running serve are read too) and every plain event file it replayed. \
            The interval's cubes and listener sketches are replaced in one transaction; other days, offsets and \
            rejected events are not touched. Live flushes wait while the new numbers are computed.
            """)

    @Argument(help: "Archive directories or segments (serve --archive-dir), and the plain NDJSON files the database replayed.")
    var paths: [String]

    @Option(help: "First day of the interval (YYYY-MM-DD, UTC).") var from: String
    @Option(help: "Last day of the interval, included (YYYY-MM-DD, UTC).") var to: String

    @OptionGroup var dedupOptions: DedupOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard !paths.isEmpty, !paths.contains("-") else { throw ValidationError("give archive directories or files (not stdin)") }
        guard let first = RFC3339.parseDate(from), let last = RFC3339.parseDate(to) else { throw ValidationError("--from and --to are YYYY-MM-DD") }
        guard first.daysSinceEpoch <= last.daysSinceEpoch else { throw ValidationError("--from \(from) is after --to \(to)") }
    }

    func run() async throws {
        let logger = try logging.makeLogger("backbeat-rebuild")
        let fromDay = RFC3339.parseDate(from)!.daysSinceEpoch
        let toDay = RFC3339.parseDate(to)!.daysSinceEpoch
        do {
            let dedup = try dedupOptions.spans()
            let paths = paths
            let migrations = try database.migrations()
            let started = ContinuousClock.now
            let (id, events, inputs) = try await withStore(url: try database.url(), logger: logger) { store in
                try await store.migrate(migrations)
                let counted = Mutex<(events: Int64, inputs: Int)>((0, 0))
                let zones = try await ZoneDatabase().artistZones(recordedIn: store)
                let id = try await store.rebuild(fromDay: fromDay, toDay: toDay) { inputs in
                    guard inputs.zonesGeneration == zones.generation else {
                        throw ReplayError("an artist's zone was set as the rebuild began; run it again")
                    }
                    var rollup = IntervalRollup(days: fromDay...toDay, counted: inputs, dedup: dedup, zones: zones)
                    var progress = InputProgress("rebuild")
                    let read = try rollup.readAll(paths) { progress.read($0, of: $1, events: $2) }
                    counted.withLock { $0 = (rollup.events, read) }
                    return (rollup.delta, rollup.events)
                }
                let (events, inputs) = counted.withLock { $0 }
                return (id, events, inputs)
            }
            FileHandle.standardError.write(Data(
                "rebuilt \(from)..\(to) from \(inputs) inputs: \(events) events in the interval, swapped in as rebuild \(id) in \(ContinuousClock.now - started)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("rebuild stopped, nothing changed: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
