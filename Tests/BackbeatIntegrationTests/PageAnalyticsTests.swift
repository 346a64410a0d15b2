import BackbeatCore
import BackbeatKafka
import BackbeatTestSupport
import Foundation
import Testing

/// Page events (issue 41) through Kafka and `backbeat serve`, with kills: counted exactly once in `page_hourly`, and
/// `POST /v1/query` on the `page` dataset answers what the events add up to, from memory and from PostgreSQL alone.
@Suite(.serialized) struct PageAnalyticsTests {
    @Test(.seeded) func pageEventsThroughKafkaWithKillsAreCountedOnceAndAnswered() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social", "page"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("page")
        // Published in a random order: a session's events arrive out of order and across flushes, so that its counts
        // move (a later-published earlier view takes them to its day; a first event published late cuts its window).
        var order = TestRandom()
        let workload = Workload(messages: Workload(events: 12_000, seed: 41, invalidFraction: 0.01, pageFraction: 0.5).messages.shuffled(using: &order))
        let pageEvents = workload.messages.compactMap { message -> PageEvent? in
            if case .page(let page) = message.event { page } else { nil }
        }
        #expect(pageEvents.count > 5_000, "half the workload is page events")
        let topics = ["--topics", "streams,revenue,social,page"]
        let service = try await TestEnvironment.withStore(url: database) { store in
            var random = TestRandom()
            let service = try await publishKillingServe(workload, kills: 5, to: broker.bootstrapServers, random: &random) {
                try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, flushInterval: "200ms", arguments: topics)
            }
            try await expectGroundTruth(workload, in: store, within: .seconds(120))
            return service
        }
        #expect(!workload.truth.page.isEmpty)
        try await service.waitUntilHealthy()
        let fromPostgres = try ServiceProcess(
            brokers: broker.bootstrapServers, postgresURL: database, group: "page-postgres-only", arguments: ["--topics", "idle", "--memory-days", "0"])
        try await fromPostgres.waitUntilHealthy()
        for base in [service.baseURL, fromPostgres.baseURL] {
            try await Self.expectAnswers(base, pageEvents)
        }
        #expect(service.terminate() == 0)
        #expect(fromPostgres.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    /// Queries of each page cube's shape (views by type and day, sections, CTA clicks, interactions by block type and
    /// action, referrers), each against the events summed here.
    static func expectAnswers(_ base: String, _ events: [PageEvent]) async throws {
        let artist = "artist-0001"
        let start = RFC3339.parseInstant("2026-10-01")!, end = RFC3339.parseInstant("2026-10-11")!
        let mine = events.filter { $0.artistID == artist && $0.occurredAt >= start && $0.occurredAt < end }
        func day(_ event: PageEvent) -> String { RFC3339.formatDate(CivilDate(daysSinceEpoch: event.occurredAt.daysSinceEpoch)) + "T00:00:00Z" }
        func type(_ event: PageEvent) -> String {
            switch event.kind {
            case .portfolioView: "portfolio_view"
            case .sectionView: "section_view"
            case .blockInteraction: "block_interaction"
            case .ctaClick: "cta_click"
            }
        }
        let cases: [(body: String, key: ([String: Any]) -> String, expected: [String: Int])] = [
            (#"{"dataset":"page","from":"2026-10-01","to":"2026-10-11","granularity":"day","group_by":["type"],"filters":{"artist_id":["\#(artist)"],"portfolio_id":["pf-main"]}}"#,
             { "\($0["period_start"]!)|\($0["type"]!)" },
             mine.filter { $0.portfolioID == "pf-main" }.reduce(into: [:]) { $0["\(day($1))|\(type($1))", default: 0] += 1 }),
            (#"{"dataset":"page","from":"2026-10-01","to":"2026-10-11","group_by":["section_id"],"filters":{"artist_id":["\#(artist)"],"portfolio_id":["pf-tour"]}}"#,
             { "\($0["section_id"]!)" },
             mine.filter { $0.portfolioID == "pf-tour" }.reduce(into: [:]) { counts, event in
                 if case .sectionView(let section) = event.kind { counts[section, default: 0] += 1 } else { counts["", default: 0] += 1 }
             }),
            (#"{"dataset":"page","from":"2026-10-01","to":"2026-10-11","group_by":["action_type"],"filters":{"artist_id":["\#(artist)"],"type":["cta_click"]}}"#,
             { "\($0["action_type"]!)" },
             mine.reduce(into: [:]) { counts, event in if case .ctaClick(let action) = event.kind { counts[action, default: 0] += 1 } }),
            (#"{"dataset":"page","from":"2026-10-01","to":"2026-10-11","group_by":["block_type","action"],"filters":{"artist_id":["\#(artist)"]}}"#,
             { "\($0["block_type"]!)|\($0["action"]!)" },
             mine.reduce(into: [:]) { counts, event in
                 if case .blockInteraction(_, let blockType, let action) = event.kind { counts["\(blockType)|\(action)", default: 0] += 1 } else { counts["|", default: 0] += 1 }
             }),
            (#"{"dataset":"page","from":"2026-10-01T00:00:00Z","to":"2026-10-03T12:00:00Z","granularity":"hour","group_by":["referrer","country"],"filters":{"artist_id":["\#(artist)"]}}"#,
             { "\($0["period_start"]!)|\($0["referrer"]!)|\($0["country"]!)" },
             mine.filter { $0.occurredAt < RFC3339.parseInstant("2026-10-03T12:00:00Z")! }.reduce(into: [:]) { counts, event in
                 let hour = RFC3339.format(Timestamp(seconds: event.occurredAt.seconds.floorDiv(3600) * 3600))
                 counts["\(hour)|\(event.referrer)|\(event.country)", default: 0] += 1
             }),
        ]
        // Unique visitors of the main page per day and in all, within the sketches' error of the exact counts.
        let pageReply = try await HTTP.get(base + "/v1/artists/\(artist)/page?from=2026-10-01&to=2026-10-11&granularity=day&portfolio_id=pf-main")
        #expect(pageReply.status == 200, "\(pageReply.text)")
        let answer = try #require(try pageReply.json() as? [String: Any])
        let main = mine.filter { $0.portfolioID == "pf-main" }
        var perDay: [String: Set<String>] = [:]
        for event in main { perDay[day(event), default: []].insert(event.visitorID) }
        func close(_ estimate: Int?, _ exact: Int) -> Bool { estimate.map { abs($0 - exact) <= max(1, exact / 50) } ?? false }
        let points = try #require(answer["series"] as? [[String: Any]])
        #expect(points.count == perDay.count && points.allSatisfy { close($0["visitors"] as? Int, perDay[$0["period_start"] as! String]?.count ?? -9) }, "\(points)")
        let totalVisitors = (answer["totals"] as? [String: Any])?["visitors"] as? Int
        #expect(close(totalVisitors, Set(main.map(\.visitorID)).count), "\(String(describing: totalVisitors)) visitors, \(Set(main.map(\.visitorID)).count) exact")
        // Read on Kolkata's days (+5:30), the artist's UTC days do not tile them: views are summed from quarter hours,
        // visitors are not answered, and the answer says why.
        let shifted = try await HTTP.get(base + "/v1/artists/\(artist)/page?from=2026-10-01&to=2026-10-11&granularity=day&portfolio_id=pf-main&tz=Asia/Kolkata")
        #expect(shifted.status == 200, "\(shifted.text)")
        let shiftedAnswer = try #require(try shifted.json() as? [String: Any])
        let shiftedPoints = try #require(shiftedAnswer["series"] as? [[String: Any]])
        #expect((shiftedAnswer["visitors_unavailable"] as? String)?.contains("visitors") == true, "\(shiftedAnswer)")
        #expect(shiftedPoints.allSatisfy { $0["visitors"] == nil } && (shiftedAnswer["totals"] as? [String: Any])?["visitors"] == nil)
        let kolkata = (RFC3339.parseInstant("2026-09-30T18:30:00Z")!, RFC3339.parseInstant("2026-10-10T18:30:00Z")!)
        let kolkataViews = events.filter {
            guard case .portfolioView = $0.kind else { return false }
            return $0.artistID == artist && $0.portfolioID == "pf-main" && $0.occurredAt >= kolkata.0 && $0.occurredAt < kolkata.1
        }.count
        #expect(shiftedPoints.reduce(0) { $0 + ($1["views"] as? Int ?? 0) } == kolkataViews && kolkataViews > 0, "\(shiftedPoints)")
        // The funnel of the main page per day and in all: exactly the sessions' (PageFunnelTruth).
        let funnelReply = try await HTTP.get(base + "/v1/artists/\(artist)/page/funnel?from=2026-10-01&to=2026-10-11&portfolio_id=pf-main")
        #expect(funnelReply.status == 200, "\(funnelReply.text)")
        let funnel = try #require(try funnelReply.json() as? [String: Any])
        let truth = PageFunnelTruth(events).days.filter { $0.key.hasPrefix("\(artist)|pf-main|") }
        let funnelPoints = try #require(funnel["series"] as? [[String: Any]])
        let stages = ["sessions", "sessions_with_section_view", "sessions_with_cta_click"]
        let answered = Dictionary(uniqueKeysWithValues: funnelPoints.map { point in
            ("\(artist)|pf-main|" + String((point["period_start"] as? String ?? "").prefix(10)), stages.map { (point[$0] as? Int).map(Int64.init) ?? -1 })
        }).filter { $0.value != [0, 0, 0] }
        let inRange = truth.filter { $0.key.suffix(10) >= "2026-10-01" && $0.key.suffix(10) < "2026-10-11" }
        #expect(answered == inRange && inRange.values.contains { $0[2] > 0 }, "\(base): \(answered) against \(inRange)")
        let funnelTotals = try #require(funnel["totals"] as? [String: Any])
        #expect(stages.enumerated().allSatisfy { index, stage in (funnelTotals[stage] as? Int).map(Int64.init) == inRange.values.reduce(0) { $0 + $1[index] } }, "\(funnelTotals)")
        // Views by referrer and by country, ranked, of the main page and of all pages: exactly the portfolio views
        // summed here, and each source's unique visitors within the sketches' error of the exact count.
        for (portfolio, query) in [(Optional("pf-main"), "&portfolio_id=pf-main"), (nil, "")] {
            let views = mine.filter {
                if case .portfolioView = $0.kind { portfolio == nil || $0.portfolioID == portfolio } else { false }
            }
            for limit in [1000, 2] {
                let sourcesReply = try await HTTP.get(base + "/v1/artists/\(artist)/page/sources?from=2026-10-01&to=2026-10-11\(query)&limit=\(limit)")
                #expect(sourcesReply.status == 200, "\(sourcesReply.text)")
                let sources = try #require(try sourcesReply.json() as? [String: Any])
                for (list, field, value) in [("referrers", "referrer", \PageEvent.referrer), ("countries", "country", \PageEvent.country)] {
                    let counts = views.reduce(into: [String: Int]()) { $0[$1[keyPath: value], default: 0] += 1 }
                    let visitors = views.reduce(into: [String: Set<String>]()) { $0[$1[keyPath: value], default: []].insert($1.visitorID) }
                    let expected = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(limit).map { "\($0.key) \($0.value)" }
                    let items = sources[list] as? [[String: Any]] ?? []
                    let read = items.map { "\($0[field] ?? "-") \($0["views"] ?? "-")" }
                    #expect(read == expected && counts.count > 2, "\(base): \(list) \(query) limit \(limit): \(read) against \(expected)")
                    let misses = items.filter { !close($0["visitors"] as? Int, visitors[$0[field] as? String ?? ""]?.count ?? -9) }
                    #expect(misses.isEmpty && visitors.values.contains { $0.count > 1 }, "\(base): \(list) \(query): visitors \(misses)")
                }
            }
        }
        let shiftedSources = try await HTTP.get(base + "/v1/artists/\(artist)/page/sources?from=2026-10-01&to=2026-10-11&tz=Asia/Kolkata")
        let shiftedLists = try #require(try shiftedSources.json() as? [String: Any])
        #expect((shiftedLists["visitors_unavailable"] as? String)?.contains("visitors") == true, "\(shiftedLists)")
        #expect(((shiftedLists["referrers"] as? [[String: Any]]) ?? []).allSatisfy { $0["visitors"] == nil && $0["views"] != nil })
        for (body, key, expected) in cases {
            let reply = try await HTTP.post(base + "/v1/query", json: body)
            #expect(reply.status == 200, "\(body): \(reply.text)")
            let rows = try #require((try reply.json() as? [String: Any])?["rows"] as? [[String: Any]])
            // A series by period holds every group in every period, zeros included: the events summed here have none.
            let read = Dictionary(rows.map { (key($0), $0["events"] as? Int ?? -1) }, uniquingKeysWith: { _, _ in -2 }).filter { $0.value != 0 }
            #expect(read == expected && !expected.isEmpty, "\(base): \(body): \(read.count) rows, \(expected.count) expected")
        }
    }
}
