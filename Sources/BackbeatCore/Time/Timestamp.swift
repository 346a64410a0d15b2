/// A UTC instant with microsecond precision, the precision PostgreSQL keeps.
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    public init(seconds: Int64) {
        self.microseconds = seconds * 1_000_000
    }

    /// Whole seconds since the epoch, rounded towards negative infinity.
    public var seconds: Int64 {
        microseconds.floorDiv(1_000_000)
    }

    /// The UTC day this instant falls on, as days since 1970-01-01.
    public var daysSinceEpoch: Int64 {
        seconds.floorDiv(86_400)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    public static func + (lhs: Timestamp, seconds: Int64) -> Timestamp {
        Timestamp(microseconds: lhs.microseconds + seconds * 1_000_000)
    }
}

/// A calendar date in the proleptic Gregorian calendar.
public struct CivilDate: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = y.floorDiv(400)
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01.
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = z.floorDiv(146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.init(year: Int(yoe + era * 400 + (month <= 2 ? 1 : 0)), month: Int(month), day: Int(day))
    }

    /// The first day of this date's month.
    public var firstOfMonth: CivilDate {
        CivilDate(year: year, month: month, day: 1)
    }

    /// The first day of the month after this date's.
    public var firstOfNextMonth: CivilDate {
        month == 12 ? CivilDate(year: year + 1, month: 1, day: 1) : CivilDate(year: year, month: month + 1, day: 1)
    }

    /// The weekday of the day `days` after 1970-01-01, from 0 (Sunday) to 6 (Saturday).
    public static func weekday(ofDay days: Int64) -> Int64 {
        // 1970-01-01 was a Thursday.
        (days + 4).floorMod(7)
    }

    /// Whether the fields name a real day.
    public var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= CivilDate.daysIn(month: month, year: year)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension Int64 {
    /// Division rounding towards negative infinity.
    @inlinable
    public func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder of `floorDiv`: from 0 up to the divisor (for a positive divisor).
    @inlinable
    public func floorMod(_ divisor: Int64) -> Int64 {
        self - floorDiv(divisor) * divisor
    }
}
