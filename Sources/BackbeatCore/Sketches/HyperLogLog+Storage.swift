/// postgresql-hll's storage format, schema version 1 (its STORAGE.markdown): a version/type byte, a parameter
/// byte, a cutoff byte, then EXPLICIT big-endian hashes, SPARSE index/value short-words, or FULL registers.
extension HyperLogLog {
    private static let typeEmpty: UInt8 = 1
    private static let typeExplicit: UInt8 = 2
    private static let typeSparse: UInt8 = 3
    private static let typeFull: UInt8 = 4
    /// Register width and log2m, as the parameter byte encodes them.
    private static let parameterByte = UInt8(((registerWidth - 1) << 5) | log2m)
    /// Sparse on (bit 6) and the automatic explicit threshold (63).
    private static let cutoffByte: UInt8 = (1 << 6) | 63

    /// Why bytes are not a sketch this type can read.
    public struct FormatError: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The bytes PostgreSQL stores for this sketch. Registers are written SPARSE when that is smaller than FULL,
    /// as postgresql-hll itself decides.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = [0, Self.parameterByte, Self.cutoffByte]
        switch storage {
        case .empty:
            bytes[0] = 0x10 | Self.typeEmpty
        case .explicit(let hashes):
            bytes[0] = 0x10 | Self.typeExplicit
            bytes.reserveCapacity(3 + hashes.count * 8)
            for hash in hashes {
                let bits = UInt64(bitPattern: hash)
                for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            }
        case .registers(let registers):
            let filled = registers.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
            let sparseBits = filled * (Self.log2m + Self.registerWidth)
            let fullBits = Self.registerCount * Self.registerWidth
            var writer = BitWriter()
            if sparseBits < fullBits {
                bytes[0] = 0x10 | Self.typeSparse
                for (index, value) in registers.enumerated() where value != 0 {
                    writer.write((UInt32(index) << UInt32(Self.registerWidth)) | UInt32(value), width: Self.log2m + Self.registerWidth)
                }
            } else {
                bytes[0] = 0x10 | Self.typeFull
                for value in registers { writer.write(UInt32(value), width: Self.registerWidth) }
            }
            bytes += writer.bytes
        }
        return bytes
    }

    /// Reads a sketch PostgreSQL stored with the same parameters.
    public init(serialized bytes: [UInt8]) throws(FormatError) {
        guard bytes.count >= 3, bytes[0] >> 4 == 1 else { throw FormatError(description: "not an hll of schema version 1") }
        guard bytes[1] == Self.parameterByte, bytes[2] == Self.cutoffByte else {
            throw FormatError(description: "hll parameters differ from log2m \(Self.log2m), regwidth \(Self.registerWidth), auto explicit, sparse on")
        }
        let data = bytes[3...]
        switch bytes[0] & 0x0F {
        case Self.typeEmpty:
            storage = .empty
        case Self.typeExplicit:
            guard data.count % 8 == 0 else { throw FormatError(description: "explicit hll has a partial element") }
            var hashes: [Int64] = []
            var iterator = data.makeIterator()
            for _ in 0..<(data.count / 8) {
                var bits: UInt64 = 0
                for _ in 0..<8 { bits = bits << 8 | UInt64(iterator.next()!) }
                hashes.append(Int64(bitPattern: bits))
            }
            guard zip(hashes, hashes.dropFirst()).allSatisfy({ $0 < $1 }) else { throw FormatError(description: "explicit hll is not sorted") }
            storage = hashes.isEmpty ? .empty : .explicit(hashes)
        case Self.typeSparse:
            let width = Self.log2m + Self.registerWidth
            var reader = BitReader(bytes: Array(data))
            var registers = [UInt8](repeating: 0, count: Self.registerCount)
            for _ in 0..<(data.count * 8 / width) {
                let word = reader.read(width: width)
                registers[Int(word >> UInt32(Self.registerWidth))] = UInt8(word & UInt32((1 << Self.registerWidth) - 1))
            }
            storage = .registers(registers)
        case Self.typeFull:
            guard data.count == (Self.registerCount * Self.registerWidth + 7) / 8 else { throw FormatError(description: "full hll has the wrong size") }
            var reader = BitReader(bytes: Array(data))
            storage = .registers((0..<Self.registerCount).map { _ in UInt8(reader.read(width: Self.registerWidth)) })
        default:
            throw FormatError(description: "undefined hll type \(bytes[0] & 0x0F)")
        }
    }
}

/// Packs values of a fixed bit width from the top of each byte down.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var used = 8

    mutating func write(_ value: UInt32, width: Int) {
        var remaining = width
        while remaining > 0 {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            let take = min(8 - used, remaining)
            let chunk = UInt8(truncatingIfNeeded: (value >> UInt32(remaining - take)) & ((1 << UInt32(take)) - 1))
            bytes[bytes.count - 1] |= chunk << UInt8(8 - used - take)
            used += take
            remaining -= take
        }
    }
}

/// Reads what `BitWriter` packs.
private struct BitReader {
    let bytes: [UInt8]
    private var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func read(width: Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<width {
            let bit = (bytes[position / 8] >> UInt8(7 - position % 8)) & 1
            value = value << 1 | UInt32(bit)
            position += 1
        }
        return value
    }
}
