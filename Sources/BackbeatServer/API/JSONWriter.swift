import NIOCore

/// Writes JSON straight into bytes: what the dashboard answers are encoded with (Foundation's `JSONEncoder` took
/// about half of a streams answer's CPU). Members are written in the order given; the caller pairs every `key` with
/// one value and every `begin` with its `end`.
struct JSONWriter {
    private(set) var buffer = ByteBuffer()
    /// Whether the next value or key is the first of its object or array (no comma before it).
    private var first = true

    init(capacity: Int = 512) {
        buffer.reserveCapacity(capacity)
    }

    mutating func beginObject() {
        separate()
        buffer.writeInteger(UInt8(ascii: "{"))
        first = true
    }

    mutating func endObject() {
        buffer.writeInteger(UInt8(ascii: "}"))
        first = false
    }

    mutating func beginArray() {
        separate()
        buffer.writeInteger(UInt8(ascii: "["))
        first = true
    }

    mutating func endArray() {
        buffer.writeInteger(UInt8(ascii: "]"))
        first = false
    }

    mutating func key(_ name: String) {
        separate()
        writeString(name)
        buffer.writeInteger(UInt8(ascii: ":"))
        first = true
    }

    mutating func value(_ text: String) {
        separate()
        writeString(text)
        first = false
    }

    mutating func value(_ number: Int64) {
        separate()
        buffer.writeString(String(number))
        first = false
    }

    /// A finite number as JSONEncoder writes it: integral values without a fraction, others shortest.
    mutating func value(_ number: Double) {
        separate()
        if number.rounded() == number, abs(number) < 1e15 {
            buffer.writeString(String(Int64(number)))
        } else {
            buffer.writeString(number.isFinite ? number.description : "0")
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
    mutating func objects<Items: Sequence>(_ name: String, _ items: Items, _ members: (inout JSONWriter, Items.Element) -> Void) {
        key(name)
        beginArray()
        for item in items { object { members(&$0, item) } }
        endArray()
    }

    /// `name` and its value, or nothing when `number` is nil (as a synthesized `Encodable` skips a nil optional).
    mutating func member(_ name: String, _ number: Int64?) {
        guard let number else { return }
        key(name)
        value(number)
    }

    mutating func member(_ name: String, _ text: String) {
        key(name)
        value(text)
    }

    mutating func member(_ name: String, _ number: Double) {
        key(name)
        value(number)
    }

    private mutating func separate() {
        if !first { buffer.writeInteger(UInt8(ascii: ",")) }
    }

    /// A string literal: quotes, backslashes and control characters escaped; everything else as its UTF-8.
    private mutating func writeString(_ text: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var plain = true
        for byte in text.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            buffer.writeString(text)
        } else {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case 0..<0x20:
                    let hex = String(byte, radix: 16)
                    buffer.writeString("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                default: buffer.writeInteger(byte)
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}

/// An answer that writes itself as JSON (`EncodedAnswer.json`).
protocol JSONWritable: SendableMetatype {
    func write(to json: inout JSONWriter)
}
