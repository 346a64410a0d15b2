import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// The web dashboard in headless Chromium against a live stack: the numbers on the page equal the API's answers
/// at desktop and phone widths, with the admin and with an artist token, after more events arrive too, for an artist
/// in its own zone (shown on the page) and one in UTC; the page refreshes itself; screenshots are kept in
/// `.build/artifacts/`.
@Suite(.serialized) struct WebDashboardTests {
    static let artifacts = TestEnvironment.packageRoot.appendingPathComponent(".build/artifacts")

    @Test func thePageShowsTheAPIsNumbersAtDesktopAndPhoneWidths() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 3)
        let database = try await TestEnvironment.freshDatabase("web")
        let today = CivilDate(daysSinceEpoch: Timestamp.wallClock().daysSinceEpoch)
        // Events over the last two weeks, ending yesterday, so that they are inside every window the page shows.
        let workload = Workload(events: 12_000, seed: 5, artists: 4, days: 14, start: CivilDate(daysSinceEpoch: today.daysSinceEpoch - 14))
        let half = workload.messages.count / 2
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: [
            "--web-dir", TestEnvironment.packageRoot.appendingPathComponent("dashboards/web").path])
        try await service.waitUntilHealthy()
        let zone = try await HTTP.put(service.baseURL + "/v1/artists/artist-0002/zone", json: #"{"zone":"Asia/Kathmandu"}"#)
        #expect(zone.status == 200, "\(zone.text)")
        try workload.publish(0..<half, to: broker.bootstrapServers)
        try await waitUntilFlushed(half, database: database)
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)

        let desktop = try Chromium.dom(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=28d&as_of=\(Chromium.today)", width: 1280, height: 1400)
        try await expectPage(desktop, showsAPIOf: service, artist: "artist-0002", zone: "Asia/Kathmandu")
        #expect(Int(desktop.attribute("data-refreshes", ofTag: "body") ?? "") ?? 0 >= 2, "the page refreshed by itself")
        #expect(desktop.options(of: "artist").count == 4, "the admin picks among every artist")
        try Chromium.screenshot(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=28d&as_of=\(Chromium.today)",
                                width: 1280, height: 1400, to: Self.artifacts.appendingPathComponent("dashboard-desktop.png"))
        try Chromium.screenshot(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=12m&as_of=\(Chromium.today)",
                                width: 1280, height: 1400, to: Self.artifacts.appendingPathComponent("dashboard-desktop-dark.png"),
                                extra: ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"])

        // More events stream in; an artist token on a phone-sized screen sees its own artist only, and the new numbers.
        try workload.publish(half..<workload.messages.count, to: broker.bootstrapServers)
        try await waitUntilFlushed(workload.messages.count, database: database)
        let token = try TokenTests.createToken(artist: "artist-0003", database: database)
        let phone = try Chromium.dom(of: service.baseURL + "/#token=\(token)&range=28d&as_of=\(Chromium.today)", width: 390, height: 844)
        try await expectPage(phone, showsAPIOf: service, artist: "artist-0003", zone: "UTC")
        #expect(phone.options(of: "artist") == ["artist-0003"])
        try Chromium.screenshot(of: service.baseURL + "/#token=\(token)&range=28d&as_of=\(Chromium.today)", width: 390, height: 1800,
                                to: Self.artifacts.appendingPathComponent("dashboard-phone.png"))
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }

    func waitUntilFlushed(_ count: Int, database: String) async throws {
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "\(count) messages flushed") { try await storedOffsetTotal(store.client) == Int64(count) }
        }
    }

    /// The artist's zone, the cards, the streams total, the platform legend and the top tracks equal what the API
    /// answers for the page's 28-day range (local days of the artist, to the page's `as_of`).
    func expectPage(_ page: Chromium.Page, showsAPIOf service: ServiceProcess, artist: String, zone: String) async throws {
        let today = Timestamp.wallClock().daysSinceEpoch
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: today - 27)), to = RFC3339.formatDate(CivilDate(daysSinceEpoch: today + 1))
        let base = service.baseURL + "/v1/artists/\(artist)/"
        #expect(page.attribute("data-zone", ofTag: "span") == zone)
        let shownZone = (try await HTTP.get(base + "zone").json() as! [String: Any])["zone"] as? String
        #expect(shownZone == zone)
        let summary = try await HTTP.get(base + "summary?as_of=\(Chromium.today)").json() as! [String: Any]
        #expect(page.value(of: "card-streams") == "\(summary["streams_28d"]!)")
        #expect(page.value(of: "card-listeners") == "\(summary["monthly_listeners"]!)")
        #expect(page.value(of: "card-followers") == "\(summary["net_followers_28d"]!)")
        let revenue = (summary["revenue_this_month"] as! [[String: String]]).map { "\($0["currency"]!):\($0["amount"]!)" }
        #expect(page.value(of: "card-revenue") == revenue.joined(separator: ","))
        #expect((summary["streams_28d"] as! Int) > 0, "the range holds data")

        let streams = try await HTTP.get(base + "streams?from=\(from)&to=\(to)&granularity=day").json() as! [String: Any]
        #expect(page.value(of: "streams-total") == "\((streams["totals"] as! [String: Any])["streams"]!)")
        let platforms = (try await HTTP.get(base + "platforms?from=\(from)&to=\(to)").json() as! [String: Any])["platforms"] as! [[String: Any]]
        #expect(page.pairs("data-platform", "data-streams") == platforms.map { ("\($0["platform"]!)", "\($0["streams"]!)") })
        let tracks = (try await HTTP.get(base + "tracks/top?from=\(from)&to=\(to)&limit=10").json() as! [String: Any])["tracks"] as! [[String: Any]]
        #expect(!tracks.isEmpty)
        #expect(page.pairs("data-track", "data-streams") == tracks.map { ("\($0["track_id"]!)", "\($0["streams"]!)") })
    }
}
