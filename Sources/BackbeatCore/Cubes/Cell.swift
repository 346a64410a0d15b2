/// Where a counter row sits inside one artist's part of a day bucket: the hour of the day (hour-grain cubes only)
/// and up to three dimension value ids, in the cube's dimension order (0 past the cube's dimensions).
struct CellKey: Hashable, Comparable, Sendable {
    var hour: UInt32
    var d0: UInt32
    var d1: UInt32
    var d2: UInt32

    /// The key of `hour` whose first `dimensions` values have the ids `id` gives by position.
    init(hour: UInt32, dimensions: Int, _ id: (Int) -> UInt32) {
        precondition(dimensions <= 3, "a held cube has at most three dimensions")
        self.hour = hour
        d0 = dimensions > 0 ? id(0) : 0
        d1 = dimensions > 1 ? id(1) : 0
        d2 = dimensions > 2 ? id(2) : 0
    }

    /// The id of the value of dimension `position` (0, 1 or 2).
    subscript(position: Int) -> UInt32 {
        position == 0 ? d0 : position == 1 ? d1 : d2
    }

    static func < (lhs: CellKey, rhs: CellKey) -> Bool {
        (lhs.hour, lhs.d0, lhs.d1, lhs.d2) < (rhs.hour, rhs.d0, rhs.d1, rhs.d2)
    }
}

/// The measures of one cell. Which fields are used depends on the dataset: streams use `m0` streams, `m1` skips and
/// `m2` listening ms; revenue uses `amount` (micros) and `m1` events; social uses `m0` count; page uses `m0` events.
public struct Measures: Equatable, Sendable {
    var m0: Int64 = 0
    var m1: Int64 = 0
    var m2: Int64 = 0
    var amount: Int128 = 0

    static func += (lhs: inout Measures, rhs: Measures) {
        lhs.m0 += rhs.m0
        lhs.m1 += rhs.m1
        lhs.m2 += rhs.m2
        lhs.amount += rhs.amount
    }

    init(m0: Int64 = 0, m1: Int64 = 0, m2: Int64 = 0, amount: Int128 = 0) {
        self.m0 = m0
        self.m1 = m1
        self.m2 = m2
        self.amount = amount
    }

    init(_ counters: StreamCounters) {
        self.init(m0: counters.streams, m1: counters.skips, m2: counters.listeningMs)
    }

    init(_ counts: FunnelCounts) {
        self.init(m0: counts.sessions, m1: counts.withSection, m2: counts.withClick)
    }

    init(_ counters: RevenueCounters) {
        self.init(m1: counters.events, amount: counters.amount.micros)
    }

    init(count: Int64) {
        self.init(m0: count)
    }

    /// Reads `values`, in the order of `dataset.metrics`.
    init(_ dataset: Dataset, _ values: [MetricValue]) {
        self.init()
        switch dataset {
        case .streams, .funnel:
            m0 = values[0].integer
            m1 = values[1].integer
            m2 = values[2].integer
        case .revenue:
            amount = values[0].money.micros
            m1 = values[1].integer
        case .social, .page:
            m0 = values[0].integer
        }
    }

    /// The values in the order of `dataset.metrics`.
    func values(_ dataset: Dataset) -> [MetricValue] {
        switch dataset {
        case .streams, .funnel: [.integer(m0), .integer(m1), .integer(m2)]
        case .revenue: [.money(Money(micros: amount)), .integer(m1)]
        case .social, .page: [.integer(m0)]
        }
    }

    /// How many of the dataset's counters are not zero.
    func nonZeroCount(_ dataset: Dataset) -> Int {
        switch dataset {
        case .streams, .funnel: (m0 != 0 ? 1 : 0) + (m1 != 0 ? 1 : 0) + (m2 != 0 ? 1 : 0)
        case .revenue: (amount != 0 ? 1 : 0) + (m1 != 0 ? 1 : 0)
        case .social, .page: m0 != 0 ? 1 : 0
        }
    }
}

/// One artist's cells of an open (still mutable) cube bucket.
typealias OpenCells = [CellKey: Measures]
