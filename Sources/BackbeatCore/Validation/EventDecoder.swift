/// Turns a raw message value into a validated `Event`, or a `Rejection` naming the first rule it breaks.
public enum EventDecoder {
    /// Values larger than this are rejected unread.
    public static let maxValueBytes = 64 * 1024
    /// How far in the future `occurred_at` may be, relative to the time of consumption.
    public static let maxFutureSkewSeconds: Int64 = 3600

    /// Decodes `value`, judging `occurred_at` against `now`.
    public static func decode(_ value: [UInt8]?, now: Timestamp) -> Result<Event, Rejection> {
        guard let value, !value.isEmpty else {
            return .failure(Rejection(.emptyValue, value == nil ? "the message value is null" : "the message value is empty"))
        }
        guard value.count <= maxValueBytes else {
            return .failure(Rejection(.tooLarge, "the value is \(value.count) bytes; the limit is \(maxValueBytes)"))
        }
        return value.withUnsafeBytes { decode(bytes: $0, now: now) }
    }

    /// Decodes a value already known to be non-empty and within the size limit.
    public static func decode(bytes: UnsafeRawBufferPointer, now: Timestamp) -> Result<Event, Rejection> {
        let members: [(key: String, value: JSONFieldValue)]
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
            return .success(try decode(fields: Fields(members), now: now))
        } catch {
            return .failure(error)
        }
    }

    private static func decode(fields: Fields, now: Timestamp) throws(Rejection) -> Event {
        let typeName = try fields.requiredString("type")
        guard let type = EventType(rawValue: typeName) else {
            throw Rejection(.unknownType, "type \"\(JSONScanner.clip(typeName))\" is not one of stream, revenue, social")
        }
        let eventID = try fields.requiredString("event_id")
        guard (1...128).contains(eventID.count) else {
            throw Rejection(.invalidValue, "event_id must be 1-128 characters")
        }
        let occurredText = try fields.requiredString("occurred_at")
        guard let occurredAt = RFC3339.parseTimestamp(occurredText) else {
            throw Rejection(.invalidTimestamp, "occurred_at \"\(JSONScanner.clip(occurredText))\" is not an RFC 3339 timestamp")
        }
        guard occurredAt.microseconds <= now.microseconds + maxFutureSkewSeconds * 1_000_000 else {
            throw Rejection(.futureTimestamp, "occurred_at \(occurredText) is more than 1 hour in the future")
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
                throw Rejection(.missingField, "the field \"source\" is required")
            }
            let currency = try fields.optionalCode("currency", length: 3)
            guard let currency else { throw Rejection(.missingField, "the field \"currency\" is required") }
            let platform = try fields.optionalSlug("platform")
            let trackID = try fields.optionalID("track_id")
            return .revenue(RevenueEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, source: source,
                amount: try fields.amount("amount"), currency: currency, platform: platform, trackID: trackID
            ))
        case .social:
            let platform = try fields.slug("platform")
            guard let action = try fields.optionalString("action", lengths: 1...32) else {
                throw Rejection(.missingField, "the field \"action\" is required")
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

/// The members of an event object, with typed accessors that throw the matching rejection.
private struct Fields {
    private let members: [(key: String, value: JSONFieldValue)]

    init(_ members: [(key: String, value: JSONFieldValue)]) {
        self.members = members
    }

    private func value(_ name: String) -> JSONFieldValue? {
        for member in members where member.key == name {
            return member.value
        }
        return nil
    }

    func requiredString(_ name: String) throws(Rejection) -> String {
        guard let value = value(name) else { throw Rejection(.missingField, "the field \"\(name)\" is required") }
        guard case .string(let text) = value else {
            throw Rejection(.invalidType, "\(name) must be a string, not a \(value.typeName)")
        }
        return text
    }

    /// An optional string; an explicit JSON null counts as absent.
    func optionalString(_ name: String, lengths: ClosedRange<Int>) throws(Rejection) -> String? {
        guard let value = value(name), value != .null else { return nil }
        guard case .string(let text) = value else {
            throw Rejection(.invalidType, "\(name) must be a string, not a \(value.typeName)")
        }
        guard lengths.contains(text.count) else {
            throw Rejection(.invalidValue, "\(name) must be \(lengths.lowerBound)-\(lengths.upperBound) characters")
        }
        return text
    }

    func id(_ name: String) throws(Rejection) -> String {
        guard let id = try optionalID(name) else { throw Rejection(.missingField, "the field \"\(name)\" is required") }
        return id
    }

    func optionalID(_ name: String) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...128) else { return nil }
        guard Identifiers.isID(text) else {
            throw Rejection(.invalidValue, "\(name) must be 1-128 characters of A-Za-z0-9._:-")
        }
        return text
    }

    func slug(_ name: String) throws(Rejection) -> String {
        guard let slug = try optionalSlug(name) else { throw Rejection(.missingField, "the field \"\(name)\" is required") }
        return slug
    }

    func optionalSlug(_ name: String) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...32) else { return nil }
        guard Identifiers.isSlug(text) else { throw Rejection(.invalidValue, "\(name) must match [a-z0-9_]{1,32}") }
        return text
    }

    func optionalCode(_ name: String, length: Int) throws(Rejection) -> String? {
        guard let text = try optionalString(name, lengths: 1...64) else { return nil }
        guard Identifiers.isUpperCode(text, length: length) else {
            throw Rejection(.invalidValue, "\(name) must be \(length) upper-case letters A-Z")
        }
        return text
    }

    func optionalEnum<Value: RawRepresentable & CaseIterable>(
        _ name: String, _ type: Value.Type
    ) throws(Rejection) -> Value? where Value.RawValue == String {
        guard let text = try optionalString(name, lengths: 0...64) else { return nil }
        guard let member = Value(rawValue: text) else {
            throw Rejection(.invalidValue, "\(name) must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return member
    }

    /// An optional JSON integer (no fraction, no exponent) within `range`.
    func optionalInteger(_ name: String, range: ClosedRange<Int64>) throws(Rejection) -> Int64? {
        guard let value = value(name), value != .null else { return nil }
        guard case .number(let text) = value else {
            throw Rejection(.invalidType, "\(name) must be an integer, not a \(value.typeName)")
        }
        let outOfRange = Rejection(.invalidValue, "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        guard text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }) else {
            throw outOfRange
        }
        guard let number = Int64(text), range.contains(number) else { throw outOfRange }
        return number
    }

    /// A money amount given as a decimal string or a JSON number.
    func amount(_ name: String) throws(Rejection) -> Money {
        guard let value = value(name) else { throw Rejection(.missingField, "the field \"\(name)\" is required") }
        let parsed: Result<Money, Money.ParseError>
        switch value {
        case .string(let text): parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: false) }
        case .number(let text): parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: true) }
        default: throw Rejection(.invalidType, "\(name) must be a decimal string or a number, not a \(value.typeName)")
        }
        switch parsed {
        case .success(let money): return money
        case .failure(.notADecimal): throw Rejection(.invalidValue, "\(name) must be a decimal number such as \"12.50\"")
        case .failure(.tooManyFractionDigits): throw Rejection(.invalidValue, "\(name) has more than 6 fractional digits")
        case .failure(.outOfRange): throw Rejection(.invalidValue, "\(name) must be at most 1e12 in absolute value")
        }
    }
}
