/// A string field of a validated event, without a copy: where its bytes lie in the message value, or, for a value
/// written with escapes or holding non-ASCII characters, its text.
public enum EventText: Equatable, Sendable {
    /// The field's bytes are `value[range]`, ASCII, nothing escaped.
    case span(Range<Int>)
    case text(String)

    /// The field as a String (made from `value`'s bytes for a span).
    public func string(in value: UnsafeRawBufferPointer) -> String {
        switch self {
        case .span(let range): String(decoding: UnsafeRawBufferPointer(rebasing: value[range]), as: UTF8.self)
        case .text(let text): text
        }
    }

    /// Calls `body` with the field's UTF-8 bytes.
    public func withBytes<Result>(in value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .span(let range):
            return body(UnsafeRawBufferPointer(rebasing: value[range]))
        case .text(let text):
            var text = text
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
    }
}

/// A validated event whose strings still lie in the message value (`EventText`): what `EventDecoder` checks, before
/// any String is made. `event(in:)` makes the `Event`; a rollup can intern the fields' bytes instead.
public struct EventRecord: Equatable, Sendable {
    public enum Details: Equatable, Sendable {
        case stream(StreamDetails)
        case revenue(RevenueDetails)
        case social(SocialDetails)
    }

    public struct StreamDetails: Equatable, Sendable {
        public var track: EventText
        public var platform: EventText
        /// The hash of `listener_id` (`MurmurHash3.hash64` of its bytes), when present.
        public var listenerHash: Int64?
        public var listener: EventText?
        /// Absent country: "ZZ".
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

    public var eventID: EventText
    public var occurredAt: Timestamp
    public var artist: EventText
    public var details: Details

    /// The event, its strings made from `value`, the bytes the record was decoded from.
    public func event(in value: UnsafeRawBufferPointer) -> Event {
        let eventID = eventID.string(in: value)
        let artistID = artist.string(in: value)
        switch details {
        case .stream(let stream):
            return .stream(StreamEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, trackID: stream.track.string(in: value),
                platform: stream.platform.string(in: value), listenerID: stream.listener?.string(in: value),
                country: stream.country.string(in: value), ageRange: stream.ageRange, gender: stream.gender,
                durationMs: stream.durationMs
            ))
        case .revenue(let revenue):
            return .revenue(RevenueEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, source: revenue.source, amount: revenue.amount,
                currency: revenue.currency.string(in: value), platform: revenue.platform?.string(in: value),
                trackID: revenue.track?.string(in: value)
            ))
        case .social(let social):
            return .social(SocialEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artistID, platform: social.platform.string(in: value),
                action: social.action.string(in: value), count: social.count, postID: social.post?.string(in: value)
            ))
        }
    }
}
