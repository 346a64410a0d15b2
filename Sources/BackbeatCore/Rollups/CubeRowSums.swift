/// The summed measures of a cube's row: the dataset's integer metrics in order (streams, skips, listening ms;
/// revenue events; social count; page events) and, for revenue, the amount.
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
    public init(_ counts: FunnelCounts) {
        integers = (counts.sessions, counts.withSection, counts.withClick)
    }

    public init(_ counters: RevenueCounters) {
        integers = (counters.events, 0, 0)
        amount = counters.amount
    }

    /// The one measure of a social row (its count) or a page row (its events).
    public init(count: Int64) {
        integers = (count, 0, 0)
    }

    /// The sums of a row whose `dataset` metrics (`Dataset.metrics` order) are `values`.
    public init(_ values: [MetricValue], of dataset: Dataset) {
        switch dataset {
        case .streams, .funnel: integers = (values[0].integer, values[1].integer, values[2].integer)
        case .revenue:
            if case .money(let amount) = values[0] { self.amount = amount }
            integers.0 = values[1].integer
        case .social, .page: integers.0 = values[0].integer
        }
    }

    /// The `dataset` metrics of these sums, in `Dataset.metrics` order.
    public func metrics(of dataset: Dataset) -> [MetricValue] {
        switch dataset {
        case .streams, .funnel: [.integer(integers.0), .integer(integers.1), .integer(integers.2)]
        case .revenue: [.money(amount), .integer(integers.0)]
        case .social, .page: [.integer(integers.0)]
        }
    }

    public static func += (lhs: inout CubeRowSums, rhs: CubeRowSums) {
        lhs.integers.0 += rhs.integers.0
        lhs.integers.1 += rhs.integers.1
        lhs.integers.2 += rhs.integers.2
        if rhs.amount != .zero { lhs.amount += rhs.amount }
    }
}
