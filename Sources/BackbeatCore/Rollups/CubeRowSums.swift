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
