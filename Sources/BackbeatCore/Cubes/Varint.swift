/// LEB128 variable-length integers: 7 bits per byte, low bits first, high bit set on every byte but the last.
/// Small counts take one byte; signed values are zigzag-mapped first so that small negatives stay small.
enum Varint {
    static func append<T: FixedWidthInteger & UnsignedInteger>(_ value: T, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    static func append(signed value: Int64, to bytes: inout [UInt8]) {
        append(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &bytes)
    }

    static func append(signed value: Int128, to bytes: inout [UInt8]) {
        append(UInt128(bitPattern: (value << 1) ^ (value >> 127)), to: &bytes)
    }
}

/// Reads varints from a byte buffer, advancing a cursor.
struct VarintReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    @inline(__always)
    mutating func next<T: FixedWidthInteger & UnsignedInteger>(as type: T.Type = UInt64.self) -> T {
        var result: T = 0
        var shift = 0
        while true {
            let byte = bytes[position]
            position += 1
            result |= T(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    @inline(__always)
    mutating func nextSigned() -> Int64 {
        let raw = next(as: UInt64.self)
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func nextSigned128() -> Int128 {
        let raw = next(as: UInt128.self)
        return Int128(bitPattern: raw >> 1) ^ -Int128(bitPattern: raw & 1)
    }
}
