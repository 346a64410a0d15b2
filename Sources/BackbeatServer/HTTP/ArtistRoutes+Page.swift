import BackbeatCore
import Hummingbird

/// The page endpoints under `/v1/artists/{artist_id}/page` (docs/api.md, "Page"): an artist's portfolio pages, read
/// from the `page` dataset's cubes, each optionally for one page (`portfolio_id`).
extension ArtistRoutes {
    /// Page events per period, by type (views, section views, block interactions, CTA clicks), with totals, and the
    /// unique visitors per period and in all where the sketches can count them (as listeners: whole days of the
    /// artist's zone).
    @Sendable func page(_ request: Request, context: Context) async throws -> Response {
        let (artist, query, totalsQuery) = try await series(by: .eventType, request, context)
        let periods = artist.periodTexts(query)
        var whole = query
        whole.groupBy = []
        let (scope, unavailable) = artist.listenerScope(whole)
        let countsUnavailable = artist.countsUnavailable(query)
        let regrouping = artist.regrouping
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query), oneStatement: true
        ) { reads in
            let (rows, visitors) = try await answerAndListeners(query, scope, regrouping, reads)
            let totals = try Self.totals(of: rows, in: query, as: totalsQuery)
            var periods = periods
            var series: [PagePoint] = []
            var place: [Timestamp?: Int] = [:]
            for row in rows {
                if place[row.periodStart] == nil {
                    place[row.periodStart] = series.count
                    let counted = visitors.map { ListenerScope.count($0.perPeriod[row.periodStart] ?? 0) }
                    series.append(PagePoint(period_start: periods.text(row.periodStart), PageCounts(visitors: counted)))
                }
                series[place[row.periodStart]!].measures.add(row.metrics[0].integer, of: row.groupValues[0])
            }
            var inAll = PageCounts(visitors: visitors.map { ListenerScope.count($0.inAll) })
            for row in totals { inAll.add(row.metrics[0].integer, of: row.groupValues[0]) }
            return EncodedAnswer.written(PageResponse(
                series: series, totals: inAll, visitors_unavailable: unavailable, counts_unavailable: countsUnavailable))
        })
    }

    /// The sections viewed, the blocks interacted with and the interactions by block type and action over the
    /// interval, most first, each list at most `limit` long.
    @Sendable func pageSections(_ request: Request, context: Context) async throws -> Response {
        try await rankedLists(by: [[.sectionID], [.blockID], [.blockType, .action]], request, context) { lists, _ in
            PageSectionsResponse(
                sections: lists[0].map { PageSectionViews(section_id: $0.groupValues[0], views: $0.metrics[0].integer) },
                blocks: lists[1].map { PageBlockInteractions(block_id: $0.groupValues[0], interactions: $0.metrics[0].integer) },
                interactions: lists[2].map { PageInteraction(block_type: $0.groupValues[0], action: $0.groupValues[1], events: $0.metrics[0].integer) })
        }
    }

    /// The portfolio views over the interval by the host of their referrer and by the visitor's country, most first,
    /// each list at most `limit` long, with each source's unique visitors where the sketches can count them (whole
    /// days of the artist's zone).
    @Sendable func pageSources(_ request: Request, context: Context) async throws -> Response {
        let portfolioID: String? = request.uri.queryParameters.get(Dimension.portfolioID.rawValue)
        let kinds: [PageSourceKey.Kind] = [.referrer, .country]
        return try await rankedLists(
            by: [[.referrer], [.country]], ofType: .portfolioView, request, context,
            visitorKeys: { lists in zip(kinds, lists).flatMap { kind, rows in rows.map { PageSourceKey(kind, $0.groupValues[0], portfolioID: portfolioID).text } } }
        ) { lists, visitors in
            func counted(_ kind: PageSourceKey.Kind, _ value: String) -> Int64? {
                visitors.map { ListenerScope.count($0[PageSourceKey(kind, value, portfolioID: portfolioID).text] ?? 0) }
            }
            return PageSourcesResponse(
                referrers: lists[0].map {
                    PageReferrerViews(referrer: $0.groupValues[0], views: $0.metrics[0].integer, visitors: counted(.referrer, $0.groupValues[0]))
                },
                countries: lists[1].map {
                    PageCountryViews(country: $0.groupValues[0], views: $0.metrics[0].integer, visitors: counted(.country, $0.groupValues[0]))
                })
        }
    }

    /// Lists of page events (of `type` alone, when given) over the interval, one grouped by each of `groupings`, each
    /// `ranked` and at most the request's `limit` long (`portfolio_id` and `limit` are taken besides the common
    /// parameters), answered at once and written as `respond` shapes them, with the days whose counts are incomplete.
    /// With `visitorKeys`, the unique visitors of the page sketches it names for the lists (`PageSourceKey`) are
    /// counted over the interval and handed to `respond` too, or why they cannot be (`visitors_unavailable`).
    private func rankedLists<Answer: RankedListsAnswer>(
        by groupings: [[Dimension]], ofType type: EventTypeName? = nil, _ request: Request, _ context: Context,
        visitorKeys: (@Sendable ([[QueryRow]]) -> [String])? = nil,
        _ respond: @escaping @Sendable ([[QueryRow]], [String: Double]?) -> Answer
    ) async throws -> Response {
        let artist = try await artistRequest(.page, request, context, alsoTaking: [Dimension.portfolioID.rawValue, "limit"])
        let limit = try Self.listLimit(request)
        var base = Self.onePortfolio(artist.builder, request)
        let whole = try build(base)
        if let type { base.filters.append((Dimension.eventType.rawValue, [type.rawValue])) }
        let lists = try groupings.map { dimensions in
            var builder = base
            builder.groupBy = dimensions.map(\.rawValue)
            return try build(builder)
        }
        let regrouping = artist.regrouping
        let countsUnavailable = artist.countsUnavailable(lists[0])
        let (scope, visitorsUnavailable) = visitorKeys == nil ? (nil, nil) : artist.listenerScope(whole)
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: lists[0].interval, plan: try await queries.plan(context, for: lists[0]), oneStatement: scope == nil
        ) { reads in
            let rows = try await answers(lists, reads, regrouping).map { Self.ranked($0, limit) }
            var visitors: [String: Double]?
            if let scope, let visitorKeys {
                visitors = try await reads.keyedCounts(.visitors, artistID: scope.artistID, keys: visitorKeys(rows), days: scope.days)
            }
            var shaped = respond(rows, visitors)
            shaped.counts_unavailable = countsUnavailable
            shaped.visitors_unavailable = visitorsUnavailable
            return EncodedAnswer.written(shaped)
        })
    }

    /// Calls to action clicked per period and action type, with totals.
    @Sendable func pageCTAs(_ request: Request, context: Context) async throws -> Response {
        let (artist, query, totalsQuery) = try await series(by: .actionType, request, context)
        let periods = artist.periodTexts(query)
        return try await seriesAndTotals(request, context, query, totalsQuery, artist.regrouping) { rows, totals in
            var periods = periods
            // Every other type's events have no action type: their group ("") is not a call to action.
            return PageCTAsResponse(
                series: rows.filter { !$0.groupValues[0].isEmpty }.map {
                    PageCTAPoint(period_start: periods.text($0.periodStart), action_type: $0.groupValues[0], clicks: $0.metrics[0].integer)
                },
                totals: Self.ranked(totals, .max).map { PageCTATotal(action_type: $0.groupValues[0], clicks: $0.metrics[0].integer) },
                counts_unavailable: artist.countsUnavailable(query))
        }
    }

    /// Sessions of the page funnel per period (by day of each session's first view, unless the request says another
    /// granularity) and in all: with a portfolio view, of those with a section view, of those with a CTA click.
    @Sendable func pageFunnel(_ request: Request, context: Context) async throws -> Response {
        let (artist, query, totalsQuery) = try await series(by: nil, of: .funnel, request, context)
        let periods = artist.periodTexts(query)
        return try await seriesAndTotals(request, context, query, totalsQuery, artist.regrouping) { rows, totals in
            var periods = periods
            return PageFunnelResponse(
                series: rows.map { PageFunnelPoint(period_start: periods.text($0.periodStart), PageFunnelStages($0.metrics)) },
                totals: PageFunnelStages(totals.first?.metrics ?? Dataset.funnel.metrics.map(MetricValue.zero(for:))),
                counts_unavailable: artist.countsUnavailable(query))
        }
    }

    /// A series of `dataset` grouped by `dimension` (none: one row per period; by day unless the request says another
    /// granularity) and its totals over the interval.
    private func series(
        by dimension: Dimension?, of dataset: Dataset = .page, _ request: Request, _ context: Context
    ) async throws -> (ArtistRequest, Query, Query) {
        let artist = try await artistRequest(dataset, request, context, granularity: .day, alsoTaking: [Dimension.portfolioID.rawValue])
        var builder = Self.onePortfolio(artist.builder, request)
        builder.groupBy = dimension.map { [$0.rawValue] } ?? []
        var totals = builder
        totals.granularity = Granularity.all.rawValue
        return (artist, try build(builder), try build(totals))
    }

    /// `builder` filtered on the request's `portfolio_id`, when it names one.
    private static func onePortfolio(_ builder: QueryBuilder, _ request: Request) -> QueryBuilder {
        var builder = builder
        if let portfolio = request.uri.queryParameters.get(Dimension.portfolioID.rawValue) {
            builder.filters.append((Dimension.portfolioID.rawValue, [portfolio]))
        }
        return builder
    }

    /// The `limit` of a ranked list: 1-1000, 20 when absent.
    private static func listLimit(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return 20 }
        guard let limit = Int(text), (1...1000).contains(limit) else {
            throw APIError(QueryError(.invalidParameter, "limit must be an integer from 1 to 1000"))
        }
        return limit
    }

    /// The rows with a value (a group of "" holds the events of the types without this dimension), most events
    /// first, then by value, at most `limit`.
    private static func ranked(_ rows: [QueryRow], _ limit: Int) -> [QueryRow] {
        let kept = rows.filter { !$0.groupValues.allSatisfy(\.isEmpty) && $0.metrics[0].integer != 0 }
        return Array(kept.sorted { ($1.metrics[0], $0.groupValues.joined(separator: "\u{0}")) < ($0.metrics[0], $1.groupValues.joined(separator: "\u{0}")) }.prefix(limit))
    }
}
