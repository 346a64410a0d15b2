import BackbeatCore
import Hummingbird

/// The dashboard endpoints under `/v1/artists/{artist_id}`, each answered through one or more core `Query`s.
struct ArtistRoutes<Context: PlannedRequestContext>: Sendable {
    let queries: QueryService

    /// Adds the endpoints to `artist`, the group of `/v1/artists/{artist_id}`.
    func add(to artist: RouterGroup<Context>) {
        artist.get("streams", use: streams)
        artist.get("platforms", use: platforms)
        artist.get("demographics", use: demographics)
        artist.get("tracks/top", use: topTracks)
        artist.get("revenue", use: revenue)
        artist.get("social", use: social)
    }

    // MARK: - Endpoints

    @Sendable func streams(_ request: Request, context: Context) async throws -> Response {
        let filters = [Dimension.trackID, .platform, .country, .ageRange, .gender]
        var builder = try baseQuery(.streams, request, context, granularity: true, alsoTaking: filters.map(\.rawValue))
        let parameters = request.uri.queryParameters
        for dimension in filters {
            if let value = parameters.get(dimension.rawValue) {
                builder.filters.append((dimension.rawValue, [value]))
            }
        }
        let query = try build(builder, defaultGranularity: .day)
        // The series and, when sketches can answer, the listeners per period (their union counts the total): read at
        // once, from one snapshot.
        let scope = ListenerScope(query)
        let periods = periodTexts(query)
        return try EncodedAnswer.response(to: request, try await queries.answer(key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query)) { reads in
            async let seriesRows = answer(query, reads)
            async let listenerCounts = listeners(scope, granularity: query.granularity, reads)
            return EncodedAnswer.written(Self.streams(query, periods, try await seriesRows, try await listenerCounts))
        })
    }

    /// The streams series of `query` with its totals, and listeners when sketches can answer.
    private static func streams(
        _ query: Query, _ periods: PeriodTexts, _ rows: [QueryRow], _ listeners: (perPeriod: [Timestamp?: Double], inAll: Double)?
    ) -> StreamsResponse {
        let periodListeners = listeners?.perPeriod ?? [:]
        let totalListeners = listeners.map { ListenerScope.count($0.inAll) }
        var totals = StreamsTotals(streams: 0, skips: 0, listening_ms: 0, listeners: totalListeners)
        var periods = periods
        let series = rows.map { row in
            totals.streams += row.metrics[0].integer
            totals.skips += row.metrics[1].integer
            totals.listening_ms += row.metrics[2].integer
            return StreamsPoint(
                period_start: periods.text(row.periodStart),
                streams: row.metrics[0].integer, skips: row.metrics[1].integer, listening_ms: row.metrics[2].integer,
                listeners: totalListeners == nil ? nil : ListenerScope.count(periodListeners[row.periodStart] ?? 0))
        }
        return StreamsResponse(series: series, totals: totals)
    }

    @Sendable func platforms(_ request: Request, context: Context) async throws -> Response {
        let query = try sharesQuery(by: .platform, request, context)
        // One read: no database snapshot needed beyond its statement's own.
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query), oneStatement: true
        ) { reads in
            let shares = try await streamShares(query, reads)
            return EncodedAnswer.written(PlatformsResponse(platforms: shares.map { PlatformShare(platform: $0.value, streams: $0.streams, share: $0.share) }))
        })
    }

    @Sendable func demographics(_ request: Request, context: Context) async throws -> Response {
        let ages = try sharesQuery(by: .ageRange, request, context)
        let genders = try sharesQuery(by: .gender, request, context)
        let countries = try sharesQuery(by: .country, request, context)
        // Ages and genders are both sums of the demographics cube: read once, grouped by both, and totalled each way.
        let agesAndGenders = try sharesQuery(by: [.ageRange, .gender], request, context)
        return try EncodedAnswer.response(to: request, try await queries.answer(key: request.answerKey, over: ages.interval, plan: try await queries.plan(context, for: ages)) { reads in
            async let bothRows = answer(agesAndGenders, reads)
            async let countryShares = streamShares(countries, reads)
            let both = try await bothRows
            return EncodedAnswer.written(DemographicsResponse(
                age_ranges: Self.shares(try Self.totals(of: both, in: agesAndGenders, as: ages), by: .ageRange),
                genders: Self.shares(try Self.totals(of: both, in: agesAndGenders, as: genders), by: .gender),
                countries: try await countryShares))
        })
    }

    @Sendable func topTracks(_ request: Request, context: Context) async throws -> Response {
        var builder = try baseQuery(.streams, request, context, granularity: false, alsoTaking: ["limit"])
        builder.groupBy = [Dimension.trackID.rawValue]
        builder.orderByMetric = Metric.streams.rawValue
        builder.orderByDirection = SortDirection.desc.rawValue
        builder.limit = request.uri.queryParameters.get("limit") ?? "10"
        let query = try build(builder, defaultGranularity: .all)
        return try EncodedAnswer.response(to: request, try await queries.answer(key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query)) { reads in
            let rows = try await answer(query, reads)
            var listeners: [String: Double]?
            if let scope = ListenerScope(Query(dataset: .streams, interval: query.interval, granularity: .all, filters: [.artistID: query.filters[.artistID] ?? []])) {
                listeners = try await reads.trackListeners(artistID: scope.artistID, trackIDs: rows.map { $0.groupValues[0] }, days: scope.days)
            }
            return EncodedAnswer.written(TopTracksResponse(tracks: rows.map { row in
                TrackStreams(
                    track_id: row.groupValues[0], streams: row.metrics[0].integer,
                    listeners: listeners.map { ListenerScope.count($0[row.groupValues[0]] ?? 0) })
            }))
        })
    }

    @Sendable func revenue(_ request: Request, context: Context) async throws -> Response {
        var builder = try baseQuery(.revenue, request, context, granularity: true)
        builder.groupBy = [Dimension.source.rawValue, Dimension.currency.rawValue]
        let query = try build(builder, defaultGranularity: .day)
        var totalsBuilder = builder
        totalsBuilder.groupBy = [Dimension.currency.rawValue]
        totalsBuilder.granularity = Granularity.all.rawValue
        let periods = periodTexts(query)
        return try await seriesAndTotals(request, context, query, try build(totalsBuilder, defaultGranularity: .all)) { rows, totals in
            var periods = periods
            return RevenueResponse(
                series: rows.map {
                    RevenuePoint(period_start: periods.text($0.periodStart), source: $0.groupValues[0],
                                 currency: $0.groupValues[1], amount: $0.metrics[0].money.decimalString)
                },
                totals: totals.map { CurrencyTotal(currency: $0.groupValues[0], amount: $0.metrics[0].money.decimalString) })
        }
    }

    @Sendable func social(_ request: Request, context: Context) async throws -> Response {
        var builder = try baseQuery(.social, request, context, granularity: true)
        builder.groupBy = [Dimension.platform.rawValue, Dimension.action.rawValue]
        let query = try build(builder, defaultGranularity: .day)
        var totalsBuilder = builder
        totalsBuilder.granularity = Granularity.all.rawValue
        let periods = periodTexts(query)
        return try await seriesAndTotals(request, context, query, try build(totalsBuilder, defaultGranularity: .all)) { rows, totals in
            var periods = periods
            return SocialResponse(
                series: rows.map {
                    SocialPoint(period_start: periods.text($0.periodStart), platform: $0.groupValues[0],
                                action: $0.groupValues[1], count: $0.metrics[0].integer)
                },
                totals: totals.map { SocialTotal(platform: $0.groupValues[0], action: $0.groupValues[1], count: $0.metrics[0].integer) })
        }
    }

    // MARK: - Helpers

    /// Each period's start as RFC 3339 text, formatted once however many groups of a series share it (a social
    /// series of 28 days has some 40 groups a day). An artist's periods are local to its zone: written with the
    /// offset in force then (`2026-11-01T00:00:00-07:00`), or `Z` in UTC.
    struct PeriodTexts {
        /// The start of an answer without periods (granularity `all`).
        let whole: Timestamp
        /// The artist's zone (nil: UTC).
        let zone: ZoneRules?
        private var texts: [Timestamp: String] = [:]

        init(_ query: Query, zone: ZoneRules?) {
            whole = query.interval.from
            self.zone = zone
        }

        mutating func text(_ start: Timestamp?) -> String {
            let start = start ?? whole
            if let text = texts[start] { return text }
            let text = zone.map { RFC3339.format(local: start, offset: $0.offset(atLocalSecond: start.seconds)) } ?? RFC3339.format(start)
            texts[start] = text
            return text
        }
    }

    /// The period texts of `query`, for its artist's zone.
    private func periodTexts(_ query: Query) -> PeriodTexts {
        PeriodTexts(query, zone: queries.zones.zoneOutsideUTC(of: query.filters[.artistID]?.first ?? ""))
    }

    /// The answer `shape` makes of a series and its totals: the series read (one read: no database snapshot needed
    /// beyond its statement's own), the totals summed from it.
    private func seriesAndTotals(
        _ request: Request, _ context: Context, _ series: Query, _ totals: Query, _ shape: @escaping @Sendable ([QueryRow], [QueryRow]) -> some JSONWritable
    ) async throws -> Response {
        try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: series.interval, plan: try await queries.plan(context, for: series), oneStatement: true
        ) { reads in
            let rows = try await answer(series, reads)
            return EncodedAnswer.written(shape(rows, try Self.totals(of: rows, in: series, as: totals)))
        })
    }

    /// The rows `totals` (the series' interval in all, grouped by some of its dimensions) answers, made from the
    /// rows of `series`: its periods cover the interval, so each group's total is the sum of its periods' rows.
    static func totals(of rows: [QueryRow], in series: Query, as totals: Query) throws -> [QueryRow] {
        let positions = totals.groupBy.compactMap { series.groupBy.firstIndex(of: $0) }
        precondition(positions.count == totals.groupBy.count, "a total groups by dimensions of its series")
        // Grouped as the series is (social: by platform and action): each row's own values are its group, and a
        // series shaped zero-filled repeats its groups in one order every period, so that a row's place among the
        // sums is its place in its period.
        let sameGroups = positions == Array(series.groupBy.indices)
        let perPeriod = sameGroups ? Self.groupsRepeatedEachPeriod(rows) : nil
        var places: [[String]: Int] = [:]
        var sums: [QueryRow] = []
        for (index, row) in rows.enumerated() {
            let place: Int?
            if let perPeriod {
                place = index < perPeriod ? nil : index % perPeriod
            } else {
                let group = sameGroups ? row.groupValues : positions.map { row.groupValues[$0] }
                place = places[group]
                if place == nil { places[group] = sums.count }
            }
            if let place {
                for metric in row.metrics.indices { sums[place].metrics[metric] = sums[place].metrics[metric].adding(row.metrics[metric]) }
            } else {
                sums.append(QueryRow(periodStart: nil, groupValues: sameGroups ? row.groupValues : positions.map { row.groupValues[$0] }, metrics: row.metrics))
            }
        }
        return try ResultShaper.shape(sums, for: totals)
    }

    /// How many groups each period of `rows` has, when every period has the same distinct groups in the same order
    /// (a series zero-filled by `ResultShaper`); nil otherwise.
    private static func groupsRepeatedEachPeriod(_ rows: [QueryRow]) -> Int? {
        guard let first = rows.first else { return nil }
        let count = rows.prefix { $0.periodStart == first.periodStart }.count
        guard rows.count % count == 0, Set(rows[..<count].map(\.groupValues)).count == count,
              rows.indices.allSatisfy({ rows[$0].groupValues == rows[$0 % count].groupValues }) else { return nil }
        return count
    }

    /// Streams split by one dimension, most streamed first: the query.
    private func sharesQuery(by dimension: Dimension, _ request: Request, _ context: Context) throws -> Query {
        try sharesQuery(by: [dimension], request, context)
    }

    /// Streams split by `dimensions`, most streamed first: the query.
    private func sharesQuery(by dimensions: [Dimension], _ request: Request, _ context: Context) throws -> Query {
        var builder = try baseQuery(.streams, request, context, granularity: false)
        builder.groupBy = dimensions.map(\.rawValue)
        builder.orderByMetric = Metric.streams.rawValue
        builder.orderByDirection = SortDirection.desc.rawValue
        return try build(builder, defaultGranularity: .all)
    }

    /// The answer to a `sharesQuery`, with each value's share of the total.
    private func streamShares(_ query: Query, _ reads: QueryService.Reads) async throws -> [DimensionShare] {
        Self.shares(try await answer(query, reads), by: query.groupBy[0])
    }

    /// Each row's streams (rows of one dimension, `dimension`) with its share of their total.
    private static func shares(_ rows: [QueryRow], by dimension: Dimension) -> [DimensionShare] {
        let total = rows.reduce(Int64(0)) { $0 + $1.metrics[0].integer }
        return rows.map { row in
            let streams = row.metrics[0].integer
            let share = total == 0 ? 0 : (Double(streams) / Double(total) * 10_000).rounded() / 10_000
            return DimensionShare(name: dimension.rawValue, value: row.groupValues[0], streams: streams, share: share)
        }
    }

    /// The artist, interval and (optionally) granularity every endpoint takes; a query string naming anything else
    /// than these and `alsoTaking` is refused.
    private func baseQuery(
        _ dataset: Dataset, _ request: Request, _ context: Context, granularity: Bool, alsoTaking more: [String] = []
    ) throws -> QueryBuilder {
        let artistID = try artistIDParameter(context)
        let parameters = try request.requireKnownParameters(["from", "to"] + (granularity ? ["granularity"] : []) + more)
        var builder = QueryBuilder()
        builder.dataset = dataset.rawValue
        let zone = queries.zones.zoneOutsideUTC(of: artistID)
        builder.from = parameters.get("from").map { Self.local($0, in: zone) }
        builder.to = parameters.get("to").map { Self.local($0, in: zone) }
        if granularity { builder.granularity = parameters.get("granularity") }
        builder.filters = [(Dimension.artistID.rawValue, [artistID])]
        return builder
    }

    /// A `from` or `to` as the artist's local clock reads it: a date stays as it is (the artist's local day); an
    /// instant with its offset becomes the local time it was in `zone` (left for the query to refuse when it is
    /// not one).
    static func local(_ text: String, in zone: ZoneRules?) -> String {
        guard let zone, text.utf8.count > 10, let instant = RFC3339.parseTimestamp(text) else { return text }
        return RFC3339.format(instant + Int64(zone.offset(atSecond: instant.seconds)))
    }

    /// Listeners per period and in all for `scope`, or nil when there is no scope.
    private func listeners(
        _ scope: ListenerScope?, granularity: Granularity, _ reads: QueryService.Reads
    ) async throws -> (perPeriod: [Timestamp?: Double], inAll: Double)? {
        guard let scope else { return nil }
        return try await reads.listenersPerPeriodAndInAll(scope, granularity: granularity)
    }

    private func build(_ builder: QueryBuilder, defaultGranularity: Granularity) throws -> Query {
        do {
            return try builder.build(defaultGranularity: defaultGranularity)
        } catch {
            throw APIError(error)
        }
    }

    private func answer(_ query: Query, _ reads: QueryService.Reads) async throws -> [QueryRow] {
        do {
            return try await reads.answer(query)
        } catch let error as QueryError {
            throw APIError(error)
        }
    }
}
