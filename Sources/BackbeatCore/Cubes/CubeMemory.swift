/// The dashboard cubes held in memory, in day buckets: what `Cube.derived` stores in PostgreSQL, for every day
/// from `horizonDay` on, plus the unique-listener sketches of those days.
///
/// Recent days are open (dictionaries updated in place); `seal(daysBefore:)` encodes older days compactly
/// (`SealedCube`), and `retain(fromDay:budgetBytes:)` drops the oldest days to honour the retention window and
/// the memory budget. Nothing before `horizonDay` is held: queries over those days must go to PostgreSQL.
public struct CubeMemory: Sendable {
    /// The cubes held, in `Cube.all` order (the full-dimension tables stay in PostgreSQL only), none finer than an
    /// hour (a cell's `CellKey.hour`).
    public static let cubes: [Cube] = Cube.derived

    var symbols = Symbols()
    var days: [Int64: DayBucket] = [:]
    /// The first day held; events of earlier days are not kept.
    public private(set) var horizonDay: Int64

    public init(horizonDay: Int64 = .min) {
        self.horizonDay = horizonDay
    }

    /// Whether cube `cube` is held (and so can answer a query planned onto it).
    public static func holds(_ cube: Cube) -> Bool {
        cubes.contains(cube)
    }

    /// The days held, oldest first.
    public var dayRange: ClosedRange<Int64>? {
        guard let first = days.keys.min(), let last = days.keys.max() else { return nil }
        return first...last
    }

    // MARK: - Adding

    /// Adds an interned delta's cells to every held cube, and each of its plays and visits to its day's sketches, as
    /// adding its events one by one would; days before `horizonDay` are skipped. Each value of the delta's
    /// dictionary is looked up here once, not once per event.
    public mutating func add(_ delta: InternedDelta) {
        let mapped = DeltaSymbols(delta.values, in: &symbols)
        for (cell, counters) in delta.streams.rows { add(row: cell, mapped, of: .streams, Measures(counters)) }
        for (cell, counters) in delta.revenue.rows { add(row: cell, mapped, of: .revenue, Measures(counters)) }
        for (cell, count) in delta.social.rows { add(row: cell, mapped, of: .social, Measures(count: count)) }
        for (cell, count) in delta.page.rows { add(row: cell, mapped, of: .page, Measures(count: count)) }
        for (cell, counts) in delta.funnel.rows { add(row: cell, mapped, of: .funnel, Measures(counts)) }
        delta.forEachPlay { cell, hash in
            guard cell.day >= horizonDay else { return }
            days[cell.day, default: DayBucket(cubeCount: Self.cubes.count)].listeners.add(hash, artist: mapped.ids[Int(cell.artist)], key: mapped.ids[Int(cell.track)])
        }
        delta.forEachVisit { cell, hash in
            guard cell.day >= horizonDay else { return }
            days[cell.day, default: DayBucket(cubeCount: Self.cubes.count)].visitors.add(hash, artist: mapped.ids[Int(cell.artist)], key: mapped.ids[Int(cell.track)])
        }
        delta.forEachSourceVisit { cell, hash in
            guard cell.day >= horizonDay else { return }
            days[cell.day, default: DayBucket(cubeCount: Self.cubes.count)].visitors.add(hash, artist: mapped.ids[Int(cell.artist)], onlyKey: mapped.ids[Int(cell.track)])
        }
    }

    /// Adds the measures of one interned full row (a quarter hour's) to every held cube of its dataset; `mapped`
    /// gives the symbol of each of its values.
    private mutating func add(row key: some InternedRowKey, _ mapped: DeltaSymbols, of dataset: Dataset, _ measures: Measures) {
        // The hour of its day, as a flush's `ArtistDayRows` places the row in an hourly cube.
        let day = key.quarter.floorDiv(96)
        let hour = UInt32(Cube.Grain.hour.slot(ofQuarter: key.quarter, day: day))
        guard day >= horizonDay else { return }
        let cubes = Self.cubes
        for index in cubes.indices where cubes[index].dataset == dataset {
            let dimensions = cubes[index].dimensions
            let cell = CellKey(hour: cubes[index].grain == .hour ? hour : 0, dimensions: dimensions.count) { mapped[key.value(of: dimensions[$0])] }
            add(cube: index, day: day, artist: mapped.ids[Int(key.artist)], cell: cell, measures)
        }
    }

    /// Adds every cell and sketch of `layer`, another instance with symbols of its own, as adding the deltas it was
    /// built from would: a committed flush moves its in-flight layer into the durable one without projecting its
    /// events into the cubes again. Days before `horizonDay` are skipped.
    public mutating func add(_ layer: CubeMemory) {
        var ids: [UInt32] = []
        ids.reserveCapacity(layer.symbols.count)
        for id in 0..<UInt32(layer.symbols.count) { ids.append(symbols.id(layer.symbols[id])) }
        let cubes = Self.cubes
        for (day, bucket) in layer.days where day >= horizonDay {
            var target = days.removeValue(forKey: day) ?? DayBucket(cubeCount: cubes.count)
            for index in cubes.indices {
                let dimensions = cubes[index].dimensions.count
                bucket.forEachCell(cube: index, artist: nil) { artist, key, measures in
                    let mapped = CellKey(hour: key.hour, dimensions: dimensions) { ids[Int(key[$0])] }
                    target.open[index][ids[Int(artist)], default: [:]][mapped, default: Measures()] += measures
                }
            }
            bucket.listeners.forEach(artist: { target.listeners.add(artist: ids[Int($0)], key: nil, $1) },
                                     keyed: { target.listeners.add(artist: ids[Int($0.artist)], key: ids[Int($0.track)], $1) })
            bucket.visitors.forEach(artist: { target.visitors.add(artist: ids[Int($0)], key: nil, $1) },
                                    keyed: { target.visitors.add(artist: ids[Int($0.artist)], key: ids[Int($0.track)], $1) })
            days[day] = target
        }
    }

    /// Adds one stored cube row (as read back from PostgreSQL): `time` is the row's hour or day,
    /// `dimensionValues` follow the cube's dimensions and `values` its dataset's metrics.
    public mutating func add(cube: Cube, artistID: String, time: Timestamp, dimensionValues: [String], values: [MetricValue]) {
        guard let index = Self.cubes.firstIndex(of: cube) else { return }
        let (day, hour) = dayAndHour(HourBucket(containing: time))
        guard day >= horizonDay else { return }
        let artist = symbols.id(artistID)
        let key = cell(cube, hour: hour) { dimension in dimensionValues[cube.dimensions.firstIndex(of: dimension)!] }
        add(cube: index, day: day, artist: artist, cell: key, Measures(cube.dataset, values))
    }

    /// Unions `sketch` into the listeners of an artist's (or, with `trackID`, a track's) day.
    public mutating func addListeners(artistID: String, trackID: String?, day: Int64, _ sketch: HyperLogLog) {
        addSketch(.listeners, artistID: artistID, key: trackID, day: day, sketch)
    }

    /// Unions `sketch` into the visitors of an artist's (or, with `pageID`, a page's) day.
    public mutating func addVisitors(artistID: String, pageID: String?, day: Int64, _ sketch: HyperLogLog) {
        addSketch(.visitors, artistID: artistID, key: pageID, day: day, sketch)
    }

    /// Unions `sketch` into the `kind` sketch of an artist's day, or with `key`, of its track's or page's.
    public mutating func addSketch(_ kind: ListenerScope.Kind, artistID: String, key: String?, day: Int64, _ sketch: HyperLogLog) {
        guard day >= horizonDay else { return }
        let artist = symbols.id(artistID)
        let key = key.map { symbols.id($0) }
        let family: WritableKeyPath<DayBucket, DaySketches> = kind == .listeners ? \.listeners : \.visitors
        days[day, default: DayBucket(cubeCount: Self.cubes.count)][keyPath: family].add(artist: artist, key: key, sketch)
    }

    private mutating func add(cube index: Int, day: Int64, artist: UInt32, cell: CellKey, _ measures: Measures) {
        days[day, default: DayBucket(cubeCount: Self.cubes.count)].open[index][artist, default: [:]][cell, default: Measures()] += measures
    }

    private func dayAndHour(_ hour: HourBucket) -> (day: Int64, hour: UInt32) {
        let day = hour.hoursSinceEpoch.floorDiv(24)
        return (day, UInt32(hour.hoursSinceEpoch - day * 24))
    }

    private mutating func cell(_ cube: Cube, hour: UInt32, _ value: (Dimension) -> String) -> CellKey {
        let dimensions = cube.dimensions
        return CellKey(hour: cube.grain == .hour ? hour : 0, dimensions: dimensions.count) { symbols.id(value(dimensions[$0])) }
    }

    // MARK: - Sealing and retention

    /// Seals every day before `day` that has open cells. Returns how many days were sealed.
    @discardableResult
    /// With `minimumOpenFraction`, a day sealed before is sealed again only once its open cells number at least that
    /// fraction of its sealed ones: a day that takes a few late events per flush is then re-encoded after its open
    /// part has grown, not after every flush (sealing re-encodes the whole day).
    public mutating func seal(daysBefore day: Int64, minimumOpenFraction: Double = 0) -> Int {
        let toSeal = days.filter { $0.key < day && $0.value.hasOpenCells && $0.value.openShare >= minimumOpenFraction }.keys
        for key in toSeal { days[key]!.seal(Self.cubes) }
        return toSeal.count
    }

    /// Drops days before `fromDay`, then the oldest days until the held bytes fit `budgetBytes`; `horizonDay`
    /// moves past every dropped day. Returns the days dropped.
    @discardableResult
    public mutating func retain(fromDay: Int64, budgetBytes: Int) -> [Int64] {
        var dropped: [Int64] = []
        if fromDay > horizonDay { horizonDay = fromDay }
        for day in days.keys where day < horizonDay {
            days[day] = nil
            dropped.append(day)
        }
        var bytes = byteCount
        for day in days.keys.sorted() where bytes > budgetBytes {
            bytes -= days[day]!.byteCount
            days[day] = nil
            dropped.append(day)
            horizonDay = day + 1
        }
        return dropped.sorted()
    }

    /// Approximate heap bytes held: buckets, sketches and the symbol table.
    public var byteCount: Int {
        days.values.reduce(symbols.byteCount) { $0 + $1.byteCount }
    }

    /// Compactness of the sealed buckets: encoded bytes and the non-zero counters they hold.
    public var sealedFootprint: (bytes: Int, nonZeroCells: Int) {
        var bytes = 0
        var cells = 0
        for bucket in days.values {
            for cube in bucket.sealed {
                guard let cube else { continue }
                bytes += cube.byteCount
                cells += cube.nonZeroCells
            }
        }
        return (bytes, cells)
    }
}

/// The symbols of one interned delta's values, each looked up once: its dictionary's ids, and the few fixed
/// texts of the enum dimensions (`InternedValue.fixedValues`).
private struct DeltaSymbols {
    let ids: [UInt32]
    let fixed: [UInt32]

    init(_ values: ValueDictionary, in symbols: inout Symbols) {
        var ids: [UInt32] = []
        ids.reserveCapacity(values.count)
        for id in 0..<UInt32(values.count) { ids.append(symbols.id(values[id])) }
        self.ids = ids
        // The enum cases by the texts the store writes for them (`fixedText`).
        fixed = InternedValue.fixedValues.map { symbols.id($0.fixedText ?? "") }
    }

    subscript(value: InternedValue) -> UInt32 {
        if case .id(let id) = value { return ids[Int(id)] }
        return fixed[value.fixedPlace!]
    }
}
