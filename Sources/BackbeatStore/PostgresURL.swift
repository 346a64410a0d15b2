import Foundation
import NIOSSL
import PostgresNIO

/// Parses `postgres://user:pass@host:port/db?sslmode=disable|prefer|require` into a client configuration.
public enum PostgresURL {
    /// A URL that cannot be used, with the reason.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public static func configuration(from text: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: text),
              components.scheme == "postgres" || components.scheme == "postgresql"
        else { throw Invalid(description: "the PostgreSQL URL must look like postgres://user:pass@host:port/db") }
        guard let host = components.host, !host.isEmpty else { throw Invalid(description: "the PostgreSQL URL has no host") }
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw Invalid(description: "the PostgreSQL URL has no user name")
        }
        let password = components.percentEncodedPassword?.removingPercentEncoding
        let database = String(components.path.drop(while: { $0 == "/" }))
        let sslMode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable"
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        default: throw Invalid(description: "sslmode must be disable, prefer or require")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: password,
            database: database.isEmpty ? nil : database, tls: tls
        )
        configuration.options.maximumConnections = 8
        return configuration
    }
}
