/// Which unique-count sketches can answer a query, if any: the listeners of a streams query, the visitors of a page
/// query.
///
/// Sketches exist per artist and day and per track (page) and day (the artist's local days), so the counts are
/// available only for whole days of the artist's zone, for granularity day or coarser, and for queries filtered on
/// one artist and at most one track (page).
public struct ListenerScope: Hashable, Sendable {
    /// What the sketches count.
    public enum Kind: Hashable, Sendable {
        /// The listeners of plays (per track).
        case listeners
        /// The visitors of page events (per page).
        case visitors

        /// What the sketches of a query of `dataset` count: a page query's visitors, any other's listeners.
        public init(_ dataset: Dataset) {
            self = dataset == .page ? .visitors : .listeners
        }

        /// The word for what is counted ("listeners", "visitors").
        public var noun: String { self == .listeners ? "listeners" : "visitors" }
    }

    public var kind: Kind
    public var artistID: String
    /// The track (listeners) or the page, `portfolio_id` (visitors); nil: the artist's.
    public var trackID: String?
    /// Days since the epoch, half-open.
    public var days: Range<Int64>

    public init(_ kind: Kind = .listeners, artistID: String, trackID: String? = nil, days: Range<Int64>) {
        self.kind = kind
        self.artistID = artistID
        self.trackID = trackID
        self.days = days
    }

    /// The same scope over `days`.
    public func with(days: Range<Int64>) -> ListenerScope {
        var scope = self
        scope.days = days
        return scope
    }

    /// The scope of `query` (a streams query's listeners, a page query's visitors), or nil when they cannot be counted
    /// from daily sketches.
    public init?(_ query: Query) {
        let (kind, key): (Kind, Dimension)
        switch query.dataset {
        case .streams: (kind, key) = (.listeners, .trackID)
        case .page: (kind, key) = (.visitors, .portfolioID)
        case .revenue, .social, .funnel: return nil
        }
        guard query.granularity != .hour,
              query.interval.from.microseconds % 86_400_000_000 == 0, query.interval.to.microseconds % 86_400_000_000 == 0,
              let artists = query.filters[.artistID], artists.count == 1,
              query.filters.keys.allSatisfy({ $0 == .artistID || $0 == key }),
              query.groupBy.isEmpty
        else { return nil }
        let keys = query.filters[key]
        guard keys == nil || keys!.count == 1 else { return nil }
        self.init(kind, artistID: artists[0], trackID: keys?.first, days: query.interval.from.seconds / 86_400..<query.interval.to.seconds / 86_400)
    }

    /// A listener estimate as clients see it: the sketch's cardinality rounded to a whole listener.
    public static func count(_ cardinality: Double) -> Int64 {
        Int64(cardinality.rounded())
    }
}
