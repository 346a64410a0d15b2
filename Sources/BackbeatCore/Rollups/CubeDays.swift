/// A cube's rows of one artist and UTC day, as a flush stores them (one PostgreSQL row per artist-day, migration
/// 0017): each row's key (the hour of the day for an hourly cube, then the cube's dimension values) and its summed
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

extension InternedDelta {
    /// The rows `cube` gains from this delta, one `CubeDay` per artist and day, in no particular order: a full
    /// hourly table's are the delta's rows; a derived cube's sum them to its key.
    public func days(of cube: Cube) -> [CubeDay] {
        switch cube.dataset {
        case .streams: return Self.days(of: cube, streams, CubeRowSums.init)
        case .revenue: return Self.days(of: cube, revenue, CubeRowSums.init)
        case .social: return Self.days(of: cube, social, CubeRowSums.init(socialCount:))
        }
    }

    private static func days<Key: InternedRowKey, Counters>(
        of cube: Cube, _ rows: CellTable<Key, Counters>, _ sums: (Counters) -> CubeRowSums
    ) -> [CubeDay] {
        let hourly = cube.grain == .hour
        if cube.isFull {
            // One row per cell already.
            var days: [ArtistDayCell: CubeDay] = [:]
            for (cell, counters) in rows.rows {
                let day = cell.hour.floorDiv(24)
                let key = ArtistDayCell(artist: cell.artist, day: day)
                days[key, default: CubeDay(artist: cell.artist, day: day)].add(hour: Int16(cell.hour - day * 24), cell, cube.dimensions, sums(counters))
            }
            return Array(days.values)
        }
        var summed: [DerivedRowKey: CubeRowSums] = [:]
        summed.reserveCapacity(rows.count / 2)
        for (cell, counters) in rows.rows {
            let day = cell.hour.floorDiv(24)
            let key = DerivedRowKey(
                artist: cell.artist, day: day, hour: hourly ? Int16(cell.hour - day * 24) : 0,
                first: cube.dimensions.count > 0 ? cell.value(of: cube.dimensions[0]) : .none,
                second: cube.dimensions.count > 1 ? cell.value(of: cube.dimensions[1]) : .none)
            summed[key, default: CubeRowSums()] += sums(counters)
        }
        var days: [ArtistDayCell: CubeDay] = [:]
        for (key, sums) in summed {
            let cell = ArtistDayCell(artist: key.artist, day: key.day)
            days[cell, default: CubeDay(artist: key.artist, day: key.day)].add(key, sums, hourly: hourly, dimensions: cube.dimensions.count)
        }
        return Array(days.values)
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

/// A derived cube's key as a full row maps to it: the artist, the day, the hour of the day (hourly cubes) and at
/// most two dimension values (no derived cube has more).
private struct DerivedRowKey: Hashable {
    var artist: UInt32
    var day: Int64
    var hour: Int16
    var first: InternedValue
    var second: InternedValue
}
