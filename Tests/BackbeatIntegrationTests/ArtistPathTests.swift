import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// Artist ids arrive in paths percent-encoded, as browsers and `encodeURIComponent` send them.
@Suite(.serialized) struct ArtistPathTests {
    static let artist = "label.one:artist-7"
    static let encoded = "label.one%3Aartist-7"

    /// Two days ago, so that the dashboard's 28-day range holds the events.
    static let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: Timestamp.wallClock().seconds.floorDiv(86_400) - 2))

    /// Streams (with listeners and demographics), revenue and social events of the artist on `day`.
    static func events() -> String {
        var lines: [String] = []
        for n in 0..<12 {
            lines.append(#"{"event_id":"s-\#(n)","type":"stream","occurred_at":"\#(day)T1\#(n % 10):00:00Z","artist_id":"\#(artist)","track_id":"\#(artist):t\#(n % 3)","platform":"\#(n % 2 == 0 ? "spotify" : "deezer")","listener_id":"l-\#(n % 5)","country":"SE","age_range":"25-34","gender":"female","duration_ms":\#(20_000 + n * 2_000)}"#)
        }
        lines.append(#"{"event_id":"r-1","type":"revenue","occurred_at":"\#(day)T12:00:00Z","artist_id":"\#(artist)","source":"merch","amount":"24.99","currency":"EUR"}"#)
        lines.append(#"{"event_id":"o-1","type":"social","occurred_at":"\#(day)T12:00:00Z","artist_id":"\#(artist)","platform":"tiktok","action":"follow","count":3}"#)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every `/v1/artists/{artist_id}/...` route, and the web dashboard (which encodes ids with `encodeURIComponent`).
    @Test func everyArtistRouteAndTheDashboardAnswerForAPercentEncodedIDWithColonAndDot() async throws {
        let directory = NSTemporaryDirectory() + "backbeat-path-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/events.ndjson"
        try Self.events().write(toFile: path, atomically: true, encoding: .utf8)
        let database = try await TestEnvironment.freshDatabase("paths")
        let replay = try ReplayTests.run(["replay", path], postgresURL: database)
        #expect(replay.status == 0 && replay.output.contains("14 events accepted"), "\(replay.output)")
        let token = try TokenTests.createToken(artist: Self.artist, database: database)

        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: [
            "--web-dir", TestEnvironment.packageRoot.appendingPathComponent("dashboards/web").path])
        try await service.waitUntilHealthy()
        let api = service.baseURL + "/v1/artists/"
        let today = Timestamp.wallClock().seconds.floorDiv(86_400)
        let interval = "from=\(RFC3339.formatDate(CivilDate(daysSinceEpoch: today - 3)))&to=\(RFC3339.formatDate(CivilDate(daysSinceEpoch: today)))"
        let routes = ["streams?\(interval)", "platforms?\(interval)", "demographics?\(interval)", "tracks/top?\(interval)",
                      "revenue?\(interval)", "social?\(interval)", "summary?as_of=\(Self.day)"]
        for route in routes {
            let plain = try await HTTP.get(api + Self.artist + "/" + route)
            #expect(plain.status == 200, "\(route): \(plain.text)")
            for caller in [ServiceProcess.adminToken, token] {
                let reply = try await HTTP.get(api + Self.encoded + "/" + route, token: caller)
                #expect(reply.status == 200, "\(route): \(reply.status) \(reply.text)")
                #expect(try TokenTests.sorted(reply) == TokenTests.sorted(plain), "\(route): \(reply.text) vs \(plain.text)")
            }
        }
        // The answers hold the artist's numbers (7 plays of at least 30 s, 5 skips, 5 listeners; the merch revenue; 3 follows).
        let streams = try await HTTP.get(api + Self.encoded + "/streams?\(interval)")
        let totals = (try streams.json() as? [String: Any])?["totals"] as? [String: Int]
        #expect(totals == ["listening_ms": 372_000, "listeners": 5, "skips": 5, "streams": 7], "\(streams.text)")
        #expect(try await HTTP.get(api + Self.encoded + "/revenue?\(interval)").text.contains("24.99"))
        #expect(try await HTTP.get(api + Self.encoded + "/social?\(interval)").text.contains("3"))

        // Encodings that decode to no valid id, or do not decode: 400; another artist's encoded id: 403.
        for bad in ["label.one%2Fartist-7", "label.one%ZZ", "%"] {
            let reply = try await HTTP.get(api + bad + "/streams?\(interval)")
            #expect(reply.status == 400, "\(bad): \(reply.status) \(reply.text)")
        }
        #expect(try await HTTP.get(api + "label.one%3Aartist-8/streams?\(interval)", token: token).status == 403)

        // The dashboard with the artist's token: the page's numbers are the API's.
        let page = try Chromium.dom(of: service.baseURL + "/#token=\(token)&range=28d&as_of=\(Chromium.today)", width: 1280, height: 1400)
        #expect(page.options(of: "artist") == [Self.artist])
        try await WebDashboardTests().expectPage(page, showsAPIOf: service, artist: Self.artist, zone: "UTC", pageEvents: false)
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
