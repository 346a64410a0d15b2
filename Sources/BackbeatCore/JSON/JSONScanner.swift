/// A value found at the top level of a JSON object.
///
/// Numbers keep their literal text so that money can be read exactly; nested objects and arrays are validated
/// but only their kind is kept, since no event field is nested.
public enum JSONFieldValue: Equatable, Sendable {
    case string(String)
    case number(String)
    case bool(Bool)
    case null
    case object
    case array

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

/// Why a byte sequence is not a JSON object we accept.
public enum JSONScanError: Error, Equatable, Sendable {
    case invalidJSON(String)
    case notAnObject(String)
    case duplicateKey(String)
}

/// A strict RFC 8259 parser that returns the members of a top-level object.
///
/// It validates the whole document (UTF-8, escapes, numbers, nesting up to `maxDepth`) and rejects duplicate
/// top-level keys, because a duplicated field makes an event ambiguous.
public struct JSONScanner {
    /// The deepest nesting accepted; deeper documents are rejected rather than recursed into.
    public static let maxDepth = 32

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses `bytes` as one JSON object and returns its members in document order.
    public static func scanObject(_ bytes: UnsafeRawBufferPointer) throws(JSONScanError) -> [(key: String, value: JSONFieldValue)] {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.index < bytes.count else { throw .invalidJSON("the value is empty or only whitespace") }
        guard bytes[scanner.index] == UInt8(ascii: "{") else {
            // Validate first so that garbage is reported as invalid JSON, not as a non-object.
            let kind = try scanner.parseNested(depth: 0)
            throw .notAnObject("the value is a JSON \(kind.typeName), not an object")
        }
        let members = try scanner.parseTopObject()
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.error("unexpected data after the object") }
        return members
    }

    // MARK: - Grammar

    private mutating func parseTopObject() throws(JSONScanError) -> [(key: String, value: JSONFieldValue)] {
        index += 1  // '{'
        var members: [(key: String, value: JSONFieldValue)] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw .duplicateKey("the member \"\(Self.clip(key))\" appears more than once")
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: 1)
            members.append((key, value))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return members
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONScanError) -> JSONFieldValue {
        try parseNested(depth: depth)
    }

    /// Parses any value, keeping only its kind for objects and arrays.
    private mutating func parseNested(depth: Int) throws(JSONScanError) -> JSONFieldValue {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        guard let byte = peek() else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "}") { index += 1; return .object }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
                _ = try parseString()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
                index += 1
                skipWhitespace()
                _ = try parseNested(depth: depth + 1)
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
                _ = try parseNested(depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array
                default: throw error("expected ',' or ']' in an array")
                }
            }
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONScanError) {
        for expected in literal.utf8 {
            guard index < bytes.count, bytes[index] == expected else { throw error("invalid literal") }
            index += 1
        }
    }

    private mutating func parseNumber() throws(JSONScanError) -> String {
        let start = index
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
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func parseString() throws(JSONScanError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, plain ASCII.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 || byte < 0x20 { break }
            index += 1
        }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).unicodeScalars)
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                index += 1
                scalars.append(try parseEscape())
            case 0..<0x20:
                throw error("control character in a string")
            case 0..<0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                scalars.append(try parseUTF8Scalar())
            }
        }
    }

    private mutating func parseEscape() throws(JSONScanError) -> Unicode.Scalar {
        guard let byte = peek() else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate in \\u escape")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(value)!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("unpaired surrogate in \\u escape") }
            return scalar
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JSONScanError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Decodes one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and truncation.
    private mutating func parseUTF8Scalar() throws(JSONScanError) -> Unicode.Scalar {
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
        guard value >= minimum, value <= 0x10FFFF, let scalar = Unicode.Scalar(value) else {
            throw error("invalid UTF-8")
        }
        index += length
        return scalar
    }

    // MARK: - Helpers

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
