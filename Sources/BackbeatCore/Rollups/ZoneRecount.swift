/// An artist's stored full-dimension rows (by quarter hour of its old zone's days) counted again on the local quarter
/// hours of a new zone: what a change of the artist's zone makes of the detail it kept, when no archive is given
/// (issue 40). Every cube of the artist is then made again from `delta` (a writer's one way: `Store.writeAggregates`).
///
/// What the detail cannot say is named, never guessed: the new zone's days before `countsFrom` (they began before the
/// detail kept, or before an earlier change's own first day) and the days in `countsMissing` (where a quarter hour the
/// old clock lived twice lands on two of the new clock's, or an earlier change left a day out) get none of the rows
/// moved; the listener sketches are per day of the old zone and cannot be moved at all.
public struct ZoneRecount: Sendable {
    public let artistID: String
    public let shift: ZoneShift
    /// The first day of the new zone whose counts the detail holds whole (nil: every day's).
    public let countsFrom: Int64?
    /// The new zone's days without counts besides those before `countsFrom`.
    public private(set) var countsMissing: Set<Int64>
    /// Each row moved: the new clock's quarter hour, the cube (one of `Cube.all`'s full ones), its values and sums.
    private var moved: [(quarter: Int64, cube: Cube, values: [String], sums: CubeRowSums)] = []

    /// - Parameters:
    ///   - completeFromOldDay: the first day of the old zone from which the artist's every count is in the detail
    ///     given (nil: all of them are).
    ///   - missingOldDays: days of the old zone an earlier change left without counts.
    public init(artistID: String, from old: ZoneRules, to new: ZoneRules, completeFromOldDay: Int64?, missingOldDays: [Int64] = []) {
        self.artistID = artistID
        shift = ZoneShift(from: old, to: new)
        countsFrom = completeFromOldDay.map { day in
            // The first new day that begins at or after the old day's first instant.
            let first = old.startOfLocalDay(day)
            let landed = new.localDay(ofSecond: first)
            return new.startOfLocalDay(landed) >= first ? landed : landed + 1
        }
        countsMissing = []
        for day in missingOldDays { countsMissing.formUnion(newDays(ofOldDay: day)) }
    }

    /// The days of the new zone that the old zone's day `day` overlaps.
    private func newDays(ofOldDay day: Int64) -> ClosedRange<Int64> {
        shift.new.localDay(ofSecond: shift.old.startOfLocalDay(day))...shift.new.localDay(ofSecond: shift.old.startOfLocalDay(day + 1) - 1)
    }

    /// Moves the rows of `rows`, the block of the old zone's day `day` of `cube` (a full-dimension cube: its slots are
    /// quarter hours).
    public mutating func add(_ rows: BlockRows, ofDay day: Int64, in cube: Cube) {
        precondition(cube.isFull, "only the full-dimension rows are moved")
        for row in 0..<rows.count {
            switch shift.landing(of: day * 96 + Int64(rows.slots[row])) {
            case .exactly(let quarter):
                moved.append((quarter, cube, rows.values(of: row), rows.sums[row]))
            case .split(let quarters):
                // Which of its events fell on which quarter the row cannot say: the days it lands on say so instead.
                for quarter in quarters { countsMissing.insert(quarter.floorDiv(96)) }
            case .never:
                // A quarter hour the old clock skipped holds no events: a row there cannot be placed, and its day says so.
                countsMissing.formUnion(newDays(ofOldDay: day))
            }
        }
    }

    /// The rows moved, on days with counts, as one delta in the new zone (no plays: the listeners are not moved).
    public var delta: InternedDelta {
        var delta = InternedDelta(zones: ArtistZones([artistID: shift.new]))
        for row in moved {
            let day = row.quarter.floorDiv(96)
            if let countsFrom, day < countsFrom { continue }
            if countsMissing.contains(day) { continue }
            delta.add(row.values, of: row.cube, artistID: artistID, quarter: row.quarter, sums: row.sums)
        }
        return delta
    }

    /// Rows moved (including any on days without counts).
    public var movedRows: Int { moved.count }
}
