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

    public init(artist: UInt32, day: Int64) {
        self.artist = artist
        self.day = day
    }

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
                days[key, default: CubeDay(artist: cell.artist, day: day)].add(
                    hour: Int16(cell.hour - day * 24), cube.dimensions.map { cell.value(of: $0) }, sums(counters))
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
    fileprivate mutating func add(hour: Int16, _ rowValues: [InternedValue], _ rowSums: CubeRowSums) {
        hours.append(hour)
        values.append(contentsOf: rowValues)
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

extension CubeDay {
    /// This day's rows and the rows stored for the same artist-day before (`stored`, their values ids of
    /// `dictionary`), summed per key: what the artist-day holds once this flush is added. Every value of the result
    /// is an id of `dictionary` (a value with a fixed text is looked up there by its text, as the stored ones were).
    /// `dictionary` extends the dictionary this day's ids come from: the same ids for the same values.
    public func merged(with stored: CubeDay, width: Int, dictionary: inout ValueDictionary) -> CubeDay {
        var result = stored
        var index: [MergedRowKey: Int] = [:]
        index.reserveCapacity(stored.rowCount + rowCount)
        for row in 0..<stored.rowCount {
            index[MergedRowKey(stored, row: row, width: width)] = row
        }
        var normalized = [InternedValue](repeating: .none, count: width)
        for row in 0..<rowCount {
            for column in 0..<width {
                let value = values[row * width + column]
                normalized[column] = if case .id = value { value } else { .id(dictionary.id(value.fixedText ?? "")) }
            }
            let key = MergedRowKey(hour: hours.isEmpty ? 0 : hours[row], normalized)
            if let existing = index[key] {
                result.sums[existing] += sums[row]
            } else {
                index[key] = result.rowCount
                if !hours.isEmpty { result.hours.append(hours[row]) }
                result.values.append(contentsOf: normalized)
                result.sums.append(sums[row])
            }
        }
        return result
    }
}

/// A row's key within its artist-day once every value is an id: the hour of the day and up to five ids (the full
/// stream rows have five dimensions).
private struct MergedRowKey: Hashable {
    var hour: Int16
    var ids: (UInt32, UInt32, UInt32, UInt32, UInt32)

    init<Values: RandomAccessCollection<InternedValue>>(hour: Int16, _ values: Values) {
        precondition(values.count <= 5, "at most five dimensions")
        func id(_ column: Int) -> UInt32 {
            guard column < values.count else { return .max }
            guard case .id(let id) = values[values.index(values.startIndex, offsetBy: column)] else {
                preconditionFailure("a merged row's values are ids")
            }
            return id
        }
        self.hour = hour
        self.ids = (id(0), id(1), id(2), id(3), id(4))
    }

    init(_ day: CubeDay, row: Int, width: Int) {
        self.init(hour: day.hours.isEmpty ? 0 : day.hours[row], day.values[(row * width)..<((row + 1) * width)])
    }

    static func == (lhs: MergedRowKey, rhs: MergedRowKey) -> Bool {
        lhs.hour == rhs.hour && lhs.ids == rhs.ids
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hour)
        hasher.combine(ids.0)
        hasher.combine(ids.1)
        hasher.combine(ids.2)
        hasher.combine(ids.3)
        hasher.combine(ids.4)
    }
}
