import BackbeatCore
import Foundation
import Testing

/// Every dashboard endpoint and a general query, checked against answers computed straight from the events of
/// a `Workload` (ten days from 2026-10-01).
struct EndpointChecks {
    static let from = "2026-10-01"
    static let to = "2026-10-11"

    let events: [Event]

    init(_ workload: Workload) {
        events = workload.messages.compactMap(\.event)
    }

    /// The artists whose every endpoint is checked.
    static let artists = ["artist-0001", "artist-0005"]

    /// Runs every check against the service at `baseURL`.
    func checkEverything(_ baseURL: String) async throws {
        let api = baseURL + "/v1/artists/"
        for artist in Self.artists {
            let mine = events.filter { $0.artistID == artist }
            try await checkStreams(api + artist, mine)
            try await checkShares(api + artist, mine)
            try await checkTopTracks(api + artist, mine)
            try await checkRevenue(api + artist, mine)
            try await checkSocial(api + artist, mine)
            try await checkSummary(api + artist, mine)
            try await checkHourlyStreams(api + artist, mine)
        }
        try await checkGeneralQuery(baseURL, events)
    }

    func day(_ timestamp: Timestamp) -> String {
        RFC3339.format(Granularity.day.periodStart(of: timestamp))
    }

    func streams(_ events: [Event]) -> [StreamEvent] {
        events.compactMap { if case .stream(let s) = $0 { s } else { nil } }
    }

    func checkStreams(_ base: String, _ events: [Event]) async throws {
        for platform in [nil, "spotify"] {
            let plays = streams(events).filter { platform == nil || $0.platform == platform }
            var url = base + "/streams?from=\(Self.from)&to=\(Self.to)&granularity=day"
            if let platform { url += "&platform=\(platform)" }
            let reply = try await HTTP.get(url)
            #expect(reply.status == 200)
            let body = try #require(try reply.json() as? [String: Any])
            let series = try #require(body["series"] as? [[String: Any]])
            #expect(series.count == 10, "zero-filled over 10 days")
            for point in series {
                let start = try #require(point["period_start"] as? String)
                let dayPlays = plays.filter { day($0.occurredAt) == start }
                #expect(point["streams"] as? Int == dayPlays.filter(\.isStream).count, "streams on \(start)")
                #expect(point["skips"] as? Int == dayPlays.filter { !$0.isStream }.count, "skips on \(start)")
                #expect(point["listening_ms"] as? Int == Int(dayPlays.reduce(0) { $0 + ($1.durationMs ?? 0) }))
            }
            let totals = try #require(body["totals"] as? [String: Any])
            #expect(totals["streams"] as? Int == plays.filter(\.isStream).count)
            #expect(totals["skips"] as? Int == plays.filter { !$0.isStream }.count)
            if platform == nil {
                // Unique listeners: the service's answer is the sketch of exactly these plays' listeners.
                #expect(totals["listeners"] as? Int == listeners(plays))
                for point in series {
                    let start = point["period_start"] as! String
                    #expect(point["listeners"] as? Int == listeners(plays.filter { day($0.occurredAt) == start }), "listeners on \(start)")
                }
            } else {
                #expect(totals["listeners"] == nil, "no sketch answers a platform filter")
            }
        }
    }

    func checkHourlyStreams(_ base: String, _ events: [Event]) async throws {
        let reply = try #require(try await HTTP.get(base + "/streams?from=2026-10-03T00:00:00Z&to=2026-10-03T12:00:00Z&granularity=hour").json() as? [String: Any])
        let series = try #require(reply["series"] as? [[String: Any]])
        #expect(series.count == 12)
        for point in series {
            let start = RFC3339.parseTimestamp(point["period_start"] as! String)!
            let plays = streams(events).filter { $0.occurredAt >= start && $0.occurredAt < start + 3600 }
            #expect(point["streams"] as? Int == plays.filter(\.isStream).count)
            #expect(point["listening_ms"] as? Int == Int(plays.reduce(0) { $0 + ($1.durationMs ?? 0) }))
            #expect(point["listeners"] == nil, "no hourly sketches")
        }
    }

    /// The listener count a sketch of these plays gives, checked against the exact distinct count.
    func listeners(_ plays: [StreamEvent]) -> Int {
        var sketch = HyperLogLog()
        for play in plays { if let id = play.listenerID { sketch.add(id) } }
        let exact = Set(plays.compactMap(\.listenerID)).count
        let estimate = Int(sketch.cardinality.rounded())
        if exact <= HyperLogLog.explicitLimit { #expect(estimate == exact) }
        #expect(abs(Double(estimate - exact)) <= 0.02 * Double(exact) + 1)
        return estimate
    }

    func checkSummary(_ base: String, _ events: [Event]) async throws {
        let reply = try #require(try await HTTP.get(base + "/summary?as_of=2026-10-11").json() as? [String: Any])
        let plays = streams(events)
        #expect(reply["monthly_listeners"] as? Int == listeners(plays))
        #expect(reply["streams_28d"] as? Int == plays.filter(\.isStream).count)
        #expect(reply["streams_prev_28d"] as? Int == 0)
        #expect(reply["growth_percent"] == nil)
        var revenue: [String: Money] = [:]
        for case .revenue(let event) in events { revenue[event.currency, default: .zero] += event.amount }
        let totals = try #require(reply["revenue_this_month"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: totals.map { ($0["currency"] as! String, $0["amount"] as! String) }) == revenue.mapValues(\.decimalString))
        var net: Int64 = 0
        for case .social(let event) in events where event.action == "follow" || event.action == "unfollow" {
            net += event.action == "follow" ? event.count : -event.count
        }
        #expect(reply["net_followers_28d"] as? Int == Int(net))

        let later = try #require(try await HTTP.get(base + "/summary?as_of=2026-11-08").json() as? [String: Any])
        #expect(later["streams_28d"] as? Int == plays.filter { $0.isStream && $0.occurredAt >= RFC3339.parseInstant("2026-10-11")! }.count)
        #expect(later["streams_prev_28d"] as? Int == plays.filter(\.isStream).count)
        #expect(later["growth_percent"] as? Double == -100)
    }

    func expectedShares(_ plays: [StreamEvent], _ key: (StreamEvent) -> String) -> [(String, Int)] {
        var counts: [String: Int] = [:]
        for play in plays where play.isStream { counts[key(play), default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    func checkShares(_ base: String, _ events: [Event]) async throws {
        let plays = streams(events)
        let platforms = try #require(try await HTTP.get(base + "/platforms?from=\(Self.from)&to=\(Self.to)").json() as? [String: Any])
        let rows = try #require(platforms["platforms"] as? [[String: Any]])
        let expected = expectedShares(plays, \.platform)
        #expect(rows.map { $0["platform"] as? String ?? "" } == expected.map(\.0))
        #expect(rows.map { $0["streams"] as? Int ?? -1 } == expected.map(\.1))
        let shareSum = rows.reduce(0.0) { $0 + ($1["share"] as? Double ?? 0) }
        #expect(abs(shareSum - 1) < 0.001)

        let demographics = try #require(try await HTTP.get(base + "/demographics?from=\(Self.from)&to=\(Self.to)").json() as? [String: Any])
        for (field, key, path) in [("age_ranges", "age_range", { (s: StreamEvent) in s.ageRange.rawValue }),
                                   ("genders", "gender", { (s: StreamEvent) in s.gender.rawValue }),
                                   ("countries", "country", { (s: StreamEvent) in s.country })] {
            let rows = try #require(demographics[field] as? [[String: Any]])
            let expected = expectedShares(plays, path)
            #expect(rows.map { $0[key] as? String ?? "" } == expected.map(\.0), "\(field)")
            #expect(rows.map { $0["streams"] as? Int ?? -1 } == expected.map(\.1), "\(field)")
        }
    }

    func checkTopTracks(_ base: String, _ events: [Event]) async throws {
        let reply = try #require(try await HTTP.get(base + "/tracks/top?from=\(Self.from)&to=\(Self.to)&limit=5").json() as? [String: Any])
        let tracks = try #require(reply["tracks"] as? [[String: Any]])
        let expected = Array(expectedShares(streams(events), \.trackID).prefix(5))
        #expect(tracks.map { $0["track_id"] as? String ?? "" } == expected.map(\.0))
        #expect(tracks.map { $0["streams"] as? Int ?? -1 } == expected.map(\.1))
        #expect(tracks.map { $0["listeners"] as? Int ?? -1 } == expected.map { track in listeners(streams(events).filter { $0.trackID == track.0 }) })
    }

    func checkRevenue(_ base: String, _ events: [Event]) async throws {
        let revenue = events.compactMap { if case .revenue(let r) = $0 { r } else { nil } }
        let reply = try #require(try await HTTP.get(base + "/revenue?from=\(Self.from)&to=\(Self.to)&granularity=week").json() as? [String: Any])
        var expectedTotals: [String: Money] = [:]
        for event in revenue { expectedTotals[event.currency, default: .zero] += event.amount }
        let totals = try #require(reply["totals"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: totals.map { ($0["currency"] as! String, $0["amount"] as! String) })
                == expectedTotals.mapValues(\.decimalString))
        let series = try #require(reply["series"] as? [[String: Any]])
        for point in series {
            let start = point["period_start"] as! String
            let matching = revenue.filter {
                RFC3339.format(Granularity.week.periodStart(of: $0.occurredAt)) == start
                    && $0.source.rawValue == point["source"] as! String && $0.currency == point["currency"] as! String
            }
            #expect(point["amount"] as? String == matching.reduce(Money.zero) { $0 + $1.amount }.decimalString)
        }
        let groups = Set(revenue.map { "\($0.source.rawValue)|\($0.currency)" })
        #expect(series.count == groups.count * 2, "2 ISO weeks (from Mon 09-28 and Mon 10-05) touch [10-01, 10-11), zero-filled per source and currency")
    }

    func checkSocial(_ base: String, _ events: [Event]) async throws {
        let social = events.compactMap { if case .social(let s) = $0 { s } else { nil } }
        let reply = try #require(try await HTTP.get(base + "/social?from=\(Self.from)&to=\(Self.to)&granularity=all").json() as? [String: Any])
        var expected: [String: Int64] = [:]
        for event in social { expected["\(event.platform)|\(event.action)", default: 0] += event.count }
        let totals = try #require(reply["totals"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: totals.map { ("\($0["platform"]!)|\($0["action"]!)", Int64($0["count"] as! Int)) }) == expected)
        let series = try #require(reply["series"] as? [[String: Any]])
        #expect(series.count == totals.count)
        #expect(series.allSatisfy { $0["period_start"] as? String == "2026-10-01T00:00:00Z" })
    }

    func checkGeneralQuery(_ base: String, _ events: [Event]) async throws {
        let body = #"{"dataset":"streams","from":"2026-10-02","to":"2026-10-05","granularity":"all","group_by":["artist_id","country"],"filters":{"gender":["female","male"]},"order_by":{"metric":"skips","direction":"desc"},"limit":4}"#
        let reply = try await HTTP.post(base + "/v1/query", json: body)
        #expect(reply.status == 200, "\(reply.text)")
        let rows = try #require((try reply.json() as? [String: Any])?["rows"] as? [[String: Any]])
        let start = RFC3339.parseInstant("2026-10-02")!, end = RFC3339.parseInstant("2026-10-05")!
        var skips: [String: Int] = [:]
        var plays: [String: Int] = [:]
        for play in streams(events) where play.occurredAt >= start && play.occurredAt < end && [.female, .male].contains(play.gender) {
            let key = "\(play.artistID)|\(play.country)"
            plays[key, default: 0] += play.isStream ? 1 : 0
            skips[key, default: 0] += play.isStream ? 0 : 1
        }
        let expected = skips.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(4)
        #expect(rows.map { "\($0["artist_id"]!)|\($0["country"]!)" } == expected.map(\.key))
        #expect(rows.map { $0["skips"] as? Int ?? -1 } == expected.map(\.value))
        #expect(rows.map { $0["streams"] as? Int ?? -1 } == expected.map { plays[$0.key]! })
        #expect(rows.allSatisfy { $0["period_start"] == nil && $0.count == 5 })

        let revenueBody = #"{"dataset":"revenue","from":"2026-10-01","to":"2026-10-11","granularity":"day","group_by":["currency"],"filters":{"artist_id":["artist-0002"]}}"#
        let revenueRows = try #require((try await HTTP.post(base + "/v1/query", json: revenueBody).json() as? [String: Any])?["rows"] as? [[String: Any]])
        let currencies = Set(events.compactMap { if case .revenue(let r) = $0, r.artistID == "artist-0002" { r.currency } else { nil } })
        #expect(revenueRows.count == 10 * currencies.count)
    }
}
