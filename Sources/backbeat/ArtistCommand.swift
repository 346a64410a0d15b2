import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatReplay
import BackbeatServer
import BackbeatStore
import Foundation
import Synchronization

/// `backbeat artist`: settings of one artist.
struct ArtistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "artist",
        abstract: "Read and set an artist's settings: its reporting time zone.",
        subcommands: [SetZone.self, Zone.self])

    struct SetZone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-zone",
            abstract: "Set the artist's reporting time zone: an IANA name the system's zone database lists (TZDIR, default /usr/share/zoneinfo).",
            discussion: """
                The artist's answers count local days and hours of the zone (docs/api.md, "GET and PUT \
                /v1/artists/{artist_id}/zone"). The days the artist has stored are counted again in the new zone, in the \
                same transaction as the zone is set, so that every answer is in the new zone: without inputs, from the \
                quarter-hour detail kept (days it cannot count, and unique listeners until the day after the change, are \
                named in answers and printed here); given archives (serve --archive-dir) and the plain files the database \
                replayed, from them, listeners included. The inputs must hold every message the database counted, as for \
                `backbeat rebuild`; live flushes wait while the artist is counted again.
                """)

        @Option(help: "The artist.") var artist: String
        @Option(help: "An IANA time zone name, e.g. America/Los_Angeles or Asia/Kathmandu.") var zone: String
        @Argument(help: "Archive directories or segments, and the plain NDJSON files the database replayed: the artist's stored days are counted again from them in the new zone.")
        var paths: [String] = []
        @Flag(help: "Without inputs: keep the days the artist has stored in its zone before (not counted again), and count in the new zone only what is consumed from now on.")
        var keepCountedDays = false
        @OptionGroup var dedupOptions: DedupOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard Identifiers.isID(artist) else { throw ValidationError("--artist must be 1-128 characters of A-Za-z0-9._:-") }
            guard !paths.contains("-") else { throw ValidationError("give archive directories or files (not stdin)") }
            guard paths.isEmpty || !keepCountedDays else { throw ValidationError("--keep-counted-days keeps the days counted before: give no inputs to count them again") }
        }

        func run() async throws {
            let known: ZoneName
            let rules: ZoneRules
            do throws(ZoneDatabase.UnknownZone) {
                let zones = ZoneDatabase()
                known = try zones.known(zone)
                rules = try zones.rules(known.text)
            } catch {
                FileHandle.standardError.write(Data("\(error.description)\n".utf8))
                throw ExitCode(1)
            }
            let artist = artist
            guard !paths.isEmpty else {
                let keep = keepCountedDays
                let change = try await withMigratedStore(database, logging) { store in
                    try await store.setZone(known, of: artist, keepingCountedDays: keep) { try ZoneDatabase().rules($0) }
                }
                var said = "artist \(artist) reports in \(known.text)"
                switch change {
                case .unchanged: said += " already"
                case .set: break
                case .recounted(let gaps, let rows, let rebuild):
                    said += ": its stored days counted again from the quarter-hour detail (\(rows) rows), swapped in as rebuild \(rebuild)"
                    said += ArtistCommand.describe(gaps)
                }
                FileHandle.standardError.write(Data("\(said)\n".utf8))
                return
            }
            do {
                let dedup = try dedupOptions.spans()
                let paths = paths
                let started = ContinuousClock.now
                let counted = Mutex<(events: Int64, inputs: Int)>((0, 0))
                let id = try await withMigratedStore(database, logging) { store in
                    try await store.rebuild(.artist(artist, zone: known)) { inputs in
                        var rollup = IntervalRollup(days: inputs.days, of: artist, counted: inputs, dedup: dedup, zones: ArtistZones([artist: rules]))
                        var progress = InputProgress("set-zone")
                        let read = try rollup.readAll(paths) { progress.read($0, of: $1, events: $2) }
                        counted.withLock { $0 = (rollup.events, read) }
                        return (rollup.delta, rollup.events)
                    }
                }
                FileHandle.standardError.write(Data(
                    "artist \(artist) reports in \(known.text): its \(counted.withLock { $0.events }) events counted again from \(counted.withLock { $0.inputs }) inputs, swapped in as rebuild \(id) in \(ContinuousClock.now - started)\n".utf8))
            } catch {
                FileHandle.standardError.write(Data("set-zone stopped, nothing changed: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    /// What a recount from the detail could not count, as `set-zone` and `zone` print it.
    static func describe(_ gaps: RecountGaps) -> String {
        func date(_ day: Int64) -> String { RFC3339.formatDate(CivilDate(daysSinceEpoch: day)) }
        var said = ""
        if let from = gaps.countsFrom { said += "; no counts before \(date(from)) (the detail did not hold them: count them again from the archive)" }
        if !gaps.countsMissing.isEmpty { said += "; no counts on \(gaps.countsMissing.sorted().map(date).joined(separator: ", ")) (an hour the old zone repeated)" }
        if let from = gaps.listenersFrom { said += "; unique listeners from \(date(from)) on (from the archive: all of them)" }
        return said
    }

    struct Zone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the artist's reporting time zone (UTC when none is set).")
        @Option(help: "The artist.") var artist: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let artist = artist
            let recorded = try await withMigratedStore(database, logging) { try await $0.zoneRecord(of: artist) }
            print(recorded?.zone ?? ZoneRules.utc.name)
            if let since = recorded?.countedSince {
                FileHandle.standardError.write(Data("counted in it since \(RFC3339.format(since)); the days of events consumed before keep the zones before\n".utf8))
            }
            if let gaps = recorded?.gaps, !gaps.isEmpty {
                FileHandle.standardError.write(Data("counted again from the detail\(ArtistCommand.describe(gaps))\n".utf8))
            }
        }
    }
}
