/// What a change of an artist's zone counted again from the detail could not count (`ZoneRecount`), in days of the
/// artist's zone: their counts made before the change were dropped, and only events consumed since count there.
/// Answers over those days say so (`counts_unavailable`, `listeners_unavailable`) rather than mix zones.
public struct RecountGaps: Sendable, Equatable {
    /// The first day whose counts were made again (nil: every day's were).
    public var countsFrom: Int64?
    /// Days from `countsFrom` on whose counts were not made again.
    public var countsMissing: Set<Int64>
    /// The first day whose unique listeners are counted in the artist's zone (nil: every day's are).
    public var listenersFrom: Int64?

    public init(countsFrom: Int64? = nil, countsMissing: Set<Int64> = [], listenersFrom: Int64? = nil) {
        self.countsFrom = countsFrom
        self.countsMissing = countsMissing
        self.listenersFrom = listenersFrom
    }

    /// No gap at all.
    public var isEmpty: Bool { countsFrom == nil && countsMissing.isEmpty && listenersFrom == nil }

    /// The days of `days` without counts, as the answer names them: those before `countsFrom` as one range, then
    /// each missing day (nil: every day of `days` has counts).
    public func countsUnavailable(in days: ClosedRange<Int64>) -> (before: Int64?, missing: [Int64])? {
        let before = countsFrom.flatMap { $0 > days.lowerBound ? $0 : nil }
        let missing = countsMissing.filter { days.contains($0) }.sorted()
        return before == nil && missing.isEmpty ? nil : (before, missing)
    }

    /// Whether every day of `days` (half-open) has its unique listeners counted in the artist's zone.
    public func listenersCounted(over days: Range<Int64>) -> Bool {
        listenersFrom.map { days.lowerBound >= $0 } ?? true
    }
}
