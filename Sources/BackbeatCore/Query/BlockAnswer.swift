/// Answers a query from stored cube blocks (PostgreSQL returns the blocks of the query's days; this sums their rows),
/// as `CubeMemory.rows(for:)` answers it from memory: one row per period (unless granularity is `all`) and group,
/// not zero-filled or ordered.
///
/// A row counts when its time is in the interval: a quarter-hour or hourly block's row by its slot's start, a daily
/// block's (and a rolled daily row's) by its day's midnight, except that a day cube (`Cube.grain` day) counts every
/// day from the interval's first day to the day before its end's day, as PostgreSQL's `day >= from::date AND day <
/// to::date` did.
public struct BlockAnswer: Sendable {
    public let query: Query
    public let cube: Cube
    /// The cube whose blocks are read: `cube` itself, or for the full dimensions by day the full table's.
    public let stored: Cube
    /// The dataset's sums of each group.
    private var groups: [GroupKey: CubeRowSums] = [:]
    /// Whether a row counts by its day alone (a day cube other than the full dimensions by day: every day from the
    /// interval's first day to the day before its end's day), rather than by its time.
    private let countsWholeDays: Bool
    /// Per dimension of the cube, the values its filter allows (nil: no filter on it).
    private let filters: [Set<String>?]
    private let artists: Set<String>?
    private let excludedArtists: Set<String>
    /// Per group-by dimension, its place among the cube's dimensions (nil: the artist).
    private let slots: [Int?]

    public init(_ query: Query) {
        self.query = query
        let cube = Cube.plan(for: query)
        self.cube = cube
        stored = Cube.all.first { $0.isFull && $0.dailyDetail == cube } ?? cube
        filters = cube.dimensions.map { query.filters[$0].map(Set.init) }
        artists = query.filters[.artistID].map(Set.init)
        excludedArtists = Set(query.excludedArtists)
        slots = query.groupBy.map { $0 == .artistID ? nil : cube.dimensions.firstIndex(of: $0) }
        countsWholeDays = cube.grain == .day && !cube.isDailyDetail
    }

    /// A group: its period start (0 for `all`) and group-by values.
    private struct GroupKey: Hashable {
        var period: Int64
        var values: [String]
    }

    /// The rows of the block of `artist`'s `day` (days since the epoch) of `stored`, decoded.
    public mutating func add(artist: String, day: Int64, _ rows: BlockRows) {
        guard artists?.contains(artist) ?? true, !excludedArtists.contains(artist) else { return }
        let slotSeconds = rows.slots.isEmpty ? nil : stored.grain.seconds
        var values: [String] = []
        for row in 0..<rows.count {
            values.removeAll(keepingCapacity: true)
            for dimension in rows.indexes.indices { values.append(rows.dictionaries[dimension][rows.indexes[dimension][row]]) }
            addRow(artist: artist, day: day, secondOfDay: slotSeconds.map { Int64(rows.slots[row]) * $0 }, values: values, sums: rows.sums[row])
        }
    }

    /// One row: its artist, day, start within the day (seconds after midnight; nil for a daily row) and values of the
    /// cube's dimensions.
    public mutating func add(artist: String, day: Int64, secondOfDay: Int64?, values: [String], sums: CubeRowSums) {
        guard artists?.contains(artist) ?? true, !excludedArtists.contains(artist) else { return }
        addRow(artist: artist, day: day, secondOfDay: secondOfDay, values: values, sums: sums)
    }

    /// `add(artist:day:secondOfDay:values:sums:)` of an artist already found to be read.
    private mutating func addRow(artist: String, day: Int64, secondOfDay: Int64?, values: [String], sums: CubeRowSums) {
        for (dimension, allowed) in filters.enumerated() where allowed != nil && !allowed!.contains(values[dimension]) { return }
        let from = query.interval.from.seconds, to = query.interval.to.seconds
        let dayStart = day * 86_400
        let time = dayStart + (secondOfDay ?? 0)
        if countsWholeDays {
            guard day >= from.floorDiv(86_400) && day < to.floorDiv(86_400) else { return }
        } else {
            guard time >= from && time < to else { return }
        }
        let period = query.granularity == .all ? 0 : query.granularity.periodStart(of: Timestamp(seconds: cube.grain != .day ? time : dayStart)).seconds
        groups[GroupKey(period: period, values: slots.map { $0.map { values[$0] } ?? artist }), default: CubeRowSums()] += sums
    }

    public var rows: [QueryRow] {
        groups.map { key, sums in
            QueryRow(periodStart: query.granularity == .all ? nil : Timestamp(seconds: key.period),
                     groupValues: key.values, metrics: sums.metrics(of: query.dataset))
        }
    }
}
