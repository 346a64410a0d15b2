/// The width of a series period, in UTC. Weeks are ISO weeks starting on Monday.
///
/// `quarterHour` is not one of the API's: it is the grain a read in another zone sums the full-dimension tables' rows
/// by (`ZoneRegrouping.slotGranularity`); `QueryBuilder` refuses it.
public enum Granularity: String, CaseIterable, Sendable {
    case quarterHour = "quarter_hour", hour, day, week, month, all

    /// The granularity a client names (`granularity=`): one of the API's, not `quarterHour`.
    public init?(parameter: String) {
        guard let granularity = Granularity(rawValue: parameter), granularity != .quarterHour else { return nil }
        self = granularity
    }

    /// The start of the period containing `timestamp` (for `all`, the timestamp itself).
    public func periodStart(of timestamp: Timestamp) -> Timestamp {
        let seconds = timestamp.seconds
        switch self {
        case .all:
            return timestamp
        case .quarterHour:
            return Timestamp(seconds: seconds.floorDiv(900) * 900)
        case .hour:
            return Timestamp(seconds: seconds.floorDiv(3600) * 3600)
        case .day:
            return Timestamp(seconds: seconds.floorDiv(86_400) * 86_400)
        case .week:
            let days = seconds.floorDiv(86_400)
            let monday = days - (CivilDate.weekday(ofDay: days) + 6).floorMod(7)
            return Timestamp(seconds: monday * 86_400)
        case .month:
            return Timestamp(seconds: CivilDate(daysSinceEpoch: seconds.floorDiv(86_400)).firstOfMonth.daysSinceEpoch * 86_400)
        }
    }

    /// The start of the period after the one starting at `start`.
    public func nextPeriod(after start: Timestamp) -> Timestamp {
        switch self {
        case .all: return start
        case .quarterHour: return start + 900
        case .hour: return start + 3600
        case .day: return start + 86_400
        case .week: return start + 7 * 86_400
        case .month:
            return Timestamp(seconds: CivilDate(daysSinceEpoch: start.seconds.floorDiv(86_400)).firstOfNextMonth.daysSinceEpoch * 86_400)
        }
    }

    /// The starts of every period that overlaps `interval`, in order. Empty for `all`.
    public func periods(covering interval: QueryInterval) -> [Timestamp] {
        guard self != .all else { return [] }
        var starts: [Timestamp] = []
        var start = periodStart(of: interval.from)
        while start < interval.to {
            starts.append(start)
            start = nextPeriod(after: start)
        }
        return starts
    }

    /// How many periods overlap `interval`, computed without listing them.
    public func periodCount(covering interval: QueryInterval) -> Int64 {
        let span = interval.to.seconds - periodStart(of: interval.from).seconds
        switch self {
        case .all: return 1
        case .quarterHour: return (span + 899) / 900
        case .hour: return (span + 3599) / 3600
        case .day: return (span + 86_399) / 86_400
        case .week: return (span + 7 * 86_400 - 1) / (7 * 86_400)
        case .month: return (span + 28 * 86_400 - 1) / (28 * 86_400)  // an upper bound
        }
    }
}

/// A half-open interval `[from, to)` of whole hours.
public struct QueryInterval: Hashable, Sendable {
    public var from: Timestamp
    public var to: Timestamp

    public init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// The least interval of whole hours holding this one (what a query's interval must be: `QueryBuilder`).
    public var wholeHours: QueryInterval {
        QueryInterval(from: Timestamp(seconds: from.seconds.floorDiv(3600) * 3600), to: Timestamp(seconds: -(-to.seconds).floorDiv(3600) * 3600))
    }

    /// The UTC days the interval touches (days since the epoch, half-open; empty when the interval is).
    public var days: Range<Int64> {
        let first = from.seconds.floorDiv(86_400)
        return first..<max(first, -(-to.seconds).floorDiv(86_400))
    }
}
