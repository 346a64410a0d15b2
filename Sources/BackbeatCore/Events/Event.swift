/// One validated event, as the event contract in docs/events.md defines it.
public enum Event: Equatable, Sendable {
    case stream(StreamEvent)
    case revenue(RevenueEvent)
    case social(SocialEvent)
    case page(PageEvent)

    /// The producer's id of the event (what dedup tells resends by).
    public var eventID: String {
        switch self {
        case .stream(let event): event.eventID
        case .revenue(let event): event.eventID
        case .social(let event): event.eventID
        case .page(let event): event.eventID
        }
    }

    /// The artist the event belongs to.
    public var artistID: String {
        switch self {
        case .stream(let event): event.artistID
        case .revenue(let event): event.artistID
        case .social(let event): event.artistID
        case .page(let event): event.artistID
        }
    }

    /// When the event happened, in UTC.
    public var occurredAt: Timestamp {
        switch self {
        case .stream(let event): event.occurredAt
        case .revenue(let event): event.occurredAt
        case .social(let event): event.occurredAt
        case .page(let event): event.occurredAt
        }
    }
}

/// A play of a track on a platform.
public struct StreamEvent: Equatable, Sendable {
    public var eventID: String
    public var occurredAt: Timestamp
    public var artistID: String
    public var trackID: String
    public var platform: String
    public var listenerID: String?
    public var country: String
    public var ageRange: AgeRange
    public var gender: Gender
    public var durationMs: Int64?

    /// The play length from which a play counts as a stream rather than a skip.
    public static let streamThresholdMs: Int64 = 30_000

    /// A play counts as a stream when its duration is unknown or at least 30 s.
    public var isStream: Bool { Self.isStream(durationMs: durationMs) }

    /// Whether a play of `durationMs` (nil: unknown) counts as a stream.
    public static func isStream(durationMs: Int64?) -> Bool {
        guard let durationMs else { return true }
        return durationMs >= streamThresholdMs
    }

    public init(
        eventID: String, occurredAt: Timestamp, artistID: String, trackID: String, platform: String,
        listenerID: String? = nil, country: String = "ZZ", ageRange: AgeRange = .unknown, gender: Gender = .unknown,
        durationMs: Int64? = nil
    ) {
        self.eventID = eventID
        self.occurredAt = occurredAt
        self.artistID = artistID
        self.trackID = trackID
        self.platform = platform
        self.listenerID = listenerID
        self.country = country
        self.ageRange = ageRange
        self.gender = gender
        self.durationMs = durationMs
    }
}

/// Money earned (or refunded, when negative) from one source.
public struct RevenueEvent: Equatable, Sendable {
    public var eventID: String
    public var occurredAt: Timestamp
    public var artistID: String
    public var source: RevenueSource
    public var amount: Money
    public var currency: String
    public var platform: String?
    public var trackID: String?

    public init(
        eventID: String, occurredAt: Timestamp, artistID: String, source: RevenueSource, amount: Money,
        currency: String, platform: String? = nil, trackID: String? = nil
    ) {
        self.eventID = eventID
        self.occurredAt = occurredAt
        self.artistID = artistID
        self.source = source
        self.amount = amount
        self.currency = currency
        self.platform = platform
        self.trackID = trackID
    }
}

/// Engagement on a social platform: likes, follows, shares and so on.
public struct SocialEvent: Equatable, Sendable {
    public var eventID: String
    public var occurredAt: Timestamp
    public var artistID: String
    public var platform: String
    public var action: String
    public var count: Int64
    public var postID: String?

    public init(
        eventID: String, occurredAt: Timestamp, artistID: String, platform: String, action: String,
        count: Int64 = 1, postID: String? = nil
    ) {
        self.eventID = eventID
        self.occurredAt = occurredAt
        self.artistID = artistID
        self.platform = platform
        self.action = action
        self.count = count
        self.postID = postID
    }
}
