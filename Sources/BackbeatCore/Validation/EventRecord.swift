/// A string field of a validated event, without a copy: where its UTF-8 bytes lie. Nine bytes and no reference, so
/// that a record (`EventRecord`) is copied between the decoding and the adding stages as plain memory.
public struct EventText: Equatable, Sendable {
    /// Which buffer holds the bytes.
    enum Source: UInt8, Sendable {
        /// The message value the record was decoded from (a value written without escapes).
        case value
        /// The record's `unescaped` bytes (a value written with escapes, decoded once).
        case unescaped
        /// `EventText.constants` (a default the contract names, such as the country "ZZ").
        case constant
    }

    let start: UInt32
    let end: UInt32
    let source: Source

    init(_ range: Range<Int>, in source: Source) {
        start = UInt32(truncatingIfNeeded: range.lowerBound)
        end = UInt32(truncatingIfNeeded: range.upperBound)
        self.source = source
    }

    var range: Range<Int> { Int(start)..<Int(end) }

    /// The bytes of the defaults a field can take.
    static let constants: StaticString = "ZZ(direct)(unknown)"
    /// The country of an event that names none.
    public static let unknownCountry = EventText(0..<2, in: .constant)
    /// The referrer of a page event that names none (`PageEvent.directReferrer`).
    static let directReferrer = EventText(2..<10, in: .constant)
    /// The referrer of a page event whose referrer has no host to read (`PageEvent.unknownReferrer`).
    static let unknownReferrer = EventText(10..<19, in: .constant)

    /// Calls `body` with the text's UTF-8 bytes: in `value`, in `unescaped` or in the constants.
    func withBytes<Result>(
        value: UnsafeRawBufferPointer, unescaped: [UInt8], _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        switch source {
        case .value:
            return body(UnsafeRawBufferPointer(rebasing: value[range]))
        case .unescaped:
            return unescaped.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        case .constant:
            return Self.constants.withUTF8Buffer { body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[range])) }
        }
    }
}

/// A validated event whose strings still lie in the message value (`EventText`): what `EventDecoder` checks, before
/// any String is made. `event(in:)` makes the `Event`; a rollup can intern the fields' bytes (`withBytes(of:in:_:)`)
/// instead.
public struct EventRecord: Equatable, Sendable {
    public enum Details: Equatable, Sendable {
        case stream(StreamDetails)
        case revenue(RevenueDetails)
        case social(SocialDetails)
        case page(PageDetails)
    }

    public struct StreamDetails: Equatable, Sendable {
        public var track: EventText
        public var platform: EventText
        /// The hash of `listener_id` (`MurmurHash3.hash64` of its bytes), when present.
        public var listenerHash: Int64?
        public var listener: EventText?
        /// Absent country: "ZZ" (`EventText.unknownCountry`).
        public var country: EventText
        public var ageRange: AgeRange
        public var gender: Gender
        public var durationMs: Int64?

    }

    public struct RevenueDetails: Equatable, Sendable {
        public var source: RevenueSource
        public var amount: Money
        public var currency: EventText
        public var platform: EventText?
        public var track: EventText?
    }

    public struct SocialDetails: Equatable, Sendable {
        public var platform: EventText
        public var action: EventText
        public var count: Int64
        public var post: EventText?
    }

    /// A page event's fields besides the three every event has (docs/events.md, "Page events").
    public struct PageDetails: Equatable, Sendable {
        /// The type, with the fields of each.
        public enum Kind: Equatable, Sendable {
            case portfolioView(category: EventText?)
            case sectionView(section: EventText)
            case blockInteraction(block: EventText, blockType: EventText, action: EventText)
            case ctaClick(actionType: EventText)
        }

        public var kind: Kind
        public var visitor: EventText
        /// The hash of `visitor_id` (`MurmurHash3.hash64` of its bytes): what the unique-visitor sketches count.
        public var visitorHash: Int64
        public var portfolio: EventText
        public var session: EventText?
        /// Absent country: "ZZ" (`EventText.unknownCountry`).
        public var country: EventText
        /// The referrer's host, lower case (in `unescaped`), or `EventText.directReferrer` / `.unknownReferrer`.
        public var referrer: EventText
        /// The `properties` object's bytes in the value (absent or null: nil), validated; archived, not counted
        /// (nor part of a resend's fingerprint). A span, not the members, so that a record holds no reference and is
        /// copied as plain memory: `properties(in:)` reads the members.
        public var properties: EventText?

        /// The members of `properties`, in the order written, decoded from `value`.
        public func properties(in value: UnsafeRawBufferPointer) -> [PageEvent.Property] {
            guard let properties else { return [] }
            let object = UnsafeRawBufferPointer(rebasing: value[properties.range])
            var members: [PageEvent.Property] = []
            // Validated by the decoder: the object scans again.
            try? JSONScanner.scanMembers(object) { member in
                members.append(PageEvent.Property(
                    JSONScanner.string(member.key, hasEscapes: member.keyHasEscapes, in: object),
                    JSONScanner.string(member.value, hasEscapes: member.valueHasEscapes, in: object)))
            }
            return members
        }
    }

    public var eventID: EventText
    public var occurredAt: Timestamp
    public var artist: EventText
    public var details: Details
    /// The decoded bytes of the fields written with escapes (and a page event's referrer host), back to back (empty for
    /// nearly every event).
    var unescaped: [UInt8]

    /// Calls `body` with the UTF-8 bytes of `text`, one of this record's fields, decoded from `value`.
    public func withBytes<Result>(of text: EventText, in value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        text.withBytes(value: value, unescaped: unescaped, body)
    }

    /// `text`, one of this record's fields decoded from `value`, as a String.
    public func string(_ text: EventText, in value: UnsafeRawBufferPointer) -> String {
        withBytes(of: text, in: value) { String(decoding: $0, as: UTF8.self) }
    }

    /// The event, its strings made from `value`, the bytes the record was decoded from.
    public func event(in value: UnsafeRawBufferPointer) -> Event {
        let eventID = string(eventID, in: value)
        let artistID = string(artist, in: value)
        switch details {
        case .stream(let stream):
            return .stream(StreamEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, trackID: string(stream.track, in: value),
                platform: string(stream.platform, in: value), listenerID: stream.listener.map { string($0, in: value) },
                country: string(stream.country, in: value), ageRange: stream.ageRange, gender: stream.gender,
                durationMs: stream.durationMs
            ))
        case .revenue(let revenue):
            return .revenue(RevenueEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, source: revenue.source, amount: revenue.amount,
                currency: string(revenue.currency, in: value), platform: revenue.platform.map { string($0, in: value) },
                trackID: revenue.track.map { string($0, in: value) }
            ))
        case .social(let social):
            return .social(SocialEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, platform: string(social.platform, in: value),
                action: string(social.action, in: value), count: social.count, postID: social.post.map { string($0, in: value) }
            ))
        case .page(let page):
            let kind: PageEvent.Kind = switch page.kind {
            case .portfolioView(let category): .portfolioView(category: category.map { string($0, in: value) })
            case .sectionView(let section): .sectionView(sectionID: string(section, in: value))
            case .blockInteraction(let block, let blockType, let action):
                .blockInteraction(blockID: string(block, in: value), blockType: string(blockType, in: value), action: string(action, in: value))
            case .ctaClick(let actionType): .ctaClick(actionType: string(actionType, in: value))
            }
            return .page(PageEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, visitorID: string(page.visitor, in: value),
                portfolioID: string(page.portfolio, in: value), kind: kind, sessionID: page.session.map { string($0, in: value) },
                country: string(page.country, in: value), referrer: string(page.referrer, in: value),
                properties: page.properties(in: value)))
        }
    }
}
