/// A page event's own fields (docs/events.md, "Page events"): what the decoder reads after the fields every event
/// has, and the readers of the two fields only page events have, `referrer` (kept as its host) and `properties`.
extension EventDecoder {
    /// The rest of a page event of `type`: the fields every page event has, then its type's, then `properties`.
    static func page(_ type: EventTypeName, fields: inout EventFieldValues, _ common: Common) throws(Rejection) -> EventRecord {
        let visitor = try fields.requiredString(.visitorID, lengths: 1...128)
        let portfolio = try fields.id(.portfolioID)
        let session = try fields.optionalString(.sessionID, lengths: 1...128)
        let country = try fields.optionalCode(.country, length: 2) ?? .unknownCountry
        let referrer = try fields.referrer(.referrer)
        let kind: EventRecord.PageDetails.Kind
        switch type {
        case .portfolioView: kind = .portfolioView(category: try fields.optionalLetterSlug(.category))
        case .sectionView: kind = .sectionView(section: try fields.id(.sectionID))
        case .blockInteraction:
            kind = .blockInteraction(block: try fields.id(.blockID), blockType: try fields.letterSlug(.blockType), action: try fields.letterSlug(.action))
        case .ctaClick: kind = .ctaClick(actionType: try fields.letterSlug(.actionType))
        case .stream, .revenue, .social: preconditionFailure("\(type) is not a page event")
        }
        let properties = try fields.properties(.properties)
        return EventRecord(eventID: common.eventID, occurredAt: common.occurredAt, artist: common.artist, details: .page(.init(
            kind: kind, visitor: visitor, visitorHash: fields.withBytes(of: visitor) { MurmurHash3.hash64($0) }, portfolio: portfolio,
            session: session, country: country, referrer: referrer, properties: properties
        )), unescaped: fields.unescaped)
    }

    /// The most members a page event's `properties` may have.
    public static let maxProperties = 32
    /// The longest key of `properties`, in UTF-8 bytes.
    public static let maxPropertyKeyBytes = 64
    /// The longest value of `properties`, in UTF-8 bytes.
    public static let maxPropertyValueBytes = 256
}

extension EventFieldValues {
    mutating func referrer(_ field: EventField) throws(Rejection) -> EventText {
        guard let url = try optionalString(field, lengths: 1...2048) else { return .directReferrer }
        guard let host = withBytes(of: url, { ReferrerHost.host(of: $0) }) else { return .unknownReferrer }
        return keep(host)
    }

    /// `decoded` bytes appended to `unescaped`, as a text.
    mutating func keep(_ decoded: [UInt8]) -> EventText {
        let text = EventText(unescaped.count..<unescaped.count + decoded.count, in: .unescaped)
        unescaped += decoded
        return text
    }

    /// A page event's `properties` (absent or null: none): an object of at most `maxProperties` members, each key
    /// 1-`maxPropertyKeyBytes` bytes and each value a string of at most `maxPropertyValueBytes` bytes, no key twice.
    /// Answers the object's bytes, validated; its members are read again only when an `Event` is made
    /// (`EventRecord.PageDetails.properties(in:)`), so that a record holds no reference.
    mutating func properties(_ field: EventField) throws(Rejection) -> EventText? {
        guard let member = member(field), member.kind != .null else { return nil }
        guard member.kind == .object else {
            throw Rejection(.invalidType, "\(field.name) must be an object, not a \(member.kind.typeName)")
        }
        let object = UnsafeRawBufferPointer(rebasing: bytes[member.value])
        var members: [JSONMember] = []
        var count = 0
        do throws(JSONScanError) {
            try JSONScanner.scanMembers(object) { inner in
                count += 1
                if count <= EventDecoder.maxProperties { members.append(inner) }
            }
        } catch {
            // The whole value was scanned already: an object in it scans again.
            throw Rejection(.invalidJSON, "\(field.name) is not a JSON object")
        }
        guard count <= EventDecoder.maxProperties else {
            throw Rejection(.tooManyProperties, "\(field.name) has \(count) members; the limit is \(EventDecoder.maxProperties)")
        }
        func decodedBytes(_ range: Range<Int>, hasEscapes: Bool) -> Int {
            hasEscapes ? JSONScanner.unescapedBytes(UnsafeRawBufferPointer(rebasing: object[range])).count : range.count
        }
        for (index, inner) in members.enumerated() {
            let keyBytes = decodedBytes(inner.key, hasEscapes: inner.keyHasEscapes)
            let name = JSONScanner.clip(JSONScanner.string(inner.key, hasEscapes: inner.keyHasEscapes, in: object))
            guard keyBytes > 0 else { throw Rejection(.invalidValue, "a key of \(field.name) is empty") }
            guard keyBytes <= EventDecoder.maxPropertyKeyBytes else {
                throw Rejection(.propertyKeyTooLong, "the \(field.name) key \"\(name)\" is \(keyBytes) bytes; the limit is \(EventDecoder.maxPropertyKeyBytes)")
            }
            if members[..<index].contains(where: { JSONScanner.sameKey($0, inner, in: object) }) {
                throw Rejection(.duplicateField, "the \(field.name) key \"\(name)\" appears more than once")
            }
            guard inner.kind == .string else {
                throw Rejection(.invalidType, "\(field.name).\(name) must be a string, not a \(inner.kind.typeName)")
            }
            let valueBytes = decodedBytes(inner.value, hasEscapes: inner.valueHasEscapes)
            guard valueBytes <= EventDecoder.maxPropertyValueBytes else {
                throw Rejection(.propertyValueTooLong, "\(field.name).\(name) is \(valueBytes) bytes; the limit is \(EventDecoder.maxPropertyValueBytes)")
            }
        }
        return EventText(member.value, in: .value)
    }
}
