import BackbeatCore

/// How much of the cubes the service keeps in memory.
public struct MemoryConfiguration: Sendable {
    /// Days held besides the current month (the window is the last `retentionDays` days plus the month so far).
    public var retentionDays: Int
    /// Upper bound on the bytes held; the oldest days are dropped first when it is exceeded.
    public var budgetBytes: Int

    public init(retentionDays: Int = 62, budgetBytes: Int = 512 << 20) {
        self.retentionDays = retentionDays
        self.budgetBytes = budgetBytes
    }

    /// Whether queries may be answered from memory at all (zero days or zero bytes: PostgreSQL answers everything).
    public var isEnabled: Bool { retentionDays > 0 && budgetBytes > 0 }

    /// The first day of the retained window when `today` is the current UTC day.
    public func firstRetainedDay(today: Int64) -> Int64 {
        let date = CivilDate(daysSinceEpoch: today)
        let monthStart = CivilDate(year: date.year, month: date.month, day: 1).daysSinceEpoch
        return min(today - Int64(retentionDays) + 1, monthStart)
    }
}
