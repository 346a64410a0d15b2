/// The datasets a query can read, each with its dimensions and metrics.
public enum Dataset: String, CaseIterable, Sendable {
    case streams, revenue, social, page
    /// The page funnel: sessions by the portfolio and (local) day of their first view (`FunnelSession`).
    case funnel

    /// Dimensions a query may group by or filter on.
    public var dimensions: [Dimension] {
        switch self {
        case .streams: [.artistID, .trackID, .platform, .country, .ageRange, .gender]
        case .revenue: [.artistID, .source, .currency, .platform, .trackID]
        case .social: [.artistID, .platform, .action]
        case .page: [.artistID, .portfolioID, .eventType, .sectionID, .blockID, .blockType, .action, .actionType, .referrer, .country]
        case .funnel: [.artistID, .portfolioID]
        }
    }

    /// Metrics every row of this dataset carries, in output order.
    public var metrics: [Metric] {
        switch self {
        case .streams: [.streams, .skips, .listeningMs]
        case .revenue: [.amount, .events]
        case .social: [.count]
        case .page: [.events]
        case .funnel: [.sessions, .sessionsWithSectionView, .sessionsWithCTAClick]
        }
    }
}

/// A column a query may group by or filter on.
public enum Dimension: String, CaseIterable, Sendable {
    case artistID = "artist_id"
    case trackID = "track_id"
    case platform, country
    case ageRange = "age_range"
    case gender, source, currency, action
    /// A page event's type (portfolio_view, section_view, block_interaction, cta_click).
    case eventType = "type"
    case portfolioID = "portfolio_id"
    case sectionID = "section_id"
    case blockID = "block_id"
    case blockType = "block_type"
    /// A cta_click's `action_type` (a block_interaction's is `action`).
    case actionType = "action_type"
    /// The host a page event's visitor came from (`PageEvent.referrer`).
    case referrer

    /// Whether `value` could ever be stored in this dimension (filters with impossible values are 400s).
    public func accepts(_ value: String) -> Bool {
        switch self {
        case .artistID, .trackID: Identifiers.isID(value) || (self == .trackID && value.isEmpty)
        case .platform: Identifiers.isSlug(value) || value.isEmpty
        case .country: Identifiers.isUpperCode(value, length: 2)
        case .currency: Identifiers.isUpperCode(value, length: 3)
        case .ageRange: AgeRange(rawValue: value) != nil
        case .gender: Gender(rawValue: value) != nil
        case .source: RevenueSource(rawValue: value) != nil
        case .action, .blockType, .actionType: Identifiers.isSlug(value, digits: false)
        case .eventType: EventTypeName(rawValue: value)?.family == .page
        case .portfolioID: Identifiers.isID(value)
        case .sectionID, .blockID: Identifiers.isID(value)
        case .referrer: ReferrerHost.isStored(value)
        }
    }
}

/// A measure summed over the rows of a dataset.
public enum Metric: String, CaseIterable, Sendable {
    case streams, skips
    case listeningMs = "listening_ms"
    case amount, events, count
    /// The page funnel's stages (`FunnelCounts`).
    case sessions
    case sessionsWithSectionView = "sessions_with_section_view"
    case sessionsWithCTAClick = "sessions_with_cta_click"
}

/// A metric's value: counts are integers, money is an exact decimal.
public enum MetricValue: Equatable, Comparable, Sendable {
    case integer(Int64)
    case money(Money)

    /// The integer value (zero for money, which callers never ask this of).
    public var integer: Int64 {
        if case .integer(let value) = self { return value }
        return 0
    }

    /// The money value (zero for counts).
    public var money: Money {
        if case .money(let value) = self { return value }
        return .zero
    }

    public static func zero(for metric: Metric) -> MetricValue {
        metric == .amount ? .money(.zero) : .integer(0)
    }

    public static func < (lhs: MetricValue, rhs: MetricValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.money(let a), .money(let b)): a < b
        case (.integer, .money): true
        case (.money, .integer): false
        }
    }
}

/// Sort direction of `order_by`.
public enum SortDirection: String, Sendable {
    case asc, desc
}

/// A validated aggregate query: the one model every endpoint is answered through.
public struct Query: Hashable, Sendable {
    public var dataset: Dataset
    public var interval: QueryInterval
    public var granularity: Granularity
    public var groupBy: [Dimension]
    /// Allowed values per dimension; a row matches when every listed dimension has one of its values.
    public var filters: [Dimension: [String]]
    /// Artists whose rows are left out, sorted (a read across every artist in a zone reads the artists stored in
    /// other zones apart: `POST /v1/query`'s `tz`).
    public var excludedArtists: [String] = []
    public var orderBy: (metric: Metric, direction: SortDirection)?
    public var limit: Int?

    public init(
        dataset: Dataset, interval: QueryInterval, granularity: Granularity, groupBy: [Dimension] = [],
        filters: [Dimension: [String]] = [:], orderBy: (metric: Metric, direction: SortDirection)? = nil, limit: Int? = nil
    ) {
        self.dataset = dataset
        self.interval = interval
        self.granularity = granularity
        self.groupBy = groupBy
        self.filters = filters
        self.orderBy = orderBy
        self.limit = limit
    }

    public static func == (lhs: Query, rhs: Query) -> Bool {
        lhs.dataset == rhs.dataset && lhs.interval == rhs.interval && lhs.granularity == rhs.granularity
            && lhs.groupBy == rhs.groupBy && lhs.filters == rhs.filters && lhs.excludedArtists == rhs.excludedArtists && lhs.limit == rhs.limit
            && lhs.orderBy?.metric == rhs.orderBy?.metric && lhs.orderBy?.direction == rhs.orderBy?.direction
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(dataset)
        hasher.combine(interval)
        hasher.combine(granularity)
        hasher.combine(groupBy)
        hasher.combine(filters)
        hasher.combine(excludedArtists)
        hasher.combine(orderBy?.metric)
        hasher.combine(orderBy?.direction)
        hasher.combine(limit)
    }
}

/// One aggregated row: the period (nil for granularity `all`), one value per group-by dimension and one per metric.
public struct QueryRow: Equatable, Sendable {
    public var periodStart: Timestamp?
    public var groupValues: [String]
    public var metrics: [MetricValue]

    public init(periodStart: Timestamp?, groupValues: [String], metrics: [MetricValue]) {
        self.periodStart = periodStart
        self.groupValues = groupValues
        self.metrics = metrics
    }
}
