#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a raw message value into a validated `EventRecord` (its strings left in the value's bytes), or a
/// `Rejection` naming the first rule it breaks.
public enum EventDecoder {
    /// Values larger than this are rejected unread.
    public static let maxValueBytes = 64 * 1024
    /// How far in the future `occurred_at` may be, relative to the time of consumption.
    public static let maxFutureSkewSeconds: Int64 = 3600

    /// `decodeRecord(bytes:now:)` of a message value that may be null; the record's spans index `value`.
    public static func decodeRecord(_ value: [UInt8]?, now: Timestamp) -> Result<EventRecord, Rejection> {
        guard let value else { return .failure(nullValue) }
        return value.withUnsafeBytes { decodeRecord(bytes: $0, now: now) }
    }

    /// The rejection of a null message value (a tombstone).
    public static let nullValue = Rejection(.emptyValue, "the message value is null")

    /// Validates the bytes of a (non-null) value, judging `occurred_at` against `now`, and leaves its
    /// strings in `bytes` (`EventRecord`).
    public static func decodeRecord(bytes: UnsafeRawBufferPointer, now: Timestamp) -> Result<EventRecord, Rejection> {
        scanning(bytes) { fields throws(Rejection) in
            switch try decode(fields: &fields, now: now) {
            case .event(let record): return record
            case .page(let type, let common): return try page(type, fields: &fields, common)
            }
        }
    }

    /// `body`'s result for the fields of `bytes` scanned, or the rejection of a value that is empty, too large, not
    /// JSON, not an object or has a field twice, or that `body` throws.
    private static func scanning<Decoded>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout EventFieldValues) throws(Rejection) -> Decoded
    ) -> Result<Decoded, Rejection> {
        guard !bytes.isEmpty else { return .failure(Rejection(.emptyValue, "the message value is empty")) }
        guard bytes.count <= maxValueBytes else {
            return .failure(Rejection(.tooLarge, "the value is \(bytes.count) bytes; the limit is \(maxValueBytes)"))
        }
        // The fields' slots live on the stack for this call; `EventFieldValues` reads them through a pointer (an
        // inline array held by value was copied whole on every read: measured, a 204-byte memcpy per field).
        return withUnsafeTemporaryAllocation(of: FieldValue?.self, capacity: EventField.total) { slots in
            slots.initialize(repeating: nil)
            var fields: EventFieldValues
            do throws(JSONScanError) {
                fields = try EventFieldValues(scanning: bytes, into: slots)
            } catch {
                switch error {
                case .invalidJSON(let detail): return .failure(Rejection(.invalidJSON, detail))
                case .notAnObject(let detail): return .failure(Rejection(.notObject, detail))
                case .duplicateKey(let detail): return .failure(Rejection(.duplicateField, detail))
                }
            }
            do throws(Rejection) {
                return .success(try body(&fields))
            } catch {
                return .failure(error)
            }
        }
    }

    /// What `decode(fields:now:)` read: an event of the stream, revenue or social family, or a page event's type and
    /// the fields every event has (the rest is `page(_:fields:_:)`'s to read, so that the other families' path stays
    /// as small: measured, docs/performance.md).
    private enum Decoded {
        case event(EventRecord)
        case page(EventTypeName, Common)
    }

    /// The fields every event has.
    struct Common {
        var eventID: EventText
        var occurredAt: Timestamp
        var artist: EventText
    }

    private static func decode(fields: inout EventFieldValues, now: Timestamp) throws(Rejection) -> Decoded {
        let type: EventTypeName
        switch try fields.requiredEnum(.type, .eventTypes) {
        case .success(let known): type = known
        case .failure(let unknown):
            throw Rejection(.unknownType, "type \"\(JSONScanner.clip(unknown.text))\" is not one of \(CaseNames.eventTypes.names)")
        }
        let eventID = try fields.requiredString(.eventID, lengths: 1...128)
        let occurredAt = try fields.timestamp(.occurredAt)
        guard occurredAt.microseconds <= now.microseconds + maxFutureSkewSeconds * 1_000_000 else {
            throw Rejection(.futureTimestamp, "occurred_at \(RFC3339.format(occurredAt)) is more than 1 hour in the future")
        }
        let artist = try fields.id(.artistID)

        switch type {
        case .stream:
            let durationMs = try fields.optionalInteger(.durationMs, range: 0...86_400_000)
            let track = try fields.id(.trackID)
            let platform = try fields.slug(.platform)
            let listener = try fields.optionalString(.listenerID, lengths: 1...128)
            return .event(EventRecord(eventID: eventID, occurredAt: occurredAt, artist: artist, details: .stream(.init(
                track: track, platform: platform,
                listenerHash: listener.map { fields.withBytes(of: $0) { MurmurHash3.hash64($0) } },
                listener: listener,
                country: try fields.optionalCode(.country, length: 2) ?? .unknownCountry,
                ageRange: try fields.optionalEnum(.ageRange, .ageRanges) ?? .unknown,
                gender: try fields.optionalEnum(.gender, .genders) ?? .unknown,
                durationMs: durationMs
            )), unescaped: fields.unescaped))
        case .revenue:
            guard let source = try fields.optionalEnum(.source, .revenueSources) else {
                throw .missing(.source)
            }
            let currency = try fields.optionalCode(.currency, length: 3)
            guard let currency else { throw .missing(.currency) }
            let platform = try fields.optionalSlug(.platform)
            let track = try fields.optionalID(.trackID)
            return .event(EventRecord(eventID: eventID, occurredAt: occurredAt, artist: artist, details: .revenue(.init(
                source: source, amount: try fields.amount(.amount), currency: currency, platform: platform, track: track
            )), unescaped: fields.unescaped))
        case .social:
            let platform = try fields.slug(.platform)
            let action = try fields.letterSlug(.action)
            return .event(EventRecord(eventID: eventID, occurredAt: occurredAt, artist: artist, details: .social(.init(
                platform: platform, action: action,
                count: try fields.optionalInteger(.count, range: 1...1_000_000) ?? 1,
                post: try fields.optionalString(.postID, lengths: 1...128)
            )), unescaped: fields.unescaped))
        case .portfolioView, .sectionView, .blockInteraction, .ctaClick:
            return .page(type, Common(eventID: eventID, occurredAt: occurredAt, artist: artist))
        }
    }
}

extension Range<Int> {
    /// The range `offset` further on.
    fileprivate func shifted(by offset: Int) -> Range<Int> { lowerBound + offset..<upperBound + offset }
}

extension Rejection {
    /// A required field is absent (or null).
    static func missing(_ field: EventField) -> Rejection {
        Rejection(.missingField, "the field \"\(field.name)\" is required")
    }
}

/// A string that names none of an enum's cases.
struct NotACase: Error {
    var text: String
}

/// A member of a scanned event object without its key: what reading its field needs, in 12 bytes.
struct FieldValue {
    private var start: Int32
    private var end: Int32
    var kind: JSONKind
    var valueHasEscapes: Bool
    var valueIsPlainASCII: Bool

    /// The value's bytes in the object; for strings, without quotes.
    var value: Range<Int> { Int(start)..<Int(end) }

    /// `member`'s value, of an object of at most `Int32.max` bytes.
    init(_ member: JSONMember) {
        start = Int32(truncatingIfNeeded: member.value.lowerBound)
        end = Int32(truncatingIfNeeded: member.value.upperBound)
        kind = member.kind
        valueHasEscapes = member.valueHasEscapes
        valueIsPlainASCII = member.valueIsPlainASCII
    }
}

/// The members of an event object sorted into the contract's fields, with typed accessors that throw the matching
/// rejection. It reads straight from the scanned bytes: a string is made only for a value with escapes or non-ASCII
/// characters.
struct EventFieldValues {
    let bytes: UnsafeRawBufferPointer
    /// Each field's value, by `EventField.rawValue`; members with other keys are only checked for duplicates.
    private let slots: UnsafeMutableBufferPointer<FieldValue?>
    /// The decoded bytes of the string fields read so far that were written with escapes (`EventText.Source`).
    var unescaped: [UInt8] = []

    /// Validates `bytes` (at most `EventDecoder.maxValueBytes`) as a JSON object and sorts its members into `slots`
    /// (`EventField.total` of them, all nil); throws `.duplicateKey` for the first member whose key an earlier one
    /// had, however either is written.
    init(scanning bytes: UnsafeRawBufferPointer, into slots: UnsafeMutableBufferPointer<FieldValue?>) throws(JSONScanError) {
        self.bytes = bytes
        self.slots = slots
        var others: [JSONMember] = []
        var duplicate: JSONMember?
        try JSONScanner.scanMembers(bytes) { member in
            let key = UnsafeRawBufferPointer(rebasing: bytes[member.key])
            let field = member.keyHasEscapes
                ? JSONScanner.unescapedBytes(key).withUnsafeBytes { EventField(key: $0) }
                : EventField(key: key)
            if let field {
                if slots[field.rawValue] == nil {
                    slots[field.rawValue] = FieldValue(member)
                } else if duplicate == nil {
                    duplicate = member
                }
            } else {
                if duplicate == nil, others.contains(where: { JSONScanner.sameKey($0, member, in: bytes) }) { duplicate = member }
                others.append(member)
            }
        }
        if let duplicate { throw JSONScanner.duplicate(duplicate, in: bytes) }
    }

    func member(_ field: EventField) -> FieldValue? {
        slots[field.rawValue]
    }

    private func text(_ member: FieldValue) -> String {
        JSONScanner.string(member.value, hasEscapes: member.valueHasEscapes, in: bytes)
    }

    /// The raw bytes of a member's value (a number's literal, or an unescaped string's contents).
    private func raw(_ member: FieldValue) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[member.value])
    }

    func timestamp(_ field: EventField) throws(Rejection) -> Timestamp {
        guard let member = member(field), member.kind != .null else { throw .missing(field) }
        guard member.kind == .string else {
            throw Rejection(.invalidType, "\(field.name) must be a string, not a \(member.kind.typeName)")
        }
        let parsed = member.valueHasEscapes ? RFC3339.parseTimestamp(text(member)) : RFC3339.parseTimestamp(raw(member))
        guard let parsed else {
            throw Rejection(.invalidTimestamp, "\(field.name) \"\(JSONScanner.clip(text(member)))\" is not an RFC 3339 timestamp")
        }
        return parsed
    }

    mutating func requiredString(_ field: EventField, lengths: ClosedRange<Int>) throws(Rejection) -> EventText {
        guard let text = try optionalString(field, lengths: lengths) else { throw .missing(field) }
        return text
    }

    private func requiredStringMember(_ field: EventField) throws(Rejection) -> FieldValue {
        guard let member = try optionalStringMember(field) else { throw .missing(field) }
        return member
    }

    /// A string member; nil when absent or an explicit JSON null.
    private func optionalStringMember(_ field: EventField) throws(Rejection) -> FieldValue? {
        guard let member = member(field), member.kind != .null else { return nil }
        guard member.kind == .string else {
            throw Rejection(.invalidType, "\(field.name) must be a string, not a \(member.kind.typeName)")
        }
        return member
    }

    /// An optional string; an explicit JSON null counts as absent.
    mutating func optionalString(_ field: EventField, lengths: ClosedRange<Int>) throws(Rejection) -> EventText? {
        guard let member = try optionalStringMember(field) else { return nil }
        // Plain ASCII has one character per byte and is left where it is; anything else is counted as a String, and
        // a value with escapes is decoded once into `unescaped`.
        let value: EventText
        let length: Int
        if member.valueIsPlainASCII {
            value = EventText(member.value, in: .value)
            length = member.value.count
        } else if member.valueHasEscapes {
            let decoded = JSONScanner.unescapedBytes(raw(member))
            value = keep(decoded)
            length = String(decoding: decoded, as: UTF8.self).count
        } else {
            value = EventText(member.value, in: .value)
            length = String(decoding: raw(member), as: UTF8.self).count
        }
        guard lengths.contains(length) else {
            throw Rejection(.invalidValue, "\(field.name) must be \(lengths.lowerBound)-\(lengths.upperBound) characters")
        }
        return value
    }

    /// Whether a string field's UTF-8 bytes pass `check`.
    func satisfies(_ value: EventText, _ check: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        withBytes(of: value, check)
    }

    /// Calls `body` with a string field's UTF-8 bytes.
    func withBytes<Result>(of text: EventText, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        text.withBytes(value: bytes, unescaped: unescaped, body)
    }

    /// The case of `Value` a string member names, matched on its bytes; or the text it holds instead.
    private func enumCase<Value>(_ member: FieldValue, _ names: CaseNames<Value>) -> Result<Value, NotACase> {
        let found = member.valueIsPlainASCII
            ? names.value(named: raw(member))
            : JSONScanner.unescapedBytes(raw(member)).withUnsafeBytes { names.value(named: $0) }
        return found.map { .success($0) } ?? .failure(NotACase(text: text(member)))
    }

    /// The case of a required enum field, or the text that names none.
    func requiredEnum<Value>(_ field: EventField, _ names: CaseNames<Value>) throws(Rejection) -> Result<Value, NotACase> {
        enumCase(try requiredStringMember(field), names)
    }

    mutating func id(_ field: EventField) throws(Rejection) -> EventText {
        guard let id = try optionalID(field) else { throw .missing(field) }
        return id
    }

    mutating func optionalID(_ field: EventField) throws(Rejection) -> EventText? {
        guard let text = try optionalString(field, lengths: 1...128) else { return nil }
        guard satisfies(text, { Identifiers.isID(utf8: $0) }) else {
            throw Rejection(.invalidValue, "\(field.name) must be 1-128 characters of A-Za-z0-9._:-")
        }
        return text
    }

    mutating func slug(_ field: EventField) throws(Rejection) -> EventText {
        guard let slug = try optionalSlug(field) else { throw .missing(field) }
        return slug
    }

    mutating func optionalSlug(_ field: EventField) throws(Rejection) -> EventText? {
        guard let text = try optionalString(field, lengths: 1...32) else { return nil }
        guard satisfies(text, { Identifiers.isSlug(utf8: $0) }) else { throw Rejection(.invalidValue, "\(field.name) must match [a-z0-9_]{1,32}") }
        return text
    }

    /// A required slug of letters and underscores (`[a-z_]{1,32}`: social actions, page kinds and actions).
    mutating func letterSlug(_ field: EventField) throws(Rejection) -> EventText {
        guard let slug = try optionalLetterSlug(field) else { throw .missing(field) }
        return slug
    }

    mutating func optionalLetterSlug(_ field: EventField) throws(Rejection) -> EventText? {
        guard let text = try optionalString(field, lengths: 1...32) else { return nil }
        guard satisfies(text, { Identifiers.isSlug(utf8: $0, digits: false) }) else {
            throw Rejection(.invalidValue, "\(field.name) must match [a-z_]{1,32}")
        }
        return text
    }

    /// A page event's referrer as its host (`ReferrerHost`, kept in `unescaped`), `.directReferrer` when absent,
    /// `.unknownReferrer` when it names no host.
    mutating func optionalCode(_ field: EventField, length: Int) throws(Rejection) -> EventText? {
        guard let text = try optionalString(field, lengths: 1...64) else { return nil }
        guard satisfies(text, { Identifiers.isUpperCode(utf8: $0, length: length) }) else {
            throw Rejection(.invalidValue, "\(field.name) must be \(length) upper-case letters A-Z")
        }
        return text
    }

    func optionalEnum<Value>(_ field: EventField, _ names: CaseNames<Value>) throws(Rejection) -> Value? {
        guard let member = try optionalStringMember(field) else { return nil }
        guard case .success(let value) = enumCase(member, names) else {
            throw Rejection(.invalidValue, "\(field.name) must be one of \(names.names)")
        }
        return value
    }

    /// An optional JSON integer (no fraction, no exponent) within `range`.
    func optionalInteger(_ field: EventField, range: ClosedRange<Int64>) throws(Rejection) -> Int64? {
        guard let member = member(field), member.kind != .null else { return nil }
        guard member.kind == .number else {
            throw Rejection(.invalidType, "\(field.name) must be an integer, not a \(member.kind.typeName)")
        }
        // A plain integer literal of at most 18 digits cannot overflow; anything else is out of range.
        let digits = raw(member)
        let negative = digits.first == UInt8(ascii: "-")
        var number: Int64 = 0
        var count = 0
        for byte in digits.dropFirst(negative ? 1 : 0) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 18 else {
                throw Rejection(.invalidValue, "\(field.name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            number = number * 10 + Int64(byte - UInt8(ascii: "0"))
            count += 1
        }
        if negative { number = -number }
        guard range.contains(number) else {
            throw Rejection(.invalidValue, "\(field.name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A money amount given as a decimal string or a JSON number.
    func amount(_ field: EventField) throws(Rejection) -> Money {
        guard let member = member(field), member.kind != .null else { throw .missing(field) }
        let parsed: Result<Money, Money.ParseError>
        let text = text(member)
        switch member.kind {
        case .string: parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: false) }
        case .number: parsed = Result { () throws(Money.ParseError) in try Money.parse(text, allowExponent: true) }
        default: throw Rejection(.invalidType, "\(field.name) must be a decimal string or a number, not a \(member.kind.typeName)")
        }
        switch parsed {
        case .success(let money): return money
        case .failure(.notADecimal): throw Rejection(.invalidValue, "\(field.name) must be a decimal number such as \"12.50\"")
        case .failure(.tooManyFractionDigits): throw Rejection(.invalidValue, "\(field.name) has more than 6 fractional digits")
        case .failure(.outOfRange): throw Rejection(.invalidValue, "\(field.name) must be at most 1e12 in absolute value")
        }
    }
}
