import BackbeatKafka
import Foundation
import Testing

/// Artist tokens read their own artist and nothing else; revoked and unknown tokens read nothing.
@Suite(.serialized) struct TokenTests {
    /// `backbeat token create`; returns the printed token.
    static func createToken(artist: String, database: String) throws -> String {
        let result = try ReplayTests.run(["token", "create", "--artist", artist, "--label", "test \(artist)"], postgresURL: database)
        #expect(result.status == 0, "\(result.output)")
        return try #require(result.output.split(separator: "\n").first { $0.hasPrefix("bbt_") }.map(String.init))
    }

    /// A reply's JSON with sorted keys (member order may differ between encodings).
    static func sorted(_ reply: HTTP.Reply) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: try reply.json(), options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func anArtistTokenReadsItsOwnArtistOnly() async throws {
        let database = try await TestEnvironment.freshDatabase("tokens")
        let events = try ReplayTests.generate("tokens.ndjson", events: 3_000)
        let replay = try ReplayTests.run(["replay", events], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let token = try Self.createToken(artist: "artist-0001", database: database)
        let otherToken = try Self.createToken(artist: "artist-0002", database: database)
        #expect(token != otherToken && token.count == 68)

        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        let api = service.baseURL + "/v1/"
        let streams = "/streams?from=2026-10-01&to=2026-10-11"

        // Its own artist: the same answer as the admin's.
        let own = try await HTTP.get(api + "artists/artist-0001" + streams, token: token)
        #expect(own.status == 200)
        let admin = try await HTTP.get(api + "artists/artist-0001" + streams)
        #expect(try Self.sorted(own) == Self.sorted(admin), "\(own.text) vs \(admin.text)")
        #expect(own.text.contains("\"streams\":") && !own.text.contains("\"streams\":0,"), "real numbers: \(own.text.prefix(200))")

        // Any other artist, through every route: 403, and no numbers.
        for path in ["artists/artist-0002" + streams, "artists/artist-0002/summary", "artists/artist-0002/tracks/top?from=2026-10-01&to=2026-10-11",
                     "artists/artist-0002/revenue?from=2026-10-01&to=2026-10-11&currency=USD", "memory"] {
            let reply = try await HTTP.get(api + path, token: token)
            #expect(reply.status == 403, "\(path): \(reply.status)")
            #expect(reply.text.contains("\"forbidden\"") && !reply.text.contains("streams\":"), "\(path): \(reply.text)")
        }
        let base = #""dataset":"streams","from":"2026-10-01","to":"2026-10-11","group_by":["artist_id"]"#
        for filters in ["", #","filters":{"artist_id":["artist-0002"]}"#, #","filters":{"artist_id":["artist-0001","artist-0002"]}"#,
                        #","filters":{"platform":["spotify"]}"#] {
            let reply = try await HTTP.post(api + "query", json: "{\(base)\(filters)}", token: token)
            #expect(reply.status == 403, "filters \(filters): \(reply.status) \(reply.text)")
        }
        let mine = try await HTTP.post(api + "query", json: #"{\#(base),"filters":{"artist_id":["artist-0001"]}}"#, token: token)
        #expect(mine.status == 200, "\(mine.text)")
        #expect(mine.text.contains("artist-0001") && !mine.text.contains("artist-0002"))
        let everyone = try await HTTP.post(api + "query", json: "{\(base)}")
        #expect(everyone.status == 200 && everyone.text.contains("artist-0002"), "the admin token reads every artist")

        // Unknown, malformed and revoked tokens: 401.
        for bad in ["bbt_" + String(repeating: "0", count: 64), "bbt_short", token + "0", ServiceProcess.adminToken + "x"] {
            #expect(try await HTTP.get(api + "artists/artist-0001" + streams, token: bad).status == 401, "\(bad)")
        }
        let list = try ReplayTests.run(["token", "list"], postgresURL: database)
        #expect(list.status == 0 && list.output.contains("artist-0001") && list.output.contains("test artist-0001"))
        #expect(!list.output.contains(token), "a token is never shown again")
        let id = try #require(list.output.split(separator: "\n").first { $0.contains("\tartist-0001\t") }?.split(separator: "\t").first)
        let revoke = try ReplayTests.run(["token", "revoke", String(id)], postgresURL: database)
        #expect(revoke.status == 0, "\(revoke.output)")
        let revoked = ContinuousClock.now
        try await waitUntil(timeout: .seconds(10), "the revoked token to be refused") {
            try await HTTP.get(api + "artists/artist-0001" + streams, token: token).status == 401
        }
        #expect(ContinuousClock.now - revoked < .seconds(6), "revoked within 5 s (and the time of one request)")
        #expect(try await HTTP.get(api + "artists/artist-0002" + streams, token: otherToken).status == 200)
        #expect(try ReplayTests.run(["token", "revoke", String(id)], postgresURL: database).status != 0, "revoking twice fails")
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    @Test func anArtistTokenBeyondItsRateGets429WithRetryAfter() async throws {
        let database = try await TestEnvironment.freshDatabase("ratelimit")
        try await TestEnvironment.withStore(url: database) { store in _ = try await store.migrate(try TestEnvironment.migrations()) }
        let token = try Self.createToken(artist: "artist-0001", database: database)
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 1)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--artist-rate-limit", "2"])
        try await service.waitUntilHealthy()
        let url = service.baseURL + "/v1/artists/artist-0001/streams?from=2026-10-01&to=2026-10-02"
        // Requests until the first 429 (each takes far less than the half second a token takes to come back).
        var statuses: [Int] = []
        var retryAfter: String?
        while statuses.count < 100, retryAfter == nil {
            let reply = try await HTTP.get(url, token: token)
            statuses.append(reply.status)
            if reply.status == 429 {
                retryAfter = reply.headers["Retry-After"] as? String ?? "none"
                #expect(reply.text.contains("\"rate_limited\""))
            }
        }
        #expect(statuses.prefix(4).allSatisfy { $0 == 200 }, "a burst of twice the rate passes: \(statuses)")
        #expect(statuses.contains(429), "\(statuses)")
        let wait = try #require(retryAfter.flatMap(Int.init), "Retry-After: \(retryAfter ?? "none")")
        #expect(wait >= 1)
        for _ in 0..<12 { #expect(try await HTTP.get(url).status == 200, "the admin token is not limited") }
        // Retry-After is a promise: after it, the token is served again.
        try await Task.sleep(for: .seconds(wait))
        #expect(try await HTTP.get(url, token: token).status == 200, "the bucket refills within Retry-After")
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
