import BackbeatCore

/// The test oracle of the rollups: additions keyed by strings, made from decoded `Event`s one by one. The interned
/// path the service runs (`InternedDelta`) must add up to the same rows (`InternedDelta.rollupDelta`).
public struct RollupDelta: Sendable {
    public var streams: [StreamKey: StreamCounters] = [:]
    public var revenue: [RevenueKey: RevenueCounters] = [:]
    public var social: [SocialKey: Int64] = [:]
    public var page: [PageKey: Int64] = [:]
    /// Unique listeners per artist and day, and per track and day (plays with a `listener_id` only).
    public var artistListeners: [ArtistDay: HyperLogLog] = [:]
    public var trackListeners: [TrackDay: HyperLogLog] = [:]
    /// Unique visitors of page events per artist and day, and per page and day (`TrackDay.trackID` holds the
    /// `portfolio_id`).
    public var artistVisitors: [ArtistDay: HyperLogLog] = [:]
    public var pageVisitors: [TrackDay: HyperLogLog] = [:]
    public var rejected: [RejectedMessage] = []

    public init() {}

    public var isEmpty: Bool {
        streams.isEmpty && revenue.isEmpty && social.isEmpty && page.isEmpty && rejected.isEmpty && artistListeners.isEmpty
    }

    /// Number of rows a flush of this delta writes.
    public var rowCount: Int {
        streams.count + revenue.count + social.count + page.count + rejected.count + artistListeners.count + trackListeners.count
    }

    /// Adds one valid event.
    public mutating func add(_ event: Event) {
        switch event {
        case .stream(let stream):
            streams[StreamKey(stream), default: StreamCounters()] += StreamCounters(stream)
            if let listener = stream.listenerID {
                let hash = MurmurHash3.hash64(listener)
                let day = stream.occurredAt.daysSinceEpoch
                artistListeners[ArtistDay(artistID: stream.artistID, day: day), default: HyperLogLog()].add(hash: hash)
                trackListeners[TrackDay(artistID: stream.artistID, trackID: stream.trackID, day: day), default: HyperLogLog()].add(hash: hash)
            }
        case .revenue(let revenue):
            self.revenue[RevenueKey(revenue), default: RevenueCounters()] += RevenueCounters(amount: revenue.amount, events: 1)
        case .social(let social):
            self.social[SocialKey(social), default: 0] += social.count
        case .page(let page):
            self.page[PageKey(page), default: 0] += 1
            let hash = MurmurHash3.hash64(page.visitorID)
            let day = page.occurredAt.daysSinceEpoch
            artistVisitors[ArtistDay(artistID: page.artistID, day: day), default: HyperLogLog()].add(hash: hash)
            pageVisitors[TrackDay(artistID: page.artistID, trackID: page.portfolioID, day: day), default: HyperLogLog()].add(hash: hash)
            for key in page.sourceKeys {
                pageVisitors[TrackDay(artistID: page.artistID, trackID: key.text, day: day), default: HyperLogLog()].add(hash: hash)
            }
        }
    }

    /// Adds everything in `other` to this delta (walking the smaller of the two).
    public mutating func merge(_ other: RollupDelta) {
        if other.streams.count > streams.count {
            var larger = other
            larger.merge(self)
            self = larger
            return
        }
        for (key, counters) in other.streams { streams[key, default: StreamCounters()] += counters }
        for (key, counters) in other.revenue { revenue[key, default: RevenueCounters()] += counters }
        for (key, count) in other.social { social[key, default: 0] += count }
        for (key, count) in other.page { page[key, default: 0] += count }
        for (key, sketch) in other.artistListeners { artistListeners[key, default: HyperLogLog()].formUnion(sketch) }
        for (key, sketch) in other.trackListeners { trackListeners[key, default: HyperLogLog()].formUnion(sketch) }
        for (key, sketch) in other.artistVisitors { artistVisitors[key, default: HyperLogLog()].formUnion(sketch) }
        for (key, sketch) in other.pageVisitors { pageVisitors[key, default: HyperLogLog()].formUnion(sketch) }
        rejected.append(contentsOf: other.rejected)
    }
}

extension PageEvent {
    /// The source keys whose visitors count this event's visitor: a `portfolio_view`'s referrer and country, of its
    /// page and of all the artist's pages; none for other page events.
    public var sourceKeys: [PageSourceKey] {
        guard case .portfolioView = kind else { return [] }
        return [(PageSourceKey.Kind.referrer, referrer), (.country, country)].flatMap { kind, value in
            [portfolioID, nil].map { PageSourceKey(kind, value, portfolioID: $0) }
        }
    }
}
