/// The stored form of one cube's rows of one artist and local day: a self-contained byte block (a PostgreSQL `bytea`)
/// in which each dimension value is written once, in a dictionary of the block's own, and every number is a varint.
///
/// Layout, column after column: the version byte, then the row count; per dimension of the cube (`Cube.dimensions`
/// order) a dictionary: its entry count, then its entries in byte order, each written as the length of the prefix it
/// shares with the entry before, then the length and UTF-8 bytes of the rest (an artist's track ids share their
/// artist's prefix); then each row's key; then per measure of the dataset (`Dataset.metrics` order) each row's value
/// as a zigzag varint (an amount as its micros, 128 bits). A row's key is its time of the day (cubes finer than a
/// day) and its index into each dictionary:
/// - version 2 (time: the hour) and 3 (time: the slot of the cube's grain, `Cube.Grain.slot`): the key as one
///   mixed-radix number (the time in 24 or the grain's slots a day, then each index in its dictionary's entry count,
///   the time most significant), rows in order of it, each row written as its key's difference from the row before;
/// - version 1 (time: the hour) and 4 (time: the slot), where that number would not fit 64 bits: the times (each as
///   its difference from the row before's), then per dimension each row's index; rows in order of time, then indexes.
///
/// A quarter-hour cube is written in versions 3 and 4, every other cube in 2 and 1 (an hourly cube's bytes as before
/// quarter hours). A block of version 1 or 2 of a cube now kept by quarter hours (written when its rows were hourly)
/// reads as rows at the first quarter of their hour, so that old blocks stay readable and merge into new ones.
///
/// Every count, length, index, time and key difference is an unsigned LEB128 varint. Rows are in order of their keys,
/// so that the same rows always make the same bytes.
public enum CubeBlock {
    public struct FormatError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The block of `day`'s rows of `cube`, their values resolved through `values`. Each key is in `day` once (as
    /// `ArtistDayRows` makes it).
    public static func encode(_ day: CubeDay, of cube: Cube, values: ValueDictionary) -> [UInt8] {
        let width = cube.dimensions.count
        var dictionaries: [[[UInt8]]] = Array(repeating: [], count: width)
        var indexes: [[Int]] = Array(repeating: [], count: width)
        for dimension in 0..<width {
            // The rows in order of their value's code: each run of one code is a dictionary entry (a sort of a few
            // hundred integers costs less than hashing every row's value).
            var order = (0..<day.rowCount).map { (code: day.values[$0 * width + dimension].tableCode, row: $0) }
            order.sort { $0.code < $1.code }
            indexes[dimension] = Array(repeating: 0, count: day.rowCount)
            for (position, (code, row)) in order.enumerated() {
                if position == 0 || order[position - 1].code != code {
                    dictionaries[dimension].append(Self.bytes(of: day.values[row * width + dimension], in: values))
                }
                indexes[dimension][row] = dictionaries[dimension].count - 1
            }
        }
        return encode(slots: cube.grain != .day ? day.slots : [], dictionaries: dictionaries, indexes: indexes, sums: day.sums, of: cube)
    }

    /// The block of `rows` (each key once).
    public static func encode(_ rows: BlockRows, of cube: Cube) -> [UInt8] {
        encode(slots: rows.slots, dictionaries: rows.dictionaries.map { $0.map { Array($0.utf8) } }, indexes: rows.indexes, sums: rows.sums, of: cube)
    }

    /// The rows of a block of `cube`.
    /// - Throws: `FormatError` when the bytes are not a whole block of this cube (never reads past them).
    public static func decode(_ bytes: [UInt8], of cube: Cube) throws(FormatError) -> BlockRows {
        var reader = CheckedReader(bytes: bytes)
        let version = try reader.byte()
        guard (1...4).contains(version) else { throw FormatError(description: "not a cube block of version 1 to 4") }
        let count = try reader.count(limit: bytes.count)
        let timed = cube.grain != .day
        // Versions 1 and 2 hold hours, 3 and 4 the slots of the cube's grain.
        let inSlots = version >= 3
        let timeRadix = inSlots ? Int(cube.grain.slotsPerDay) : 24
        let scale = Int16(inSlots ? 1 : cube.grain.slotsPerDay / 24)
        var rows = BlockRows(dimensions: cube.dimensions.count)
        if version == 1 || version == 4 {
            if timed { rows.slots = try timesInColumns(count, below: timeRadix, &reader) }
            for dimension in 0..<cube.dimensions.count {
                rows.dictionaries[dimension] = try dictionary(&reader)
                let entries = rows.dictionaries[dimension].count
                for _ in 0..<count { rows.indexes[dimension].append(try reader.index(below: entries)) }
            }
        } else {
            for dimension in 0..<cube.dimensions.count { rows.dictionaries[dimension] = try dictionary(&reader) }
            let radices = (timed ? [timeRadix] : []) + rows.dictionaries.map(\.count)
            var limit: UInt64 = 1
            for radix in radices {
                let (next, overflow) = limit.multipliedReportingOverflow(by: UInt64(radix))
                guard !overflow else { throw FormatError(description: "a version \(version) block whose keys pass 64 bits") }
                limit = next
            }
            var key: UInt64 = 0
            for row in 0..<count {
                let (next, overflow) = key.addingReportingOverflow(try reader.unsigned(as: UInt64.self))
                guard !overflow, next < limit, row == 0 || next > key else { throw FormatError(description: "a row key out of order or range") }
                key = next
                var rest = key
                for dimension in (0..<cube.dimensions.count).reversed() {
                    let radix = UInt64(rows.dictionaries[dimension].count)
                    rows.indexes[dimension].append(Int(rest % radix))
                    rest /= radix
                }
                if timed { rows.slots.append(Int16(rest)) }
            }
        }
        if scale > 1 { rows.slots = rows.slots.map { $0 * scale } }
        rows.sums = Array(repeating: CubeRowSums(), count: count)
        switch cube.dataset {
        case .streams, .funnel:
            for row in 0..<count { rows.sums[row].integers.0 = try reader.signed() }
            for row in 0..<count { rows.sums[row].integers.1 = try reader.signed() }
            for row in 0..<count { rows.sums[row].integers.2 = try reader.signed() }
        case .revenue:
            for row in 0..<count { rows.sums[row].amount = Money(micros: try reader.signed128()) }
            for row in 0..<count { rows.sums[row].integers.0 = try reader.signed() }
        case .social, .page:
            for row in 0..<count { rows.sums[row].integers.0 = try reader.signed() }
        }
        guard reader.isAtEnd else { throw FormatError(description: "bytes after the block's last column") }
        return rows
    }

    /// The times of versions 1 and 4, each below `radix`.
    private static func timesInColumns(_ count: Int, below radix: Int, _ reader: inout CheckedReader) throws(FormatError) -> [Int16] {
        var times: [Int16] = []
        var time = 0
        for _ in 0..<count {
            time += try reader.count(limit: radix)
            guard time < radix else { throw FormatError(description: "a time past the day's end") }
            times.append(Int16(time))
        }
        return times
    }

    private static func dictionary(_ reader: inout CheckedReader) throws(FormatError) -> [String] {
        let entries = try reader.count(limit: reader.bytes.count)
        var dictionary: [String] = []
        var previous: [UInt8] = []
        for _ in 0..<entries {
            let shared = try reader.count(limit: previous.count)
            let rest = try reader.count(limit: reader.bytes.count)
            previous = Array(previous[..<shared]) + (try reader.bytes(rest))
            dictionary.append(String(decoding: previous, as: UTF8.self))
        }
        return dictionary
    }

    private static func bytes(of value: InternedValue, in values: ValueDictionary) -> [UInt8] {
        if case .id(let id) = value { return values.withBytes(id) { Array($0) } }
        return Array((value.fixedText ?? "").utf8)
    }

    private static func encode(slots: [Int16], dictionaries: [[[UInt8]]], indexes: [[Int]], sums: [CubeRowSums], of cube: Cube) -> [UInt8] {
        // Entries in byte order, each row's indexes renumbered to match.
        var renumbered = indexes
        var sortedDictionaries: [[[UInt8]]] = []
        for (dimension, entries) in dictionaries.enumerated() {
            let order = entries.indices.sorted { entries[$0].lexicographicallyPrecedes(entries[$1]) }
            var place = Array(repeating: 0, count: entries.count)
            for (position, index) in order.enumerated() { place[index] = position }
            renumbered[dimension] = indexes[dimension].map { place[$0] }
            sortedDictionaries.append(order.map { entries[$0] })
        }
        // Each row's key as one number, when every key fits 64 bits (version 2 or 3).
        let inSlots = cube.grain == .quarterHour
        let radices = (slots.isEmpty ? [] : [Int(cube.grain.slotsPerDay)]) + dictionaries.map(\.count)
        var fits = true
        _ = radices.reduce(UInt64(1)) { product, radix in
            let (next, overflow) = product.multipliedReportingOverflow(by: UInt64(radix))
            fits = fits && !overflow
            return next
        }
        var keys: [UInt64] = []
        var sorted: [Int]
        if fits {
            keys = Array(repeating: 0, count: sums.count)
            var keyed: [(key: UInt64, row: Int)] = []
            keyed.reserveCapacity(sums.count)
            for row in sums.indices {
                var key = slots.isEmpty ? 0 : UInt64(slots[row])
                for dimension in renumbered.indices {
                    key = key * UInt64(dictionaries[dimension].count) + UInt64(renumbered[dimension][row])
                }
                keys[row] = key
                keyed.append((key, row))
            }
            keyed.sort { $0.key < $1.key }
            sorted = keyed.map(\.row)
        } else {
            sorted = sums.indices.sorted { left, right in
                if !slots.isEmpty, slots[left] != slots[right] { return slots[left] < slots[right] }
                for column in renumbered where column[left] != column[right] { return column[left] < column[right] }
                return false
            }
        }
        var bytes: [UInt8] = [fits ? (inSlots ? 3 : 2) : (inSlots ? 4 : 1)]
        bytes.reserveCapacity(16 + sums.count * (4 + cube.dimensions.count))
        Varint.append(UInt64(sums.count), to: &bytes)
        if fits {
            for entries in sortedDictionaries { appendDictionary(entries, to: &bytes) }
            var previous: UInt64 = 0
            for row in sorted {
                Varint.append(keys[row] - previous, to: &bytes)
                previous = keys[row]
            }
        } else {
            var previous: Int16 = 0
            for row in sorted where !slots.isEmpty {
                Varint.append(UInt64(slots[row] - previous), to: &bytes)
                previous = slots[row]
            }
            for (dimension, entries) in sortedDictionaries.enumerated() {
                appendDictionary(entries, to: &bytes)
                for row in sorted { Varint.append(UInt64(renumbered[dimension][row]), to: &bytes) }
            }
        }
        switch cube.dataset {
        case .streams, .funnel:
            for row in sorted { Varint.append(signed: sums[row].integers.0, to: &bytes) }
            for row in sorted { Varint.append(signed: sums[row].integers.1, to: &bytes) }
            for row in sorted { Varint.append(signed: sums[row].integers.2, to: &bytes) }
        case .revenue:
            for row in sorted { Varint.append(signed: sums[row].amount.micros, to: &bytes) }
            for row in sorted { Varint.append(signed: sums[row].integers.0, to: &bytes) }
        case .social, .page:
            for row in sorted { Varint.append(signed: sums[row].integers.0, to: &bytes) }
        }
        return bytes
    }

    /// A dictionary, its entries in byte order, each front-coded against the one before.
    private static func appendDictionary(_ entries: [[UInt8]], to bytes: inout [UInt8]) {
        Varint.append(UInt64(entries.count), to: &bytes)
        var previous: [UInt8] = []
        for entry in entries {
            let shared = zip(previous, entry).prefix { $0 == $1 }.count
            Varint.append(UInt64(shared), to: &bytes)
            Varint.append(UInt64(entry.count - shared), to: &bytes)
            bytes += entry[shared...]
            previous = entry
        }
    }
}

/// Reads a stored block's varints with every read checked against the end of its bytes.
private struct CheckedReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws(CubeBlock.FormatError) -> UInt8 {
        guard position < bytes.count else { throw CubeBlock.FormatError(description: "the block ends early") }
        position += 1
        return bytes[position - 1]
    }

    mutating func unsigned<T: FixedWidthInteger & UnsignedInteger>(as type: T.Type) throws(CubeBlock.FormatError) -> T {
        var result: T = 0
        var shift = 0
        while true {
            let byte = try byte()
            guard shift < T.bitWidth, (T(byte & 0x7F) << shift) >> shift == T(byte & 0x7F) else {
                throw CubeBlock.FormatError(description: "a varint wider than \(T.bitWidth) bits")
            }
            result |= T(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// A count, length or index, at most `limit`.
    mutating func count(limit: Int) throws(CubeBlock.FormatError) -> Int {
        let value = try unsigned(as: UInt64.self)
        guard value <= UInt64(limit) else { throw CubeBlock.FormatError(description: "a count of \(value) where at most \(limit) fit") }
        return Int(value)
    }

    /// An index into a dictionary of `entries`.
    mutating func index(below entries: Int) throws(CubeBlock.FormatError) -> Int {
        let index = try count(limit: entries)
        guard index < entries else { throw CubeBlock.FormatError(description: "a dictionary index past its entries") }
        return index
    }

    mutating func signed() throws(CubeBlock.FormatError) -> Int64 {
        let raw = try unsigned(as: UInt64.self)
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func signed128() throws(CubeBlock.FormatError) -> Int128 {
        let raw = try unsigned(as: UInt128.self)
        return Int128(bitPattern: raw >> 1) ^ -Int128(bitPattern: raw & 1)
    }

    mutating func bytes(_ count: Int) throws(CubeBlock.FormatError) -> ArraySlice<UInt8> {
        guard bytes.count - position >= count else { throw CubeBlock.FormatError(description: "the block ends early") }
        position += count
        return bytes[position - count ..< position]
    }
}
