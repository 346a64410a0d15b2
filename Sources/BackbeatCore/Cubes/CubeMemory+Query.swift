extension CubeMemory {
    /// Answers `query` from the held days, like `Store.rows(for:)` answers it from PostgreSQL: one row per period
    /// (unless granularity is `all`) and group, not zero-filled or ordered. Nil when the query's cube
    /// (`Cube.plan`) is not held in memory.
    public func rows(for query: Query) -> [QueryRow]? {
        let cube = Cube.plan(for: query)
        guard let cubeIndex = Self.cubes.firstIndex(of: cube) else { return nil }

        // Filters as id sets; a value never seen matches nothing.
        var artists: [UInt32]?
        var dimensionFilters: [(slot: Int, allowed: Set<UInt32>)] = []
        for (dimension, values) in query.filters {
            let ids = values.compactMap { symbols.existingID($0) }
            if ids.isEmpty { return [] }
            if dimension == .artistID {
                artists = Array(Set(ids))
            } else {
                dimensionFilters.append((cube.dimensions.firstIndex(of: dimension)!, Set(ids)))
            }
        }
        let excluded = Set(query.excludedArtists.compactMap { symbols.existingID($0) })
        // Group-by slots: -1 is the artist, 0 and 1 the cube's dimensions.
        let slots = query.groupBy.map { $0 == .artistID ? -1 : cube.dimensions.firstIndex(of: $0)! }

        var groups: [GroupKey: Measures] = [:]
        let from = query.interval.from.seconds
        let to = query.interval.to.seconds
        guard from < to else { return [] }
        let hourly = cube.grain == .hour
        let granularity = query.granularity
        for day in from.floorDiv(86_400)...(to - 1).floorDiv(86_400) {
            guard let bucket = days[day] else { continue }
            let dayStart = day * 86_400
            let dayPeriod = granularity == .all ? 0 : granularity.periodStart(of: Timestamp(seconds: dayStart)).seconds
            let visit = { (artist: UInt32, key: CellKey, measures: Measures) in
                if !excluded.isEmpty, excluded.contains(artist) { return }
                var period = dayPeriod
                if hourly {
                    let hourStart = dayStart + Int64(key.hour) * 3600
                    guard hourStart >= from && hourStart < to else { return }
                    if granularity == .hour { period = hourStart }
                }
                for filter in dimensionFilters where !filter.allowed.contains(key[filter.slot]) { return }
                var group = GroupKey(period: period)
                for (position, slot) in slots.enumerated() {
                    group[position] = slot == -1 ? artist : key[slot]
                }
                groups[group, default: Measures()] += measures
            }
            if let artists {
                for artist in artists { bucket.forEachCell(cube: cubeIndex, artist: artist, visit) }
            } else {
                bucket.forEachCell(cube: cubeIndex, artist: nil, visit)
            }
        }
        return groups.map { group, measures in
            QueryRow(
                periodStart: granularity == .all ? nil : Timestamp(seconds: group.period),
                groupValues: slots.indices.map { symbols[group[$0]] },
                metrics: measures.values(query.dataset))
        }
    }

    /// The union of the sketches of `scope` (listeners or visitors) per period of `granularity` (nil key for `all`).
    public func listenerSketches(_ scope: ListenerScope, granularity: Granularity) -> [Timestamp?: HyperLogLog] {
        guard let artist = symbols.existingID(scope.artistID) else { return [:] }
        var track: UInt32?
        if let trackID = scope.trackID {
            guard let id = symbols.existingID(trackID) else { return [:] }
            track = id
        }
        var result: [Timestamp?: HyperLogLog] = [:]
        for day in scope.days {
            guard let bucket = days[day] else { continue }
            let sketches = scope.kind == .listeners ? bucket.listeners : bucket.visitors
            let sketch = track.map { sketches.keyedSketch(ArtistTrack(artist: artist, track: $0)) } ?? sketches.artistSketch(artist)
            guard let sketch else { continue }
            let period: Timestamp? = granularity == .all ? nil : granularity.periodStart(of: Timestamp(seconds: day * 86_400))
            result[period, default: HyperLogLog()].formUnion(sketch)
        }
        return result
    }

    /// The union of each of `keys`' sketches of `kind` over `days`: tracks' listeners, pages' (or page sources',
    /// `PageSourceKey`) visitors.
    public func keyedSketches(_ kind: ListenerScope.Kind, artistID: String, keys: [String], days range: Range<Int64>) -> [String: HyperLogLog] {
        guard let artist = symbols.existingID(artistID) else { return [:] }
        let family: KeyPath<DayBucket, DaySketches> = kind == .listeners ? \.listeners : \.visitors
        var result: [String: HyperLogLog] = [:]
        for key in keys {
            guard let id = symbols.existingID(key) else { continue }
            for day in range {
                guard let sketch = days[day]?[keyPath: family].keyedSketch(ArtistTrack(artist: artist, track: id)) else { continue }
                result[key, default: HyperLogLog()].formUnion(sketch)
            }
        }
        return result
    }
}

/// A result group while aggregating in memory: the period start and up to three group-by ids.
private struct GroupKey: Hashable {
    var period: Int64
    var g0: UInt32 = 0
    var g1: UInt32 = 0
    var g2: UInt32 = 0

    subscript(position: Int) -> UInt32 {
        get { position == 0 ? g0 : (position == 1 ? g1 : g2) }
        set {
            switch position {
            case 0: g0 = newValue
            case 1: g1 = newValue
            default: g2 = newValue
            }
        }
    }
}
