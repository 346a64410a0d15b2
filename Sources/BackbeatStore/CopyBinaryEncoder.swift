import BackbeatCore
import NIOCore

/// Builds the body of a `COPY ... FROM STDIN (FORMAT binary)`: a header, then each row as its field count and each
/// field as its length and the bytes of the column type's binary form (big-endian), then a trailer.
///
/// The binary form costs PostgreSQL less than text: nothing to parse for numbers, timestamps and sketches, nothing to
/// unescape in text (docs/performance.md measured the replay's rows). It is type-specific: each method writes one
/// column type, and the caller names the one its column has.
struct CopyBinaryEncoder {
    /// Encoded as plain bytes (cheaper per column than a ByteBuffer's checked writes), handed over as one buffer: the
    /// first `count` bytes of `bytes`, which is grown (zeroed) ahead of the writes, so that a column is stored at once
    /// rather than appended byte by byte.
    private var bytes: [UInt8]
    private var count = 0
    /// Where the current row's field count goes, once the row has its first column.
    private var rowStart: Int?
    private var columnsInRow: Int16 = 0
    /// Whether the fields written are an array column's elements (`array`), not columns.
    private var inArray = false

    /// `first`: the first part of a COPY's body, which starts with the format's header.
    init(capacity: Int = 64 * 1024, first: Bool) {
        bytes = [UInt8](repeating: 0, count: capacity)
        if first {
            Self.signature.withUnsafeBytes { append(bytes: $0) }
            append(UInt32(0))  // flags: no OIDs
            append(UInt32(0))  // no header extension
        }
    }

    /// `PGCOPY\n\377\r\n\0`.
    private static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    /// A `text` column. A NUL byte, which PostgreSQL's text cannot hold, becomes U+FFFD.
    mutating func text(_ value: String) {
        var value = value
        value.withUTF8 { text(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// An interned dimension value (`text`): its text in `values`, or its fixed text.
    mutating func value(_ value: InternedValue, in values: ValueDictionary) {
        if case .id(let id) = value {
            values.withBytes(id) { text(utf8: $0) }
        } else {
            text(value.fixedText ?? "")
        }
    }

    /// A `text` column given as UTF-8 bytes.
    mutating func text(utf8 value: UnsafeRawBufferPointer) {
        // Ids and dimension values (validated at ingest) hold no NUL: copied whole.
        guard value.contains(0) else {
            field(length: value.count)
            append(bytes: value)
            return
        }
        let replaced = value.reduce(into: [UInt8]()) { text, byte in
            if byte == 0 { text.append(contentsOf: [0xEF, 0xBF, 0xBD]) } else { text.append(byte) }
        }
        replaced.withUnsafeBytes { text(utf8: $0) }
    }

    /// A `smallint` column.
    mutating func int16(_ value: Int16) {
        field(length: 2)
        append(UInt16(bitPattern: value))
    }

    /// A one-dimensional array column of `count` elements of the type `elementType` (its OID): `elements` writes
    /// each with the method of that type, as it would write a column.
    mutating func array(count: Int, of elementType: ArrayElement, _ elements: (inout CopyBinaryEncoder) -> Void) {
        precondition(!inArray, "arrays of arrays are not written")
        separate()
        let lengthAt = self.count
        append(UInt32(0))
        append(UInt32(count > 0 ? 1 : 0))  // dimensions
        append(UInt32(0))  // no NULLs
        append(elementType.oid)
        if count > 0 {
            append(UInt32(count))
            append(UInt32(1))  // lower bound
        }
        inArray = true
        elements(&self)
        inArray = false
        let length = UInt32(self.count - lengthAt - 4)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: length.bigEndian, toByteOffset: lengthAt, as: UInt32.self) }
    }

    /// The element type of an array column written, by OID: a built-in type's is fixed, an extension's (`hll`) is
    /// the one its database gave it.
    struct ArrayElement {
        var oid: UInt32

        static let bytea = ArrayElement(oid: 17)
        static let smallint = ArrayElement(oid: 21)
        static let bigint = ArrayElement(oid: 20)
        static let text = ArrayElement(oid: 25)
        static let numeric = ArrayElement(oid: 1700)
    }

    /// A `bigint` column.
    mutating func int64(_ value: Int64) {
        field(length: 8)
        append(UInt64(bitPattern: value))
    }

    /// An `integer` column.
    mutating func int32(_ value: Int32) {
        field(length: 4)
        append(UInt32(bitPattern: value))
    }

    /// A `bytea` (or `hll`) column: its bytes, or NULL.
    mutating func bytes(_ value: [UInt8]?) {
        guard let value else {
            separate()
            append(UInt32(bitPattern: -1))
            return
        }
        field(length: value.count)
        value.withUnsafeBytes { append(bytes: $0) }
    }

    /// Seconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01 (UTC).
    private static let postgresEpochSeconds: Int64 = 946_684_800

    /// An hour bucket as a `timestamptz`: microseconds since 2000-01-01 UTC.
    mutating func hour(_ hour: HourBucket) {
        int64((hour.hoursSinceEpoch * 3600 - Self.postgresEpochSeconds) * 1_000_000)
    }

    /// An instant (seconds since 1970-01-01 UTC) as a `timestamptz`, or NULL.
    mutating func instant(seconds: Int64?) {
        guard let seconds else {
            separate()
            append(UInt32(bitPattern: -1))
            return
        }
        int64((seconds - Self.postgresEpochSeconds) * 1_000_000)
    }

    /// A day (days since 1970-01-01) as a `date`: days since 2000-01-01.
    mutating func day(_ daysSinceEpoch: Int64) {
        int32(Int32(truncatingIfNeeded: daysSinceEpoch - Self.postgresEpochSeconds / 86_400))
    }

    /// A `numeric` column with six fraction digits (`Money`): sign, weight and base-10,000 digits.
    mutating func numeric(_ money: Money) {
        let magnitude = money.micros.magnitude
        var whole = magnitude / 1_000_000
        // Six fraction digits fill two base-10,000 digits once padded by two zeros.
        let hundredths = UInt32(truncatingIfNeeded: magnitude % 1_000_000) * 100
        var digits: [UInt16] = [UInt16(hundredths / 10_000), UInt16(hundredths % 10_000)]
        var wholeDigits = 0
        while whole > 0 {
            digits.insert(UInt16(truncatingIfNeeded: whole % 10_000), at: 0)
            whole /= 10_000
            wholeDigits += 1
        }
        field(length: 8 + 2 * digits.count)
        append(UInt16(digits.count))
        append(UInt16(bitPattern: Int16(wholeDigits - 1)))  // weight: the first digit's power of 10,000
        append(UInt16(money.micros < 0 ? 0x4000 : 0))
        append(UInt16(Money.fractionDigits))  // display scale
        for digit in digits { append(digit) }
    }

    /// A cube row's measures, as its dataset's columns hold them.
    mutating func measures(_ sums: CubeRowSums, of dataset: Dataset) {
        switch dataset {
        case .streams, .funnel:
            int64(sums.integers.0)
            int64(sums.integers.1)
            int64(sums.integers.2)
        case .revenue:
            numeric(sums.amount)
            int64(sums.integers.0)
        case .social, .page:
            int64(sums.integers.0)
        }
    }

    /// Bytes encoded before a large COPY sends them on, so that it is never held whole.
    static let chunkBytes = 1 << 20

    /// Encodes rows from `rows` with `encode` until at least `bytes` are encoded or the rows run out; returns
    /// whether they ran out (the trailer is then written).
    mutating func encode<Rows: IteratorProtocol>(
        _ rows: inout Rows, upTo bytes: Int, _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) -> Bool {
        while count < bytes {
            guard let row = rows.next() else {
                finish()
                return true
            }
            encode(row, &self)
        }
        return false
    }

    /// Ends the body (after its last row).
    mutating func finish() {
        append(UInt16(bitPattern: -1))
    }

    /// What is encoded, as one buffer.
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes[..<count]) }

    mutating func endRow() {
        if let rowStart {
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: columnsInRow.bigEndian, toByteOffset: rowStart, as: Int16.self) }
        }
        rowStart = nil
        columnsInRow = 0
    }

    /// Starts a field of `length` bytes: a column, or an element of the array being written.
    private mutating func field(length: Int) {
        if !inArray { separate() }
        append(UInt32(truncatingIfNeeded: length))
    }

    /// Counts a field of the current row, starting the row at its first.
    private mutating func separate() {
        if rowStart == nil {
            rowStart = count
            append(UInt16(0))
        }
        columnsInRow += 1
    }

    /// Stores `value` big-endian.
    private mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        reserve(MemoryLayout<Integer>.size)
        let offset = count
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: offset, as: Integer.self) }
        count += MemoryLayout<Integer>.size
    }

    private mutating func append(bytes value: UnsafeRawBufferPointer) {
        guard !value.isEmpty else { return }
        reserve(value.count)
        let offset = count
        bytes.withUnsafeMutableBytes { ($0.baseAddress! + offset).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        count += value.count
    }

    /// Makes room for `more` bytes after the first `count`.
    private mutating func reserve(_ more: Int) {
        if count + more > bytes.count { bytes.append(contentsOf: repeatElement(0, count: Swift.max(bytes.count, more))) }
    }
}
