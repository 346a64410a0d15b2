/// A stored rollup: a dataset summed over a time grain and a subset of its dimensions.
///
/// The full-dimension tables (named `_hourly` from before they held quarter hours) answer anything; the smaller cubes
/// answer what dashboards ask all day at a fraction of the rows. `Cube.plan(for:)` picks the smallest cube that has
/// every dimension a query groups by or filters on, at a grain fine enough for its granularity and interval.
public struct Cube: Equatable, Sendable {
    /// The time grain a cube is kept at. A quarter hour is the grain that tiles the local day of every zone (every
    /// offset in use is a multiple of 15 minutes), which is what reading an artist's rows in another zone needs.
    public enum Grain: Sendable {
        case quarterHour, hour, day

        /// Seconds in one of the grain's periods (a day's: 86,400).
        public var seconds: Int64 {
            switch self {
            case .quarterHour: 900
            case .hour: 3600
            case .day: 86_400
            }
        }

        /// The grain's periods in a day: a row's slot of its day is below this (96, 24 or 1).
        public var slotsPerDay: Int64 { 86_400 / seconds }

        /// The slot of `day` (days since the epoch) that quarter hour `quarter` (quarter hours since the epoch) falls
        /// in at this grain; `quarter` is one of `day`'s.
        public func slot(ofQuarter quarter: Int64, day: Int64) -> Int16 {
            Int16((quarter - day * 96) / (96 / slotsPerDay))
        }
    }

    public var table: String
    public var dataset: Dataset
    public var grain: Grain
    /// Dimensions besides `artist_id` (which every cube has), in column order.
    public var dimensions: [Dimension]

    /// Every cube, smallest first within a dataset (rows per artist-day on realistic data), the full tables last.
    public static let all: [Cube] = [
        Cube(table: "streams_by_artist_day_platform", dataset: .streams, grain: .day, dimensions: [.platform]),
        Cube(table: "streams_by_artist_day_country", dataset: .streams, grain: .day, dimensions: [.country]),
        Cube(table: "streams_by_artist_day_track", dataset: .streams, grain: .day, dimensions: [.trackID]),
        Cube(table: "streams_by_artist_hour", dataset: .streams, grain: .hour, dimensions: []),
        Cube(table: "streams_by_artist_day_demographics", dataset: .streams, grain: .day, dimensions: [.ageRange, .gender]),
        Cube(table: "stream_hourly", dataset: .streams, grain: .quarterHour, dimensions: [.trackID, .platform, .country, .ageRange, .gender]),
        Cube(table: "revenue_by_artist_day", dataset: .revenue, grain: .day, dimensions: [.source, .currency]),
        Cube(table: "revenue_hourly", dataset: .revenue, grain: .quarterHour, dimensions: [.source, .currency, .platform, .trackID]),
        Cube(table: "social_by_artist_day", dataset: .social, grain: .day, dimensions: [.platform, .action]),
        Cube(table: "social_hourly", dataset: .social, grain: .quarterHour, dimensions: [.platform, .action]),
        Cube(table: "page_by_artist_day", dataset: .page, grain: .day, dimensions: [.portfolioID, .eventType]),
        Cube(table: "page_by_artist_day_cta", dataset: .page, grain: .day, dimensions: [.portfolioID, .actionType]),
        Cube(table: "page_by_artist_day_interaction", dataset: .page, grain: .day, dimensions: [.blockType, .action]),
        Cube(table: "page_by_artist_day_section", dataset: .page, grain: .day, dimensions: [.portfolioID, .sectionID]),
        Cube(table: "page_by_artist_day_block", dataset: .page, grain: .day, dimensions: [.portfolioID, .blockID]),
        Cube(table: "page_by_artist_day_referrer", dataset: .page, grain: .day, dimensions: [.portfolioID, .eventType, .referrer]),
        Cube(table: "page_by_artist_day_country", dataset: .page, grain: .day, dimensions: [.portfolioID, .eventType, .country]),
        Cube(table: "page_hourly", dataset: .page, grain: .quarterHour,
             dimensions: [.portfolioID, .eventType, .sectionID, .blockID, .blockType, .action, .actionType, .referrer, .country]),
        Cube(table: "page_funnel_by_artist_day", dataset: .funnel, grain: .day, dimensions: [.portfolioID]),
        Cube(table: "page_funnel_hourly", dataset: .funnel, grain: .quarterHour, dimensions: [.portfolioID]),
    ]

    /// The cubes written besides the full-dimension tables.
    public static var derived: [Cube] { all.filter { !$0.isFull } }

    /// Whether this is a full-dimension table, by quarter hour (written from the delta directly): the only cubes kept
    /// by quarter hour.
    public var isFull: Bool {
        grain == .quarterHour
    }

    /// The full dimensions by day (`<dataset>_daily`, migration 0015): the detail by (local) day, then the daily
    /// rows retention rolled it into once the quarter hours were dropped. Not one of `all`: nothing is written to it.
    public var dailyDetail: Cube {
        Cube(table: String(table.dropLast("hourly".count)) + "daily", dataset: dataset, grain: .day, dimensions: dimensions)
    }

    /// Whether this is the full dimensions by day (`dailyDetail`).
    public var isDailyDetail: Bool {
        grain == .day && Self.all.contains { $0.isFull && $0.dailyDetail == self }
    }

    /// The smallest cube that can answer `query` exactly (by quarter hour, a full-dimension table); a day-aligned
    /// question on the full dimensions reads them by day, so that days whose hours retention dropped are answered from their daily rows.
    public static func plan(for query: Query) -> Cube {
        let needed = Set(query.groupBy).union(query.filters.keys).subtracting([.artistID])
        let dayAligned = query.granularity != .hour && query.granularity != .quarterHour
            && query.interval.from.microseconds % 86_400_000_000 == 0 && query.interval.to.microseconds % 86_400_000_000 == 0
        let fineEnough = { (grain: Grain) in
            query.granularity == .quarterHour ? grain == .quarterHour : grain != .day || dayAligned
        }
        let cube = all.first { cube in
            cube.dataset == query.dataset && needed.isSubset(of: cube.dimensions) && fineEnough(cube.grain)
        }!
        return cube.isFull && dayAligned ? cube.dailyDetail : cube
    }
}

extension MetricValue {
    /// The sum of two values of the same metric.
    public func adding(_ other: MetricValue) -> MetricValue {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): .integer(a + b)
        case (.money(let a), .money(let b)): .money(a + b)
        default: self
        }
    }
}
