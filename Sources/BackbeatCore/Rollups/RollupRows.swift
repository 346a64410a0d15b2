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
