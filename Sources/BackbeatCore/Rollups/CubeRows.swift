/// The key of a cube's row as a flush writes it: the artist, the time bucket and the cube's dimension values.
///
/// A flush projects every row of its delta into every cube, so this key is built millions of times per million
/// events: it holds its values inline (no array), keeps the bucket as a number (formatted once per written row) and
/// caches its hash.
public struct CubeRowKey: Hashable, Sendable {
    public let artistID: String
    /// Hours since the epoch in an hourly cube, days in a daily one.
    public let bucket: Int64
    /// The cube's dimension values in `Cube.dimensions` order; "" past its dimension count (five at most).
    private let values: (String, String, String, String, String)
    private let cachedHash: Int

    init(artistID: String, bucket: Int64, dimensions: [Dimension], value: (Dimension) -> String) {
        func at(_ index: Int) -> String { index < dimensions.count ? value(dimensions[index]) : "" }
        self.artistID = artistID
        self.bucket = bucket
        self.values = (at(0), at(1), at(2), at(3), at(4))
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(bucket)
        hasher.combine(values.0)
        hasher.combine(values.1)
        hasher.combine(values.2)
        hasher.combine(values.3)
        hasher.combine(values.4)
        cachedHash = hasher.finalize()
    }

    /// The value of the cube's dimension at `index`.
    public func dimension(_ index: Int) -> String {
        switch index {
        case 0: values.0
        case 1: values.1
        case 2: values.2
        case 3: values.3
        default: values.4
        }
    }

    public static func == (lhs: CubeRowKey, rhs: CubeRowKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.bucket == rhs.bucket && lhs.artistID == rhs.artistID
            && lhs.values.0 == rhs.values.0 && lhs.values.1 == rhs.values.1 && lhs.values.2 == rhs.values.2
            && lhs.values.3 == rhs.values.3 && lhs.values.4 == rhs.values.4
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
    }
}

/// The summed measures of a cube's row: the dataset's integer metrics in order (streams, skips, listening ms;
/// revenue events; social count) and, for revenue, the amount.
public struct CubeRowSums: Equatable, Sendable {
    public var integers: (Int64, Int64, Int64) = (0, 0, 0)
    public var amount: Money = .zero

    public init() {}

    public static func == (lhs: CubeRowSums, rhs: CubeRowSums) -> Bool {
        lhs.integers == rhs.integers && lhs.amount == rhs.amount
    }

    /// A stream row's measures: streams, skips, listening ms.
    public init(_ counters: StreamCounters) {
        integers = (counters.streams, counters.skips, counters.listeningMs)
    }

    /// A revenue row's measures: events, and the amount.
    public init(_ counters: RevenueCounters) {
        integers = (counters.events, 0, 0)
        amount = counters.amount
    }

    /// A social row's measure: the count.
    public init(socialCount: Int64) {
        integers = (socialCount, 0, 0)
    }

    public static func += (lhs: inout CubeRowSums, rhs: CubeRowSums) {
        lhs.integers.0 += rhs.integers.0
        lhs.integers.1 += rhs.integers.1
        lhs.integers.2 += rhs.integers.2
        if rhs.amount != .zero { lhs.amount += rhs.amount }
    }
}

extension RollupDelta {
    /// This delta summed into `cube`'s rows.
    public func rows(for cube: Cube) -> [CubeRowKey: CubeRowSums] {
        Self.rows(for: cube, of: [self])
    }

    /// `deltas` (a flush's partitions) summed together into `cube`'s rows: one per artist, bucket and value of the
    /// cube's dimensions.
    public static func rows(for cube: Cube, of deltas: [RollupDelta]) -> [CubeRowKey: CubeRowSums] {
        var rows: [CubeRowKey: CubeRowSums] = [:]
        for delta in deltas {
            switch cube.dataset {
            case .streams: sum(delta.streams, into: &rows, cube, CubeRowSums.init)
            case .revenue: sum(delta.revenue, into: &rows, cube, CubeRowSums.init)
            case .social: sum(delta.social, into: &rows, cube, CubeRowSums.init(socialCount:))
            }
        }
        return rows
    }

    private static func sum<Key: HourlyRowKey, Counters>(
        _ entries: [Key: Counters], into rows: inout [CubeRowKey: CubeRowSums], _ cube: Cube, _ sums: (Counters) -> CubeRowSums
    ) {
        let dimensions = cube.dimensions
        let hourly = cube.grain == .hour
        for (key, counters) in entries {
            let bucket = hourly ? key.hour.hoursSinceEpoch : key.hour.hoursSinceEpoch.floorDiv(24)
            rows[CubeRowKey(artistID: key.artistID, bucket: bucket, dimensions: dimensions, value: key.value(of:)), default: CubeRowSums()] += sums(counters)
        }
    }

    /// The listener sketches of `deltas` unioned per artist and day, and per track and day.
    public static func listeners(of deltas: [RollupDelta]) -> (artists: [ArtistDay: HyperLogLog], tracks: [TrackDay: HyperLogLog]) {
        guard deltas.count > 1 else { return (deltas.first?.artistListeners ?? [:], deltas.first?.trackListeners ?? [:]) }
        var artists: [ArtistDay: HyperLogLog] = [:]
        var tracks: [TrackDay: HyperLogLog] = [:]
        for delta in deltas {
            for (key, sketch) in delta.artistListeners { artists[key, default: HyperLogLog()].formUnion(sketch) }
            for (key, sketch) in delta.trackListeners { tracks[key, default: HyperLogLog()].formUnion(sketch) }
        }
        return (artists, tracks)
    }
}
