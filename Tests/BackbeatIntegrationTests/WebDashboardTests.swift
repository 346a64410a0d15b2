import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// The web dashboard in headless Chromium against a live stack: the numbers on the page equal the API's answers
/// at desktop and phone widths, with the admin and with an artist token, after more events arrive too, for an artist
/// in its own zone (shown on the page) and one in UTC; a seven-digit total is drawn whole beside its bar, and each
/// currency's revenue on its own scale; the page refreshes itself; screenshots are kept in `.build/artifacts/`.
@Suite(.serialized) struct WebDashboardTests {
    static let artifacts = TestEnvironment.packageRoot.appendingPathComponent(".build/artifacts")

    @Test func thePageShowsTheAPIsNumbersAtDesktopAndPhoneWidths() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social", "page"], partitions: 3)
        let database = try await TestEnvironment.freshDatabase("web")
        let today = CivilDate(daysSinceEpoch: Timestamp.wallClock().daysSinceEpoch)
        // Events over the last two weeks, ending yesterday, so that they are inside every window the page shows.
        let workload = Workload(events: 12_000, seed: 5, artists: 4, days: 14, start: CivilDate(daysSinceEpoch: today.daysSinceEpoch - 14), pageFraction: 0.2)
        let half = workload.messages.count / 2
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: [
            "--web-dir", TestEnvironment.packageRoot.appendingPathComponent("dashboards/web").path, "--topics", "streams,revenue,social,page"])
        try await service.waitUntilHealthy()
        // As a database that kept hours before migration 0025: its quarter hours begin ten days ago (read by the
        // service when a read in another zone first needs them, below).
        try await TestEnvironment.withStore(url: database) { store in
            try await store.client.query("UPDATE quarter_hour_detail SET from_day = current_date - 10")
        }
        let zone = try await HTTP.put(service.baseURL + "/v1/artists/artist-0002/zone", json: #"{"zone":"Asia/Kathmandu"}"#)
        #expect(zone.status == 200, "\(zone.text)")
        try workload.publish(0..<half, to: broker.bootstrapServers)
        // Yesterday, artist-0002 had a million views on one platform and was paid in yen: a total of seven digits to
        // draw beside its bar, and amounts that would flatten the other currencies' on a shared axis.
        let yesterday = RFC3339.formatDate(CivilDate(daysSinceEpoch: today.daysSinceEpoch - 1))
        let producer = try KafkaProducer(brokers: broker.bootstrapServers)
        try producer.send(topic: "social", key: Array("artist-0002".utf8), value: Array("""
            {"event_id":"web-million-views","type":"social","occurred_at":"\(yesterday)T12:00:00Z","artist_id":"artist-0002","platform":"tiktok","action":"view","count":1000000}
            """.utf8))
        try producer.send(topic: "revenue", key: Array("artist-0002".utf8), value: Array("""
            {"event_id":"web-yen","type":"revenue","occurred_at":"\(yesterday)T12:00:00Z","artist_id":"artist-0002","source":"streaming","amount":"5000000","currency":"JPY"}
            """.utf8))
        #expect(try producer.flush().failed == 0)
        let extra = 2
        try await waitUntilFlushed(half + extra, database: database)
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)

        let desktop = try Chromium.dom(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=28d&as_of=\(Chromium.today)", width: 1280, height: 1400)
        try await expectPage(desktop, showsAPIOf: service, artist: "artist-0002", zone: "Asia/Kathmandu")
        expectRowsLeaveRoomForTheirValues(desktop.part(from: "social-chart", to: "</svg>"), atLeast: 1_000_000)
        try await expectACurrencyScaleEach(desktop, service: service, artist: "artist-0002")
        #expect(Int(desktop.attribute("data-refreshes", ofTag: "body") ?? "") ?? 0 >= 2, "the page refreshed by itself")
        #expect(desktop.options(of: "artist").count == 4, "the admin picks among every artist")
        try Chromium.screenshot(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=28d&as_of=\(Chromium.today)",
                                width: 1280, height: 1400, to: Self.artifacts.appendingPathComponent("dashboard-desktop.png"))
        try Chromium.screenshot(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=12m&as_of=\(Chromium.today)",
                                width: 1280, height: 1400, to: Self.artifacts.appendingPathComponent("dashboard-desktop-dark.png"),
                                extra: ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"])

        // More events stream in; an artist token on a phone-sized screen sees its own artist only, and the new numbers.
        try workload.publish(half..<workload.messages.count, to: broker.bootstrapServers)
        try await waitUntilFlushed(workload.messages.count + extra, database: database)
        let token = try TokenTests.createToken(artist: "artist-0003", database: database)
        let phone = try Chromium.dom(of: service.baseURL + "/#token=\(token)&range=28d&as_of=\(Chromium.today)", width: 390, height: 844)
        try await expectPage(phone, showsAPIOf: service, artist: "artist-0003", zone: "UTC")
        #expect(phone.options(of: "artist") == ["artist-0003"])
        // The viewer in New York reads the UTC artist's days in New York (a link's #tz= stands for the browser's zone).
        let viewer = try Chromium.dom(of: service.baseURL + "/#token=\(token)&range=28d&as_of=\(Chromium.today)&tz=America/New_York", width: 1280, height: 1400)
        try await expectPage(viewer, showsAPIOf: service, artist: "artist-0003", zone: "UTC", readIn: "America/New_York")
        #expect(viewer.options(of: "days-in") == ["artist", "viewer"])
        // Kathmandu's hours (+5:45) do not tile New York's days, nor do its quarter hours reach back 28 days: the page
        // says so rather than showing other numbers.
        let refused = try Chromium.dom(of: service.baseURL + "/#token=\(ServiceProcess.adminToken)&artist=artist-0002&range=28d&as_of=\(Chromium.today)&tz=America/New_York", width: 1280, height: 1400)
        #expect(refused.part(from: "status", to: "</p>").html.contains("Asia/Kathmandu"), "\(refused.part(from: "status", to: "</p>").html)")
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

    /// Each bar of a chart of rows ends before its value's text starts (the text's width as Chromium measured it), and
    /// the text stays inside the chart; one value is at least `atLeast`, written in full.
    func expectRowsLeaveRoomForTheirValues(_ chart: Chromium.Page, atLeast: Int) {
        let width = Double(chart.matches(#"viewBox="0 0 ([0-9.]+) "#).first?.first ?? "") ?? 0
        let bars = chart.matches(#"<rect x="([^"]*)"[^>]* class="bar" width="([^"]*)""#).map { (Double($0[0]) ?? .nan) + (Double($0[1]) ?? .nan) }
        let values = chart.matches(#"<text x="([^"]*)"[^>]*data-value="([^"]*)" data-width="([^"]*)">([^<]*)<"#)
        #expect(!bars.isEmpty && bars.count == values.count, "\(chart.html)")
        for (barEnd, value) in zip(bars, values) {
            let (right, text, textWidth) = (Double(value[0]) ?? .nan, value[3], Double(value[2]) ?? .nan)
            #expect(textWidth > 0 && barEnd < right - textWidth && right <= width, "the bar of \(text) ends at \(barEnd), its text spans \(right - textWidth)...\(right) of \(width)")
        }
        let largest = values.compactMap { Int($0[1]) }.max() ?? 0
        #expect(largest >= atLeast, "\(values)")
        #expect(values.contains { $0[3] == largest.formatted(.number.locale(Locale(identifier: "en_US"))) }, "\(values)")
    }

    /// The revenue panel draws a chart per currency (yen and at least one other here), each scaled to its own
    /// currency: the top of its axis is the largest of that currency's daily amounts in the page's 28 days, as the
    /// API answers them.
    func expectACurrencyScaleEach(_ page: Chromium.Page, service: ServiceProcess, artist: String) async throws {
        let today = Timestamp.wallClock().daysSinceEpoch
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: today - 27)), to = RFC3339.formatDate(CivilDate(daysSinceEpoch: today + 1))
        let answer = try await HTTP.get(service.baseURL + "/v1/artists/\(artist)/revenue?from=\(from)&to=\(to)&granularity=day").json() as! [String: Any]
        var daily: [String: [String: Double]] = [:]
        for point in answer["series"] as! [[String: Any]] {
            daily[point["currency"] as! String, default: [:]][point["period_start"] as! String, default: 0] += Double(point["amount"] as! String)!
        }
        let shown = page.part(from: "revenue-charts", to: "</figure>").matches(#"data-currency="([A-Z]{3})".*?<svg[^>]*data-max="([^"]*)""#)
        #expect(shown.map { $0[0] } == daily.keys.sorted() && shown.count >= 2 && daily["JPY"] != nil, "\(shown)")
        for chart in shown {
            let top = Double(chart[1]) ?? .nan, largest = daily[chart[0]]?.values.max() ?? .nan
            #expect(abs(top - largest) <= 1e-6 * largest, "\(chart[0])'s axis tops at \(top), its largest day is \(largest)")
        }
    }

    /// The artist's zone, the cards, the streams total, the platform legend and the top tracks equal what the API
    /// answers for the page's 28-day range (local days of the artist, or of `readIn` read with `tz`, to the page's
    /// `as_of`).
    /// `pageEvents`: whether the artist has page events in the range (its page panel then has numbers to show; else
    /// it shows none).
    func expectPage(
        _ page: Chromium.Page, showsAPIOf service: ServiceProcess, artist: String, zone: String, readIn: String? = nil, pageEvents: Bool = true
    ) async throws {
        let today = Timestamp.wallClock().daysSinceEpoch
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: today - 27)), to = RFC3339.formatDate(CivilDate(daysSinceEpoch: today + 1)) + (readIn.map { "&tz=" + $0 } ?? "")
        let base = service.baseURL + "/v1/artists/\(artist)/"
        #expect(page.attribute("data-zone", ofTag: "span") == zone)
        #expect(page.attribute("data-read-zone", ofTag: "select") == readIn ?? zone)
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
        // Each day's bar (its title: "MM-DD: streams") is the API's day.
        let bars = page.part(from: "streams-chart", to: "</svg>").matches(#"<title>(\d\d-\d\d): ([\d,]+)</title>"#).map { "\($0[0]) \($0[1].replacingOccurrences(of: ",", with: ""))" }
        let days = (streams["series"] as! [[String: Any]]).map { "\(($0["period_start"] as! String).dropFirst(5).prefix(5)) \($0["streams"]!)" }
        #expect(bars == days && days.count == 28, "\(artist) in \(readIn ?? zone)")
        let platforms = (try await HTTP.get(base + "platforms?from=\(from)&to=\(to)").json() as! [String: Any])["platforms"] as! [[String: Any]]
        #expect(page.pairs("data-platform", "data-streams") == platforms.map { ("\($0["platform"]!)", "\($0["streams"]!)") })
        let tracks = (try await HTTP.get(base + "tracks/top?from=\(from)&to=\(to)&limit=10").json() as! [String: Any])["tracks"] as! [[String: Any]]
        #expect(!tracks.isEmpty)
        #expect(page.pairs("data-track", "data-streams") == tracks.map { ("\($0["track_id"]!)", "\($0["streams"]!)") })

        // The page panel: views per day (a day without any at zero), the sections and the calls to action, as the API.
        let views = try await HTTP.get(base + "page?from=\(from)&to=\(to)&granularity=day").json() as! [String: Any]
        let viewTotal = (views["totals"] as! [String: Any])["views"] as! Int
        #expect(page.value(of: "page-total") == "\(viewTotal)" && (viewTotal > 0) == pageEvents)
        let perDay = Dictionary(uniqueKeysWithValues: (views["series"] as! [[String: Any]]).map { (String(($0["period_start"] as! String).dropFirst(5).prefix(5)), $0["views"] as! Int) })
        let viewBars = page.part(from: "page-chart", to: "</svg>").matches(#"<title>(\d\d-\d\d): ([\d,]+)</title>"#)
        #expect(viewBars.count == (pageEvents ? 28 : 0) && viewBars.allSatisfy { Int($0[1].replacingOccurrences(of: ",", with: "")) == perDay[$0[0]] ?? 0 }, "\(artist): \(viewBars)")
        let sections = (try await HTTP.get(base + "page/sections?from=\(from)&to=\(to)&limit=8").json() as! [String: Any])["sections"] as! [[String: Any]]
        let shownSections = page.part(from: "page-sections-chart", to: "</svg>").matches(#"data-label="([^"]*)" data-value="(\d+)""#).map { "\($0[0]) \($0[1])" }
        #expect(shownSections == sections.map { "\($0["section_id"]!) \($0["views"]!)" } && sections.isEmpty != pageEvents)
        let ctas = (try await HTTP.get(base + "page/ctas?from=\(from)&to=\(to)&granularity=all").json() as! [String: Any])["totals"] as! [[String: Any]]
        let shownCTAs = page.part(from: "page-ctas-chart", to: "</svg>").matches(#"data-label="([^"]*)" data-value="(\d+)""#).map { "\($0[0]) \($0[1])" }
        #expect(shownCTAs == ctas.map { "\($0["action_type"]!) \($0["clicks"]!)" } && ctas.isEmpty != pageEvents)
        // Unique visitors per day as the API counts them, or none with the API's reason where days are read in a zone
        // the artist's do not tile.
        let visitorBars = page.part(from: "page-visitors-chart", to: "</svg>").matches(#"<title>(\d\d-\d\d): ([\d,]+)</title>"#)
        if let reason = views["visitors_unavailable"] as? String {
            #expect(visitorBars.isEmpty && page.value(of: "page-visitors-total") == "" && page.html.contains(reason), "\(artist): \(visitorBars)")
        } else {
            let visitorsPerDay = Dictionary(uniqueKeysWithValues: (views["series"] as! [[String: Any]]).map {
                (String(($0["period_start"] as! String).dropFirst(5).prefix(5)), $0["visitors"] as? Int ?? -1)
            })
            #expect(visitorBars.count == (pageEvents ? 28 : 0)
                && visitorBars.allSatisfy { Int($0[1].replacingOccurrences(of: ",", with: "")) == visitorsPerDay[$0[0]] ?? 0 }, "\(artist): \(visitorBars)")
            #expect(page.value(of: "page-visitors-total") == "\((views["totals"] as! [String: Any])["visitors"] as? Int ?? -1)")
        }
        // The referrers most viewed from, each with its unique visitors as the API counts them, or none with the API's
        // reason.
        let sources = try await HTTP.get(base + "page/sources?from=\(from)&to=\(to)&limit=8").json() as! [String: Any]
        let shownReferrers = page.part(from: "page-referrers-chart", to: "</svg>").matches(#"data-label="([^"]*)" data-value="(\d+)""#).map { "\($0[0]) \($0[1])" }
        if let reason = sources["visitors_unavailable"] as? String {
            #expect(shownReferrers.isEmpty && page.part(from: "page-referrers-note", to: "</span>").html.contains(reason), "\(artist): \(shownReferrers)")
        } else {
            let referrers = sources["referrers"] as! [[String: Any]]
            #expect(shownReferrers == referrers.map { "\($0["referrer"]!) \($0["visitors"] ?? "-")" } && referrers.isEmpty != pageEvents, "\(artist): \(shownReferrers)")
        }
        // The funnel: sessions with a view, with a section view too, with a click too, as the API totals them.
        let funnel = (try await HTTP.get(base + "page/funnel?from=\(from)&to=\(to)&granularity=all").json() as! [String: Any])["totals"] as! [String: Any]
        let shownFunnel = page.part(from: "page-funnel-chart", to: "</svg>").matches(#"data-label="([^"]*)" data-value="(\d+)""#).map { Int($0[1]) ?? -1 }
        let stages = ["sessions", "sessions_with_section_view", "sessions_with_cta_click"].map { funnel[$0] as? Int ?? -2 }
        #expect(shownFunnel == (pageEvents ? stages : []) && (stages[0] > 0) == pageEvents, "\(artist): \(shownFunnel) against \(stages)")
    }
}
