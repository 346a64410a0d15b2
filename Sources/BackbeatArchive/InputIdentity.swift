import Crypto
import Foundation

/// Names an input by its content: the SHA-256 of its events' bytes (decompressed), so the same events replayed
/// again, renamed, copied, compressed or not, are the same input and their progress is found again in PostgreSQL.
///
/// A damaged compressed file is named by the bytes that can be read before the damage: once repaired it is another
/// input (its first part would be applied again), which is why replay refuses nothing but warns in the docs.
public enum InputIdentity {
    /// The identity of the file at `path` (read once, in chunks), as 32 hex digits.
    public static func of(path: String) throws -> String {
        let reader = try InputReader(path: path)
        var hasher = SHA256()
        do {
            while let chunk = try reader.next() { hasher.update(data: chunk) }
        } catch is ArchiveError {
            // Named by what can be read; the replay itself reports the damage.
        }
        return hasher.finalize().prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
