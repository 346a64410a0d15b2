/// The kind of a JSON value.
public enum JSONKind: Equatable, Sendable {
    case string, number, bool, null, object, array

    /// The JSON type name used in rejection details.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "boolean"
        case .null: "null"
        case .object: "object"
        case .array: "array"
        }
    }
}

/// One member of a top-level object, as byte ranges into the scanned input: nothing is copied or decoded until a
/// caller asks for it.
public struct JSONMember: Sendable {
    /// The key's bytes, without quotes.
    public var key: Range<Int>
    public var keyHasEscapes: Bool
    public var kind: JSONKind
    /// The value's bytes; for strings, without quotes.
    public var value: Range<Int>
    public var valueHasEscapes: Bool
    /// A string value of ASCII characters only, none escaped: its bytes are its characters.
    public var valueIsPlainASCII: Bool
}

/// Why a byte sequence is not a JSON object we accept.
public enum JSONScanError: Error, Equatable, Sendable {
    case invalidJSON(String)
    case notAnObject(String)
    case duplicateKey(String)
}

/// A strict RFC 8259 parser that indexes the members of a top-level object.
///
/// It validates the whole document (UTF-8, escapes, numbers, nesting up to `maxDepth`) and rejects duplicate
/// top-level keys, because a duplicated field makes an event ambiguous. It allocates only the member list.
public struct JSONScanner {
    /// The deepest nesting accepted; deeper documents are rejected rather than recursed into.
    public static let maxDepth = 32

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    /// Set by `scanString` for the string just scanned.
    private var sawEscape = false
    private var sawNonASCII = false

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Indexes `bytes` as one JSON object and returns its members in document order.
    public static func scanObject(_ bytes: UnsafeRawBufferPointer) throws(JSONScanError) -> [JSONMember] {
        var members: [JSONMember] = []
        members.reserveCapacity(16)
        try scanMembers(bytes) { members.append($0) }
        try checkDuplicates(members, in: bytes)
        return members
    }

    /// Validates `bytes` as one JSON object and hands its members to `visit` in document order, keeping none and
    /// leaving duplicate keys to the caller (who may tell them apart faster, knowing which keys it wants).
    public static func scanMembers(_ bytes: UnsafeRawBufferPointer, _ visit: (JSONMember) -> Void) throws(JSONScanError) {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.index < bytes.count else { throw .invalidJSON("the value is empty or only whitespace") }
        guard bytes[scanner.index] == UInt8(ascii: "{") else {
            // Validate first so that garbage is reported as invalid JSON, not as a non-object.
            let kind = try scanner.scanValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.index == bytes.count else { throw scanner.error("unexpected data after the value") }
            throw .notAnObject("the value is a JSON \(kind.typeName), not an object")
        }
        try scanner.scanTopObject(visit)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.error("unexpected data after the object") }
    }

    /// The error for `member`, whose key an earlier member of the same object has already.
    public static func duplicate(_ member: JSONMember, in bytes: UnsafeRawBufferPointer) -> JSONScanError {
        let key = string(member.key, hasEscapes: member.keyHasEscapes, in: bytes)
        return .duplicateKey("the member \"\(clip(key))\" appears more than once")
    }

    /// The decoded text of a string member's key or value.
    public static func string(_ range: Range<Int>, hasEscapes: Bool, in bytes: UnsafeRawBufferPointer) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        guard hasEscapes else { return String(decoding: slice, as: UTF8.self) }
        return unescape(slice)
    }

    /// Whether a member's key is `name`.
    public static func key(_ member: JSONMember, is name: StaticString, in bytes: UnsafeRawBufferPointer) -> Bool {
        if member.keyHasEscapes {
            return string(member.key, hasEscapes: true, in: bytes) == name.description
        }
        let length = name.utf8CodeUnitCount
        guard member.key.count == length else { return false }
        let start = name.utf8Start
        for offset in 0..<length where bytes[member.key.lowerBound + offset] != start[offset] { return false }
        return true
    }

    private static func checkDuplicates(_ members: [JSONMember], in bytes: UnsafeRawBufferPointer) throws(JSONScanError) {
        guard members.count > 1 else { return }
        for i in 1..<members.count {
            for j in 0..<i where sameKey(members[i], members[j], in: bytes) { throw duplicate(members[i], in: bytes) }
        }
    }

    /// Whether two members' keys are the same text, however written.
    public static func sameKey(_ a: JSONMember, _ b: JSONMember, in bytes: UnsafeRawBufferPointer) -> Bool {
        if a.keyHasEscapes || b.keyHasEscapes {
            return string(a.key, hasEscapes: a.keyHasEscapes, in: bytes) == string(b.key, hasEscapes: b.keyHasEscapes, in: bytes)
        }
        guard a.key.count == b.key.count else { return false }
        for offset in 0..<a.key.count where bytes[a.key.lowerBound + offset] != bytes[b.key.lowerBound + offset] { return false }
        return true
    }

    // MARK: - Grammar

    private mutating func scanTopObject(_ visit: (JSONMember) -> Void) throws(JSONScanError) {
        index += 1  // '{'
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try scanString()
            let keyHasEscapes = sawEscape
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            let valueStart = index
            let kind = try scanValue(depth: 1)
            var value = valueStart..<index
            var valueHasEscapes = false
            var valueIsPlainASCII = false
            if kind == .string {
                value = valueStart + 1..<index - 1
                valueHasEscapes = sawEscape
                valueIsPlainASCII = !sawEscape && !sawNonASCII
            }
            visit(JSONMember(
                key: key, keyHasEscapes: keyHasEscapes, kind: kind, value: value, valueHasEscapes: valueHasEscapes,
                valueIsPlainASCII: valueIsPlainASCII))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    /// Scans any value and returns its kind.
    private mutating func scanValue(depth: Int) throws(JSONScanError) -> JSONKind {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        guard let byte = peek() else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "\""):
            _ = try scanString()
            return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
            return .number
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "}") { index += 1; return .object }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
                _ = try scanString()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
                index += 1
                skipWhitespace()
                _ = try scanValue(depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object
                default: throw error("expected ',' or '}' in an object")
                }
            }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") { index += 1; return .array }
            while true {
                skipWhitespace()
                _ = try scanValue(depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array
                default: throw error("expected ',' or ']' in an array")
                }
            }
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONScanError) {
        let start = literal.utf8Start
        for offset in 0..<literal.utf8CodeUnitCount {
            guard index < bytes.count, bytes[index] == start[offset] else { throw error("invalid literal") }
            index += 1
        }
    }

    private mutating func scanNumber() throws(JSONScanError) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw error("numbers must not have leading zeros") }
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw error("invalid number: no digit after '.'") }
            skipDigits()
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("invalid number: no digit in exponent") }
            skipDigits()
        }
    }

    /// Validates a string (escapes and UTF-8) and returns the range of its contents; sets `sawEscape` and
    /// `sawNonASCII`.
    private mutating func scanString() throws(JSONScanError) -> Range<Int> {
        index += 1  // opening quote
        let start = index
        sawEscape = false
        sawNonASCII = false
        while index < bytes.count {
            // Eight bytes at a time, straight to the first that is not plain (a quote, backslash, control or
            // non-ASCII byte).
            while index + 8 <= bytes.count {
                let special = Self.specialBytes(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                guard special == 0 else {
                    index += special.trailingZeroBitCount >> 3
                    break
                }
                index += 8
            }
            guard index < bytes.count else { break }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return start..<index - 1
            case UInt8(ascii: "\\"):
                sawEscape = true
                index += 1
                try scanEscape()
            case 0..<0x20:
                throw error("control character in a string")
            case 0..<0x80:
                index += 1
            default:
                sawNonASCII = true
                try scanUTF8Scalar()
            }
        }
        throw error("unterminated string")
    }

    /// The high bit of each byte of `word` (read little-endian) that ends or escapes a string or needs checking as
    /// UTF-8: a quote, a backslash, a byte below 0x20 or one from 0x80. Bytes above the first such byte may be marked
    /// wrongly (a borrow carries up), the first one never is: nothing below it borrows.
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A byte is zero in x exactly when (x - 1) borrows into its high bit while x's high bit is clear.
        func zeroBytes(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        return (word & highs) | control | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
    }

    private mutating func scanEscape() throws(JSONScanError) {
        guard let byte = peek() else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let high = try scanHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate in \\u escape")
                }
                index += 2
                let low = try scanHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
            } else if (0xDC00...0xDFFF).contains(high) {
                throw error("unpaired surrogate in \\u escape")
            }
        default:
            throw error("invalid escape")
        }
    }

    private mutating func scanHex4() throws(JSONScanError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Self.hexValue(bytes[index]) else { throw error("invalid hex digit in \\u escape") }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and truncation.
    private mutating func scanUTF8Scalar() throws(JSONScanError) {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07)
        default: throw error("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw error("invalid UTF-8: truncated sequence") }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { throw error("invalid UTF-8") }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : (length == 3 ? 0x800 : 0x10000)
        guard value >= minimum, value <= 0x10FFFF, Unicode.Scalar(value) != nil else { throw error("invalid UTF-8") }
        index += length
    }

    // MARK: - Decoding escaped strings (validated already)

    private static func unescape(_ slice: UnsafeRawBufferPointer) -> String {
        String(decoding: unescapedBytes(slice), as: UTF8.self)
    }

    /// The UTF-8 bytes a string's contents (between the quotes, validated by a scan) stand for.
    public static func unescapedBytes(_ slice: UnsafeRawBufferPointer) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(slice.count)
        var index = 0
        func hex4(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 << 4 | hexValue(slice[at + $1])! }
        }
        while index < slice.count {
            let byte = slice[index]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                index += 1
                continue
            }
            let escape = slice[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var value = hex4(index)
                index += 4
                if (0xD800...0xDBFF).contains(value) {
                    // The scan accepted only complete surrogate pairs.
                    let low = hex4(index + 2)
                    index += 6
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                }
                output += UTF8.encode(Unicode.Scalar(value)!)!
            default: output.append(escape)  // \" \\ \/
            }
        }
        return output
    }

    // MARK: - Helpers

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func error(_ message: String) -> JSONScanError {
        .invalidJSON("\(message) at byte \(index)")
    }

    static func clip(_ text: String, to limit: Int = 64) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}
