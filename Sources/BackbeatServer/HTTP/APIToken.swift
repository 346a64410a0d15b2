import Crypto
import Foundation

/// Per-artist API tokens: `bbt_` and 64 hex digits of randomness from the system's secure generator. Only their
/// SHA-256 is stored: a token has 256 random bits, so a fast hash is as good as a slow one and lets every request
/// be checked with one indexed lookup.
public enum APIToken {
    public static let prefix = "bbt_"

    /// A new random token.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return prefix + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The stored form of `token`.
    public static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// Whether `token` has the shape of an artist token (checked before any lookup).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == prefix.utf8.count + 64 && token.hasPrefix(prefix)
            && token.utf8.dropFirst(prefix.utf8.count).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
