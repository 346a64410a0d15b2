import BackbeatCore
import BackbeatKafka
import Foundation
import Testing

/// Artists in their own zones, through Kafka and `backbeat serve`: every dashboard endpoint answers the artist's local
/// days and hours, as Foundation's calendar (ICU's zone data, not the database files the service reads) places each
/// event: Los Angeles across its change of 2026-11-01 (a day of 25 hours), Kolkata (+5:30), Kathmandu (+5:45),
/// Chatham (+13:45), the Marquesas (-9:30), and an artist left in UTC.
@Suite(.serialized) struct LocalDaysTests {
    static let zones = [
        "artist-0001": "America/Los_Angeles", "artist-0002": "Asia/Kolkata", "artist-0003": "Asia/Kathmandu", "artist-0004": "Pacific/Chatham",
        "artist-0005": "UTC", "artist-0006": "Pacific/Marquesas",
    ]

    /// Answered from memory, and by PostgreSQL alone.
    @Test(arguments: [[], ["--memory-days", "0"]])
    func everyEndpointCountsTheArtistsLocalDays(arguments: [String]) async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("local_days")
        // Three zones set at the command line before the start; while the service runs, one through its API and one at
        // the command line (another process: the service notices it in PostgreSQL).
        for artist in ["artist-0001", "artist-0002", "artist-0006"] {
            let set = try ReplayTests.run(["artist", "set-zone", "--artist", artist, "--zone", Self.zones[artist]!, "--log-level", "warning"], postgresURL: database)
            #expect(set.status == 0, "\(set.output)")
        }
        // UTC days 2026-10-24 to 2026-11-04: every local day from 10-26 to 11-03 whole in every zone here.
        let workload = Workload(events: 24_000, seed: 40, artists: 6, days: 12, start: CivilDate(year: 2026, month: 10, day: 24))
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: arguments)
        try await service.waitUntilHealthy()
        let put = try await HTTP.put(service.baseURL + "/v1/artists/artist-0004/zone", json: #"{"zone":"Pacific/Chatham"}"#)
        #expect(put.status == 200, "\(put.text)")
        let set = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0003", "--zone", "Asia/Kathmandu", "--log-level", "warning"], postgresURL: database)
        #expect(set.status == 0, "\(set.output)")
        try await service.waitForLog("artists_outside_utc=5")
        try workload.publish(0..<workload.messages.count, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "every message flushed") {
                try await storedOffsetTotal(store.client) == Int64(workload.messages.count)
            }
        }
        let events = workload.messages.compactMap(\.event)
        for (artist, zone) in Self.zones.sorted(by: { $0.key < $1.key }) {
            let checks = LocalDayChecks(events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zone)!)
            try await checks.checkEverything(service.baseURL + "/v1/artists/" + artist)
        }
        try await checkReadsInAnotherZone(service.baseURL, events)
    }

    /// `POST /v1/query` of `artists`' streams by day and artist, read in `zone` (nil: without `tz`, which reads UTC's
    /// days), with a filter on `artists` or (`filtered` false: `artists` are every artist) on none: each row its
    /// artist's streams on that day of the zone, as Foundation places them.
    func checkQuery(_ base: String, _ events: [Event], artists: [String], zone: String?, filtered: Bool = true) async throws {
        let filter = filtered ? #","filters":{"artist_id":["\#(artists.joined(separator: "\",\""))"]}"# : ""
        let tz = zone.map { #","tz":"\#($0)""# } ?? ""
        let body = #"{"dataset":"streams","from":"\#(LocalDayChecks.from)","to":"\#(LocalDayChecks.to)","granularity":"day","group_by":["artist_id"]\#(filter)\#(tz)}"#
        let reply = try await HTTP.post(base + "/v1/query", json: body, token: ServiceProcess.adminToken)
        #expect(reply.status == 200, "\(body): \(reply.text)")
        let zone = zone ?? "UTC"
        let rows = try #require((try reply.json() as? [String: Any])?["rows"] as? [[String: Any]])
        let answered = Set(rows.map { "\($0["artist_id"]!) \($0["period_start"]!) \($0["streams"]!)" })
        var expected: Set<String> = []
        for artist in artists {
            let checks = LocalDayChecks(events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zone)!)
            for day in checks.days(from: LocalDayChecks.from, to: LocalDayChecks.to) {
                expected.insert("\(artist) \(checks.label(day)) \(checks.plays.filter { $0.isStream && checks.day($0.occurredAt) == day }.count)")
            }
        }
        #expect(answered == expected && rows.count == artists.count * 8, "\(artists) in \(zone)")
    }

    /// `tz=`: an artist read in another zone answers that zone's days, weeks, months and (where no slot of either's
    /// clock change is cut) hours exactly: by the stored hours where the offsets differ by whole hours, else by the
    /// full tables' quarter hours (+5:30 and +5:45 read in UTC, Los Angeles in Kolkata); listeners only where those
    /// periods are whole days of the artist's zone. What no stored slot tiles is refused, not cut.
    func checkReadsInAnotherZone(_ base: String, _ events: [Event]) async throws {
        // (artist, the zone read in, whether 2026-11-01 by hour is tiled, whether listeners are answered)
        let reads = [
            ("artist-0001", "America/New_York", false, false), ("artist-0001", "UTC", false, false),
            ("artist-0005", "America/Los_Angeles", true, false), ("artist-0003", "Pacific/Chatham", true, false),
            ("artist-0006", "Asia/Kolkata", true, false), ("artist-0001", "America/Tijuana", true, true),
            ("artist-0002", "UTC", true, false), ("artist-0003", "UTC", true, false), ("artist-0001", "Asia/Kolkata", false, false),
        ]
        for (artist, zone, hourly, listeners) in reads {
            let checks = LocalDayChecks(events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zone)!, readIn: zone, listenersAnswered: listeners)
            let artistBase = base + "/v1/artists/" + artist
            try await checks.checkDailyStreams(artistBase)
            try await checks.checkWeeklyStreams(artistBase)
            try await checks.checkMonthlyStreams(artistBase)
            try await checks.checkShares(artistBase)
            try await checks.checkRevenue(artistBase)
            try await checks.checkSocial(artistBase)
            if hourly {
                try await checks.checkLocalHours(artistBase)
            } else {
                let reply = try await HTTP.get(artistBase + "/streams?from=2026-11-01&to=2026-11-02&granularity=hour&tz=" + zone)
                #expect(reply.status == 400 && reply.text.contains("zone_not_tiled"), "\(artist) in \(zone): \(reply.text)")
            }
        }
        // POST /v1/query with tz: each artist's rows regrouped from its own zone (or read as stored when it is the one).
        for zone in ["America/New_York", "America/Los_Angeles"] {
            try await checkQuery(base, events, artists: ["artist-0001", "artist-0005"], zone: zone)
        }
        try await checkQuery(base, events, artists: ["artist-0001", "artist-0002"], zone: "UTC")
        // Without tz, UTC's days: for every artist, and for some, each read from its own zone's stored slots.
        let everyArtist = Set(events.map(\.artistID)).sorted()
        try await checkQuery(base, events, artists: everyArtist, zone: nil, filtered: false)
        try await checkQuery(base, events, artists: everyArtist, zone: "Asia/Kolkata", filtered: false)
        try await checkQuery(base, events, artists: ["artist-0002", "artist-0003"], zone: nil)
        for (body, code) in [
            (#"{"dataset":"streams","from":"2026-10-26","to":"2026-11-03","granularity":"hour","filters":{"artist_id":["artist-0001","artist-0002"]},"tz":"Asia/Kolkata"}"#, "zone_not_tiled"),
            (#"{"dataset":"streams","from":"2026-10-26","to":"2026-11-03","granularity":"quarter_hour","filters":{"artist_id":["artist-0001"]}}"#, "invalid_parameter"),
            (#"{"dataset":"streams","from":"2026-10-26","to":"2026-11-03","filters":{"artist_id":["artist-0001"]},"tz":null}"#, "invalid_body"),
            (#"{"dataset":"streams","from":"2026-10-26","to":"2026-11-03","filters":{"artist_id":["artist-0001"]},"tz":"Mars/Olympus_Mons"}"#, "unknown_zone"),
        ] {
            let reply = try await HTTP.post(base + "/v1/query", json: body, token: ServiceProcess.adminToken)
            #expect(reply.status == 400 && reply.text.contains(code), "\(body): \(reply.text)")
        }
        // An interval that starts inside one of the artist's quarter hours (+5:45's 00:00 is UTC's 18:15).
        let cut = try await HTTP.get(base + "/v1/artists/artist-0003/streams?from=2026-10-26T18:20:00Z&to=2026-10-27T18:15:00Z&tz=UTC")
        #expect(cut.status == 400 && cut.text.contains("zone_not_tiled") && cut.text.contains("Kathmandu"), "\(cut.text)")
        let unknown = try await HTTP.get(base + "/v1/artists/artist-0001/streams?from=\(LocalDayChecks.from)&to=\(LocalDayChecks.to)&tz=Mars/Olympus_Mons")
        #expect(unknown.status == 400 && unknown.text.contains("unknown_zone") && unknown.text.contains("Olympus_Mons"), "\(unknown.text)")
        // The summary's window is the artist's own days.
        let summary = try await HTTP.get(base + "/v1/artists/artist-0001/summary?as_of=2026-11-03&tz=UTC")
        #expect(summary.status == 400 && summary.text.contains("unknown_parameter"), "\(summary.text)")
    }
}

extension LocalDaysTests {
    /// `backbeat replay` of the same events into another database with the same zones answers the same local days
    /// (read by a `serve` that consumes nothing, from PostgreSQL alone).
    @Test func aReplayCountsTheArtistsLocalDays() async throws {
        let broker = try DevBroker(topics: ["idle"], partitions: 1)
        let database = try await TestEnvironment.freshDatabase("local_days_replay")
        for (artist, zone) in Self.zones {
            let set = try ReplayTests.run(["artist", "set-zone", "--artist", artist, "--zone", zone, "--log-level", "warning"], postgresURL: database)
            #expect(set.status == 0, "\(set.output)")
        }
        let workload = Workload(events: 24_000, seed: 40, artists: 6, days: 12, start: CivilDate(year: 2026, month: 10, day: 24))
        let path = NSTemporaryDirectory() + "local-days-\(UInt32.random(in: 0...UInt32.max)).ndjson"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var lines: [UInt8] = []
        for message in workload.messages { lines += (message.value ?? []) + [UInt8(ascii: "\n")] }
        FileManager.default.createFile(atPath: path, contents: Data(lines))
        let replay = try ReplayTests.run(["replay", path, "--log-level", "warning"], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--topics", "idle", "--memory-days", "0"])
        try await service.waitUntilHealthy()
        let events = workload.messages.compactMap(\.event)
        for (artist, zone) in Self.zones.sorted(by: { $0.key < $1.key }) {
            let checks = LocalDayChecks(events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zone)!)
            try await checks.checkEverything(service.baseURL + "/v1/artists/" + artist)
        }
    }
}

extension LocalDaysTests {
    /// Zones changed mid-stream, while events keep arriving: `backbeat artist set-zone` with the archive counts the
    /// artist's stored days again in the new zone, in the transaction that sets it, and the batches the service counted
    /// in the old zone meanwhile are refused and consumed again. Every answer is then in the new zone alone: artist-0001
    /// from UTC to Los Angeles (across its change of 2026-11-01), artist-0002 from Kolkata to Kathmandu (+5:30 to
    /// +5:45: no hour of the one is an hour of the other).
    @Test func aZoneChangedMidStreamAnswersTheNewZoneAlone() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("zone_change")
        let archive = NSTemporaryDirectory() + "zone-change-archive-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: archive) }
        let before = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0002", "--zone", "Asia/Kolkata", "--log-level", "warning"], postgresURL: database)
        #expect(before.status == 0, "\(before.output)")
        let workload = Workload(events: 24_000, seed: 41, artists: 6, days: 12, start: CivilDate(year: 2026, month: 10, day: 24))
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--archive-dir", archive])
        try await service.waitUntilHealthy()
        let half = workload.messages.count / 2
        try workload.publish(0..<half, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "the first half flushed") { try await storedOffsetTotal(store.client) == Int64(half) }
        }

        // The second half arrives in small runs while both zones change.
        let brokers = broker.bootstrapServers
        let publishing = Task {
            for start in stride(from: half, to: workload.messages.count, by: 300) {
                try workload.publish(start..<min(start + 300, workload.messages.count), to: brokers)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try await Task.sleep(for: .milliseconds(800))
        var rebuild = ""
        for (artist, zone) in [("artist-0001", "America/Los_Angeles"), ("artist-0002", "Asia/Kathmandu")] {
            let set = try ReplayTests.run(["artist", "set-zone", "--artist", artist, "--zone", zone, archive, "--log-level", "warning"], postgresURL: database)
            #expect(set.status == 0, "\(set.output)")
            #expect(set.output.contains("reports in \(zone): its "), "\(set.output)")
            #expect(set.output.contains("set-zone: ") && set.output.contains(" inputs read, "), "progress shown: \(set.output)")
            rebuild = set.output.components(separatedBy: "swapped in as rebuild ").last?.prefix { $0.isNumber }.description ?? ""
        }
        try await publishing.value
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "every message flushed") {
                try await storedOffsetTotal(store.client) == Int64(workload.messages.count)
            }
        }
        // The service has seen the last recount (its memory answers from PostgreSQL until its days are read again).
        try await service.waitForLog("rebuild=\(rebuild)")
        print("zone change: batches refused as counted in the zones before:",
              service.log().components(separatedBy: "an artist's zone changed while the batch was counted").count - 1)

        let events = workload.messages.compactMap(\.event)
        let zones = ["artist-0001": "America/Los_Angeles", "artist-0002": "Asia/Kathmandu"]
        for artist in (1...6).map({ String(format: "artist-%04d", $0) }) {
            let checks = LocalDayChecks(events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zones[artist] ?? "UTC")!)
            try await checks.checkEverything(service.baseURL + "/v1/artists/" + artist)
        }
        #expect(service.terminate() == 0)
    }
    /// Zones changed without the archive: `backbeat artist set-zone` counts the artist's stored days again in the new
    /// zone from the quarter-hour detail, and the events consumed after count in it too. Every count is then exact in
    /// the new zone, except where the detail cannot say (named in answers: `counts_unavailable`); unique listeners are
    /// not counted before the day after the change (`listeners_unavailable`). artist-0001 from UTC to Los Angeles,
    /// artist-0002 from Kolkata to Kathmandu, artist-0003 from Los Angeles to Kolkata: Los Angeles' repeated hour of
    /// 2026-11-01 lands on two hours of Kolkata's day, which has no counts then.
    @Test func aZoneChangedWithoutTheArchiveCountsTheDetailAgain() async throws {
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 4)
        let database = try await TestEnvironment.freshDatabase("zone_change_detail")
        for (artist, zone) in [("artist-0002", "Asia/Kolkata"), ("artist-0003", "America/Los_Angeles")] {
            let set = try ReplayTests.run(["artist", "set-zone", "--artist", artist, "--zone", zone, "--log-level", "warning"], postgresURL: database)
            #expect(set.status == 0, "\(set.output)")
        }
        let workload = Workload(events: 24_000, seed: 43, artists: 6, days: 12, start: CivilDate(year: 2026, month: 10, day: 24))
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        let first = workload.messages.count * 2 / 3
        try workload.publish(0..<first, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "the first part flushed") { try await storedOffsetTotal(store.client) == Int64(first) }
        }
        var rebuild = ""
        var outputs: [String: String] = [:]
        for (artist, zone) in [("artist-0001", "America/Los_Angeles"), ("artist-0002", "Asia/Kathmandu"), ("artist-0003", "Asia/Kolkata")] {
            let set = try ReplayTests.run(["artist", "set-zone", "--artist", artist, "--zone", zone, "--log-level", "warning"], postgresURL: database)
            #expect(set.status == 0 && set.output.contains("counted again from the quarter-hour detail"), "\(set.output)")
            outputs[artist] = set.output
            rebuild = set.output.components(separatedBy: "swapped in as rebuild ").last?.prefix { $0.isNumber }.description ?? ""
        }
        #expect(outputs["artist-0003"]?.contains("no counts on 2026-11-01") == true, "\(outputs)")
        #expect(outputs["artist-0001"]?.contains("no counts") == false, "\(outputs)")
        try workload.publish(first..<workload.messages.count, to: broker.bootstrapServers)
        try await TestEnvironment.withStore(url: database) { store in
            try await waitUntil(timeout: .seconds(60), "every message flushed") {
                try await storedOffsetTotal(store.client) == Int64(workload.messages.count)
            }
        }
        try await service.waitForLog("rebuild=\(rebuild)")

        // artist-0003's events of Kolkata's 2026-11-01 counted before the change are not in its answers; those
        // consumed after are.
        let kolkata = LocalDayChecks(events: [], zone: TimeZone(identifier: "Asia/Kolkata")!)
        let dropped = Set(workload.messages[..<first].compactMap(\.event).filter {
            $0.artistID == "artist-0003" && kolkata.day($0.occurredAt) == "2026-11-01"
        }.map(\.eventID))
        #expect(!dropped.isEmpty)
        let events = workload.messages.compactMap(\.event).filter { !dropped.contains($0.eventID) }
        let zones = ["artist-0001": "America/Los_Angeles", "artist-0002": "Asia/Kathmandu", "artist-0003": "Asia/Kolkata"]
        for artist in (1...6).map({ String(format: "artist-%04d", $0) }) {
            let checks = LocalDayChecks(
                events: events.filter { $0.artistID == artist }, zone: TimeZone(identifier: zones[artist] ?? "UTC")!,
                listenersAnswered: zones[artist] == nil)
            try await checks.checkEverything(service.baseURL + "/v1/artists/" + artist)
        }
        // The answers say which days have no counts, and only where they read them.
        let missing = try await HTTP.get(service.baseURL + "/v1/artists/artist-0003/streams?from=2026-10-30&to=2026-11-03")
        #expect(missing.text.contains(#""counts_unavailable":"counts incomplete for 2026-11-01: the artist's zone changed to Asia/Kolkata"#), "\(missing.text)")
        let whole = try await HTTP.get(service.baseURL + "/v1/artists/artist-0003/streams?from=2026-11-02&to=2026-11-04")
        #expect(!whole.text.contains("counts_unavailable"), "\(whole.text)")
        #expect(service.terminate() == 0)
    }

}

/// One artist's answers against its events placed on local days by Foundation's calendar in `zone`.
struct LocalDayChecks {
    let events: [Event]
    let zone: TimeZone
    /// The zone `tz` names on every read (nil: none: the artist's own).
    let readIn: String?
    /// Whether answers count unique listeners (else they say why not: `listeners_unavailable`).
    let listenersAnswered: Bool
    private let calendar: Calendar

    /// The local days read: 2026-10-26 (a Monday) to 2026-11-03, `to` excluded.
    static let from = "2026-10-26"
    static let to = "2026-11-03"

    init(events: [Event], zone: TimeZone, readIn: String? = nil, listenersAnswered: Bool = true) {
        self.events = events
        self.zone = zone
        self.readIn = readIn
        self.listenersAnswered = listenersAnswered
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    func checkEverything(_ base: String) async throws {
        try await checkDailyStreams(base)
        try await checkWeeklyStreams(base)
        try await checkMonthlyStreams(base)
        try await checkLocalHours(base)
        try await checkShares(base)
        try await checkRevenue(base)
        try await checkSocial(base)
        try await checkSummary(base)
    }

    // MARK: - Local time by Foundation

    /// `YYYY-MM-DD` of the local day `timestamp` falls on.
    func day(_ timestamp: Timestamp) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date(timestamp))
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    /// The local hour `timestamp` falls in, as `YYYY-MM-DDTHH`.
    func hour(_ timestamp: Timestamp) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: date(timestamp))
        return String(format: "%04d-%02d-%02dT%02d", parts.year!, parts.month!, parts.day!, parts.hour!)
    }

    /// How a period starting at local `text` (`YYYY-MM-DD` or `YYYY-MM-DDTHH`) is written: the local time with the
    /// offset of its first instant (`Z` in UTC).
    func label(_ text: String) -> String {
        let fields = text.split(whereSeparator: { $0 == "-" || $0 == "T" }).map { Int($0)! }
        let start = calendar.date(from: DateComponents(year: fields[0], month: fields[1], day: fields[2], hour: fields.count > 3 ? fields[3] : 0))!
        let offset = zone.secondsFromGMT(for: start)
        let clock = String(format: "%@T%02d:00:00", String(text.prefix(10)), fields.count > 3 ? fields[3] : 0)
        guard offset != 0 else { return clock + "Z" }
        return clock + String(format: "%@%02d:%02d", offset < 0 ? "-" : "+", abs(offset) / 3600, abs(offset) / 60 % 60)
    }

    private func date(_ timestamp: Timestamp) -> Date {
        Date(timeIntervalSince1970: Double(timestamp.seconds))
    }

    /// The local days from `from` up to `to`, excluded.
    func days(from: String, to: String) -> [String] {
        var days: [String] = []
        var day = RFC3339.parseDate(from)!.daysSinceEpoch
        while RFC3339.formatDate(CivilDate(daysSinceEpoch: day)) < to {
            days.append(RFC3339.formatDate(CivilDate(daysSinceEpoch: day)))
            day += 1
        }
        return days
    }

    func inRange(_ timestamp: Timestamp, from: String = Self.from, to: String = Self.to) -> Bool {
        let day = day(timestamp)
        return day >= from && day < to
    }

    var plays: [StreamEvent] { events.compactMap { if case .stream(let s) = $0 { s } else { nil } } }

    /// The sketch's count of these plays' listeners, checked against the exact distinct count.
    func listeners(_ plays: [StreamEvent]) -> Int {
        var sketch = HyperLogLog()
        for play in plays { if let id = play.listenerID { sketch.add(id) } }
        let exact = Set(plays.compactMap(\.listenerID)).count
        let estimate = Int(sketch.cardinality.rounded())
        #expect(abs(Double(estimate - exact)) <= 0.02 * Double(exact) + 1)
        return estimate
    }

    /// The answer of `url` (with `tz` when `readIn` names one).
    func json(_ url: String) async throws -> [String: Any] {
        let reply = try await HTTP.get(withZone(url))
        #expect(reply.status == 200, "\(url): \(reply.text)")
        return try #require(try reply.json() as? [String: Any])
    }

    /// `url` with `tz` when `readIn` names one.
    func withZone(_ url: String) -> String {
        readIn.map { url + "&tz=" + $0 } ?? url
    }

    /// A count of unique listeners as answered: the sketch's count of `plays`' listeners, or none with the reason.
    func checkListeners(_ answered: Any?, of plays: [StreamEvent], in body: [String: Any], _ context: String) {
        if listenersAnswered {
            #expect(answered as? Int == listeners(plays), "\(zone.identifier) listeners \(context)")
            #expect(body["listeners_unavailable"] == nil, "\(zone.identifier) \(context)")
        } else {
            #expect(answered == nil, "\(zone.identifier) listeners \(context)")
            #expect(body["listeners_unavailable"] is String, "\(zone.identifier) \(context)")
        }
    }

    // MARK: - Endpoints

    func checkDailyStreams(_ base: String) async throws {
        let body = try await json(base + "/streams?from=\(Self.from)&to=\(Self.to)&granularity=day")
        let series = try #require(body["series"] as? [[String: Any]])
        let days = days(from: Self.from, to: Self.to)
        #expect(series.map { $0["period_start"] as? String ?? "" } == days.map(label), "\(zone.identifier)")
        for (point, day) in zip(series, days) {
            let mine = plays.filter { self.day($0.occurredAt) == day }
            #expect(point["streams"] as? Int == mine.filter(\.isStream).count, "\(zone.identifier) streams on \(day)")
            #expect(point["skips"] as? Int == mine.filter { !$0.isStream }.count, "\(zone.identifier) skips on \(day)")
            #expect(point["listening_ms"] as? Int == Int(mine.reduce(0) { $0 + ($1.durationMs ?? 0) }), "\(zone.identifier) on \(day)")
            checkListeners(point["listeners"], of: mine, in: body, "on \(day)")
        }
        let totals = try #require(body["totals"] as? [String: Any])
        #expect(totals["streams"] as? Int == plays.filter { $0.isStream && inRange($0.occurredAt) }.count, "\(zone.identifier)")
    }

    /// Local October and November 2026 (the events run from 2026-10-24 to 11-05 UTC): each month's streams and
    /// listeners are its local days'.
    func checkMonthlyStreams(_ base: String) async throws {
        let body = try await json(base + "/streams?from=2026-10-01&to=2026-12-01&granularity=month")
        let series = try #require(body["series"] as? [[String: Any]])
        let months = ["2026-10", "2026-11"]
        #expect(series.map { $0["period_start"] as? String ?? "" } == months.map { label($0 + "-01") }, "\(zone.identifier)")
        for (point, month) in zip(series, months) {
            let mine = plays.filter { self.day($0.occurredAt).hasPrefix(month) }
            #expect(!mine.isEmpty)
            #expect(point["streams"] as? Int == mine.filter(\.isStream).count, "\(zone.identifier) streams in \(month)")
            checkListeners(point["listeners"], of: mine, in: body, "in \(month)")
        }
    }

    /// Local weeks (from Monday): streams and listeners of each week's seven local days.
    func checkWeeklyStreams(_ base: String) async throws {
        let body = try await json(base + "/streams?from=2026-10-26&to=2026-11-09&granularity=week")
        let series = try #require(body["series"] as? [[String: Any]])
        let weeks = [("2026-10-26", "2026-11-02"), ("2026-11-02", "2026-11-09")]
        #expect(series.map { $0["period_start"] as? String ?? "" } == weeks.map { label($0.0) }, "\(zone.identifier)")
        for (point, week) in zip(series, weeks) {
            let mine = plays.filter { inRange($0.occurredAt, from: week.0, to: week.1) }
            #expect(!mine.isEmpty)
            #expect(point["streams"] as? Int == mine.filter(\.isStream).count, "\(zone.identifier) streams in the week of \(week.0)")
            checkListeners(point["listeners"], of: mine, in: body, "in the week of \(week.0)")
        }
    }

    /// Local hours of 2026-11-01 (Los Angeles' 25-hour day: its 01:00 holds two hours of events), and an interval given
    /// as instants, read on the artist's clock.
    func checkLocalHours(_ base: String) async throws {
        let body = try await json(base + "/streams?from=2026-11-01&to=2026-11-02&granularity=hour")
        let series = try #require(body["series"] as? [[String: Any]])
        let hours = (0..<24).map { String(format: "2026-11-01T%02d", $0) }
        // Hours never count listeners, and say nothing of them.
        #expect(body["listeners_unavailable"] == nil && series.allSatisfy { $0["listeners"] == nil }, "\(zone.identifier)")
        #expect(series.map { $0["period_start"] as? String ?? "" } == hours.map(label), "\(zone.identifier)")
        for (point, hour) in zip(series, hours) {
            let mine = plays.filter { self.hour($0.occurredAt) == hour }
            #expect(point["streams"] as? Int == mine.filter(\.isStream).count, "\(zone.identifier) streams at \(hour)")
        }
        let from = RFC3339.parseInstant("2026-11-01T07:00:00Z")!, to = RFC3339.parseInstant("2026-11-01T10:00:00Z")!
        let offsetHours = zone.secondsFromGMT(for: date(from)) % 3600 == 0 && zone.secondsFromGMT(for: date(to)) % 3600 == 0
        let reply = try await HTTP.get(withZone(base + "/streams?from=2026-11-01T07:00:00Z&to=2026-11-01T10:00:00Z&granularity=all"))
        guard offsetHours || readIn != nil else {
            // Not on the artist's whole hours (+5:30, +5:45, +13:45, or a zone whole hours from one): refused, not cut.
            // Read in a zone (tz), the instants fall on the full tables' quarter hours, whatever the zones.
            #expect(reply.status == 400, "\(zone.identifier): \(reply.text)")
            return
        }
        let totals = try #require((try reply.json() as? [String: Any])?["totals"] as? [String: Any])
        #expect(totals["streams"] as? Int == plays.filter { $0.isStream && $0.occurredAt >= from && $0.occurredAt < to }.count, "\(zone.identifier)")
    }

    func checkShares(_ base: String) async throws {
        let mine = plays.filter { $0.isStream && inRange($0.occurredAt) }
        func expected(_ key: (StreamEvent) -> String) -> [String: Int] {
            mine.reduce(into: [:]) { $0[key($1), default: 0] += 1 }
        }
        let platforms = try #require(try await json(base + "/platforms?from=\(Self.from)&to=\(Self.to)")["platforms"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: platforms.map { ($0["platform"] as! String, $0["streams"] as! Int) }) == expected(\.platform), "\(zone.identifier)")
        let demographics = try await json(base + "/demographics?from=\(Self.from)&to=\(Self.to)")
        let countries = try #require(demographics["countries"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: countries.map { ($0["country"] as! String, $0["streams"] as! Int) }) == expected(\.country), "\(zone.identifier)")
        let top = try await json(base + "/tracks/top?from=\(Self.from)&to=\(Self.to)&limit=50")
        let tracks = try #require(top["tracks"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: tracks.map { ($0["track_id"] as! String, $0["streams"] as! Int) }) == expected(\.trackID), "\(zone.identifier)")
        for track in tracks.prefix(3) {
            let id = track["track_id"] as! String
            checkListeners(track["listeners"], of: plays.filter { $0.trackID == id && inRange($0.occurredAt) }, in: top, "of \(id)")
        }
    }

    /// Weeks 2026-10-26 and 2026-11-02 (Mondays), local.
    func checkRevenue(_ base: String) async throws {
        let body = try await json(base + "/revenue?from=2026-10-26&to=2026-11-09&granularity=week")
        let revenue = events.compactMap { if case .revenue(let r) = $0 { r } else { nil } }
        let series = try #require(body["series"] as? [[String: Any]])
        #expect(Set(series.map { $0["period_start"] as? String ?? "" }) == Set(["2026-10-26", "2026-11-02"].map(label)), "\(zone.identifier)")
        for point in series {
            let week = point["period_start"] as! String == label("2026-10-26") ? ("2026-10-26", "2026-11-02") : ("2026-11-02", "2026-11-09")
            let matching = revenue.filter {
                inRange($0.occurredAt, from: week.0, to: week.1) && $0.source.rawValue == point["source"] as! String && $0.currency == point["currency"] as! String
            }
            #expect(point["amount"] as? String == matching.reduce(Money.zero) { $0 + $1.amount }.decimalString, "\(zone.identifier) \(week.0)")
        }
    }

    func checkSocial(_ base: String) async throws {
        let body = try await json(base + "/social?from=\(Self.from)&to=\(Self.to)&granularity=all")
        var expected: [String: Int64] = [:]
        for case .social(let event) in events where inRange(event.occurredAt) { expected["\(event.platform)|\(event.action)", default: 0] += event.count }
        let totals = try #require(body["totals"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: totals.map { ("\($0["platform"]!)|\($0["action"]!)", Int64($0["count"] as! Int)) }) == expected, "\(zone.identifier)")
        let series = try #require(body["series"] as? [[String: Any]])
        #expect(series.allSatisfy { $0["period_start"] as? String == label(Self.from) }, "\(zone.identifier)")
    }

    /// As of 2026-11-03: the 28 local days before it, and November's revenue so far (11-01 and 11-02, local).
    func checkSummary(_ base: String) async throws {
        let body = try await json(base + "/summary?as_of=2026-11-03")
        let window = plays.filter { inRange($0.occurredAt, from: "2026-10-06", to: "2026-11-03") }
        #expect(body["streams_28d"] as? Int == window.filter(\.isStream).count, "\(zone.identifier)")
        checkListeners(body["monthly_listeners"], of: window, in: body, "summary")
        var revenue: [String: Money] = [:]
        for case .revenue(let event) in events where inRange(event.occurredAt, from: "2026-11-01", to: "2026-11-03") {
            revenue[event.currency, default: .zero] += event.amount
        }
        let totals = try #require(body["revenue_this_month"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: totals.map { ($0["currency"] as! String, $0["amount"] as! String) }) == revenue.mapValues(\.decimalString), "\(zone.identifier)")
    }
}
