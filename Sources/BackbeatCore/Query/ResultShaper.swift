/// Turns the aggregated rows a store returns into the answer a client sees: zero-filled, ordered and limited.
public enum ResultShaper {
    /// Zero-fills every group that has data over every period of the interval (unless granularity is `all`),
    /// then sorts by `order_by` (ties by period and group values) or by period and group values, then applies `limit`.
    ///
    /// A series not ordered by a metric is laid out rather than sorted (`laidOut`): each row placed in a grid of the
    /// interval's periods by its groups, the groups put in order once. A series of 28 days by 40 groups is some 1,100
    /// rows; sorting them compared their group values' strings some 11,000 times.
    public static func shape(_ rows: [QueryRow], for query: Query) throws(QueryError) -> [QueryRow] {
        if query.granularity != .all, orderingMetric(of: query) == nil, let laidOut = try laidOut(rows, for: query) {
            return limited(laidOut, query.limit)
        }
        return try shapeBySorting(rows, for: query)
    }

    /// `shape` by zero-filling and then sorting every row: for every query (what `laidOut` must equal where it answers).
    static func shapeBySorting(_ rows: [QueryRow], for query: Query) throws(QueryError) -> [QueryRow] {
        var shaped = rows
        if query.granularity != .all {
            let periods = query.granularity.periods(covering: query.interval)
            var groups: [[String]] = []
            var seenGroups: Set<[String]> = []
            var present: Set<RowKey> = []
            for row in rows {
                if seenGroups.insert(row.groupValues).inserted { groups.append(row.groupValues) }
                present.insert(RowKey(periodStart: row.periodStart, groupValues: row.groupValues))
            }
            if query.groupBy.isEmpty && groups.isEmpty { groups = [[]] }
            try requireRows(periods.count * groups.count)
            let zeros = query.dataset.metrics.map(MetricValue.zero(for:))
            for group in groups {
                for period in periods where !present.contains(RowKey(periodStart: period, groupValues: group)) {
                    shaped.append(QueryRow(periodStart: period, groupValues: group, metrics: zeros))
                }
            }
        } else if rows.isEmpty && query.groupBy.isEmpty {
            shaped = [QueryRow(periodStart: nil, groupValues: [], metrics: query.dataset.metrics.map(MetricValue.zero(for:)))]
        }
        guard shaped.count <= QueryLimits.maxRows || query.limit != nil else {
            throw QueryError(.resultTooLarge, "the answer would have \(shaped.count) rows; the limit is \(QueryLimits.maxRows): add a limit or filter")
        }

        let metricIndex = orderingMetric(of: query)
        let descending = query.orderBy?.direction == .desc
        shaped.sort { lhs, rhs in
            if let metricIndex, lhs.metrics[metricIndex] != rhs.metrics[metricIndex] {
                return descending ? lhs.metrics[metricIndex] > rhs.metrics[metricIndex] : lhs.metrics[metricIndex] < rhs.metrics[metricIndex]
            }
            if lhs.periodStart != rhs.periodStart {
                return (lhs.periodStart?.microseconds ?? 0) < (rhs.periodStart?.microseconds ?? 0)
            }
            return lhs.groupValues.lexicographicallyPrecedes(rhs.groupValues)
        }
        return limited(shaped, query.limit)
    }

    /// A series (granularity other than `all`) in period and group order, zero-filled: every period of the interval,
    /// and within each, every group that has data in the interval in the order of its values, the row of that period
    /// and group or a zero row. Nil (`shapeBySorting` answers) when a row's period is not one of the interval's, or
    /// two rows share a period and a group.
    private static func laidOut(_ rows: [QueryRow], for query: Query) throws(QueryError) -> [QueryRow]? {
        let periods = query.granularity.periods(covering: query.interval)
        var groups: [[String]] = []
        var groupOfValues: [[String]: Int] = [:]
        var groupOfRow: [Int] = []
        groupOfRow.reserveCapacity(rows.count)
        for row in rows {
            if let group = groupOfValues[row.groupValues] {
                groupOfRow.append(group)
            } else {
                groupOfValues[row.groupValues] = groups.count
                groupOfRow.append(groups.count)
                groups.append(row.groupValues)
            }
        }
        if query.groupBy.isEmpty && groups.isEmpty { groups = [[]] }
        try requireRows(periods.count * groups.count)
        // Each group's place among the groups in the order of their values.
        let ordered = groups.indices.sorted { groups[$0].lexicographicallyPrecedes(groups[$1]) }
        var place = [Int](repeating: 0, count: groups.count)
        for (index, group) in ordered.enumerated() { place[group] = index }
        // The row in each cell (period by group place), -1 for none.
        var cells = [Int](repeating: -1, count: periods.count * groups.count)
        for (index, row) in rows.enumerated() {
            guard let start = row.periodStart, let period = position(of: start, in: periods) else { return nil }
            let cell = period * groups.count + place[groupOfRow[index]]
            guard cells[cell] < 0 else { return nil }
            cells[cell] = index
        }
        let zeros = query.dataset.metrics.map(MetricValue.zero(for:))
        var shaped: [QueryRow] = []
        shaped.reserveCapacity(cells.count)
        for (cell, index) in cells.enumerated() {
            if index >= 0 {
                shaped.append(rows[index])
            } else {
                shaped.append(QueryRow(periodStart: periods[cell / groups.count], groupValues: groups[ordered[cell % groups.count]], metrics: zeros))
            }
        }
        return shaped
    }

    /// The index of `start` in `periods` (ascending), if it is one of them.
    private static func position(of start: Timestamp, in periods: [Timestamp]) -> Int? {
        var low = 0, high = periods.count
        while low < high {
            let middle = (low + high) / 2
            if periods[middle] < start { low = middle + 1 } else { high = middle }
        }
        return low < periods.count && periods[low] == start ? low : nil
    }

    /// The position of the metric `query` orders by among its dataset's metrics (nil: ordered by period and group).
    private static func orderingMetric(of query: Query) -> Int? {
        query.orderBy.flatMap { order in query.dataset.metrics.firstIndex(of: order.metric) }
    }

    private static func requireRows(_ count: Int) throws(QueryError) {
        guard count <= QueryLimits.maxRows else {
            throw QueryError(.resultTooLarge, "the answer would have \(count) rows; the limit is \(QueryLimits.maxRows): narrow the interval, filter, or use a coarser granularity")
        }
    }

    private static func limited(_ rows: [QueryRow], _ limit: Int?) -> [QueryRow] {
        guard let limit, rows.count > limit else { return rows }
        return Array(rows[..<limit])
    }

    private struct RowKey: Hashable {
        var periodStart: Timestamp?
        var groupValues: [String]
    }
}
