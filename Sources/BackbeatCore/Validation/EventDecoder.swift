/// Turns a raw message value into a validated `Event`, or a `Rejection` naming the first rule it breaks.
public enum EventDecoder {
    /// Values larger than this are rejected unread.
    public static let maxValueBytes = 64 * 1024
    /// How far in the future `occurred_at` may be, relative to the time of consumption.
    public static let maxFutureSkewSeconds: Int64 = 3600

    /// Decodes `value`, judging `occurred_at` against `now`.
    public static func decode(_ value: [UInt8]?, now: Timestamp) -> Result<Event, Rejection> {
        guard let value else { return .failure(Rejection(.emptyValue, "the message value is null")) }
        return value.withUnsafeBytes { decode(bytes: $0, now: now) }
    }

    /// Decodes the bytes of a (non-null) value, judging `occurred_at` against `now`.
    public static func decode(bytes: UnsafeRawBufferPointer, now: Timestamp) -> Result<Event, Rejection> {
        guard !bytes.isEmpty else { return .failure(Rejection(.emptyValue, "the message value is empty")) }
        guard bytes.count <= maxValueBytes else {
            return .failure(Rejection(.tooLarge, "the value is \(bytes.count) bytes; the limit is \(maxValueBytes)"))
        }
        let members: [JSONMember]
        do {
            members = try JSONScanner.scanObject(bytes)
        } catch {
            switch error {
            case .invalidJSON(let detail): return .failure(Rejection(.invalidJSON, detail))
            case .notAnObject(let detail): return .failure(Rejection(.notObject, detail))
            case .duplicateKey(let detail): return .failure(Rejection(.duplicateField, detail))
            }
        }
        do {
            return .success(try decode(fields: Fields(members, in: bytes), now: now))
        } catch {
            return .failure(error)
        }
    }

    private static func decode(fields: Fields, now: Timestamp) throws(Rejection) -> Event {
        let type: EventType
        switch try fields.requiredEnum("type", EventType.self) {
        case .success(let known): type = known
        case .failure(let unknown):
            throw Rejection(.unknownType, "type \"\(JSONScanner.clip(unknown.text))\" is not one of stream, revenue, social")
        }
        let eventID = try fields.requiredString("event_id", lengths: 1...128)
        let occurredAt = try fields.timestamp("occurred_at")
        guard occurredAt.microseconds <= now.microseconds + maxFutureSkewSeconds * 1_000_000 else {
            throw Rejection(.futureTimestamp, "occurred_at \(RFC3339.format(occurredAt)) is more than 1 hour in the future")
        }
        let artistID = try fields.id("artist_id")

        switch type {
        case .stream:
            let durationMs = try fields.optionalInteger("duration_ms", range: 0...86_400_000)
            return .stream(StreamEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID,
                trackID: try fields.id("track_id"),
                platform: try fields.slug("platform"),
                listenerID: try fields.optionalString("listener_id", lengths: 1...128),
                country: try fields.optionalCode("country", length: 2) ?? "ZZ",
                ageRange: try fields.optionalEnum("age_range", AgeRange.self) ?? .unknown,
                gender: try fields.optionalEnum("gender", Gender.self) ?? .unknown,
                durationMs: durationMs
            ))
        case .revenue:
            guard let source = try fields.optionalEnum("source", RevenueSource.self) else {
                throw .missing("source")
            }
            let currency = try fields.optionalCode("currency", length: 3)
            guard let currency else { throw .missing("currency") }
            let platform = try fields.optionalSlug("platform")
            let trackID = try fields.optionalID("track_id")
            return .revenue(RevenueEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, source: source,
                amount: try fields.amount("amount"), currency: currency, platform: platform, trackID: trackID
            ))
        case .social:
            let platform = try fields.slug("platform")
            guard let action = try fields.optionalString("action", lengths: 1...32) else {
                throw .missing("action")
            }
            guard Identifiers.isSlug(action, digits: false) else {
                throw Rejection(.invalidValue, "action must match [a-z_]{1,32}")
            }
            return .social(SocialEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, platform: platform, action: action,
                count: try fields.optionalInteger("count", range: 1...1_000_000) ?? 1,
                postID: try fields.optionalString("post_id", lengths: 1...128)
            ))
        }
    }
}

extension Rejection {
    /// A required field is absent (or null).
    fileprivate static func missing(_ name: StaticString) -> Rejection {
        Rejection(.missingField, "the field \"\(name)\" is required")
    }
}

/// A string that names none of an enum's cases.
private struct NotACase: Error {
    var text: String
}

/// The members of an event object, with typed accessors that throw the matching rejection.
/// It reads straight from the scanned bytes; strings are made only for the values an event keeps.
private struct Fields {
    private let members: [JSONMember]
    private let bytes: UnsafeRawBufferPointer

    init(_ members: [JSONMember], in bytes: UnsafeRawBufferPointer) {
        self.members = members
        self.bytes = bytes
    }

    private func member(_ name: StaticString) -> JSONMember? {
        for member in members where JSONScanner.key(member, is: name, in: bytes) {
            return member
        }
        return nil
    }

    private func text(_ member: JSONMember) -> String {
        JSONScanner.string(member.value, hasEscapes: member.valueHasEscapes, in: bytes)
    }

    /// The raw bytes of a member's value (a number's literal, or an unescaped string's contents).
    private func raw(_ member: JSONMember) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[member.value])
    }

    func timestamp(_ name: StaticString) throws(Rejection) -> Timestamp {
        guard let member = member(name), member.kind != .null else { throw .missing(name) }
        guard member.kind == .string else {
            throw Rejection(.invalidType, "\(name) must be a string, not a \(member.kind.typeName)")
        }
        let parsed = member.valueHasEscapes ? RFC3339.parseTimestamp(text(member)) : RFC3339.parseTimestamp(raw(member))
        guard let parsed else {
            throw Rejection(.invalidTimestamp, "\(name) \"\(JSONScanner.clip(text(member)))\" is not an RFC 3339 timestamp")
        }
        return parsed
    }

    func requiredString(_ name: StaticString, lengths: ClosedRange<Int>) throws(Rejection) -> String {
        guard let text = try optionalString(name, lengths: lengths) else { throw .missing(name) }
        return text
    }

    private func requiredStringMember(_ name: StaticString) throws(Rejection) -> JSONMember {
        guard let member = try optionalStringMember(name) else { throw .missing(name) }
        return member
    }

    /// A string member; nil when absent or an explicit JSON null.
    private func optionalStringMember(_ name: StaticString) throws(Rejection) -> JSONMember? {
        guard let member = member(name), member.kind != .null else { return nil }
        guard member.kind == .string else {
            throw Rejection(.invalidType, "\(name) must be a string, not a \(member.kind.typeName)")
        }
        return member
    }

    /// An optional string; an explicit JSON null counts as absent.
    func optionalString(_ name: StaticString, lengths: ClosedRange<Int>) throws(Rejection) -> String? {
        guard let member = try optionalStringMember(name) else { return nil }
        // Counting characters walks the string; plain ASCII has one per byte.
        let text = text(member)
        guard lengths.contains(member.valueIsPlainASCII ? member.value.count : text.count) else {
            throw Rejection(.invalidValue, "\(name) must be \(lengths.lowerBound)-\(lengths.upperBound) characters")
        }
        return text
    }

    /// The case of `Value` a string member names, matched on its bytes; or the text it holds instead.
    private func enumCase<Value: RawRepresentable & CaseIterable>(
        _ member: JSONMember, _ type: Value.Type
    ) -> Result<Value, NotACase> where Value.RawValue == String {
        if member.valueIsPlainASCII {
            let bytes = raw(member)
            for value in Value.allCases where value.rawValue.utf8.elementsEqual(bytes) { return .success(value) }
            return .failure(NotACase(text: text(member)))
        }
        let text = text(member)
        return Value(rawValue: text).map { .success($0) } ?? .failure(NotACase(text: text))
    }

    /// The case of a required enum field, or the text that names none.
    func requiredEnum<Value: RawRepresentable & CaseIterable>(
        _ name: StaticString, _ type: Value.Type
    ) throws(Rejection) -> Result<Value, NotACase> where Value.RawValue == String {
        enumCase(try requiredStringMember(name), type)
    }

    func id(_ name: StaticString) throws(Rejection) -> String {
        guard let id = try optionalID(name) else { throw .missing(name) }
        return id
    }

    func optionalID(_ name: StaticString) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...128) else { return nil }
        guard Identifiers.isID(text) else {
            throw Rejection(.invalidValue, "\(name) must be 1-128 characters of A-Za-z0-9._:-")
        }
        return text
    }

    func slug(_ name: StaticString) throws(Rejection) -> String {
        guard let slug = try optionalSlug(name) else { throw .missing(name) }
        return slug
    }

    func optionalSlug(_ name: StaticString) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...32) else { return nil }
        guard Identifiers.isSlug(text) else { throw Rejection(.invalidValue, "\(name) must match [a-z0-9_]{1,32}") }
        return text
    }

    func optionalCode(_ name: StaticString, length: Int) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...64) else { return nil }
        guard Identifiers.isUpperCode(text, length: length) else {
            throw Rejection(.invalidValue, "\(name) must be \(length) upper-case letters A-Z")
        }
        return text
    }

    func optionalEnum<Value: RawRepresentable & CaseIterable>(
        _ name: StaticString, _ type: Value.Type
    ) throws(Rejection) -> Value? where Value.RawValue == String {
        guard let member = try optionalStringMember(name) else { return nil }
        guard case .success(let value) = enumCase(member, type) else {
            throw Rejection(.invalidValue, "\(name) must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// An optional JSON integer (no fraction, no exponent) within `range`.
    func optionalInteger(_ name: StaticString, range: ClosedRange<Int64>) throws(Rejection) -> Int64? {
        guard let member = member(name), member.kind != .null else { return nil }
        guard member.kind == .number else {
            throw Rejection(.invalidType, "\(name) must be an integer, not a \(member.kind.typeName)")
        }
        // A plain integer literal of at most 18 digits cannot overflow; anything else is out of range.
        let digits = raw(member)
        let negative = digits.first == UInt8(ascii: "-")
        var number: Int64 = 0
        var count = 0
        for byte in digits.dropFirst(negative ? 1 : 0) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 18 else {
                throw Rejection(.invalidValue, "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            number = number * 10 + Int64(byte - UInt8(ascii: "0"))
            count += 1
        }
        if negative { number = -number }
        guard range.contains(number) else {
            throw Rejection(.invalidValue, "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A money amount given as a decimal string or a JSON number.
    func amount(_ name: StaticString) throws(Rejection) -> Money {
        guard let member = member(name), member.kind != .null else { throw .missing(name) }
        let parsed: Result<Money, Money.ParseError>
        let text = text(member)
        switch member.kind {
        case .string: parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: false) }
        case .number: parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: true) }
        default: throw Rejection(.invalidType, "\(name) must be a decimal string or a number, not a \(member.kind.typeName)")
        }
        switch parsed {
        case .success(let money): return money
        case .failure(.notADecimal): throw Rejection(.invalidValue, "\(name) must be a decimal number such as \"12.50\"")
        case .failure(.tooManyFractionDigits): throw Rejection(.invalidValue, "\(name) has more than 6 fractional digits")
        case .failure(.outOfRange): throw Rejection(.invalidValue, "\(name) must be at most 1e12 in absolute value")
        }
    }
}
