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
                The artist's answers count local days and hours of the zone for events counted from then on (docs/api.md, \
                "GET and PUT /v1/artists/{artist_id}/zone"). Given archives (serve --archive-dir) and the plain files the \
                database replayed, the artist's stored days are counted again from them in the new zone, in the same \
                transaction as the zone is set: every answer is then in the new zone. The inputs must hold every message \
                the database counted, as for `backbeat rebuild`; live flushes wait while the artist is counted again.
                """)

        @Option(help: "The artist.") var artist: String
        @Option(help: "An IANA time zone name, e.g. America/Los_Angeles or Asia/Kathmandu.") var zone: String
        @Argument(help: "Archive directories or segments, and the plain NDJSON files the database replayed: the artist's stored days are counted again from them in the new zone.")
        var paths: [String] = []
        @OptionGroup var dedupOptions: DedupOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard Identifiers.isID(artist) else { throw ValidationError("--artist must be 1-128 characters of A-Za-z0-9._:-") }
            guard !paths.contains("-") else { throw ValidationError("give archive directories or files (not stdin)") }
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
                try await withMigratedStore(database, logging) { try await $0.setZone(known, of: artist) }
                FileHandle.standardError.write(Data("artist \(artist) reports in \(known.text) (the days counted before keep their zone: give the archives to count them again)\n".utf8))
                return
            }
            do {
                let dedup = try dedupOptions.spans()
                let files = try InputPaths.expand(paths, includingOpen: true)
                let started = ContinuousClock.now
                let counted = Mutex<Int64>(0)
                let id = try await withMigratedStore(database, logging) { store in
                    try await store.rebuild(.artist(artist, zone: known)) { inputs in
                        var rollup = IntervalRollup(days: inputs.days, of: artist, counted: inputs, dedup: dedup, zones: ArtistZones([artist: rules]))
                        for file in files { try rollup.read(file) }
                        try rollup.checkCoverage()
                        counted.withLock { $0 = rollup.events }
                        return (rollup.delta, rollup.events)
                    }
                }
                FileHandle.standardError.write(Data(
                    "artist \(artist) reports in \(known.text): its \(counted.withLock { $0 }) events counted again from \(files.count) inputs, swapped in as rebuild \(id) in \(ContinuousClock.now - started)\n".utf8))
            } catch {
                FileHandle.standardError.write(Data("set-zone stopped, nothing changed: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Zone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the artist's reporting time zone (UTC when none is set).")
        @Option(help: "The artist.") var artist: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let artist = artist
            print(try await withMigratedStore(database, logging) { try await $0.zone(of: artist) } ?? ZoneRules.utc.name)
        }
    }
}
