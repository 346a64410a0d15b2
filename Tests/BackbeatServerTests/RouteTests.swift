import BackbeatCore
import BackbeatServer
import BackbeatStore
import BackbeatTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Testing

/// Every route of the API in process: the router behind Hummingbird's test client (no socket, no subprocess),
/// reading a real PostgreSQL (started by scripts/test) that holds generated events. Each route's success, 400,
/// 401, 403 and 404 paths.
@Suite(.serialized) struct RouteTests {
    static let adminToken = "route-tests-admin-token-0123456789"
    static let artist = "artist-0001"
    static let range = "from=2026-10-01&to=2026-10-11"
    static let logger = Logger(label: "backbeat.route-tests")

    /// The artist routes, each with a query string it takes.
    static let artistRoutes: [(path: String, query: String)] = [
        ("streams", range + "&granularity=day"), ("platforms", range), ("demographics", range), ("tracks/top", range + "&limit=5"),
        ("revenue", range + "&granularity=week"), ("social", range + "&granularity=all"), ("summary", "as_of=2026-10-11"),
        ("page", range + "&granularity=day&portfolio_id=pf-main"), ("page/sections", range + "&limit=3"), ("page/sources", range + "&limit=3"),
        ("page/ctas", range + "&granularity=week"),
    ]

    @Test func everyRouteAnswersItsCallerAndRefusesEveryoneElse() async throws {
        let events = Self.events()
        try await Self.withPopulatedStore(events) { store, artistToken in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: Self.adminToken, artistRequestsPerSecond: 0)
            try await DocumentedResponses.test(Application(router: router)) { client in
                func get(_ uri: String, _ token: String?) async throws -> (HTTPResponse.Status, String) {
                    var headers: HTTPFields = [:]
                    if let token { headers[.authorization] = "Bearer \(token)" }
                    return try await client.execute(uri: uri, method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
                }
                /// JSON with sorted keys: member order may differ between two encodings of one answer.
                func sorted(_ body: String) -> String? {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)),
                          let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
                    return String(decoding: data, as: UTF8.self)
                }
                func code(_ body: String) -> String? {
                    let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                    return (object?["error"] as? [String: Any])?["code"] as? String
                }

                for (path, query) in Self.artistRoutes {
                    let uri = "/v1/artists/\(Self.artist)/\(path)?\(query)"
                    // Success: the admin and the artist's own token get the same answer.
                    let (status, body) = try await get(uri, Self.adminToken)
                    #expect(status == .ok, "\(uri): \(body.prefix(200))")
                    let own = try await get(uri, artistToken)
                    #expect(own.0 == .ok && sorted(own.1) == sorted(body), "\(uri) with the artist's token")
                    // 400: a bad value, and a parameter the route does not take.
                    let badValue = path == "summary" ? "as_of=yesterday" : "from=yesterday&to=2026-10-11"
                    let bad = try await get("/v1/artists/\(Self.artist)/\(path)?\(badValue)", Self.adminToken)
                    #expect(bad.0 == .badRequest && code(bad.1) == "invalid_parameter", "\(path) \(badValue): \(bad.1)")
                    let unknown = try await get(uri + "&granulariy=week", Self.adminToken)
                    #expect(unknown.0 == .badRequest && code(unknown.1) == "unknown_parameter", "\(path): \(unknown.1)")
                    // 401: no token, or a wrong one (the admin token with a character more or fewer among them), though
                    // the answer is kept by now.
                    for token in [nil, "wrong", "bbt_" + String(repeating: "0", count: 64), Self.adminToken + "0", String(Self.adminToken.dropLast())] {
                        let refused = try await get(uri, token)
                        #expect(refused.0 == .unauthorized && code(refused.1) == "unauthorized", "\(path) with \(token ?? "no token")")
                    }
                    // 403: another artist's numbers for an artist token.
                    let other = try await get("/v1/artists/artist-0002/\(path)?\(query)", artistToken)
                    #expect(other.0 == .forbidden && code(other.1) == "forbidden" && !other.1.contains("streams\":"), "\(path): \(other.1)")
                    // 404: a path below it that does not exist; 405: the route with another method.
                    let missing = try await get("/v1/artists/\(Self.artist)/\(path)/more", Self.adminToken)
                    #expect(missing.0 == .notFound && code(missing.1) == "not_found", "\(path)/more: \(missing.1)")
                    let posted = try await client.execute(uri: uri, method: .post, headers: [.authorization: "Bearer \(Self.adminToken)"]) { $0.status }
                    #expect(posted == .methodNotAllowed, "POST \(path)")
                }

                // The numbers are the events': streams per day of the artist, as the generator made them.
                let (_, streams) = try await get("/v1/artists/\(Self.artist)/streams?\(Self.range)&granularity=day", Self.adminToken)
                let series = try #require((try JSONSerialization.jsonObject(with: Data(streams.utf8)) as? [String: Any])?["series"] as? [[String: Any]])
                let answered = Dictionary(uniqueKeysWithValues: series.map { ($0["period_start"] as? String ?? "", $0["streams"] as? Int ?? -1) })
                #expect(answered == Self.streamsPerDay(events, artist: Self.artist), "streams per day")
                // And the page's: views per day of the artist's main page, clicks per action type.
                let (_, page) = try await get("/v1/artists/\(Self.artist)/page?\(Self.range)&granularity=day&portfolio_id=pf-main", Self.adminToken)
                let points = try #require((try JSONSerialization.jsonObject(with: Data(page.utf8)) as? [String: Any])?["series"] as? [[String: Any]])
                var views: [String: Int] = [:]
                for case .page(let event) in events where event.artistID == Self.artist && event.portfolioID == "pf-main" {
                    if case .portfolioView = event.kind { views[RFC3339.formatDate(CivilDate(daysSinceEpoch: event.occurredAt.daysSinceEpoch)) + "T00:00:00Z", default: 0] += 1 }
                }
                #expect(Dictionary(uniqueKeysWithValues: points.map { ($0["period_start"] as? String ?? "", $0["views"] as? Int ?? -1) }).filter { $0.value > 0 } == views && !views.isEmpty)
                let (_, ctas) = try await get("/v1/artists/\(Self.artist)/page/ctas?\(Self.range)&granularity=all", Self.adminToken)
                let clicks = try #require((try JSONSerialization.jsonObject(with: Data(ctas.utf8)) as? [String: Any])?["totals"] as? [[String: Any]])
                var expectedClicks: [String: Int] = [:]
                for case .page(let event) in events where event.artistID == Self.artist {
                    if case .ctaClick(let action) = event.kind { expectedClicks[action, default: 0] += 1 }
                }
                #expect(Dictionary(uniqueKeysWithValues: clicks.map { ($0["action_type"] as? String ?? "", $0["clicks"] as? Int ?? -1) }) == expectedClicks)
                #expect(clicks.map { $0["clicks"] as? Int ?? 0 } == clicks.map { $0["clicks"] as? Int ?? 0 }.sorted(by: >), "most clicks first")

                // The artist list: everyone for the admin, oneself for an artist, 400 and 401 as above.
                #expect(try await get("/v1/artists?limit=10", Self.adminToken).1.contains("artist-0002"))
                let mine = try await get("/v1/artists", artistToken)
                #expect(mine.0 == .ok && mine.1.contains(Self.artist) && !mine.1.contains("artist-0002"))
                #expect(code(try await get("/v1/artists?limit=0", Self.adminToken).1) == "invalid_parameter")
                #expect(code(try await get("/v1/artists?limt=5", Self.adminToken).1) == "unknown_parameter")
                #expect(try await get("/v1/artists", nil).0 == .unauthorized)

                // POST /v1/query: success, 400 (body and query model), 401, 403 (an artist token without its filter).
                func post(_ body: String, _ token: String?) async throws -> (HTTPResponse.Status, String) {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let token { headers[.authorization] = "Bearer \(token)" }
                    return try await client.execute(uri: "/v1/query", method: .post, headers: headers, body: ByteBuffer(string: body)) {
                        ($0.status, String(buffer: $0.body))
                    }
                }
                let query = #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","group_by":["platform"],"filters":{"artist_id":["artist-0001"]}}"#
                let answer = try await post(query, Self.adminToken)
                #expect(answer.0 == .ok && answer.1.contains("\"platform\""), "\(answer.1.prefix(200))")
                let ownAnswer = try await post(query, artistToken)
                #expect(ownAnswer.0 == .ok && sorted(ownAnswer.1) == sorted(answer.1))
                #expect(code(try await post("{", Self.adminToken).1) == "invalid_body")
                #expect(code(try await post(#"{"dataset":"nope","from":"2026-10-01","to":"2026-10-11"}"#, Self.adminToken).1) == "unknown_dataset")
                #expect(code(try await post(#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","limits":3}"#, Self.adminToken).1) == "unknown_parameter")
                #expect(try await post(query, nil).0 == .unauthorized)
                let unfiltered = try await post(#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11"}"#, artistToken)
                #expect(unfiltered.0 == .forbidden && code(unfiltered.1) == "forbidden")
                #expect(try await client.execute(uri: "/v1/query", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { $0.status } == .methodNotAllowed)

                // GET /v1/memory: the admin's only. Open routes need no token; unknown ones are 404 for everyone.
                #expect(try await get("/v1/memory", Self.adminToken).0 == .ok)
                #expect(code(try await get("/v1/memory?verbose=1", Self.adminToken).1) == "unknown_parameter")
                #expect(code(try await get("/v1/memory", artistToken).1) == "forbidden")
                #expect(try await get("/v1/memory", nil).0 == .unauthorized)
                #expect(try await get("/healthz", nil).0 == .ok)
                #expect(try await get("/metrics", nil).0 == .ok)
                #expect(code(try await get("/v1/nothing", Self.adminToken).1) == "not_found")
            }
        }
    }

    // MARK: - Data

    static func events() -> [Event] {
        var generator = EventGenerator(.init(
            seed: 3, artists: 3, days: 10, start: CivilDate(year: 2026, month: 10, day: 1), tracksPerArtist: 5, pageFraction: 0.3))
        return (0..<3_000).compactMap { _ in generator.next().event }
    }

    /// Each day's streams of `artist` (days without any are absent), keyed as the API writes `period_start`.
    static func streamsPerDay(_ events: [Event], artist: String) -> [String: Int] {
        var days: [String: Int] = [:]
        for case .stream(let play) in events where play.artistID == artist {
            let start = Timestamp(seconds: play.occurredAt.daysSinceEpoch * 86_400)
            days[RFC3339.format(start), default: 0] += Int(StreamCounters(play).streams)
        }
        return days
    }

    /// Runs `body` with a store on a fresh, migrated database holding `events` (written as one flush) and an
    /// artist token of `artist`.
    static func withPopulatedStore(_ events: [Event], _ body: @Sendable (Store, String) async throws -> Void) async throws {
        guard let base = ProcessInfo.processInfo.environment["BACKBEAT_TEST_POSTGRES_URL"] else {
            Issue.record("BACKBEAT_TEST_POSTGRES_URL is not set: run the tests through scripts/test")
            return
        }
        let name = "routes_\(UInt32.random(in: 0...UInt32.max))"
        try await withStore(url: base) { store in
            try await store.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var components = try #require(URLComponents(string: base))
        components.path = "/" + name
        try await withStore(url: try #require(components.string)) { store in
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            _ = try await store.migrate(try Migration.load(from: root.appendingPathComponent("sql")))
            try await store.write(FlushBatch(parts: [FlushBatch.Part(
                topicPartition: TopicPartition(topic: "streams", partition: 0), generation: 0, expectedOffset: nil,
                newOffset: Int64(events.count), delta: InternedDelta(events: events))]))
            let token = APIToken.generate()
            _ = try await store.addToken(artistID: artist, label: "route tests", hash: APIToken.hash(token))
            try await body(store, token)
        }
    }

    static func withStore(url: String, _ body: @Sendable (Store) async throws -> Void) async throws {
        let store = Store(url: try PostgresURL(url), logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await body(store)
        }
    }
}
