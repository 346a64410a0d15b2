/// Reads the parts of a TZif file (RFC 8536): headers, big-endian integers, the footer; each read nil when the bytes run out.
struct TZifReader {
    let bytes: [UInt8]
    var position = 0

    struct Header {
        var version: Int
        var utcCount, standardCount, leapCount, timeCount, typeCount, characterCount: Int

        func dataBytes(timeSize: Int) -> Int {
            timeCount * timeSize + timeCount + typeCount * 6 + characterCount + leapCount * (timeSize + 4) + standardCount + utcCount
        }
    }

    mutating func header() -> Header? {
        guard position + 44 <= bytes.count, Array(bytes[position..<position + 4]) == Array("TZif".utf8) else { return nil }
        let versionByte = bytes[position + 4]
        let version = versionByte == 0 ? 1 : Int(versionByte) - Int(UInt8(ascii: "0"))
        guard (1...4).contains(version) else { return nil }
        position += 20
        var counts: [Int] = []
        for _ in 0..<6 {
            guard let count = integer(size: 4), (0...1_000_000).contains(count) else { return nil }
            counts.append(Int(count))
        }
        return Header(
            version: version, utcCount: counts[0], standardCount: counts[1], leapCount: counts[2], timeCount: counts[3],
            typeCount: counts[4], characterCount: counts[5])
    }

    mutating func skip(_ count: Int) -> Bool {
        guard position + count <= bytes.count else { return false }
        position += count
        return true
    }

    /// A big-endian signed integer of `size` bytes.
    mutating func integer(size: Int) -> Int64? {
        guard position + size <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[position..<position + size] { value = value << 8 | Int64(byte) }
        position += size
        // Sign-extend a 4-byte value.
        return size == 4 ? Int64(Int32(truncatingIfNeeded: value)) : value
    }

    mutating func times(_ count: Int, size: Int) -> [Int64]? {
        var times: [Int64] = []
        times.reserveCapacity(count)
        for _ in 0..<count {
            guard let time = integer(size: size) else { return nil }
            times.append(time)
        }
        return times
    }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard position + count <= bytes.count else { return nil }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// Each time type's offset (its DST flag and abbreviation are not needed here).
    mutating func types(_ count: Int) -> [Int32]? {
        var offsets: [Int32] = []
        for _ in 0..<count {
            guard let offset = integer(size: 4), skip(2), (-26 * 3600...26 * 3600).contains(offset) else { return nil }
            offsets.append(Int32(offset))
        }
        return offsets
    }

    /// The text between the two newlines that end a version 2+ file.
    mutating func footer() -> String? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\n"),
              let end = bytes[(position + 1)...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        return String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
    }
}
