/// Turns instants into one zone's local time, quickly for instants that come close together (an artist's events):
/// the stretch of one offset last looked up is kept, so most instants cost two comparisons and an addition.
public struct LocalClock: Sendable {
    public let rules: ZoneRules
    private var span = OffsetSpan(offset: 0, from: 0, until: 0)

    public init(_ rules: ZoneRules) {
        self.rules = rules
    }

    /// The local wall-clock time at `instant` (seconds since the epoch), as seconds since the local 1970-01-01 00:00.
    public mutating func localSeconds(atSecond instant: Int64) -> Int64 {
        if !span.contains(instant) { span = rules.span(atSecond: instant) }
        return instant + Int64(span.offset)
    }
}
