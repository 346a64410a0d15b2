/// The cases of a string enum with their names packed into integers, made once per enum, so that a field's bytes
/// are matched to a case without making a String or a list of cases per event.
struct CaseNames<Value: RawRepresentable & CaseIterable>: Sendable where Value.RawValue == String, Value: Sendable {
    private struct Entry: Sendable {
        var length: Int
        var low: UInt64
        var high: UInt64
        var value: Value
    }

    private let entries: [Entry]

    init(_ type: Value.Type) {
        entries = Value.allCases.map { value in
            let name = Array(value.rawValue.utf8)
            precondition(name.count <= 16, "a case name longer than 16 bytes")
            let (low, high) = name.withUnsafeBytes { Self.pack($0) }
            return Entry(length: name.count, low: low, high: high, value: value)
        }
    }

    /// The case named by `bytes` (UTF-8, unescaped), or nil.
    func value(named bytes: UnsafeRawBufferPointer) -> Value? {
        guard bytes.count <= 16 else { return nil }
        let (low, high) = Self.pack(bytes)
        for entry in entries where entry.length == bytes.count && entry.low == low && entry.high == high {
            return entry.value
        }
        return nil
    }

    /// The cases' names, for a rejection's text.
    var names: String {
        entries.map(\.value.rawValue).joined(separator: ", ")
    }

    /// Up to 16 bytes as two little-endian words, zero beyond the end (read byte by byte: nothing past the end).
    private static func pack(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for (offset, byte) in bytes.enumerated() {
            if offset < 8 { low |= UInt64(byte) << (offset * 8) } else { high |= UInt64(byte) << ((offset - 8) * 8) }
        }
        return (low, high)
    }
}

extension CaseNames where Value == EventType {
    static let eventTypes = CaseNames(EventType.self)
}

extension CaseNames where Value == AgeRange {
    static let ageRanges = CaseNames(AgeRange.self)
}

extension CaseNames where Value == Gender {
    static let genders = CaseNames(Gender.self)
}

extension CaseNames where Value == RevenueSource {
    static let revenueSources = CaseNames(RevenueSource.self)
}
