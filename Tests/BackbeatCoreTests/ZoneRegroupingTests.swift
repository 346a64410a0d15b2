@testable import BackbeatCore
import Foundation
import Testing

/// Reading an artist's stored hours or quarter hours in another zone (`tz=`), against Foundation's zones (ICU's data,
/// not the files `ZoneRules` reads): every instant of the interval, a quarter of an hour apart (every offset and change
/// in force is on a quarter hour), is placed in its stored slot and in the reading zone's period by Foundation; a
/// regrouping that answers sums each period exactly as those instants fall, and one refused has a stored slot that
/// really is cut.
@Suite struct ZoneRegroupingTests {
    /// Whole-hour pairs across changes on different dates and instants (Los Angeles and New York, London), +5:30 and
    /// +5:45 against UTC, +5:45 against +13:45 (whole hours apart), a change of 30 minutes (Lord Howe).
    static let pairs: [(stored: String, reading: String)] = [
        ("America/Los_Angeles", "America/New_York"), ("America/Los_Angeles", "UTC"), ("UTC", "America/Los_Angeles"),
        ("America/New_York", "Europe/London"), ("Asia/Kolkata", "UTC"), ("UTC", "Asia/Kathmandu"),
        ("Asia/Kathmandu", "Pacific/Chatham"), ("Australia/Lord_Howe", "Australia/Sydney"), ("Asia/Kolkata", "Asia/Kolkata"),
    ]

    /// Local dates (in the reading zone) around the changes of 2026: the United States' (03-08, 11-01), Europe's
    /// (03-29, 10-25), Lord Howe's and Chatham's (04-05; 09-27, 10-04).
    static let starts = ["2026-03-06", "2026-03-27", "2026-04-03", "2026-09-25", "2026-10-02", "2026-10-23", "2026-10-30"]

    @Test(arguments: pairs.indices, [Int64(3600), 900])
    func regroupsExactlyOrRefusesACutSlot(pair: Int, slotSeconds: Int64) throws {
        let (storedName, readingName) = Self.pairs[pair]
        let storedZone = try ZoneRulesTests.rules(storedName), readingZone = try ZoneRulesTests.rules(readingName)
        let stored = TimeZone(identifier: storedName)!, reading = TimeZone(identifier: readingName)!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = reading
        var answered = 0, refused = 0
        for start in Self.starts {
            let date = RFC3339.parseDate(start)!
            let from = Int64(calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day))!.timeIntervalSince1970)
            let to = Int64(calendar.date(byAdding: .day, value: 5, to: Date(timeIntervalSince1970: Double(from)))!.timeIntervalSince1970)
            for granularity in [Granularity.hour, .day, .week, .all] {
                let context = "\(storedName) read in \(readingName) by \(granularity) from \(start), slots of \(slotSeconds) s"
                // Each instant's stored slot (the artist's local clock) and the reading zone's period, by Foundation.
                func storedHour(_ instant: Int64) -> Int64 {
                    (instant + Int64(stored.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))).floorDiv(slotSeconds) * slotSeconds
                }
                let readingFrom = Timestamp(seconds: from + Int64(reading.secondsFromGMT(for: Date(timeIntervalSince1970: Double(from)))))
                func period(_ instant: Int64) -> Timestamp {
                    granularity == .all ? readingFrom : granularity.periodStart(of: Timestamp(seconds: instant + Int64(reading.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))))
                }
                let instants = Array(stride(from: from, to: to, by: 900))
                var perHour: [Int64: Int64] = [:], expected: [Timestamp: Int64] = [:]
                var periodsOfHour: [Int64: Set<Timestamp>] = [:]
                for instant in instants {
                    perHour[storedHour(instant), default: 0] += 1
                    expected[period(instant), default: 0] += 1
                    periodsOfHour[storedHour(instant), default: []].insert(period(instant))
                }
                // Stored hours that also hold instants outside the interval.
                let outside = Set((stride(from: from - 30 * 3600, to: from, by: 900).map { $0 } + stride(from: to, to: to + 30 * 3600, by: 900).map { $0 }).map(storedHour))
                let reallyCut = periodsOfHour.contains { $0.value.count > 1 } || !outside.isDisjoint(with: perHour.keys)
                do {
                    let regrouping = try ZoneRegrouping(
                        storedIn: storedZone, readIn: readingZone, from: from, to: to, granularity: granularity, slotSeconds: slotSeconds)
                    #expect(!reallyCut, "\(context): answered, yet a stored hour is cut")
                    let rows = perHour.map { QueryRow(periodStart: Timestamp(seconds: $0.key), groupValues: [], metrics: [.integer($0.value)]) }
                    let sums = Dictionary(uniqueKeysWithValues: regrouping.regroup(rows).map { ($0.periodStart ?? readingFrom, $0.metrics[0].integer) })
                    #expect(sums == expected, "\(context)")
                    #expect(perHour.keys.allSatisfy { regrouping.stored.from.seconds <= $0 && $0 < regrouping.stored.to.seconds }, "\(context)")
                    #expect(regrouping.reading.from == readingFrom, "\(context)")
                    if let days = regrouping.periodOfStoredDay {
                        for instant in instants {
                            #expect(days[storedHour(instant).floorDiv(86_400)] == period(instant), "\(context): the day of \(instant)")
                        }
                    }
                    answered += 1
                } catch {
                    #expect(error.code == .zoneNotTiled, "\(context)")
                    #expect(reallyCut, "\(context): refused, yet no stored hour is cut: \(error.message)")
                    refused += 1
                }
            }
        }
        // By hours, each pair whole hours apart somewhere answers something, +5:30 and +5:45 against whole-hour zones
        // nothing; by quarter hours every pair answers something.
        let odd = ["Asia/Kolkata", "Asia/Kathmandu"]
        let tiles = slotSeconds == 900 || storedName == readingName || readingName == "Pacific/Chatham"
            || (!odd.contains(storedName) && !odd.contains(readingName))
        #expect(tiles ? answered > 0 : answered == 0, "\(storedName) in \(readingName): \(answered) answered, \(refused) refused")
    }

    /// A read takes the stored hours where they tile the zone read (every cube keeps them), else the full tables'
    /// quarter hours where those are kept; before the first day of quarter hours it is refused, naming that day.
    @Test func aReadTakesHoursWhereTheyTileElseQuarterHoursWhereKept() throws {
        let kolkata = try ZoneRulesTests.rules("Asia/Kolkata"), utc = try ZoneRulesTests.rules("UTC")
        let losAngeles = try ZoneRulesTests.rules("America/Los_Angeles"), newYork = try ZoneRulesTests.rules("America/New_York")
        let first = RFC3339.parseDate("2026-10-26")!.daysSinceEpoch
        let from = first * 86_400, to = from + 7 * 86_400
        let hours = try ZoneRegrouping.choosing(
            storedIn: losAngeles, readIn: newYork, from: newYork.startOfLocalDay(first), to: newYork.startOfLocalDay(first + 7),
            granularity: .day, quarterHoursFrom: .max)
        #expect(hours.slotSeconds == 3600 && hours.slotGranularity == .hour)
        let quarters = try ZoneRegrouping.choosing(storedIn: kolkata, readIn: utc, from: from, to: to, granularity: .day, quarterHoursFrom: first - 1)
        #expect(quarters.slotSeconds == 900 && quarters.slotGranularity == .quarterHour)
        // UTC's 2026-10-26 begins at Kolkata's 05:30 of that day: its first stored quarter hour.
        #expect(quarters.stored.from == Timestamp(seconds: from + 5 * 3600 + 1800))
        #expect(quarters.period(ofStoredSlot: Timestamp(seconds: from + 5 * 3600 + 1800)) == Timestamp(seconds: from))
        #expect(quarters.period(ofStoredSlot: Timestamp(seconds: from + 5 * 3600 + 900)) == nil)
        do {
            _ = try ZoneRegrouping.choosing(storedIn: kolkata, readIn: utc, from: from, to: to, granularity: .day, quarterHoursFrom: first + 1)
            Issue.record("read before the quarter hours begin")
        } catch {
            #expect(error.code == .zoneNotTiled && error.message.contains("from the artist's local day 2026-10-27 on"), "\(error.message)")
        }
    }

    /// The artist's own zone answers its own days whole: listeners, kept per stored day, can answer every period.
    @Test func theArtistsOwnZoneReadsWholeStoredDays() throws {
        let zone = try ZoneRulesTests.rules("America/Los_Angeles")
        let from = zone.startOfLocalDay(RFC3339.parseDate("2026-10-26")!.daysSinceEpoch)
        let to = zone.startOfLocalDay(RFC3339.parseDate("2026-11-09")!.daysSinceEpoch)
        let weeks = try ZoneRegrouping(storedIn: zone, readIn: zone, from: from, to: to, granularity: .week)
        #expect(weeks.periodOfStoredDay?.count == 14)
        #expect(Set(weeks.periodOfStoredDay?.values.map { RFC3339.format($0) } ?? []) == ["2026-10-26T00:00:00Z", "2026-11-02T00:00:00Z"])
        // New York's days are Los Angeles' hours from 21:00: no listeners, though every number regroups.
        let newYork = try ZoneRulesTests.rules("America/New_York")
        let days = try ZoneRegrouping(storedIn: zone, readIn: newYork, from: from, to: to, granularity: .day)
        #expect(days.periodOfStoredDay == nil)
    }
}
