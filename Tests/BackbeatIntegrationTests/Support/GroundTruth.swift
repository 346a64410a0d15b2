import BackbeatCore
import BackbeatTestSupport
import BackbeatKafka
import BackbeatStore
import PostgresNIO
import Testing

/// What the rollup tables must hold after a set of events, computed here from the events themselves,
/// independently of the service's own aggregation code.
struct GroundTruth: Equatable {
    /// artist|hour|track|platform|country|age|gender -> [streams, skips, listening_ms]
    var streams: [String: [Int64]] = [:]
    /// artist|hour|source|currency|platform|track -> [amount in micros as text, events]
    var revenue: [String: [String]] = [:]
    /// artist|hour|platform|action -> count
    var social: [String: Int64] = [:]
    /// artist|hour|portfolio|type|section|block|block type|action|action type|referrer|country -> events
    var page: [String: Int64] = [:]
    /// artist|day -> listener sketch bytes, and artist|track|day -> listener sketch bytes
    var artistListeners: [String: [UInt8]] = [:]
    var trackListeners: [String: [UInt8]] = [:]
    /// artist|day -> visitor sketch bytes, and artist|portfolio|day -> visitor sketch bytes (page events)
    var artistVisitors: [String: [UInt8]] = [:]
    var pageVisitors: [String: [UInt8]] = [:]
    /// artist|source key (`PageSourceKey.text`)|day -> visitor sketch bytes (the sources of portfolio views)
    var sourceVisitors: [String: [UInt8]] = [:]
    /// artist|portfolio|day of first view -> [sessions, with a section view, with a CTA click] (`PageFunnelTruth`)
    var funnel: [String: [Int64]] = [:]

    private var revenueMicros: [String: Int128] = [:]
    private var revenueEvents: [String: Int64] = [:]

    static func == (lhs: GroundTruth, rhs: GroundTruth) -> Bool {
        lhs.streams == rhs.streams && lhs.revenue == rhs.revenue && lhs.social == rhs.social && lhs.page == rhs.page
            && lhs.artistListeners == rhs.artistListeners && lhs.trackListeners == rhs.trackListeners
            && lhs.artistVisitors == rhs.artistVisitors && lhs.pageVisitors == rhs.pageVisitors && lhs.sourceVisitors == rhs.sourceVisitors && lhs.funnel == rhs.funnel
    }

    init() {}

    init(_ events: [Event]) {
        var artistSketches: [String: HyperLogLog] = [:]
        var trackSketches: [String: HyperLogLog] = [:]
        var artistVisitorSketches: [String: HyperLogLog] = [:]
        var pageVisitorSketches: [String: HyperLogLog] = [:]
        var sourceVisitorSketches: [String: HyperLogLog] = [:]
        for event in events {
            add(event)
            if case .page(let page) = event {
                let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: page.occurredAt.seconds.floorDiv(86_400)))
                artistVisitorSketches[page.artistID + "|" + day, default: HyperLogLog()].add(page.visitorID)
                pageVisitorSketches[page.artistID + "|" + page.portfolioID + "|" + day, default: HyperLogLog()].add(page.visitorID)
                for key in page.sourceKeys {
                    sourceVisitorSketches[page.artistID + "|" + key.text + "|" + day, default: HyperLogLog()].add(page.visitorID)
                }
            }
            if case .stream(let play) = event, let listener = play.listenerID {
                let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: play.occurredAt.seconds.floorDiv(86_400)))
                artistSketches[play.artistID + "|" + day, default: HyperLogLog()].add(listener)
                trackSketches[play.artistID + "|" + play.trackID + "|" + day, default: HyperLogLog()].add(listener)
            }
        }
        artistListeners = artistSketches.mapValues { $0.serialized() }
        trackListeners = trackSketches.mapValues { $0.serialized() }
        artistVisitors = artistVisitorSketches.mapValues { $0.serialized() }
        pageVisitors = pageVisitorSketches.mapValues { $0.serialized() }
        sourceVisitors = sourceVisitorSketches.mapValues { $0.serialized() }
        funnel = PageFunnelTruth(events.compactMap { if case .page(let page) = $0 { page } else { nil } }).days
    }

    mutating func add(_ event: Event) {
        let hour = String(event.occurredAt.seconds.floorDiv(3600) * 3600)
        switch event {
        case .stream(let e):
            let key = [e.artistID, hour, e.trackID, e.platform, e.country, e.ageRange.rawValue, e.gender.rawValue].joined(separator: "|")
            let isStream = e.durationMs.map { $0 >= 30_000 } ?? true
            var value = streams[key] ?? [0, 0, 0]
            value[isStream ? 0 : 1] += 1
            value[2] += e.durationMs ?? 0
            streams[key] = value
        case .revenue(let e):
            let key = [e.artistID, hour, e.source.rawValue, e.currency, e.platform ?? "", e.trackID ?? ""].joined(separator: "|")
            revenueMicros[key, default: 0] += e.amount.micros
            revenueEvents[key, default: 0] += 1
            revenue[key] = [Money(micros: revenueMicros[key]!).decimalString, String(revenueEvents[key]!)]
        case .social(let e):
            social[[e.artistID, hour, e.platform, e.action].joined(separator: "|"), default: 0] += e.count
        case .page(let e):
            var own = ["", "", "", "", "", ""]  // type, section, block, block type, action, action type
            switch e.kind {
            case .portfolioView: own[0] = "portfolio_view"
            case .sectionView(let section): own[0...1] = ["section_view", section]
            case .blockInteraction(let block, let blockType, let action): own[0...4] = ["block_interaction", "", block, blockType, action]
            case .ctaClick(let actionType): own = ["cta_click", "", "", "", "", actionType]
            }
            page[([e.artistID, hour, e.portfolioID] + own + [e.referrer, e.country]).joined(separator: "|"), default: 0] += 1
        }
    }

    /// Only the rows of the UTC days (since 1970) that `keep` accepts.
    func filtered(days keep: (Int64) -> Bool) -> GroundTruth {
        func hourDay(_ key: String) -> Int64 { Int64(key.split(separator: "|")[1])!.floorDiv(86_400) }
        func dateDay(_ key: String) -> Int64 { RFC3339.parseDate(String(key.split(separator: "|").last!))!.daysSinceEpoch }
        var result = GroundTruth()
        result.streams = streams.filter { keep(hourDay($0.key)) }
        result.revenue = revenue.filter { keep(hourDay($0.key)) }
        result.social = social.filter { keep(hourDay($0.key)) }
        result.page = page.filter { keep(hourDay($0.key)) }
        result.artistListeners = artistListeners.filter { keep(dateDay($0.key)) }
        result.trackListeners = trackListeners.filter { keep(dateDay($0.key)) }
        result.artistVisitors = artistVisitors.filter { keep(dateDay($0.key)) }
        result.pageVisitors = pageVisitors.filter { keep(dateDay($0.key)) }
        result.sourceVisitors = sourceVisitors.filter { keep(dateDay($0.key)) }
        result.funnel = funnel.filter { keep(dateDay($0.key)) }
        return result
    }

    /// Reads the rollup views into the same shape, by hour (a key's quarter hours summed; every aggregate is final at
    /// its flush).
    static func read(from store: Store) async throws -> GroundTruth {
        let client = store.client
        var truth = GroundTruth()
        let streamRows = try await client.query("""
            SELECT artist_id, extract(epoch FROM hour)::bigint::text, track_id, platform, country, age_range, gender,
                   sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
            FROM stream_hourly GROUP BY 1, 2, 3, 4, 5, 6, 7
            """)
        for try await row in streamRows.decode((String, String, String, String, String, String, String, Int64, Int64, Int64).self) {
            truth.streams[[row.0, row.1, row.2, row.3, row.4, row.5, row.6].joined(separator: "|")] = [row.7, row.8, row.9]
        }
        let revenueRows = try await client.query("""
            SELECT artist_id, extract(epoch FROM hour)::bigint::text, source, currency, platform, track_id, sum(amount)::text, sum(events)::bigint
            FROM revenue_hourly GROUP BY 1, 2, 3, 4, 5, 6
            """)
        for try await row in revenueRows.decode((String, String, String, String, String, String, String, Int64).self) {
            truth.revenue[[row.0, row.1, row.2, row.3, row.4, row.5].joined(separator: "|")] = [row.6, String(row.7)]
        }
        let socialRows = try await client.query(
            "SELECT artist_id, extract(epoch FROM hour)::bigint::text, platform, action, sum(count)::bigint FROM social_hourly GROUP BY 1, 2, 3, 4")
        for try await row in socialRows.decode((String, String, String, String, Int64).self) {
            truth.social[[row.0, row.1, row.2, row.3].joined(separator: "|")] = row.4
        }
        let pageRows = try await client.query("""
            SELECT concat_ws('|', artist_id, extract(epoch FROM hour)::bigint::text, portfolio_id, type, section_id, block_id, block_type,
                             action, action_type, referrer, country), sum(events)::bigint
            FROM page_hourly GROUP BY 1
            """)
        for try await (key, events) in pageRows.decode((String, Int64).self) { truth.page[key] = events }
        for try await (artist, day, hex) in try await client.query("SELECT artist_id, day::text, listeners::text FROM artist_listeners_daily")
            .decode((String, String, String).self) {
            truth.artistListeners[artist + "|" + day] = Store.bytes(fromHexText: hex)
        }
        for try await (artist, track, day, hex) in try await client.query("SELECT artist_id, track_id, day::text, listeners::text FROM track_listeners_daily")
            .decode((String, String, String, String).self) {
            truth.trackListeners[artist + "|" + track + "|" + day] = Store.bytes(fromHexText: hex)
        }
        for try await (artist, day, hex) in try await client.query("SELECT artist_id, day::text, visitors::text FROM artist_visitors_daily")
            .decode((String, String, String).self) {
            truth.artistVisitors[artist + "|" + day] = Store.bytes(fromHexText: hex)
        }
        for try await (artist, page, day, hex) in try await client.query("SELECT artist_id, portfolio_id, day::text, visitors::text FROM page_visitors_daily")
            .decode((String, String, String, String).self) {
            truth.pageVisitors[artist + "|" + page + "|" + day] = Store.bytes(fromHexText: hex)
        }
        for try await (artist, page, source, value, day, hex) in try await client.query(
            "SELECT artist_id, portfolio_id, source, value, day::text, visitors::text FROM page_source_visitors_daily"
        ).decode((String, String?, String, String, String, String).self) {
            let key = PageSourceKey(PageSourceKey.Kind(rawValue: source)!, value, portfolioID: page)
            truth.sourceVisitors[artist + "|" + key.text + "|" + day] = Store.bytes(fromHexText: hex)
        }
        // A day's funnel as its rows sum it (a row whose changes summed to nothing is not a count).
        for try await (artist, portfolio, day, sessions, sectioned, clicked) in try await client.query("""
            SELECT artist_id, portfolio_id, day::text, sum(sessions)::bigint, sum(sessions_with_section_view)::bigint,
                   sum(sessions_with_cta_click)::bigint
            FROM page_funnel_by_artist_day GROUP BY 1, 2, 3
            HAVING sum(sessions) <> 0 OR sum(sessions_with_section_view) <> 0 OR sum(sessions_with_cta_click) <> 0
            """).decode((String, String, String, Int64, Int64, Int64).self) {
            truth.funnel[artist + "|" + portfolio + "|" + day] = [sessions, sectioned, clicked]
        }
        return truth
    }

    /// The stored state of every session of the page funnel (`PageFunnelTruth.sessions`' shape).
    static func sessions(in client: PostgresClient) async throws -> [String: [Int64?]] {
        var sessions: [String: [Int64?]] = [:]
        for try await (artist, portfolio, session, start, view, section, click) in try await client.query("""
            SELECT artist_id, portfolio_id, session_id, extract(epoch FROM started_at)::bigint, extract(epoch FROM first_view)::bigint,
                   extract(epoch FROM first_section)::bigint, extract(epoch FROM first_click)::bigint
            FROM page_funnel_sessions
            """).decode((String, String, String, Int64, Int64?, Int64?, Int64?).self) {
            sessions[[artist, portfolio, session].joined(separator: "|")] = [start, view, section, click]
        }
        return sessions
    }

    /// A short account of how two truths differ, for failure messages.
    func difference(from other: GroundTruth) -> String {
        func count<V: Equatable>(_ a: [String: V], _ b: [String: V]) -> Int {
            Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.count
        }
        return "streams rows differing: \(count(streams, other.streams)) of \(streams.count), revenue: \(count(revenue, other.revenue)) of \(revenue.count), social: \(count(social, other.social)) of \(social.count), page: \(count(page, other.page)) of \(page.count), artist listener days: \(count(artistListeners, other.artistListeners)) of \(artistListeners.count), track listener days: \(count(trackListeners, other.trackListeners)) of \(trackListeners.count), artist visitor days: \(count(artistVisitors, other.artistVisitors)) of \(artistVisitors.count), page visitor days: \(count(pageVisitors, other.pageVisitors)) of \(pageVisitors.count), source visitor days: \(count(sourceVisitors, other.sourceVisitors)) of \(sourceVisitors.count), funnel days: \(count(funnel, other.funnel)) of \(funnel.count)"
    }
}

/// A generated workload: the messages to publish and what they must add up to.
struct Workload {
    var messages: [EventGenerator.Message]
    var truth: GroundTruth
    var invalidCount: Int

    init(
        events: Int, seed: UInt64, artists: Int = 8, days: Int = 10, start: CivilDate = CivilDate(year: 2026, month: 10, day: 1),
        invalidFraction: Double = 0, pageFraction: Double = 0
    ) {
        var generator = EventGenerator(.init(
            seed: seed, artists: artists, days: days, start: start, invalidFraction: invalidFraction, pageFraction: pageFraction))
        self.init(messages: (0..<events).map { _ in generator.next() })
    }

    /// A workload of given messages; those without an event are the invalid ones.
    init(messages: [EventGenerator.Message]) {
        self.messages = messages
        truth = GroundTruth(messages.compactMap(\.event))
        invalidCount = messages.filter { $0.event == nil }.count
    }

    /// Publishes `messages[range]` to their family's default topic, keyed by artist.
    func publish(_ range: Range<Int>, to brokers: String) throws {
        let producer = try KafkaProducer(brokers: brokers, extra: KafkaConfiguration(["sticky.partitioning.linger.ms": "0"]))
        for message in messages[range] {
            try producer.send(topic: Self.topic(message.topic), key: Array(message.key.utf8), value: message.value)
        }
        let deliveries = try producer.flush()
        guard deliveries.failed == 0 else { throw TestEnvironment.Missing(description: "\(deliveries.failed) deliveries failed") }
    }

    static func topic(_ type: EventType) -> String {
        switch type {
        case .stream: "streams"
        case .revenue: "revenue"
        case .social: "social"
        case .page: "page"
        }
    }
}

/// The sum of stored next offsets: once it equals the number of messages published to a fresh broker,
/// every message has been flushed.
func storedOffsetTotal(_ client: PostgresClient) async throws -> Int64 {
    let rows = try await client.query("SELECT coalesce(sum(next_offset), 0)::bigint FROM kafka_offsets")
    for try await total in rows.decode(Int64.self) { return total }
    return 0
}

func rejectedCount(_ client: PostgresClient) async throws -> (total: Int64, distinctPositions: Int64) {
    let rows = try await client.query("SELECT count(*), count(DISTINCT (topic, partition, \"offset\")) FROM rejected_events")
    for try await row in rows.decode((Int64, Int64).self) { return row }
    return (0, 0)
}

/// Waits until every message of `workload` is flushed, then expects the rollups to equal its ground truth and
/// each invalid message to be recorded exactly once.
func expectGroundTruth(_ workload: Workload, in store: Store, within timeout: Duration) async throws {
    try await waitUntil(timeout: timeout, "all \(workload.messages.count) messages to be flushed") {
        try await storedOffsetTotal(store.client) == Int64(workload.messages.count)
    }
    let stored = try await GroundTruth.read(from: store)
    #expect(stored == workload.truth, "\(stored.difference(from: workload.truth))")
    let rejected = try await rejectedCount(store.client)
    #expect(rejected.total == Int64(workload.invalidCount))
    #expect(rejected.distinctPositions == rejected.total)
    try await expectCubesMatchFullTables(store.client)
    // The page funnel exact per session: each stored state is its events' (none for a workload without page events).
    let sessions = try await GroundTruth.sessions(in: store.client)
    let expected = PageFunnelTruth(workload.messages.compactMap { if case .page(let page) = $0.event { page } else { nil } }).sessions
    #expect(sessions == expected, "\(sessions.count) sessions stored, \(expected.count) expected; \(Set(sessions.keys).symmetricDifference(expected.keys).count) keys and \(sessions.filter { expected[$0.key] != nil && expected[$0.key]! != $0.value }.count) states differ")
}

/// Every derived cube holds exactly its full hourly table summed to the cube's grain and dimensions, and has rows when
/// that table has (a workload without page events leaves the page tables empty).
func expectCubesMatchFullTables(_ client: PostgresClient) async throws {
    for cube in Cube.derived {
        let full = Cube.all.first { $0.isFull && $0.dataset == cube.dataset }!
        let dimensions = cube.dimensions.map(\.rawValue)
        let metrics = cube.dataset.metrics.map(\.rawValue)
        let time = cube.grain == .hour ? "hour" : "(hour AT TIME ZONE 'UTC')::date"
        let keys = (["artist_id", time] + dimensions).joined(separator: ", ")
        let grouping = (1...(2 + dimensions.count)).map(String.init).joined(separator: ", ")
        let stored = "SELECT artist_id, \(cube.grain == .hour ? "hour" : "day"), \((dimensions + metrics.map { "sum(\($0))" }).joined(separator: ", ")) FROM \(cube.table) GROUP BY \(grouping)"
        let derived = "SELECT \(keys), \(metrics.map { "sum(\($0))" }.joined(separator: ", ")) FROM \(full.table) GROUP BY \(grouping)"
        let sql = "SELECT (SELECT count(*) FROM (\(stored) EXCEPT \(derived)) a) + (SELECT count(*) FROM (\(derived) EXCEPT \(stored)) b), (SELECT count(*) FROM \(cube.table)), (SELECT count(*) FROM \(full.table))"
        for try await (differing, rows, fullRows) in try await client.query(PostgresQuery(unsafeSQL: sql)).decode((Int64, Int64, Int64).self) {
            #expect(differing == 0, "\(cube.table) differs from \(full.table) in \(differing) rows")
            #expect((rows > 0) == (fullRows > 0), "\(cube.table) has \(rows) rows, \(full.table) \(fullRows)")
        }
    }
}
