import NIOCore

/// Writes JSON straight into bytes: what the dashboard answers are encoded with (Foundation's `JSONEncoder` took
/// about half of a streams answer's CPU). Members are written in the order given; the caller pairs every `key` with
/// one value and every `begin` with its `end`. The bytes grow in an array, copied once into a `ByteBuffer` at the end:
/// each write into a `ByteBuffer` pays for its storage's checks, a third of a large answer's CPU.
struct JSONWriter {
    private var bytes: [UInt8] = []
    /// Whether the next value or key is the first of its object or array (no comma before it).
    private var first = true

    init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// What was written.
    var buffer: ByteBuffer {
        ByteBuffer(bytes: bytes)
    }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        first = true
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// A member's name: written as it is, without looking for what to escape (every name is a literal of the
    /// answers' own, plain ASCII).
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        first = true
    }

    /// A member's name made at run time (a dimension's), escaped as any string is.
    mutating func key(named name: String) {
        separate()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        first = true
    }

    mutating func value(_ text: String) {
        separate()
        writeString(text)
        first = false
    }

    mutating func value(_ number: Int64) {
        separate()
        writeDigits(number)
        first = false
    }

    /// A finite number as JSONEncoder writes it: integral values without a fraction, others shortest.
    mutating func value(_ number: Double) {
        separate()
        if number.rounded() == number, abs(number) < 1e15 {
            writeDigits(Int64(number))
        } else {
            bytes.append(contentsOf: (number.isFinite ? number.description : "0").utf8)
        }
        first = false
    }

    /// An object whose members `members` writes.
    mutating func object(_ members: (inout JSONWriter) -> Void) {
        beginObject()
        members(&self)
        endObject()
    }

    /// `name` and an array of one object per item, whose members `members` writes.
    mutating func objects<Items: Sequence>(_ name: StaticString, _ items: Items, _ members: (inout JSONWriter, Items.Element) -> Void) {
        key(name)
        beginArray()
        for item in items { object { members(&$0, item) } }
        endArray()
    }

    /// `name` and its value, or nothing when `number` is nil (as a synthesized `Encodable` skips a nil optional).
    mutating func member(_ name: StaticString, _ number: Int64?) {
        guard let number else { return }
        key(name)
        value(number)
    }

    mutating func member(_ name: StaticString, _ text: String) {
        key(name)
        value(text)
    }

    mutating func member(_ name: StaticString, _ number: Double) {
        key(name)
        value(number)
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
    }

    /// `number` in decimal, as `String(number)` writes it.
    private mutating func writeDigits(_ number: Int64) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// A string literal: quotes, backslashes and control characters escaped; everything else as its UTF-8.
    private mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !plain {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): bytes.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): bytes.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): bytes.append(contentsOf: "\\t".utf8)
                case 0..<0x20:
                    let hex = String(byte, radix: 16)
                    bytes.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// An answer that writes itself as JSON (`EncodedAnswer.json`).
protocol JSONWritable: SendableMetatype {
    func write(to json: inout JSONWriter)
}
