@testable import BackbeatCore
import Foundation
import Testing

/// Zone rules against ground truth computed apart: Python's `zoneinfo` (its own TZif reader and footer rules) over the
/// same database files, `/usr/share/zoneinfo`.
@Suite struct ZoneRulesTests {
    static let database = URL(fileURLWithPath: "/usr/share/zoneinfo")

    /// Every whole-hour, half-hour and 45-minute offset, both hemispheres, daylight-saving shifts of 30 minutes (Lord
    /// Howe), of two hours (Troll), negative (Dublin's winter), at midnight (Santiago), days skipped (Apia, 2011) and
    /// footers with version 3 times (Nuuk, Casablanca).
    static let zones = [
        "UTC", "America/Los_Angeles", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Lord_Howe",
        "America/St_Johns", "Pacific/Marquesas", "Europe/Dublin", "Africa/Casablanca", "America/Santiago", "Antarctica/Troll",
        "Pacific/Kiritimati", "Pacific/Apia", "America/Nuuk", "Asia/Tehran", "Europe/London", "Australia/Sydney",
    ]

    static func rules(_ name: String) throws -> ZoneRules {
        let bytes = try Data(contentsOf: database.appendingPathComponent(name))
        return try ZoneRules(name: name, tzif: Array(bytes))
    }

    /// Python's offset (seconds east of UTC) of each (zone, instant).
    static func groundTruth(_ asks: [(zone: String, instant: Int64)]) throws -> [Int64] {
        let script = """
            import sys, datetime
            from zoneinfo import ZoneInfo
            zones = {}
            out = []
            for line in sys.stdin:
                name, instant = line.split()
                zone = zones.setdefault(name, ZoneInfo(name))
                out.append(str(int(datetime.datetime.fromtimestamp(int(instant), tz=zone).utcoffset().total_seconds())))
            print("\\n".join(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        process.environment = ["TZDIR": database.path, "PYTHONTZPATH": database.path, "PATH": "/usr/bin:/bin"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let lines = asks.map { "\($0.zone) \($0.instant)\n" }.joined()
        let writer = Thread { input.fileHandleForWriting.write(Data(lines.utf8)); try? input.fileHandleForWriting.close() }
        writer.start()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: answer, as: UTF8.self).split(separator: "\n").compactMap { Int64($0) }
    }

    @Test func offsetsMatchPythonFrom1901To2100() throws {
        var asks: [(zone: String, instant: Int64)] = []
        var ours: [Int64] = []
        for name in Self.zones {
            let zone = try Self.rules(name)
            // Every 11 h 7 min (each hour of the day in turn), and each transition's last second before and first after.
            var instants = Array(stride(from: Int64(-2_147_483_648), to: 4_102_444_800, by: 40_020))
            for transition in zone.transitions where transition > -2_147_483_648 { instants += [transition - 1, transition] }
            // The footer's changes of 2038 to 2099 by its own rule, checked the same way.
            if let daylight = zone.footer?.daylight {
                for year in 2038...2099 {
                    let start = PosixZoneRule.localSeconds(of: daylight.start, in: year) - Int64(zone.footer!.standardOffset)
                    let end = PosixZoneRule.localSeconds(of: daylight.end, in: year) - Int64(daylight.offset)
                    instants += [start - 1, start, end - 1, end]
                }
            }
            for instant in instants {
                asks.append((name, instant))
                ours.append(Int64(zone.offset(atSecond: instant)))
            }
        }
        let truth = try Self.groundTruth(asks)
        try #require(truth.count == asks.count)
        var wrong: [String] = []
        for index in asks.indices where ours[index] != truth[index] {
            wrong.append("\(asks[index].zone) at \(asks[index].instant): \(ours[index]), Python \(truth[index])")
        }
        #expect(wrong.isEmpty, "\(wrong.count) offsets differ, the first: \(wrong.prefix(5))")
        #expect(asks.count > 250_000)
    }

    /// Each local day's first instant by `startOfLocalDay`, 1970 to 2060, checked by Python's offsets: it is on the
    /// day (or a later one, for a day skipped), and the second before it is on an earlier day.
    @Test func localDaysStartWherePythonSays() throws {
        var asks: [(zone: String, instant: Int64)] = []
        var days: [Int64] = []
        for name in Self.zones {
            let zone = try Self.rules(name)
            for day in Int64(0)...Int64(33_000) {
                let start = zone.startOfLocalDay(day)
                asks += [(name, start - 1), (name, start)]
                days.append(day)
            }
        }
        let truth = try Self.groundTruth(asks)
        try #require(truth.count == asks.count)
        var wrong: [String] = []
        for (index, day) in days.enumerated() {
            let before = asks[2 * index].instant
            let start = asks[2 * index + 1].instant
            let onDay = (start + truth[2 * index + 1]).floorDiv(86_400) >= day
            let beforeEarlier = (before + truth[2 * index]).floorDiv(86_400) < day
            if !onDay || !beforeEarlier { wrong.append("\(asks[2 * index].zone) day \(day) starts at \(start)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) day starts wrong, the first: \(wrong.prefix(5))")
    }

    @Test func daysOf23And25HoursAndDaysStartingAfterMidnight() throws {
        func hours(_ zone: ZoneRules, _ date: CivilDate) -> Int64 {
            let day = date.daysSinceEpoch
            return (zone.startOfLocalDay(day + 1) - zone.startOfLocalDay(day)) / 3600
        }
        let losAngeles = try Self.rules("America/Los_Angeles")
        #expect(hours(losAngeles, CivilDate(year: 2026, month: 3, day: 8)) == 23)
        #expect(hours(losAngeles, CivilDate(year: 2026, month: 11, day: 1)) == 25)
        #expect(hours(losAngeles, CivilDate(year: 2026, month: 11, day: 2)) == 24)
        // Far past the file's last transition (2037): the footer's rule.
        #expect(hours(losAngeles, CivilDate(year: 2080, month: 3, day: 10)) == 23)
        #expect(losAngeles.startOfLocalDay(CivilDate(year: 2026, month: 11, day: 25).daysSinceEpoch)
            == CivilDate(year: 2026, month: 11, day: 25).daysSinceEpoch * 86_400 + 8 * 3600)
        // Chile moves its clocks at midnight: the first Sunday of September 2026 begins at 01:00 local (04:00 UTC).
        let santiago = try Self.rules("America/Santiago")
        let changeDay = CivilDate(year: 2026, month: 9, day: 6).daysSinceEpoch
        #expect(santiago.startOfLocalDay(changeDay) == changeDay * 86_400 + 4 * 3600)
        #expect(hours(santiago, CivilDate(year: 2026, month: 9, day: 6)) == 23)
        // Samoa skipped 2011-12-30: the day before ends where the day after begins.
        let apia = try Self.rules("Pacific/Apia")
        let skipped = CivilDate(year: 2011, month: 12, day: 30).daysSinceEpoch
        #expect(apia.startOfLocalDay(skipped) == apia.startOfLocalDay(skipped + 1))
        #expect(apia.localDay(ofSecond: apia.startOfLocalDay(skipped)) == skipped + 1)
        let kathmandu = try Self.rules("Asia/Kathmandu")
        #expect(kathmandu.offset(atSecond: 1_795_000_000) == 5 * 3600 + 45 * 60)
        let chatham = try Self.rules("Pacific/Chatham")
        #expect(chatham.offset(atSecond: CivilDate(year: 2027, month: 1, day: 15).daysSinceEpoch * 86_400) == 13 * 3600 + 45 * 60)
        #expect(chatham.offset(atSecond: CivilDate(year: 2027, month: 7, day: 15).daysSinceEpoch * 86_400) == 12 * 3600 + 45 * 60)
        #expect(ZoneRules.utc.localDay(ofSecond: 86_399) == 0 && ZoneRules.utc.startOfLocalDay(20_000) == 20_000 * 86_400)
    }

    @Test func footerRulesParsed() throws {
        let chatham = try PosixZoneRule("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45")
        #expect(chatham.standardOffset == 12 * 3600 + 45 * 60)
        #expect((chatham.daylight?.offset ?? 0) == 13 * 3600 + 45 * 60)
        #expect(chatham.daylight?.start == .init(day: .monthWeekDay(month: 9, week: 5, weekday: 0), time: 2 * 3600 + 45 * 60))
        // Version 3: negative and beyond-24-hour times; an all-year daylight-saving rule.
        let nuuk = try PosixZoneRule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        #expect(nuuk.daylight?.start.time == -3600)
        let allYear = try PosixZoneRule("EST5EDT4,0/0,J365/25")
        for day in stride(from: Int64(20_000), to: 21_000, by: 37) { #expect(allYear.offset(at: day * 86_400) == -4 * 3600) }
        // Dublin: standard time in summer, a negative shift in winter.
        let dublin = try PosixZoneRule("IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(dublin.offset(at: CivilDate(year: 2040, month: 1, day: 10).daysSinceEpoch * 86_400) == 0)
        #expect(dublin.offset(at: CivilDate(year: 2040, month: 7, day: 10).daysSinceEpoch * 86_400) == 3600)
        // Jn never counts February 29; n does.
        #expect(PosixZoneRule.localSeconds(of: .init(day: .julianNoLeap(60), time: 0), in: 2028) == CivilDate(year: 2028, month: 3, day: 1).daysSinceEpoch * 86_400)
        #expect(PosixZoneRule.localSeconds(of: .init(day: .zeroBased(59), time: 0), in: 2028) == CivilDate(year: 2028, month: 2, day: 29).daysSinceEpoch * 86_400)
        for malformed in ["", "PST", "PST8PDT", "PST8PDT,M3.2.0", "PST8PDT,M13.2.0,M11.1.0", "<+05", "AB5", "PST200", "PST8PDT,M3.2.0,M11.1.0x"] {
            #expect(throws: PosixZoneRule.Malformed.self, "\(malformed)") { try PosixZoneRule(malformed) }
        }
    }

    @Test func whatIsNotAZoneIsRefused() throws {
        #expect(throws: ZoneRules.Unreadable.self) { try ZoneRules(name: "x", tzif: Array("not a zone".utf8)) }
        let losAngeles = try Array(Data(contentsOf: Self.database.appendingPathComponent("America/Los_Angeles")))
        for cut in [10, 44, 100, 1_000, losAngeles.count - 40, losAngeles.count - 1] {
            #expect(throws: ZoneRules.Unreadable.self, "cut at \(cut)") { try ZoneRules(name: "x", tzif: Array(losAngeles.prefix(cut))) }
        }
        if FileManager.default.fileExists(atPath: Self.database.appendingPathComponent("right/UTC").path) {
            #expect(throws: ZoneRules.Unreadable.self) { try Self.rules("right/UTC") }
        }
        for good in ["UTC", "America/Los_Angeles", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Etc/GMT-14", "EST5EDT"] {
            #expect(ZoneName(good) != nil, "\(good)")
        }
        for bad in ["", "/etc/passwd", "../etc/passwd", "America/../../etc", "America//Lima", "America/", "a b", "Europe/Paris\0", "-x", String(repeating: "A", count: 65)] {
            #expect(ZoneName(bad) == nil, "\(bad)")
        }
    }
}
