import BackbeatCore

/// How long stored numbers are kept (`serve --detail-days`, `--cube-months`; docs/operations.md, "Retention"): what
/// `Store.applyRetention` is asked to keep, by whole months.
public struct RetentionSettings: Sendable, Equatable {
    /// Days of full-dimension hourly detail kept before it is summed into daily rows (0: kept forever).
    public var detailDays: Int
    /// Months of every other aggregate (dashboard cubes, listener sketches, daily rows) kept before the current one
    /// (0: kept forever).
    public var cubeMonths: Int

    public init(detailDays: Int = 90, cubeMonths: Int = 0) {
        self.detailDays = detailDays
        self.cubeMonths = cubeMonths
    }

    /// The first day whose hourly detail must be kept on `today` (nil: all of it).
    public func detailKeptFrom(today: Int64) -> Int64? {
        detailDays == 0 ? nil : today - Int64(detailDays)
    }

    /// The first day whose other aggregates must be kept on `today`: the first of the month `cubeMonths` before
    /// today's (nil: all of them).
    public func cubesKeptFrom(today: Int64) -> Int64? {
        guard cubeMonths > 0 else { return nil }
        let date = CivilDate(daysSinceEpoch: today)
        let months = date.year * 12 + (date.month - 1) - cubeMonths
        return CivilDate(year: months / 12, month: months % 12 + 1, day: 1).daysSinceEpoch
    }
}
