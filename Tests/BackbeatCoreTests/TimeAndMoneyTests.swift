import BackbeatCore
import Testing

@Suite struct TimeAndMoneyTests {
    @Test func civilDatesRoundTrip() {
        for days: Int64 in [-800_000, -1, 0, 59, 365, 11_016, 20_000, 2_932_896] {
            let date = CivilDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            #expect(date.isValid)
        }
        #expect(CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2025, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 1900, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 2000, month: 2, day: 29).isValid)
    }

    @Test func rfc3339ParsesAndFormats() {
        #expect(RFC3339.parseTimestamp("1970-01-01T00:00:00Z") == Timestamp(microseconds: 0))
        #expect(RFC3339.parseTimestamp("1970-01-01t01:00:00-01:00") == Timestamp(seconds: 7200))
        #expect(RFC3339.parseTimestamp("2026-01-01T00:00:00.123456789Z")?.microseconds == 1_767_225_600_123_456)
        #expect(RFC3339.parseTimestamp("2026-01-01T24:00:00Z") == nil)
        #expect(RFC3339.parseTimestamp("2026-01-01T00:00:00") == nil)
        #expect(RFC3339.parseTimestamp("2026-01-01T00:00:00.Z") == nil)
        #expect(RFC3339.parseTimestamp("2026-01-01T00:00:00+0100") == nil)
        #expect(RFC3339.format(Timestamp(seconds: 1_767_225_600)) == "2026-01-01T00:00:00Z")
        #expect(RFC3339.format(Timestamp(microseconds: 1_767_225_600_000_000 + 86_399_000_007)) == "2026-01-01T23:59:59.000007Z")
        #expect(RFC3339.format(Timestamp(seconds: -1)) == "1969-12-31T23:59:59Z")
        #expect(RFC3339.format(local: Timestamp(seconds: 1_767_225_600), offset: 5 * 3600 + 45 * 60) == "2026-01-01T00:00:00+05:45")
        #expect(RFC3339.format(local: Timestamp(seconds: 1_767_225_600), offset: -(9 * 3600 + 30 * 60)) == "2026-01-01T00:00:00-09:30")
        #expect(RFC3339.format(local: Timestamp(seconds: 1_767_225_600), offset: 0) == "2026-01-01T00:00:00Z")
        #expect(RFC3339.parseTimestamp("2026-01-01T00:00:00+05:45") == Timestamp(seconds: 1_767_225_600 - 5 * 3600 - 45 * 60))
        #expect(RFC3339.formatDate(CivilDate(year: 7, month: 3, day: 9)) == "0007-03-09")
        #expect(RFC3339.formatDate(CivilDate(year: 12_026, month: 12, day: 31)) == "12026-12-31")
        #expect(RFC3339.parseInstant("2026-03-01") == Timestamp(seconds: CivilDate(year: 2026, month: 3, day: 1).daysSinceEpoch * 86_400))
    }

    @Test func granularityPeriods() {
        let wednesday = RFC3339.parseTimestamp("2026-11-18T15:42:00Z")!
        #expect(RFC3339.format(Granularity.week.periodStart(of: wednesday)) == "2026-11-16T00:00:00Z")
        #expect(RFC3339.format(Granularity.month.periodStart(of: wednesday)) == "2026-11-01T00:00:00Z")
        #expect(RFC3339.format(Granularity.month.nextPeriod(after: RFC3339.parseInstant("2026-12-01")!)) == "2027-01-01T00:00:00Z")
        let interval = QueryInterval(from: RFC3339.parseInstant("2026-01-30")!, to: RFC3339.parseInstant("2026-04-02")!)
        #expect(Granularity.month.periods(covering: interval).map(RFC3339.format) == [
            "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z",
        ])
        #expect(Granularity.day.periods(covering: interval).count == 62)
        #expect(Granularity.month.periodCount(covering: interval) >= 4)
    }

    @Test func moneyIsExact() throws {
        var total = Money.zero
        for _ in 0..<10 { total += try Money.parse("0.1", allowExponent: false) }
        #expect(total.decimalString == "1.000000")
        #expect(try Money.parse("-0.000001", allowExponent: false).decimalString == "-0.000001")
        #expect(Money(micros: -1_500_000).decimalString == "-1.500000")
        let big = try Money.parse("99999999999999999999999999999999.999999", allowExponent: false, limit: Money.totalLimitMicros)
        #expect(big.decimalString == "99999999999999999999999999999999.999999")
        #expect(throws: Money.ParseError.outOfRange) { try Money.parse("999999999999999999999999999999999", allowExponent: false, limit: Money.totalLimitMicros) }
    }
}
