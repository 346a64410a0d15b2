/// The stored form of remembered ids (`DedupWindow.Remembered`): a version byte, then 24 bytes an id (its id hash,
/// its payload hash and its expiry in seconds of event time, each 64 bits little-endian). Fixed-width because the
/// hashes do not compress; what a flush adds is stored as one value beside its offsets.
extension DedupWindow {
    /// The version of the stored form this build writes and reads: 2 since the hashes are taken a word at a time
    /// (`StableHasher`); version 1's hashes were FNV-1a, byte by byte (migration 0022 deletes them).
    public static let storageVersion: UInt8 = 2

    /// A stored value that is not remembered ids of this version.
    public struct StorageError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// `remembered` in the stored form.
    public static func encode(_ remembered: [Remembered]) -> [UInt8] {
        var bytes: [UInt8] = [storageVersion]
        bytes.reserveCapacity(1 + remembered.count * 24)
        for entry in remembered {
            append(entry.fingerprint.id, to: &bytes)
            append(entry.fingerprint.payload, to: &bytes)
            append(UInt64(bitPattern: entry.expiresAt), to: &bytes)
        }
        return bytes
    }

    /// The remembered ids of a stored value.
    public static func decode(_ bytes: [UInt8]) throws(StorageError) -> [Remembered] {
        guard let version = bytes.first else { throw StorageError(description: "empty dedup value") }
        guard version == storageVersion else {
            throw StorageError(description: "dedup value of version \(version); this build reads version \(storageVersion)")
        }
        guard (bytes.count - 1) % 24 == 0 else {
            throw StorageError(description: "dedup value of \(bytes.count) bytes is not a whole number of 24-byte ids")
        }
        var remembered: [Remembered] = []
        remembered.reserveCapacity((bytes.count - 1) / 24)
        var offset = 1
        while offset < bytes.count {
            let id = word(bytes, at: offset), payload = word(bytes, at: offset + 8), expiry = word(bytes, at: offset + 16)
            remembered.append(Remembered(fingerprint: EventFingerprint(id: id, payload: payload), expiresAt: Int64(bitPattern: expiry)))
            offset += 24
        }
        return remembered
    }

    private static func append(_ word: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) }
    }
}
