import BackbeatCore
import NIOCore
import PostgresNIO

/// Builds the body of a `COPY ... FROM STDIN (FORMAT text)`: tab-separated columns, one row per line.
///
/// postgres-nio 1.33 exposes COPY FROM in text format only, so values are escaped as that format requires.
struct CopyTextEncoder {
    /// Encoded as plain bytes (cheaper per column than a ByteBuffer's checked writes), handed over as one buffer.
    private var bytes: [UInt8] = []
    private var columnsInRow = 0

    init(capacity: Int = 64 * 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// A text column, escaped.
    mutating func text(_ value: String) {
        var value = value
        value.withUTF8 { text(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// An interned dimension value: its text in `values`, or its fixed text.
    mutating func value(_ value: InternedValue, in values: ValueDictionary) {
        if case .id(let id) = value {
            values.withBytes(id) { text(utf8: $0) }
        } else {
            text(value.fixedText ?? "")
        }
    }

    /// A text column given as UTF-8 bytes, escaped.
    mutating func text(utf8 value: UnsafeRawBufferPointer) {
        separate()
        // Ids and dimension values (validated at ingest) need no escaping: copied whole.
        if value.allSatisfy({ $0 != UInt8(ascii: "\\") && $0 >= 0x20 }) {
            bytes.append(contentsOf: value)
            return
        }
        for byte in value {
            switch byte {
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            default: bytes.append(byte)
            }
        }
    }

    /// A column whose text never needs escaping (numbers, timestamps).
    mutating func plain(_ value: String) {
        separate()
        bytes.append(contentsOf: value.utf8)
    }

    mutating func integer(_ value: some BinaryInteger) {
        guard let value = Int64(exactly: value), value >= 0 else {
            plain(String(value))
            return
        }
        separate()
        // Written straight into the buffer, most significant digit first.
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        write(digits) { bytes in
            var remaining = value
            for index in stride(from: digits - 1, through: 0, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            return digits
        }
    }

    /// A bytea column in hex form, or NULL.
    mutating func bytes(_ value: [UInt8]?) {
        separate()
        guard let value else {
            bytes.append(contentsOf: #"\N"#.utf8)
            return
        }
        bytes.append(contentsOf: #"\\x"#.utf8)
        write(value.count * 2) { output in
            for (index, byte) in value.enumerated() {
                output[2 * index] = Self.hexDigit(byte >> 4)
                output[2 * index + 1] = Self.hexDigit(byte & 0xF)
            }
            return value.count * 2
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// An hour bucket as a UTC timestamp (`YYYY-MM-DD HH:00:00+00`).
    mutating func hour(_ hour: HourBucket) {
        let day = hour.hoursSinceEpoch.floorDiv(24)
        let date = CivilDate(daysSinceEpoch: day)
        guard (0...9999).contains(date.year) else { return plain(RFC3339.format(hour.start)) }
        separate()
        let hourOfDay = Int(hour.hoursSinceEpoch - day * 24)
        write(22) { output in
            Self.writeDate(date, into: output)
            output[10] = UInt8(ascii: " ")
            output[11] = UInt8(ascii: "0") + UInt8(hourOfDay / 10)
            output[12] = UInt8(ascii: "0") + UInt8(hourOfDay % 10)
            for (index, byte) in ":00:00+00".utf8.enumerated() { output[13 + index] = byte }
            return 22
        }
    }

    /// A day (days since the epoch) as a date (`YYYY-MM-DD`).
    mutating func day(_ daysSinceEpoch: Int64) {
        let date = CivilDate(daysSinceEpoch: daysSinceEpoch)
        guard (0...9999).contains(date.year) else { return plain(RFC3339.formatDate(date)) }
        separate()
        write(10) { output in
            Self.writeDate(date, into: output)
            return 10
        }
    }

    /// `YYYY-MM-DD` (a year in 0...9999) in the first 10 bytes of `output`.
    private static func writeDate(_ date: CivilDate, into output: UnsafeMutableRawBufferPointer) {
        var year = date.year
        for index in stride(from: 3, through: 0, by: -1) {
            output[index] = UInt8(ascii: "0") + UInt8(year % 10)
            year /= 10
        }
        output[4] = UInt8(ascii: "-")
        output[5] = UInt8(ascii: "0") + UInt8(date.month / 10)
        output[6] = UInt8(ascii: "0") + UInt8(date.month % 10)
        output[7] = UInt8(ascii: "-")
        output[8] = UInt8(ascii: "0") + UInt8(date.day / 10)
        output[9] = UInt8(ascii: "0") + UInt8(date.day % 10)
    }

    /// A cube row's measures, as its dataset's columns hold them.
    mutating func measures(_ sums: CubeRowSums, of dataset: Dataset) {
        switch dataset {
        case .streams:
            integer(sums.integers.0)
            integer(sums.integers.1)
            integer(sums.integers.2)
        case .revenue:
            plain(sums.amount.decimalString)
            integer(sums.integers.0)
        case .social:
            integer(sums.integers.0)
        }
    }

    /// Bytes encoded before a large COPY sends them on, so that it is never held whole.
    static let chunkBytes = 1 << 20

    /// Encodes rows from `rows` with `encode` until at least `bytes` are encoded or the rows run out; returns
    /// whether they ran out.
    mutating func encode<Rows: IteratorProtocol>(
        _ rows: inout Rows, upTo bytes: Int, _ encode: (Rows.Element, inout CopyTextEncoder) -> Void
    ) -> Bool {
        while self.bytes.count < bytes {
            guard let row = rows.next() else { return true }
            encode(row, &self)
        }
        return false
    }

    /// What is encoded, as one buffer.
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes) }

    /// Appends `count` bytes that `fill` writes (it returns how many it wrote, at most `count`).
    private mutating func write(_ count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Int) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        let written = bytes.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        bytes.removeLast(count - written)
    }

    mutating func endRow() {
        bytes.append(UInt8(ascii: "\n"))
        columnsInRow = 0
    }

    private mutating func separate() {
        if columnsInRow > 0 { bytes.append(UInt8(ascii: "\t")) }
        columnsInRow += 1
    }
}
