import Foundation
import NIOSSL
import PostgresNIO

/// A parsed `postgres://user:pass@host:port/db?sslmode=disable|prefer|require`: the settings of a store's two
/// connection pools and of the connections it opens apart from them (`Store.withDedicatedConnection`).
public struct PostgresURL: Sendable {
    /// A URL that cannot be used, with the reason.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    private enum SSLMode: String {
        case disable, prefer, require
    }

    private let host: String
    private let port: Int
    private let user: String
    private let password: String?
    private let database: String?
    private let sslMode: SSLMode

    public init(_ text: String) throws {
        guard let components = URLComponents(string: text),
              components.scheme == "postgres" || components.scheme == "postgresql"
        else { throw Invalid(description: "the PostgreSQL URL must look like postgres://user:pass@host:port/db") }
        guard let host = components.host, !host.isEmpty else { throw Invalid(description: "the PostgreSQL URL has no host") }
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw Invalid(description: "the PostgreSQL URL has no user name")
        }
        guard let sslMode = SSLMode(rawValue: components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable") else {
            throw Invalid(description: "sslmode must be disable, prefer or require")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.password = components.percentEncodedPassword?.removingPercentEncoding
        self.database = database.isEmpty ? nil : database
        self.sslMode = sslMode
    }

    /// The pool's settings: at most 8 connections.
    public var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = 8
        return configuration
    }

    /// The read pool's settings (`Store.readClient`): the pool's, with each connection planning a prepared
    /// statement once, for any values (`plan_cache_mode=force_generic_plan`). PostgreSQL's own choice keeps planning
    /// the query path's statements for each run: a plan for every month's partition costs more on paper than one for
    /// the months asked, though the generic plan skips the others when it runs ("Subplans Removed").
    public var readClientConfiguration: PostgresClient.Configuration {
        var configuration = clientConfiguration
        configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_generic_plan"))
        return configuration
    }

    /// The settings of one connection outside the pool.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
    }
}
