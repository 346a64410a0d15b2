/// A validated page event whose strings still lie in the message value (`EventText`), as `EventRecord` is for the
/// counted families; `event(in:)` makes the `PageEvent`.
public struct PageRecord: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case portfolioView(category: EventText?)
        case sectionView(section: EventText)
        case blockInteraction(block: EventText, blockType: EventText, action: EventText)
        case ctaClick(actionType: EventText)
    }

    public struct Property: Equatable, Sendable {
        public var key: EventText
        public var value: EventText
    }

    public var eventID: EventText
    public var occurredAt: Timestamp
    public var artist: EventText
    public var visitor: EventText
    public var portfolio: EventText
    public var session: EventText?
    /// Absent country: "ZZ" (`EventText.unknownCountry`).
    public var country: EventText
    /// The referrer's host, lower case (in `unescaped`), or `EventText.directReferrer` / `.unknownReferrer`.
    public var referrer: EventText
    public var kind: Kind
    public var properties: [Property]
    /// The decoded bytes of the fields written with escapes and of the referrer's host, back to back.
    var unescaped: [UInt8]

    /// `text`, one of this record's fields decoded from `value`, as a String.
    public func string(_ text: EventText, in value: UnsafeRawBufferPointer) -> String {
        text.withBytes(value: value, unescaped: unescaped) { String(decoding: $0, as: UTF8.self) }
    }

    /// The event, its strings made from `value`, the bytes the record was decoded from.
    public func event(in value: UnsafeRawBufferPointer) -> PageEvent {
        let kind: PageEvent.Kind = switch self.kind {
        case .portfolioView(let category): .portfolioView(category: category.map { string($0, in: value) })
        case .sectionView(let section): .sectionView(sectionID: string(section, in: value))
        case .blockInteraction(let block, let blockType, let action):
            .blockInteraction(blockID: string(block, in: value), blockType: string(blockType, in: value), action: string(action, in: value))
        case .ctaClick(let actionType): .ctaClick(actionType: string(actionType, in: value))
        }
        return PageEvent(
            eventID: string(eventID, in: value), occurredAt: occurredAt, artistID: string(artist, in: value),
            visitorID: string(visitor, in: value), portfolioID: string(portfolio, in: value), kind: kind,
            sessionID: session.map { string($0, in: value) }, country: string(country, in: value),
            referrer: string(referrer, in: value),
            properties: properties.map { PageEvent.Property(string($0.key, in: value), string($0.value, in: value)) })
    }
}
