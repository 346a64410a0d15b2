import BackbeatCore
import Foundation
import PostgresNIO

/// A stored API token, as `backbeat token list` shows it (the token itself is never stored).
public struct StoredToken: Sendable {
    public var id: Int64
    public var artistID: String
    public var label: String
    public var createdAt: Date
    public var revokedAt: Date?
}

extension Store {
    /// Stores the hash of a new token for `artistID`; returns its id.
    public func addToken(artistID: String, label: String, hash: [UInt8]) async throws -> Int64 {
        let rows = try await client.query("""
            INSERT INTO api_tokens (artist_id, label, token_hash) VALUES (\(artistID), \(label), \(Self.byteBuffer(hash))) RETURNING id
            """, logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        throw MigrationError(description: "INSERT INTO api_tokens returned no id (is the schema migrated?)")
    }

    /// Every token, newest first.
    public func tokens() async throws -> [StoredToken] {
        let rows = try await client.query(
            "SELECT id, artist_id, label, created_at, revoked_at FROM api_tokens ORDER BY id DESC", logger: logger)
        var tokens: [StoredToken] = []
        for try await (id, artist, label, created, revoked) in rows.decode((Int64, String, String, Date, Date?).self) {
            tokens.append(StoredToken(id: id, artistID: artist, label: label, createdAt: created, revokedAt: revoked))
        }
        return tokens
    }

    /// Revokes token `id`; false when there is no such token or it was revoked already.
    public func revokeToken(id: Int64) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE api_tokens SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL RETURNING 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The artist whose live (not revoked) token has this hash, or nil.
    public func artistID(forTokenHash hash: [UInt8]) async throws -> String? {
        let rows = try await client.query(
            "SELECT artist_id FROM api_tokens WHERE token_hash = \(Self.byteBuffer(hash)) AND revoked_at IS NULL", logger: logger)
        for try await artist in rows.decode(String.self) { return artist }
        return nil
    }

    private static func byteBuffer(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes)
    }
}
