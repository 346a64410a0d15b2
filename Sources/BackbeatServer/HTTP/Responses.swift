import BackbeatCore
import Hummingbird

// The JSON shapes of docs/api.md. Counts are numbers; money is an exact decimal string.

/// A JSON key chosen at run time (dimension and metric names).
struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct StreamsPoint: Codable, Equatable {
    var period_start: String
    var streams: Int64
    var skips: Int64
    var listening_ms: Int64
    /// Absent when daily sketches cannot answer the query (see ListenerScope).
    var listeners: Int64?
}

struct StreamsTotals: Codable, Equatable {
    var streams: Int64
    var skips: Int64
    var listening_ms: Int64
    var listeners: Int64?
}

struct StreamsResponse: ResponseCodable {
    var series: [StreamsPoint]
    var totals: StreamsTotals
    /// Why `listeners` is missing: the periods asked for (`tz`) are not whole days of the artist's zone, or a change of
    /// its zone left some of their days without listeners (`RecountGaps`).
    var listeners_unavailable: String?
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

struct PlatformShare: Codable {
    var platform: String
    var streams: Int64
    var share: Double
}

struct PlatformsResponse: ResponseCodable {
    var platforms: [PlatformShare]
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

struct DimensionShare: Encodable {
    var name: String
    var value: String
    var streams: Int64
    var share: Double

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DynamicKey.self)
        try container.encode(value, forKey: DynamicKey(stringValue: name))
        try container.encode(streams, forKey: DynamicKey(stringValue: "streams"))
        try container.encode(share, forKey: DynamicKey(stringValue: "share"))
    }
}

struct DemographicsResponse: ResponseEncodable {
    var age_ranges: [DimensionShare]
    var genders: [DimensionShare]
    var countries: [DimensionShare]
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

struct TrackStreams: Codable {
    var track_id: String
    var streams: Int64
    var listeners: Int64?
}

struct TopTracksResponse: ResponseCodable {
    var tracks: [TrackStreams]
    /// Why `listeners` is missing: the interval asked for (`tz`) is not whole days of the artist's zone, or a change of
    /// its zone left some of its days without listeners (`RecountGaps`).
    var listeners_unavailable: String?
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

struct RevenuePoint: Codable {
    var period_start: String
    var source: String
    var currency: String
    var amount: String
}

struct CurrencyTotal: Codable {
    var currency: String
    var amount: String
}

struct RevenueResponse: ResponseCodable {
    var series: [RevenuePoint]
    var totals: [CurrencyTotal]
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

struct SocialPoint: Codable {
    var period_start: String
    var platform: String
    var action: String
    var count: Int64
}

struct SocialTotal: Codable {
    var platform: String
    var action: String
    var count: Int64
}

struct SocialResponse: ResponseCodable {
    var series: [SocialPoint]
    var totals: [SocialTotal]
    /// The days of the answer whose counts are incomplete: a change of the artist's zone could not count them again
    /// from the detail kept (`RecountGaps`), so only events consumed since count there.
    var counts_unavailable: String? = nil
}

/// The body of `POST /v1/query`. A field it does not have is refused (`UnknownField`), not ignored.
struct QueryBody: Decodable {
    struct OrderBy: Decodable {
        var metric: String?
        var direction: String?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case metric, direction
        }

        init(from decoder: Decoder) throws {
            try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "order_by")
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            metric = try fields.decodeIfPresent(String.self, forKey: .metric)
            direction = try fields.decodeIfPresent(String.self, forKey: .direction)
        }
    }

    var dataset: String?
    var from: String?
    var to: String?
    var granularity: String?
    var group_by: [String]?
    var filters: [String: [String]]?
    var order_by: OrderBy?
    var limit: Int?
    /// The zone the interval and periods are read in (docs/api.md); nil: each artist's stored clock.
    var tz: String?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case dataset, from, to, granularity, group_by, filters, order_by, limit, tz
    }

    init(from decoder: Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue))
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        dataset = try fields.decodeIfPresent(String.self, forKey: .dataset)
        from = try fields.decodeIfPresent(String.self, forKey: .from)
        to = try fields.decodeIfPresent(String.self, forKey: .to)
        granularity = try fields.decodeIfPresent(String.self, forKey: .granularity)
        group_by = try fields.decodeIfPresent([String].self, forKey: .group_by)
        filters = try fields.decodeIfPresent([String: [String]].self, forKey: .filters)
        order_by = try fields.decodeIfPresent(OrderBy.self, forKey: .order_by)
        limit = try fields.decodeIfPresent(Int.self, forKey: .limit)
        // A zone name or absent: null is not a name.
        tz = fields.contains(.tz) ? try fields.decode(String.self, forKey: .tz) : nil
    }
}

/// The answer of `POST /v1/query`: one object per row with a key per group-by dimension and metric.
struct QueryResponse: ResponseEncodable {
    var query: Query
    var rows: [QueryRow]
    /// The zone the periods are local to (`tz`); nil: written as UTC.
    var zone: ZoneRules? = nil

    private struct Row: Encodable {
        var query: Query
        var row: QueryRow
        var zone: ZoneRules?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: DynamicKey.self)
            if let period = row.periodStart {
                let text = RFC3339.format(periodStart: period, in: zone)
                try container.encode(text, forKey: DynamicKey(stringValue: "period_start"))
            }
            for (dimension, value) in zip(query.groupBy, row.groupValues) {
                try container.encode(value, forKey: DynamicKey(stringValue: dimension.rawValue))
            }
            for (metric, value) in zip(query.dataset.metrics, row.metrics) {
                switch value {
                case .integer(let number): try container.encode(number, forKey: DynamicKey(stringValue: metric.rawValue))
                case .money(let money): try container.encode(money.decimalString, forKey: DynamicKey(stringValue: metric.rawValue))
                }
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DynamicKey.self)
        try container.encode(rows.map { Row(query: query, row: $0, zone: zone) }, forKey: DynamicKey(stringValue: "rows"))
    }
}

/// Page events of each type, and the unique visitors: a period's or the interval's.
struct PageCounts: Codable, Equatable {
    var views: Int64 = 0
    var section_views: Int64 = 0
    var interactions: Int64 = 0
    var cta_clicks: Int64 = 0
    /// Absent when daily sketches cannot answer (as `StreamsPoint.listeners`).
    var visitors: Int64?

    /// Adds `events` of the page event type named `type`.
    mutating func add(_ events: Int64, of type: String) {
        switch EventTypeName(rawValue: type) {
        case .portfolioView: views += events
        case .sectionView: section_views += events
        case .blockInteraction: interactions += events
        case .ctaClick: cta_clicks += events
        case .stream, .revenue, .social, nil: break
        }
    }
}

/// A period of a series and what was counted in it, flat in JSON: `{"period_start": ..., "views": ..., ...}`.
struct PeriodPoint<Measures: Codable & Equatable>: Codable, Equatable {
    var period_start: String
    var measures: Measures

    init(period_start: String, _ measures: Measures) {
        self.period_start = period_start
        self.measures = measures
    }

    private enum CodingKeys: String, CodingKey { case period_start }

    init(from decoder: any Decoder) throws {
        period_start = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .period_start)
        measures = try Measures(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(period_start, forKey: .period_start)
        try measures.encode(to: encoder)
    }
}

typealias PagePoint = PeriodPoint<PageCounts>

struct PageResponse: ResponseCodable {
    var series: [PagePoint]
    var totals: PageCounts
    /// Why `visitors` is missing (as `StreamsResponse.listeners_unavailable`).
    var visitors_unavailable: String?
    /// The days of the answer whose counts are incomplete (`RecountGaps`).
    var counts_unavailable: String? = nil
}

struct PageSectionViews: Codable {
    var section_id: String
    var views: Int64
}

struct PageBlockInteractions: Codable {
    var block_id: String
    var interactions: Int64
}

struct PageInteraction: Codable {
    var block_type: String
    var action: String
    var events: Int64
}

/// An answer of ranked lists (`page/sections`, `page/sources`), which says which of its days are incomplete.
protocol RankedListsAnswer: JSONWritable, Sendable {
    var counts_unavailable: String? { get set }
    /// Why the lists' unique visitors are not counted (`visitorKeys` of the lists), or nil.
    var visitors_unavailable: String? { get set }
}

extension RankedListsAnswer {
    /// Lists without visitors have nothing to say about them.
    var visitors_unavailable: String? {
        get { nil }
        set {}
    }
}

struct PageSectionsResponse: ResponseCodable, RankedListsAnswer {
    var sections: [PageSectionViews]
    var blocks: [PageBlockInteractions]
    var interactions: [PageInteraction]
    /// The days of the answer whose counts are incomplete (`RecountGaps`).
    var counts_unavailable: String? = nil
}

struct PageReferrerViews: Codable {
    var referrer: String
    var views: Int64
    /// The unique visitors of these views (absent: see `visitors_unavailable`).
    var visitors: Int64?
}

struct PageCountryViews: Codable {
    var country: String
    var views: Int64
    /// The unique visitors of these views (absent: see `visitors_unavailable`).
    var visitors: Int64?
}

struct PageSourcesResponse: ResponseCodable, RankedListsAnswer {
    var referrers: [PageReferrerViews]
    var countries: [PageCountryViews]
    /// The days of the answer whose counts are incomplete (`RecountGaps`).
    var counts_unavailable: String? = nil
    /// Why the sources' unique visitors are absent: they are kept per whole day of the artist's zone.
    var visitors_unavailable: String? = nil
}

struct PageCTAPoint: Codable {
    var period_start: String
    var action_type: String
    var clicks: Int64
}

struct PageCTATotal: Codable {
    var action_type: String
    var clicks: Int64
}

/// Sessions at each stage of the page funnel: a period's (the day of their first view) or the interval's.
struct PageFunnelStages: Codable, Equatable {
    var sessions: Int64 = 0
    var sessions_with_section_view: Int64 = 0
    var sessions_with_cta_click: Int64 = 0

    /// The stages of a row of the `funnel` dataset (its metrics, in `Dataset.funnel.metrics` order).
    init(_ metrics: [MetricValue]) {
        (sessions, sessions_with_section_view, sessions_with_cta_click) = (metrics[0].integer, metrics[1].integer, metrics[2].integer)
    }
}

typealias PageFunnelPoint = PeriodPoint<PageFunnelStages>

struct PageFunnelResponse: ResponseCodable {
    var series: [PageFunnelPoint]
    var totals: PageFunnelStages
    /// The days of the answer whose counts are incomplete (`RecountGaps`).
    var counts_unavailable: String? = nil
}

struct PageCTAsResponse: ResponseCodable {
    var series: [PageCTAPoint]
    var totals: [PageCTATotal]
    /// The days of the answer whose counts are incomplete (`RecountGaps`).
    var counts_unavailable: String? = nil
}
