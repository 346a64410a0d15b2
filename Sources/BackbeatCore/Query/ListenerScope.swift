/// Which unique-listener sketches can answer a streams query, if any.
///
/// Sketches exist per artist and day and per track and day (the artist's local days), so listeners are available only
/// for whole days of the artist's zone, for granularity day or coarser, and for queries filtered on one artist and at
/// most one track.
public struct ListenerScope: Hashable, Sendable {
    public var artistID: String
    public var trackID: String?
    /// Days since the epoch, half-open.
    public var days: Range<Int64>

    public init(artistID: String, trackID: String? = nil, days: Range<Int64>) {
        self.artistID = artistID
        self.trackID = trackID
        self.days = days
    }

    /// The scope of `query`, or nil when its listeners cannot be counted from daily sketches.
    public init?(_ query: Query) {
        guard query.dataset == .streams, query.granularity != .hour,
              query.interval.from.microseconds % 86_400_000_000 == 0, query.interval.to.microseconds % 86_400_000_000 == 0,
              let artists = query.filters[.artistID], artists.count == 1,
              query.filters.keys.allSatisfy({ $0 == .artistID || $0 == .trackID }),
              query.groupBy.isEmpty
        else { return nil }
        let tracks = query.filters[.trackID]
        guard tracks == nil || tracks!.count == 1 else { return nil }
        self.init(
            artistID: artists[0], trackID: tracks?.first,
            days: query.interval.from.seconds / 86_400..<query.interval.to.seconds / 86_400)
    }

    /// A listener estimate as clients see it: the sketch's cardinality rounded to a whole listener.
    public static func count(_ cardinality: Double) -> Int64 {
        Int64(cardinality.rounded())
    }
}
