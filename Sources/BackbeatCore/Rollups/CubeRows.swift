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

    mutating func add(_ first: Int64, _ second: Int64 = 0, _ third: Int64 = 0, amount: Money = .zero) {
        integers.0 += first
        integers.1 += second
        integers.2 += third
        if amount != .zero { self.amount += amount }
    }

}

extension RollupDelta {
    /// This delta summed into `cube`'s rows.
    public func rows(for cube: Cube) -> [CubeRowKey: CubeRowSums] {
        var rows: [CubeRowKey: CubeRowSums] = [:]
        let dimensions = cube.dimensions
        let hourly = cube.grain == .hour
        func bucket(_ hour: HourBucket) -> Int64 { hourly ? hour.hoursSinceEpoch : hour.hoursSinceEpoch.floorDiv(24) }
        switch cube.dataset {
        case .streams:
            for (key, counters) in streams {
                let row = CubeRowKey(artistID: key.artistID, bucket: bucket(key.hour), dimensions: dimensions, value: key.value(of:))
                rows[row, default: CubeRowSums()].add(counters.streams, counters.skips, counters.listeningMs)
            }
        case .revenue:
            for (key, counters) in revenue {
                let row = CubeRowKey(artistID: key.artistID, bucket: bucket(key.hour), dimensions: dimensions, value: key.value(of:))
                rows[row, default: CubeRowSums()].add(counters.events, amount: counters.amount)
            }
        case .social:
            for (key, count) in social {
                let row = CubeRowKey(artistID: key.artistID, bucket: bucket(key.hour), dimensions: dimensions, value: key.value(of:))
                rows[row, default: CubeRowSums()].add(count)
            }
        }
        return rows
    }
}
