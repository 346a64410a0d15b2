/// A field of the event contract (docs/events.md), known by its JSON key.
///
/// An event's members are sorted into these once, as they are scanned (`Fields` in EventDecoder.swift), so that reading a field is an index
/// and a duplicated field is a slot already taken, instead of a search of the members per field and a comparison of
/// every pair of keys.
enum EventField: Int, CaseIterable {
    case type, eventID, occurredAt, artistID, trackID, platform, listenerID, country, ageRange, gender, durationMs
    case source, currency, amount, action, count, postID
    case visitorID, portfolioID, sessionID, referrer, properties, category, sectionID, blockID, blockType, actionType

    /// How many fields there are (`allCases.count`, as a constant).
    static var total: Int { 27 }

    /// The field's key.
    var name: StaticString {
        switch self {
        case .type: "type"
        case .eventID: "event_id"
        case .occurredAt: "occurred_at"
        case .artistID: "artist_id"
        case .trackID: "track_id"
        case .platform: "platform"
        case .listenerID: "listener_id"
        case .country: "country"
        case .ageRange: "age_range"
        case .gender: "gender"
        case .durationMs: "duration_ms"
        case .source: "source"
        case .currency: "currency"
        case .amount: "amount"
        case .action: "action"
        case .count: "count"
        case .postID: "post_id"
        case .visitorID: "visitor_id"
        case .portfolioID: "portfolio_id"
        case .sessionID: "session_id"
        case .referrer: "referrer"
        case .properties: "properties"
        case .category: "category"
        case .sectionID: "section_id"
        case .blockID: "block_id"
        case .blockType: "block_type"
        case .actionType: "action_type"
        }
    }

    /// The field whose key is `key` (unescaped UTF-8), or nil for a key the contract does not name.
    init?(key: UnsafeRawBufferPointer) {
        guard let first = key.first else { return nil }
        // The length and one to three bytes leave at most one candidate, whose whole key is then compared.
        let candidate: EventField
        switch (key.count, first) {
        case (4, UInt8(ascii: "t")): candidate = .type
        case (5, UInt8(ascii: "c")): candidate = .count
        case (6, UInt8(ascii: "g")): candidate = .gender
        case (6, UInt8(ascii: "s")): candidate = .source
        case (6, UInt8(ascii: "a")): candidate = key[1] == UInt8(ascii: "m") ? .amount : .action
        case (7, UInt8(ascii: "c")): candidate = .country
        case (7, UInt8(ascii: "p")): candidate = .postID
        case (8, UInt8(ascii: "e")): candidate = .eventID
        case (8, UInt8(ascii: "t")): candidate = .trackID
        case (8, UInt8(ascii: "p")): candidate = .platform
        case (8, UInt8(ascii: "c")): candidate = key[1] == UInt8(ascii: "u") ? .currency : .category
        case (8, UInt8(ascii: "r")): candidate = .referrer
        case (8, UInt8(ascii: "b")): candidate = .blockID
        case (9, UInt8(ascii: "a")): candidate = key[1] == UInt8(ascii: "r") ? .artistID : .ageRange
        case (11, UInt8(ascii: "o")): candidate = .occurredAt
        case (11, UInt8(ascii: "l")): candidate = .listenerID
        case (11, UInt8(ascii: "d")): candidate = .durationMs
        case (11, UInt8(ascii: "a")): candidate = .actionType
        case (10, UInt8(ascii: "v")): candidate = .visitorID
        case (10, UInt8(ascii: "s")): candidate = key[2] == UInt8(ascii: "s") ? .sessionID : .sectionID
        case (10, UInt8(ascii: "p")): candidate = .properties
        case (10, UInt8(ascii: "b")): candidate = .blockType
        case (12, UInt8(ascii: "p")): candidate = .portfolioID
        default: return nil
        }
        guard Self.sameBytes(candidate.name.utf8Start, key.baseAddress!, count: key.count) else { return nil }
        self = candidate
    }

    /// Whether `count` (4...16) bytes at `a` and `b` are equal: two overlapping loads on each side instead of a call.
    @inline(__always)
    private static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        if count >= 8 {
            return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                && a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
            && a.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self) == b.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
    }
}
