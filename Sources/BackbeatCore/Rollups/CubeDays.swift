/// A cube's rows of one artist and UTC day, as a flush stores them (one PostgreSQL row per artist-day, its block:
/// `CubeBlock`): each row's key (the hour of the day for an hourly cube, then the cube's dimension values) and its summed
/// measures.
public struct CubeDay: Sendable {
    public var artist: UInt32
    /// Days since the epoch (UTC).
    public var day: Int64
    /// Per row, the hour after the day's midnight (hourly cubes; empty otherwise).
    public var hours: [Int16] = []
    /// Per row, the cube's dimension values in column order (`dimensionCount` each, one after another).
    public var values: [InternedValue] = []
    public var sums: [CubeRowSums] = []

    public var rowCount: Int { sums.count }
}

/// A delta's rows grouped by artist and UTC day: each dataset's rows copied once into the order of their artist-days,
/// so that each cube's `CubeDay`s are made in one sequential pass over them (a pass per cube over the delta's own
/// tables would gather the rows from random places each time).
public struct ArtistDayRows: Sendable {
    private let streams: Grouped<StreamCell, StreamCounters>
    private let revenue: Grouped<RevenueCell, RevenueCounters>
    private let social: Grouped<SocialCell, Int64>

    public init(_ delta: InternedDelta) {
        streams = Grouped(delta.streams)
        revenue = Grouped(delta.revenue)
        social = Grouped(delta.social)
    }

    /// The rows `cube` gains from the delta, one `CubeDay` per artist and day, in no particular order: a full
    /// hourly table's are the delta's rows; a derived cube's sum them to its key.
    public func days(of cube: Cube) -> [CubeDay] {
        var days: [CubeDay] = []
        forEachDay(of: cube) { days.append($0) }
        return days
    }

    /// `days(of:)` one at a time: `body` gets each artist-day's `CubeDay` and the next is made once it returns, so
    /// that a flush holds one artist-day's rows in this form at a time, not a whole cube's.
    public func forEachDay(of cube: Cube, _ body: (CubeDay) -> Void) {
        switch cube.dataset {
        case .streams: streams.forEachDay(of: cube, CubeRowSums.init, body)
        case .revenue: revenue.forEachDay(of: cube, CubeRowSums.init, body)
        case .social: social.forEachDay(of: cube, CubeRowSums.init(socialCount:), body)
        }
    }

    /// One dataset's rows in order of their artist-days (a counting sort): group `g`, artist-day `cells[g]`, holds
    /// the rows `starts[g] ..< starts[g + 1]`.
    private struct Grouped<Key: InternedRowKey, Value: Sendable>: Sendable {
        var cells: [ArtistDayCell] = []
        var starts: [Int] = [0]
        var keys: [Key] = []
        var values: [Value] = []

        init(_ table: CellTable<Key, Value>) {
            var groups = CellTable<ArtistDayCell, Int>()
            var group = [Int32](repeating: 0, count: table.count)
            var counts: [Int] = []
            for (row, key) in table.keys.enumerated() {
                groups.update(ArtistDayCell(artist: key.artist, day: key.hour.floorDiv(24)), initial: counts.count) { index in
                    if index == counts.count { counts.append(0) }
                    counts[index] += 1
                    group[row] = Int32(index)
                }
            }
            cells = groups.keys
            starts.reserveCapacity(counts.count + 1)
            for count in counts { starts.append(starts[starts.count - 1] + count) }
            var next = starts
            var order = [Int](repeating: 0, count: table.count)
            for row in 0..<table.count {
                order[next[Int(group[row])]] = row
                next[Int(group[row])] += 1
            }
            keys = order.map { table.keys[$0] }
            values = order.map { table.values[$0] }
        }

        func forEachDay(of cube: Cube, _ sums: (Value) -> CubeRowSums, _ body: (CubeDay) -> Void) {
            let hourly = cube.grain == .hour
            let dimensions = cube.dimensions
            for (group, cell) in cells.enumerated() {
                var day = CubeDay(artist: cell.artist, day: cell.day)
                let rows = starts[group] ..< starts[group + 1]
                if cube.isFull {
                    // One row per cell already.
                    for row in rows {
                        day.add(hour: Int16(keys[row].hour - cell.day * 24), keys[row], dimensions, sums(values[row]))
                    }
                } else {
                    // The artist-day's rows summed to the cube's key in a table of their own, small enough to stay in cache.
                    var summed = CellTable<DerivedRowKey, CubeRowSums>(capacity: rows.count)
                    for row in rows {
                        let key = keys[row]
                        let derived = DerivedRowKey(
                            hour: hourly ? Int16(key.hour - cell.day * 24) : 0,
                            first: dimensions.count > 0 ? key.value(of: dimensions[0]) : .none,
                            second: dimensions.count > 1 ? key.value(of: dimensions[1]) : .none)
                        summed.update(derived, initial: CubeRowSums()) { $0 += sums(values[row]) }
                    }
                    for (key, sums) in summed.rows { day.add(key, sums, hourly: hourly, dimensions: dimensions.count) }
                }
                body(day)
            }
        }
    }
}

extension CubeDay {
    fileprivate mutating func add(hour: Int16, _ cell: some InternedRowKey, _ dimensions: [Dimension], _ rowSums: CubeRowSums) {
        hours.append(hour)
        for dimension in dimensions { values.append(cell.value(of: dimension)) }
        sums.append(rowSums)
    }

    fileprivate mutating func add(_ key: DerivedRowKey, _ rowSums: CubeRowSums, hourly: Bool, dimensions: Int) {
        if hourly { hours.append(key.hour) }
        if dimensions > 0 { values.append(key.first) }
        if dimensions > 1 { values.append(key.second) }
        sums.append(rowSums)
    }
}

/// A derived cube's key within an artist-day as a full row maps to it: the hour of the day (hourly cubes) and at
/// most two dimension values (no derived cube has more).
private struct DerivedRowKey: TableKey {
    var hour: Int16
    var first: InternedValue
    var second: InternedValue

    func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(TableHash.mix(seed, first.tableCode << 16 | UInt64(UInt16(bitPattern: hour))), second.tableCode)
    }
}
