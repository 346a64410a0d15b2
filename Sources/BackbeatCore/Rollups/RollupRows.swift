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
///
/// Rollup keys hash their strings once, when made, and keep the result: dictionaries of hundreds of thousands of
/// rows rehash every key each time they grow, and hashing the strings again there dominated the rollup profile.
public struct StreamKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    public let trackID: String
    public let platform: String
    public let country: String
    public let ageRange: AgeRange
    public let gender: Gender
    private let cachedHash: Int

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
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(trackID)
        hasher.combine(platform)
        hasher.combine(country)
        hasher.combine(ageRange)
        hasher.combine(gender)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: StreamKey, rhs: StreamKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID && lhs.trackID == rhs.trackID
            && lhs.platform == rhs.platform && lhs.country == rhs.country && lhs.ageRange == rhs.ageRange && lhs.gender == rhs.gender
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
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
        self.init(playOf: event.durationMs)
    }

    /// The measures of one play of `durationMs` (nil: unknown): a stream or a skip (`StreamEvent.isStream`).
    public init(playOf durationMs: Int64?) {
        let isStream = StreamEvent.isStream(durationMs: durationMs)
        self.init(streams: isStream ? 1 : 0, skips: isStream ? 0 : 1, listeningMs: durationMs ?? 0)
    }

    public static func += (lhs: inout StreamCounters, rhs: StreamCounters) {
        lhs.streams += rhs.streams
        lhs.skips += rhs.skips
        lhs.listeningMs += rhs.listeningMs
    }
}

/// The dimensions of a row of the hourly revenue rollup; absent platform and track are stored as "".
public struct RevenueKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    public let source: RevenueSource
    public let currency: String
    public let platform: String
    public let trackID: String
    private let cachedHash: Int

    public init(_ event: RevenueEvent) {
        self.init(
            artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), source: event.source,
            currency: event.currency, platform: event.platform ?? "", trackID: event.trackID ?? "")
    }

    public init(artistID: String, hour: HourBucket, source: RevenueSource, currency: String, platform: String, trackID: String) {
        self.artistID = artistID
        self.hour = hour
        self.source = source
        self.currency = currency
        self.platform = platform
        self.trackID = trackID
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(source)
        hasher.combine(currency)
        hasher.combine(platform)
        hasher.combine(trackID)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: RevenueKey, rhs: RevenueKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID && lhs.source == rhs.source
            && lhs.currency == rhs.currency && lhs.platform == rhs.platform && lhs.trackID == rhs.trackID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
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
    public let artistID: String
    public let hour: HourBucket
    public let platform: String
    public let action: String
    private let cachedHash: Int

    public init(_ event: SocialEvent) {
        self.init(artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), platform: event.platform, action: event.action)
    }

    public init(artistID: String, hour: HourBucket, platform: String, action: String) {
        self.artistID = artistID
        self.hour = hour
        self.platform = platform
        self.action = action
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(platform)
        hasher.combine(action)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: SocialKey, rhs: SocialKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID
            && lhs.platform == rhs.platform && lhs.action == rhs.action
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
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
    public let artistID: String
    public let trackID: String
    /// Days since 1970-01-01.
    public let day: Int64
    private let cachedHash: Int

    public init(artistID: String, trackID: String, day: Int64) {
        self.artistID = artistID
        self.trackID = trackID
        self.day = day
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(trackID)
        hasher.combine(day)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: TrackDay, rhs: TrackDay) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.day == rhs.day && lhs.artistID == rhs.artistID && lhs.trackID == rhs.trackID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
    }
}
