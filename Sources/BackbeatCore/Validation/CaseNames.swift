/// The cases of a string enum with their names packed into integers, made once per enum, so that a field's bytes
/// are matched to a case without making a String or a list of cases per event.
struct CaseNames<Value: RawRepresentable & CaseIterable>: Sendable where Value.RawValue == String, Value: Sendable {
    private struct Entry: Sendable {
        var length: Int
        var packed: PackedName
        var value: Value
    }

    private let entries: [Entry]

    init(_ type: Value.Type) {
        entries = Value.allCases.map { value in
            let name = Array(value.rawValue.utf8)
            precondition(name.count <= PackedName.capacity, "a case name longer than \(PackedName.capacity) bytes")
            return Entry(length: name.count, packed: name.withUnsafeBytes { PackedName($0) }, value: value)
        }
    }

    /// The case named by `bytes` (UTF-8, unescaped), or nil.
    func value(named bytes: UnsafeRawBufferPointer) -> Value? {
        guard bytes.count <= PackedName.capacity else { return nil }
        let packed = PackedName(bytes)
        for entry in entries where entry.length == bytes.count && entry.packed == packed {
            return entry.value
        }
        return nil
    }

    /// The cases' names, for a rejection's text.
    var names: String {
        entries.map(\.value.rawValue).joined(separator: ", ")
    }
}

/// Up to 24 bytes as three little-endian words, zero beyond the end (read byte by byte: nothing past the end).
private struct PackedName: Equatable, Sendable {
    static let capacity = 24
    var first: UInt64 = 0
    var second: UInt64 = 0
    var third: UInt64 = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        for (offset, byte) in bytes.enumerated() {
            if offset < 8 {
                first |= UInt64(byte) << (offset * 8)
            } else if offset < 16 {
                second |= UInt64(byte) << ((offset - 8) * 8)
            } else {
                third |= UInt64(byte) << ((offset - 16) * 8)
            }
        }
    }
}

extension CaseNames where Value == EventTypeName {
    static let eventTypes = CaseNames(EventTypeName.self)
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
