import Crypto
import Foundation

/// Names a plain input by its content: the SHA-256 of its first mebibyte of events (decompressed; the whole content
/// when shorter), so the same events replayed again, renamed, copied, compressed or not, are the same input and
/// their progress is found again in PostgreSQL. It is known after one read of the input's head, so a replay starts
/// writing at once and reads its input once.
///
/// Two inputs with the same head are told apart by the hash stored with the position (`AppliedLinesHash`): an input
/// whose lines up to the stored position are not the ones applied is refused, one that grew past it (lines
/// appended, or a damaged file repaired) resumes there.
public enum InputIdentity {
    /// How much of an input's content names it.
    public static let headBytes = 1 << 20

    /// The identity of the file at `path`: its first `headBytes` of content, as 32 hex digits.
    public static func of(path: String) throws -> String {
        try hash(path: path, limit: headBytes)
    }

    /// What versions before the identity was read from the head named a file by: the SHA-256 of its whole content.
    /// Positions stored under such a name (without an `AppliedLinesHash`) are still found (`Replayer`, `rebuild`).
    public static func ofWholeContent(path: String) throws -> String {
        try hash(path: path, limit: nil)
    }

    /// The SHA-256 of the first `limit` bytes of content at `path` (all of it: nil), as 32 hex digits. A damaged
    /// compressed file is named by the bytes that can be read before the damage; the replay reports the damage.
    private static func hash(path: String, limit: Int?) throws -> String {
        let reader = try InputReader(path: path)
        var hasher = SHA256()
        var left = limit ?? .max
        do {
            while left > 0, let chunk = try reader.next() {
                chunk.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0.prefix(left))) }
                left -= min(left, chunk.count)
            }
        } catch is ArchiveError {
            // Named by what can be read.
        }
        return hex(hasher.finalize().prefix(16))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
