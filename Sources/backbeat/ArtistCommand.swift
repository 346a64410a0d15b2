import ArgumentParser
import BackbeatCore
import BackbeatServer
import BackbeatStore
import Foundation

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
            discussion: "The artist's answers count local days and hours of the zone, for events consumed from then on (docs/api.md, \"GET and PUT /v1/artists/{artist_id}/zone\").")

        @Option(help: "The artist.") var artist: String
        @Option(help: "An IANA time zone name, e.g. America/Los_Angeles or Asia/Kathmandu.") var zone: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard Identifiers.isID(artist) else { throw ValidationError("--artist must be 1-128 characters of A-Za-z0-9._:-") }
        }

        func run() async throws {
            let known: ZoneName
            do throws(ZoneDatabase.UnknownZone) {
                known = try ZoneDatabase().known(zone)
            } catch {
                FileHandle.standardError.write(Data("\(error.description)\n".utf8))
                throw ExitCode(1)
            }
            let artist = artist
            try await withMigratedStore(database, logging) { try await $0.setZone(known, of: artist) }
            FileHandle.standardError.write(Data("artist \(artist) reports in \(known.text)\n".utf8))
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
