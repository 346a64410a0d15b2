/// A cube's rows of one artist and local day, as a flush stores them (one PostgreSQL row per artist-day, its block:
/// `CubeBlock`): each row's key (its slot of the day at the cube's grain, then the cube's dimension values) and its
/// summed measures.
public struct CubeDay: Sendable {
    public var artist: UInt32
    /// Days since the epoch (of the artist's local time).
    public var day: Int64
    /// Per row, its quarter hour or hour of the day (`Cube.Grain.slot`; empty for a daily cube).
    public var slots: [Int16] = []
    /// Per row, the cube's dimension values in column order (`dimensionCount` each, one after another).
    public var values: [InternedValue] = []
    public var sums: [CubeRowSums] = []

    public var rowCount: Int { sums.count }
}

/// A delta's rows grouped by artist and local day: each dataset's rows copied once into the order of their artist-days,
/// so that each cube's `CubeDay`s are made in one sequential pass over them (a pass per cube over the delta's own
/// tables would gather the rows from random places each time).
public struct ArtistDayRows: Sendable {
    private let streams: Grouped<StreamCell, StreamCounters>
    private let revenue: Grouped<RevenueCell, RevenueCounters>
    private let social: Grouped<SocialCell, Int64>
    private let page: Grouped<PageCell, Int64>
    private let funnel: Grouped<FunnelCell, FunnelCounts>

    public init(_ delta: InternedDelta) {
        self.init(CombinedDeltas([delta]))
    }

    /// The rows of several deltas, in one dictionary's ids (`combined.values`).
    init(_ combined: CombinedDeltas) {
        streams = Grouped(combined.deltas.map(\.streams), ids: combined.ids, zero: StreamCounters()) { $0 += $1 }
        revenue = Grouped(combined.deltas.map(\.revenue), ids: combined.ids, zero: RevenueCounters()) { $0 += $1 }
        social = Grouped(combined.deltas.map(\.social), ids: combined.ids, zero: 0) { $0 += $1 }
        page = Grouped(combined.deltas.map(\.page), ids: combined.ids, zero: 0) { $0 += $1 }
        funnel = Grouped(combined.deltas.map(\.funnel), ids: combined.ids, zero: FunnelCounts()) { $0 += $1 }
    }

    /// The rows `cube` gains from the delta, one `CubeDay` per artist and day, in no particular order: a full
    /// table's are the delta's rows; a derived cube's sum them to its key.
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
        case .social: social.forEachDay(of: cube, CubeRowSums.init(count:), body)
        case .page: page.forEachDay(of: cube, CubeRowSums.init(count:), body)
        case .funnel: funnel.forEachDay(of: cube, CubeRowSums.init, body)
        }
    }

    /// One dataset's rows in order of their artist-days (a counting sort): group `g`, artist-day `cells[g]`, holds
    /// the rows `starts[g] ..< starts[g + 1]`.
    private struct Grouped<Key: InternedRowKey, Value: Sendable>: Sendable {
        var cells: [ArtistDayCell] = []
        var starts: [Int] = [0]
        var keys: [Key] = []
        var values: [Value] = []

        /// The rows of `tables`, each table's ids mapped by its `ids`; a key in two tables becomes one row, its
        /// values added by `add` from `zero`.
        init(_ tables: [CellTable<Key, Value>], ids: [[UInt32]], zero: Value, add: (inout Value, Value) -> Void) {
            let total = tables.reduce(0) { $0 + $1.count }
            let remapping = tables.count > 1
            var groups = CellTable<ArtistDayCell, Int>()
            var group = [Int32](repeating: 0, count: total)
            var counts: [Int] = []
            var row = 0
            for (table, ids) in zip(tables, ids) {
                for key in table.keys {
                    let artist = remapping ? ids[Int(key.artist)] : key.artist
                    groups.update(ArtistDayCell(artist: artist, day: key.quarter.floorDiv(96)), initial: counts.count) { index in
                        if index == counts.count { counts.append(0) }
                        counts[index] += 1
                        group[row] = Int32(index)
                    }
                    row += 1
                }
            }
            cells = groups.keys
            starts.reserveCapacity(counts.count + 1)
            for count in counts { starts.append(starts[starts.count - 1] + count) }
            // A counting sort: each row written once, to the next place of its group.
            var next = starts
            var values: [Value] = []
            keys = Array(unsafeUninitializedCapacity: total) { keys, keyCount in
                values = Array(unsafeUninitializedCapacity: total) { values, valueCount in
                    var row = 0
                    for (table, ids) in zip(tables, ids) {
                        for (key, value) in table.rows {
                            let place = next[Int(group[row])]
                            next[Int(group[row])] += 1
                            (keys.baseAddress! + place).initialize(to: remapping ? key.remapped(ids) : key)
                            (values.baseAddress! + place).initialize(to: value)
                            row += 1
                        }
                    }
                    valueCount = total
                }
                keyCount = total
            }
            self.values = values
            if remapping { sumRepeatedKeys(zero: zero, add) }
        }

        /// Makes each group's keys distinct, in place: rows of one key (from different tables) become one.
        private mutating func sumRepeatedKeys(zero: Value, _ add: (inout Value, Value) -> Void) {
            var kept = 0
            for group in cells.indices {
                let rows = starts[group] ..< starts[group + 1]
                starts[group] = kept
                guard rows.count > 1 else {
                    keys[kept] = keys[rows.lowerBound]
                    values[kept] = values[rows.lowerBound]
                    kept += rows.count
                    continue
                }
                // Small enough to stay in cache; read whole before its rows are written back over the group's.
                var summed = CellTable<Key, Value>(capacity: rows.count)
                for row in rows {
                    let value = values[row]
                    summed.update(keys[row], initial: zero) { add(&$0, value) }
                }
                for (key, value) in summed.rows {
                    keys[kept] = key
                    values[kept] = value
                    kept += 1
                }
            }
            starts[cells.count] = kept
            keys.removeLast(keys.count - kept)
            values.removeLast(values.count - kept)
        }

        func forEachDay(of cube: Cube, _ sums: (Value) -> CubeRowSums, _ body: (CubeDay) -> Void) {
            let grain = cube.grain
            let timed = grain != .day
            let dimensions = cube.dimensions
            for (group, cell) in cells.enumerated() {
                var day = CubeDay(artist: cell.artist, day: cell.day)
                let rows = starts[group] ..< starts[group + 1]
                if cube.isFull {
                    // One row per cell already.
                    for row in rows {
                        day.add(slot: grain.slot(ofQuarter: keys[row].quarter, day: cell.day), keys[row], dimensions, sums(values[row]))
                    }
                } else {
                    // The artist-day's rows summed to the cube's key in a table of their own, small enough to stay in cache.
                    var summed = CellTable<DerivedRowKey, CubeRowSums>(capacity: rows.count)
                    for row in rows {
                        let key = keys[row]
                        let derived = DerivedRowKey(
                            slot: timed ? grain.slot(ofQuarter: key.quarter, day: cell.day) : 0,
                            first: dimensions.count > 0 ? key.value(of: dimensions[0]) : .none,
                            second: dimensions.count > 1 ? key.value(of: dimensions[1]) : .none,
                            third: dimensions.count > 2 ? key.value(of: dimensions[2]) : .none)
                        summed.update(derived, initial: CubeRowSums()) { $0 += sums(values[row]) }
                    }
                    for (key, sums) in summed.rows { day.add(key, sums, timed: timed, dimensions: dimensions.count) }
                }
                body(day)
            }
        }
    }
}

extension CubeDay {
    fileprivate mutating func add(slot: Int16, _ cell: some InternedRowKey, _ dimensions: [Dimension], _ rowSums: CubeRowSums) {
        slots.append(slot)
        for dimension in dimensions { values.append(cell.value(of: dimension)) }
        sums.append(rowSums)
    }

    fileprivate mutating func add(_ key: DerivedRowKey, _ rowSums: CubeRowSums, timed: Bool, dimensions: Int) {
        if timed { slots.append(key.slot) }
        if dimensions > 0 { values.append(key.first) }
        if dimensions > 1 { values.append(key.second) }
        if dimensions > 2 { values.append(key.third) }
        sums.append(rowSums)
    }
}

/// A derived cube's key within an artist-day as a full row maps to it: the slot of the day (cubes finer than a day)
/// and at most three dimension values (no derived cube has more).
private struct DerivedRowKey: TableKey {
    var slot: Int16
    var first: InternedValue
    var second: InternedValue
    var third: InternedValue

    func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(TableHash.mix(TableHash.mix(seed, first.tableCode << 16 | UInt64(UInt16(bitPattern: slot))), second.tableCode), third.tableCode)
    }
}
