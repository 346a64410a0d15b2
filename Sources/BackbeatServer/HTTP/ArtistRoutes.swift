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
        artist.get("page", use: page)
        artist.get("page/sections", use: pageSections)
        artist.get("page/sources", use: pageSources)
        artist.get("page/ctas", use: pageCTAs)
        artist.get("page/funnel", use: pageFunnel)
    }

    // MARK: - Endpoints

    @Sendable func streams(_ request: Request, context: Context) async throws -> Response {
        let filters = [Dimension.trackID, .platform, .country, .ageRange, .gender]
        let artist = try await artistRequest(.streams, request, context, granularity: .day, alsoTaking: filters.map(\.rawValue))
        var builder = artist.builder
        let parameters = request.uri.queryParameters
        for dimension in filters {
            if let value = parameters.get(dimension.rawValue) {
                builder.filters.append((dimension.rawValue, [value]))
            }
        }
        let query = try build(builder)
        let regrouping = artist.regrouping
        // The series and, when sketches can answer, the listeners per period (their union counts the total): read at
        // once (from PostgreSQL, in one statement).
        let (scope, unavailable) = artist.listenerScope(query)
        let countsUnavailable = artist.countsUnavailable(query)
        let periods = artist.periodTexts(query)
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query), oneStatement: true
        ) { reads in
            let read = try await answerAndListeners(query, scope, regrouping, reads)
            var answer = Self.streams(query, periods, read.rows, read.listeners)
            answer.listeners_unavailable = unavailable
            answer.counts_unavailable = countsUnavailable
            return EncodedAnswer.written(answer)
        })
    }

    /// The listener scope of `query`, or when another zone's periods are not whole stored days, why listeners are not
    /// counted (sketches are kept per day of the artist's zone).
    fileprivate static func listenerScope(_ query: Query, _ regrouping: ZoneRegrouping?, zone: ZoneRules) -> (ListenerScope?, String?) {
        guard let regrouping else { return (ListenerScope(query), nil) }
        var whole = query
        if let days = regrouping.periodOfStoredDay?.keys, let first = days.min(), let last = days.max() {
            // The stored days the periods are made of.
            whole.interval = QueryInterval(from: Timestamp(seconds: first * 86_400), to: Timestamp(seconds: (last + 1) * 86_400))
            return (ListenerScope(whole), nil)
        }
        // Not whole stored days: said where the query would count listeners over whole days (hours never do).
        whole.interval = QueryInterval(from: Timestamp(seconds: 0), to: Timestamp(seconds: 86_400))
        return (nil, ListenerScope(whole) == nil ? nil : listenersUnavailable(ListenerScope.Kind(query.dataset), zone, regrouping))
    }

    /// Why unique listeners (visitors) are missing from an answer in `regrouping`'s zone.
    private static func listenersUnavailable(_ kind: ListenerScope.Kind, _ zone: ZoneRules, _ regrouping: ZoneRegrouping) -> String {
        "unique \(kind.noun) are kept per day of the artist's zone (\(zone.name)), and these periods of \(regrouping.readingZone.name) are not made of whole days of it"
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
        let artist = try await artistRequest(.streams, request, context)
        let query = try sharesQuery(by: .platform, artist)
        let regrouping = artist.regrouping
        // One read: no database snapshot needed beyond its statement's own.
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query), oneStatement: true
        ) { reads in
            let shares = try await streamShares(query, reads, regrouping)
            return EncodedAnswer.written(PlatformsResponse(
                platforms: shares.map { PlatformShare(platform: $0.value, streams: $0.streams, share: $0.share) },
                counts_unavailable: artist.countsUnavailable(query)))
        })
    }

    @Sendable func demographics(_ request: Request, context: Context) async throws -> Response {
        let artist = try await artistRequest(.streams, request, context)
        let ages = try sharesQuery(by: .ageRange, artist)
        let genders = try sharesQuery(by: .gender, artist)
        let countries = try sharesQuery(by: .country, artist)
        // Ages and genders are both sums of the demographics cube: read once, grouped by both, and totalled each way.
        let agesAndGenders = try sharesQuery(by: [.ageRange, .gender], artist)
        let regrouping = artist.regrouping
        return try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: ages.interval, plan: try await queries.plan(context, for: ages), oneStatement: true
        ) { reads in
            let rows = try await answers([agesAndGenders, countries], reads, regrouping)
            return EncodedAnswer.written(DemographicsResponse(
                age_ranges: Self.shares(try Self.totals(of: rows[0], in: agesAndGenders, as: ages), by: .ageRange),
                genders: Self.shares(try Self.totals(of: rows[0], in: agesAndGenders, as: genders), by: .gender),
                countries: Self.shares(rows[1], by: .country), counts_unavailable: artist.countsUnavailable(ages)))
        })
    }

    @Sendable func topTracks(_ request: Request, context: Context) async throws -> Response {
        let artist = try await artistRequest(.streams, request, context, alsoTaking: ["limit"])
        var builder = artist.builder
        builder.groupBy = [Dimension.trackID.rawValue]
        builder.orderByMetric = Metric.streams.rawValue
        builder.orderByDirection = SortDirection.desc.rawValue
        builder.limit = request.uri.queryParameters.get("limit") ?? "10"
        let query = try build(builder)
        let regrouping = artist.regrouping
        let (scope, unavailable) = artist.listenerScope(
            Query(dataset: .streams, interval: query.interval, granularity: .all, filters: [.artistID: query.filters[.artistID] ?? []]))
        let countsUnavailable = artist.countsUnavailable(query)
        return try EncodedAnswer.response(to: request, try await queries.answer(key: request.answerKey, over: query.interval, plan: try await queries.plan(context, for: query)) { reads in
            let rows = try await answer(query, reads, regrouping)
            var listeners: [String: Double]?
            if let scope {
                listeners = try await reads.keyedCounts(.listeners, artistID: scope.artistID, keys: rows.map { $0.groupValues[0] }, days: scope.days)
            }
            return EncodedAnswer.written(TopTracksResponse(
                tracks: rows.map { row in
                    TrackStreams(
                        track_id: row.groupValues[0], streams: row.metrics[0].integer,
                        listeners: listeners.map { ListenerScope.count($0[row.groupValues[0]] ?? 0) })
                },
                listeners_unavailable: unavailable, counts_unavailable: countsUnavailable))
        })
    }

    @Sendable func revenue(_ request: Request, context: Context) async throws -> Response {
        let artist = try await artistRequest(.revenue, request, context, granularity: .day)
        var builder = artist.builder
        builder.groupBy = [Dimension.source.rawValue, Dimension.currency.rawValue]
        let query = try build(builder)
        var totalsBuilder = builder
        totalsBuilder.groupBy = [Dimension.currency.rawValue]
        totalsBuilder.granularity = Granularity.all.rawValue
        let regrouping = artist.regrouping
        let periods = artist.periodTexts(query)
        return try await seriesAndTotals(request, context, query, try build(totalsBuilder), regrouping) { rows, totals in
            var periods = periods
            return RevenueResponse(
                series: rows.map {
                    RevenuePoint(period_start: periods.text($0.periodStart), source: $0.groupValues[0],
                                 currency: $0.groupValues[1], amount: $0.metrics[0].money.decimalString)
                },
                totals: totals.map { CurrencyTotal(currency: $0.groupValues[0], amount: $0.metrics[0].money.decimalString) },
                counts_unavailable: artist.countsUnavailable(query))
        }
    }

    @Sendable func social(_ request: Request, context: Context) async throws -> Response {
        let artist = try await artistRequest(.social, request, context, granularity: .day)
        var builder = artist.builder
        builder.groupBy = [Dimension.platform.rawValue, Dimension.action.rawValue]
        let query = try build(builder)
        var totalsBuilder = builder
        totalsBuilder.granularity = Granularity.all.rawValue
        let regrouping = artist.regrouping
        let periods = artist.periodTexts(query)
        return try await seriesAndTotals(request, context, query, try build(totalsBuilder), regrouping) { rows, totals in
            var periods = periods
            return SocialResponse(
                series: rows.map {
                    SocialPoint(period_start: periods.text($0.periodStart), platform: $0.groupValues[0],
                                action: $0.groupValues[1], count: $0.metrics[0].integer)
                },
                totals: totals.map { SocialTotal(platform: $0.groupValues[0], action: $0.groupValues[1], count: $0.metrics[0].integer) },
                counts_unavailable: artist.countsUnavailable(query))
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

        init(whole: Timestamp, zone: ZoneRules?) {
            self.whole = whole
            self.zone = zone
        }

        mutating func text(_ start: Timestamp?) -> String {
            let start = start ?? whole
            if let text = texts[start] { return text }
            let text = RFC3339.format(periodStart: start, in: zone)
            texts[start] = text
            return text
        }
    }

    /// The answer `shape` makes of a series and its totals: the series read (one read: no database snapshot needed
    /// beyond its statement's own), the totals summed from it.
    func seriesAndTotals(
        _ request: Request, _ context: Context, _ series: Query, _ totals: Query, _ regrouping: ZoneRegrouping?,
        _ shape: @escaping @Sendable ([QueryRow], [QueryRow]) -> some JSONWritable
    ) async throws -> Response {
        try EncodedAnswer.response(to: request, try await queries.answer(
            key: request.answerKey, over: series.interval, plan: try await queries.plan(context, for: series), oneStatement: true
        ) { reads in
            let rows = try await answer(series, reads, regrouping)
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
    private func sharesQuery(by dimension: Dimension, _ artist: ArtistRequest) throws -> Query {
        try sharesQuery(by: [dimension], artist)
    }

    /// Streams split by `dimensions`, most streamed first: the query.
    private func sharesQuery(by dimensions: [Dimension], _ artist: ArtistRequest) throws -> Query {
        var builder = artist.builder
        builder.groupBy = dimensions.map(\.rawValue)
        builder.orderByMetric = Metric.streams.rawValue
        builder.orderByDirection = SortDirection.desc.rawValue
        return try build(builder)
    }

    /// The answer to a `sharesQuery`, with each value's share of the total.
    private func streamShares(_ query: Query, _ reads: QueryService.Reads, _ regrouping: ZoneRegrouping?) async throws -> [DimensionShare] {
        Self.shares(try await answer(query, reads, regrouping), by: query.groupBy[0])
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

    /// What the endpoints of one request read: the artist and the interval on its stored clock, the granularity (when
    /// the endpoint takes one: `granularity`, its default), and, when `tz` names a zone other than the artist's, how the
    /// stored hours regroup into its periods.
    struct ArtistRequest {
        var builder: QueryBuilder
        /// The zone the artist's hours and days are stored in.
        let storedZone: ZoneRules
        /// How the stored hours regroup into the periods of the zone `tz` names, when it is not `storedZone`.
        let regrouping: ZoneRegrouping?
        /// What a change of the artist's zone could not count again (nil: nothing).
        let gaps: RecountGaps?

        /// Why some days `query` reads have no counts (`RecountNotice`), or nil.
        func countsUnavailable(_ query: Query) -> String? {
            RecountNotice.counts(gaps, days: query.interval.days, zone: storedZone.name)
        }

        /// The listener scope of `query`, or why listeners are not counted: another zone's periods are not whole stored
        /// days, or some of its days have no listeners counted in the artist's zone (`RecountNotice`).
        func listenerScope(_ query: Query) -> (ListenerScope?, String?) {
            let (scope, unavailable) = ArtistRoutes.listenerScope(query, regrouping, zone: storedZone)
            if let scope, let notice = RecountNotice.listeners(gaps, days: scope.days, zone: storedZone.name, kind: scope.kind) { return (nil, notice) }
            return (scope, unavailable)
        }

        /// The period texts of `query`'s answer: on the clock of the zone `tz` names, else of the artist's.
        func periodTexts(_ query: Query) -> PeriodTexts {
            PeriodTexts(whole: regrouping?.reading.from ?? query.interval.from, zone: (regrouping?.readingZone ?? storedZone).outsideUTC)
        }
    }

    /// The `ArtistRequest` of `request`; a query string naming anything other than `from`, `to`, `tz`, `granularity`
    /// (when the endpoint takes one) and `alsoTaking` is refused.
    func artistRequest(
        _ dataset: Dataset, _ request: Request, _ context: Context, granularity: Granularity? = nil, alsoTaking more: [String] = []
    ) async throws -> ArtistRequest {
        let artistID = try artistIDParameter(context)
        let parameters = try request.requireKnownParameters(["from", "to", "tz"] + (granularity != nil ? ["granularity"] : []) + more)
        var builder = QueryBuilder()
        builder.dataset = dataset.rawValue
        builder.granularity = granularity.map { parameters.get("granularity") ?? $0.rawValue } ?? Granularity.all.rawValue
        builder.filters = [(Dimension.artistID.rawValue, [artistID])]
        let storedZone = queries.zones[artistID]
        var regrouping: ZoneRegrouping?
        if let name = parameters.get("tz") {
            let zone = try ReadingZone(name, from: parameters.get("from"), to: parameters.get("to"), in: queries.zones.database)
            if zone.zone.name != storedZone.name {
                // By the endpoint's granularity (one the query refuses stands for none: the stored hours are the same).
                let regrouped = try zone.regrouping(
                    of: storedZone, by: builder.granularity.flatMap(Granularity.init(parameter:)) ?? .all,
                    quarterHoursFrom: try await queries.quarterHours.firstDay())
                // The whole hours around the stored slots (quarter hours need not be whole hours): the query read
                // takes the slots themselves (`QueryService.Reads.answer(_:regrouped:)`).
                let hours = regrouped.stored.wholeHours
                builder.from = RFC3339.format(hours.from)
                builder.to = RFC3339.format(hours.to)
                regrouping = regrouped
            }
        }
        if regrouping == nil {
            builder.from = parameters.get("from").map { Self.local($0, in: storedZone.outsideUTC) }
            builder.to = parameters.get("to").map { Self.local($0, in: storedZone.outsideUTC) }
        }
        return ArtistRequest(builder: builder, storedZone: storedZone, regrouping: regrouping, gaps: queries.zones.gaps(of: artistID))
    }

    /// A `from` or `to` as the artist's local clock reads it: a date stays as it is (the artist's local day); an
    /// instant with its offset becomes the local time it was in `zone` (left for the query to refuse when it is
    /// not one).
    static func local(_ text: String, in zone: ZoneRules?) -> String {
        guard let zone, text.utf8.count > 10, let instant = RFC3339.parseTimestamp(text) else { return text }
        return RFC3339.format(instant + Int64(zone.offset(atSecond: instant.seconds)))
    }

    /// The answer to `query` and, with `scope`, the listeners (visitors) per period and in all, in another zone's
    /// periods with `regrouping` (`QueryService.Reads.answers(_:regrouped:listeners:granularity:regroupedBy:)`:
    /// without memory, one statement).
    func answerAndListeners(
        _ query: Query, _ scope: ListenerScope?, _ regrouping: ZoneRegrouping?, _ reads: QueryService.Reads
    ) async throws -> (rows: [QueryRow], listeners: (perPeriod: [Timestamp?: Double], inAll: Double)?) {
        do {
            let read = try await reads.answers(
                [query], regrouped: regrouping, listeners: scope, granularity: query.granularity, regroupedBy: regrouping?.periodOfStoredDay)
            return (read.rows[0], read.listeners)
        } catch let error as QueryError {
            throw APIError(error)
        }
    }

    func build(_ builder: QueryBuilder) throws -> Query {
        do {
            return try builder.build()
        } catch {
            throw APIError(error)
        }
    }

    /// The answers to `queries`, in their order, in another zone's periods with `regrouping` (`QueryService.Reads.answers`).
    func answers(_ queries: [Query], _ reads: QueryService.Reads, _ regrouping: ZoneRegrouping? = nil) async throws -> [[QueryRow]] {
        do {
            return try await reads.answers(queries, regrouped: regrouping)
        } catch let error as QueryError {
            throw APIError(error)
        }
    }

    /// The answer to `query`, in another zone's periods with `regrouping`.
    func answer(_ query: Query, _ reads: QueryService.Reads, _ regrouping: ZoneRegrouping? = nil) async throws -> [QueryRow] {
        do {
            if let regrouping { return try await reads.answer(query, regrouped: regrouping) }
            return try await reads.answer(query)
        } catch let error as QueryError {
            throw APIError(error)
        }
    }
}
