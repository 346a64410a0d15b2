/// The hour an event falls in, as hours since the epoch.
public struct HourBucket: Hashable, Comparable, Sendable {
    public var hoursSinceEpoch: Int64

    public init(hoursSinceEpoch: Int64) {
        self.hoursSinceEpoch = hoursSinceEpoch
    }

    public init(containing timestamp: Timestamp) {
        self.hoursSinceEpoch = timestamp.seconds.floorDiv(3600)
    }

    /// The first instant of the hour.
    public var start: Timestamp { Timestamp(seconds: hoursSinceEpoch * 3600) }

    public static func < (lhs: HourBucket, rhs: HourBucket) -> Bool { lhs.hoursSinceEpoch < rhs.hoursSinceEpoch }
}

/// The dimensions of a row of the hourly stream rollup.
public struct StreamKey: Hashable, Sendable {
    public var artistID: String
    public var hour: HourBucket
    public var trackID: String
    public var platform: String
    public var country: String
    public var ageRange: AgeRange
    public var gender: Gender

    public init(_ event: StreamEvent) {
        self.init(
            artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), trackID: event.trackID,
            platform: event.platform, country: event.country, ageRange: event.ageRange, gender: event.gender
        )
    }

    public init(artistID: String, hour: HourBucket, trackID: String, platform: String, country: String, ageRange: AgeRange, gender: Gender) {
        self.artistID = artistID
        self.hour = hour
        self.trackID = trackID
        self.platform = platform
        self.country = country
        self.ageRange = ageRange
        self.gender = gender
    }
}

/// The measures of the stream rollup.
public struct StreamCounters: Equatable, Sendable {
    public var streams: Int64 = 0
    public var skips: Int64 = 0
    public var listeningMs: Int64 = 0

    public init(streams: Int64 = 0, skips: Int64 = 0, listeningMs: Int64 = 0) {
        self.streams = streams
        self.skips = skips
        self.listeningMs = listeningMs
    }

    public init(_ event: StreamEvent) {
        self.init(streams: event.isStream ? 1 : 0, skips: event.isStream ? 0 : 1, listeningMs: event.durationMs ?? 0)
    }

    public static func += (lhs: inout StreamCounters, rhs: StreamCounters) {
        lhs.streams += rhs.streams
        lhs.skips += rhs.skips
        lhs.listeningMs += rhs.listeningMs
    }
}

/// The dimensions of a row of the hourly revenue rollup; absent platform and track are stored as "".
public struct RevenueKey: Hashable, Sendable {
    public var artistID: String
    public var hour: HourBucket
    public var source: RevenueSource
    public var currency: String
    public var platform: String
    public var trackID: String

    public init(_ event: RevenueEvent) {
        self.artistID = event.artistID
        self.hour = HourBucket(containing: event.occurredAt)
        self.source = event.source
        self.currency = event.currency
        self.platform = event.platform ?? ""
        self.trackID = event.trackID ?? ""
    }
}

/// The measures of the revenue rollup: an exact sum and the number of events behind it.
public struct RevenueCounters: Equatable, Sendable {
    public var amount: Money = .zero
    public var events: Int64 = 0

    public init(amount: Money = .zero, events: Int64 = 0) {
        self.amount = amount
        self.events = events
    }

    public static func += (lhs: inout RevenueCounters, rhs: RevenueCounters) {
        lhs.amount += rhs.amount
        lhs.events += rhs.events
    }
}

/// The dimensions of a row of the hourly social rollup.
public struct SocialKey: Hashable, Sendable {
    public var artistID: String
    public var hour: HourBucket
    public var platform: String
    public var action: String

    public init(_ event: SocialEvent) {
        self.artistID = event.artistID
        self.hour = HourBucket(containing: event.occurredAt)
        self.platform = event.platform
        self.action = event.action
    }
}

/// An artist's UTC day, the grain of the unique-listener sketches.
public struct ArtistDay: Hashable, Sendable {
    public var artistID: String
    /// Days since 1970-01-01.
    public var day: Int64

    public init(artistID: String, day: Int64) {
        self.artistID = artistID
        self.day = day
    }
}

/// A track's UTC day, the grain of the per-track unique-listener sketches.
public struct TrackDay: Hashable, Sendable {
    public var artistID: String
    public var trackID: String
    /// Days since 1970-01-01.
    public var day: Int64

    public init(artistID: String, trackID: String, day: Int64) {
        self.artistID = artistID
        self.trackID = trackID
        self.day = day
    }
}
