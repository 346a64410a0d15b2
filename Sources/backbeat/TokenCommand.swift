import ArgumentParser
import BackbeatCore
import BackbeatServer
import BackbeatStore
import Foundation

/// `backbeat token`: per-artist API tokens.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke per-artist API tokens.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token that reads one artist's numbers; it is printed once and only its hash is stored.")

        @Option(help: "The artist the token may read.") var artist: String
        @Option(help: "A note for `token list`, e.g. who holds the token.") var label: String = ""
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard Identifiers.isID(artist) else { throw ValidationError("--artist must be 1-128 characters of A-Za-z0-9._:-") }
            guard label.utf8.count <= 200 else { throw ValidationError("--label is at most 200 bytes") }
        }

        func run() async throws {
            let token = APIToken.generate()
            let (artist, label) = (artist, label)
            let id = try await withMigratedStore(database, logging) { store in
                try await store.addToken(artistID: artist, label: label, hash: APIToken.hash(token))
            }
            print(token)
            FileHandle.standardError.write(Data("token \(id) for artist \(artist) created; it is shown only this once\n".utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never the tokens themselves).")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let tokens = try await withMigratedStore(database, logging) { try await $0.tokens() }
            print(["id", "artist_id", "label", "created_at", "revoked_at"].joined(separator: "\t"))
            let format = ISO8601DateFormatter()
            for token in tokens {
                print([String(token.id), token.artistID, token.label, format.string(from: token.createdAt),
                       token.revokedAt.map(format.string) ?? "-"].joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by id; running services refuse it within 5 seconds.")
        @Argument(help: "The token's id (from `token list`).") var id: Int64
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let id = id
            guard try await withMigratedStore(database, logging, { try await $0.revokeToken(id: id) }) else {
                FileHandle.standardError.write(Data("no live token with id \(id)\n".utf8))
                throw ExitCode(1)
            }
            FileHandle.standardError.write(Data("token \(id) revoked\n".utf8))
        }
    }
}

/// Runs `body` with a store whose schema is migrated.
func withMigratedStore<T: Sendable>(_ database: DatabaseOptions, _ logging: LoggingOptions, _ body: @Sendable @escaping (Store) async throws -> T) async throws -> T {
    let logger = try logging.makeLogger("backbeat")
    let migrations = try database.migrations()
    return try await withStore(url: try database.url(), logger: logger) { store in
        try await store.migrate(migrations)
        return try await body(store)
    }
}
