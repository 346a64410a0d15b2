/// Where an artist's stored quarter hours fall on another zone's clock: what a change of the artist's zone without
/// the archive would move its full-dimension rows by (issue 40: counts rebuilt from the detail kept).
///
/// A stored quarter hour is the artist's old local clock. Its instants are one stretch of 15 minutes, which lands on
/// one quarter hour of any zone (every offset in use is a multiple of 15 minutes); two stretches where the old clock
/// went back over it (a fall-back quarter holds both), which land on two quarter hours of the new clock unless it
/// went back the same way; none where the old clock went forward over it.
public struct ZoneShift: Sendable {
    /// Where one stored quarter hour lands.
    public enum Landing: Equatable, Sendable {
        /// On this quarter hour of the new clock (quarter hours since the local epoch).
        case exactly(Int64)
        /// Its instants on these different quarter hours: the rows cannot say which of their events fell on which.
        case split([Int64])
        /// A quarter hour the old clock skipped: it holds no events.
        case never
    }

    public let old: ZoneRules
    public let new: ZoneRules

    public init(from old: ZoneRules, to new: ZoneRules) {
        self.old = old
        self.new = new
    }

    /// Where the old clock's quarter hour `quarter` (quarter hours since the local epoch) lands on the new clock.
    public func landing(of quarter: Int64) -> Landing {
        let pieces = ZoneRegrouping.instants(ofLocalSlot: quarter, seconds: 900, in: old)
        var quarters: [Int64] = []
        for piece in pieces {
            // Within a piece both clocks move forward by whole quarter hours: its first instant names its quarter,
            // unless the new clock changes inside it (then the piece spans two of the new clock's quarters).
            for instant in [piece.lowerBound, piece.upperBound - 1] {
                let landed = new.local(atSecond: instant).floorDiv(900)
                if !quarters.contains(landed) { quarters.append(landed) }
            }
        }
        switch quarters.count {
        case 0: return .never
        case 1: return .exactly(quarters[0])
        default: return .split(quarters.sorted())
        }
    }
}
