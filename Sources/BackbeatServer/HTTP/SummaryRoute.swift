import BackbeatCore
import Foundation
import Hummingbird

/// `GET /v1/artists/{artist_id}/summary?as_of=DATE`: the numbers on the top cards of the artist dashboard.
struct SummaryRoute<Context: PlannedRequestContext>: Sendable {
    let queries: QueryService

    /// The rolling window the summary looks back over.
    static var windowDays: Int64 { 28 }

    struct SummaryResponse: ResponseEncodable {
        var artist_id: String
        var as_of: String
        /// Unique listeners over the 28 days before `as_of` (absent when some of those days have none counted in the
        /// artist's zone: `listeners_unavailable` says why).
        var monthly_listeners: Int64?
        var streams_28d: Int64
        var streams_prev_28d: Int64
        /// Absent when the previous window had no streams.
        var growth_percent: Double?
        /// Revenue of the calendar month containing the day before `as_of`, up to `as_of`.
        var revenue_this_month: [CurrencyTotal]
        var net_followers_28d: Int64
        var listeners_unavailable: String? = nil
        /// The days read (the 56 before `as_of`, from the month's first) whose counts are incomplete (`RecountGaps`).
        var counts_unavailable: String? = nil
    }

    /// Adds the endpoint to `artist`, the group of `/v1/artists/{artist_id}`.
    func add(to artist: RouterGroup<Context>) {
        artist.get("summary", use: summary)
    }

    @Sendable func summary(_ request: Request, context: Context) async throws -> Response {
        let artistID = try artistIDParameter(context)
        try request.requireKnownParameters(["as_of"])
        let asOfDay: Int64
        if let text = request.uri.queryParameters.get("as_of") {
            guard let date = RFC3339.parseDate(text) else {
                throw APIError(.badRequest, code: QueryError.Code.invalidParameter.rawValue, message: "as_of must be a date, YYYY-MM-DD")
            }
            asOfDay = date.daysSinceEpoch
        } else {
            asOfDay = queries.today(of: artistID)
        }
        let window = Self.windowDays
        let lastDay = CivilDate(daysSinceEpoch: asOfDay - 1)
        let monthStart = CivilDate(year: lastDay.year, month: lastDay.month, day: 1).daysSinceEpoch

        // The rows of three queries (the streams of both windows by day, the month's revenue, the follows) and the
        // unique listeners, read at once (from PostgreSQL, in one statement).
        let read = QueryInterval(from: Timestamp(seconds: min(asOfDay - 2 * window, monthStart) * 86_400), to: Timestamp(seconds: asOfDay * 86_400))
        // Days a change of the artist's zone could not count again (`RecountNotice`).
        let gaps = queries.zones.gaps(of: artistID), zone = queries.zones[artistID].name
        let listenersUnavailable = RecountNotice.listeners(gaps, days: asOfDay - window..<asOfDay, zone: zone)
        let countsUnavailable = RecountNotice.counts(gaps, days: read.days, zone: zone)
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: read, plan: try await queries.plan(context, for: artistID), oneStatement: true
        ) { reads in
            let queries = [
                Self.query(.streams, artistID, days: asOfDay - 2 * window..<asOfDay, granularity: .day),
                Self.query(.revenue, artistID, days: monthStart..<asOfDay, groupBy: [.currency]),
                Self.query(.social, artistID, days: asOfDay - window..<asOfDay, groupBy: [.action], actions: ["follow", "unfollow"]),
            ]
            // Without a count of the listeners when a change of zone left days it could not count again.
            let read = try await reads.answers(
                queries, regrouped: nil, listeners: listenersUnavailable == nil ? ListenerScope(artistID: artistID, days: asOfDay - window..<asOfDay) : nil,
                granularity: .all, regroupedBy: nil)
            let (rows, listeners) = (read.rows, read.listeners?.inAll)
            let daily = rows[0]
            let splitAt = Timestamp(seconds: (asOfDay - window) * 86_400)
            var summary = Self.summary(
                artistID, asOfDay: asOfDay, current: Self.streams(daily.filter { $0.periodStart.map { $0 >= splitAt } ?? false }),
                previous: Self.streams(daily.filter { $0.periodStart.map { $0 < splitAt } ?? false }),
                listeners: listeners, revenue: rows[1], follows: rows[2])
            summary.listeners_unavailable = listenersUnavailable
            summary.counts_unavailable = countsUnavailable
            return EncodedAnswer.written(summary)
        })
    }

    /// The streams of some days' rows.
    private static func streams(_ rows: [QueryRow]) -> Int64 {
        rows.reduce(0) { $0 + $1.metrics[0].integer }
    }

    /// The summary of the reads.
    private static func summary(
        _ artistID: String, asOfDay: Int64, current streams: Int64, previous previousStreams: Int64, listeners: Double?,
        revenue: [QueryRow], follows: [QueryRow]
    ) -> SummaryResponse {
        let followCount = { (action: String) in follows.first { $0.groupValues[0] == action }?.metrics[0].integer ?? 0 }

        return SummaryResponse(
            artist_id: artistID,
            as_of: RFC3339.formatDate(CivilDate(daysSinceEpoch: asOfDay)),
            monthly_listeners: listeners.map(ListenerScope.count),
            streams_28d: streams,
            streams_prev_28d: previousStreams,
            growth_percent: previousStreams == 0 ? nil : ((Double(streams - previousStreams) / Double(previousStreams)) * 10_000).rounded() / 100,
            revenue_this_month: revenue.map { CurrencyTotal(currency: $0.groupValues[0], amount: $0.metrics[0].money.decimalString) },
            net_followers_28d: followCount("follow") - followCount("unfollow"))
    }

    /// The query of `dataset`'s rows of `artistID` over `days` (never empty: each window ends on `as_of` and starts
    /// before it).
    private static func query(
        _ dataset: Dataset, _ artistID: String, days: Range<Int64>, granularity: Granularity = .all, groupBy: [BackbeatCore.Dimension] = [],
        actions: [String]? = nil
    ) -> Query {
        var filters: [BackbeatCore.Dimension: [String]] = [.artistID: [artistID]]
        if let actions { filters[.action] = actions }
        return Query(
            dataset: dataset,
            interval: QueryInterval(from: Timestamp(seconds: days.lowerBound * 86_400), to: Timestamp(seconds: days.upperBound * 86_400)),
            granularity: granularity, groupBy: groupBy, filters: filters)
    }
}
