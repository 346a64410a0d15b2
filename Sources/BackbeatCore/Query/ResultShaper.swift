/// Turns the aggregated rows a store returns into the answer a client sees: zero-filled, ordered and limited.
public enum ResultShaper {
    /// Zero-fills every group that has data over every period of the interval (unless granularity is `all`),
    /// then sorts by `order_by` (ties by period and group values) or by period and group values, then applies `limit`.
    public static func shape(_ rows: [QueryRow], for query: Query) throws(QueryError) -> [QueryRow] {
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
            guard periods.count * groups.count <= QueryLimits.maxRows else {
                throw QueryError(.resultTooLarge, "the answer would have \(periods.count * groups.count) rows; the limit is \(QueryLimits.maxRows): narrow the interval, filter, or use a coarser granularity")
            }
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

        let metricIndex = query.orderBy.flatMap { order in query.dataset.metrics.firstIndex(of: order.metric) }
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
        if let limit = query.limit, shaped.count > limit {
            shaped.removeSubrange(limit...)
        }
        return shaped
    }

    private struct RowKey: Hashable {
        var periodStart: Timestamp?
        var groupValues: [String]
    }
}
