/// Builds a validated `Query` from the loose strings a client sends (URL parameters or a JSON body).
public struct QueryBuilder: Sendable {
    public var dataset: String?
    public var from: String?
    public var to: String?
    public var granularity: String?
    public var groupBy: [String] = []
    public var filters: [(dimension: String, values: [String])] = []
    public var orderByMetric: String?
    public var orderByDirection: String?
    public var limit: String?

    public init() {}

    /// Validates everything and returns the query, or the first problem found.
    public func build(defaultGranularity: Granularity = .all) throws(QueryError) -> Query {
        guard let datasetName = dataset else { throw QueryError(.missingParameter, "dataset is required") }
        guard let dataset = Dataset(rawValue: datasetName) else {
            throw QueryError(.unknownDataset, "unknown dataset \"\(clip(datasetName))\"; use one of streams, revenue, social")
        }
        let interval = try Self.interval(from: from, to: to)
        var resolvedGranularity = defaultGranularity
        if let granularity {
            guard let parsed = Granularity(parameter: granularity) else {
                throw QueryError(.invalidParameter, "granularity must be one of hour, day, week, month, all")
            }
            resolvedGranularity = parsed
        }
        let periods = resolvedGranularity.periodCount(covering: interval)
        guard periods <= QueryLimits.maxPeriods else {
            throw QueryError(.tooManyPoints, "the series would have \(periods) periods; the limit is \(QueryLimits.maxPeriods): use a coarser granularity or a shorter interval")
        }

        var dimensions: [Dimension] = []
        for name in groupBy {
            let dimension = try Self.dimension(name, in: dataset)
            guard !dimensions.contains(dimension) else {
                throw QueryError(.invalidParameter, "group_by lists \(name) twice")
            }
            dimensions.append(dimension)
        }
        if dataset == .revenue, !dimensions.contains(.currency), filters.first(where: { $0.dimension == "currency" })?.values.count != 1 {
            throw QueryError(.currencyRequired, "revenue amounts are per currency: add currency to group_by or filter on one currency")
        }

        var filterMap: [Dimension: [String]] = [:]
        for (name, values) in filters {
            let dimension = try Self.dimension(name, in: dataset)
            guard filterMap[dimension] == nil else { throw QueryError(.invalidParameter, "the filter on \(name) is given twice") }
            guard !values.isEmpty, values.count <= QueryLimits.maxFilterValues else {
                throw QueryError(.invalidParameter, "the filter on \(name) must list 1-\(QueryLimits.maxFilterValues) values")
            }
            for value in values where !dimension.accepts(value) {
                throw QueryError(.invalidParameter, "\"\(clip(value))\" is not a valid \(name)")
            }
            filterMap[dimension] = values
        }

        var orderBy: (metric: Metric, direction: SortDirection)?
        if let orderByMetric {
            guard let metric = Metric(rawValue: orderByMetric), dataset.metrics.contains(metric) else {
                throw QueryError(.unknownMetric, "unknown metric \"\(clip(orderByMetric))\" for \(dataset.rawValue); use one of \(dataset.metrics.map(\.rawValue).joined(separator: ", "))")
            }
            var direction = SortDirection.desc
            if let orderByDirection {
                guard let parsed = SortDirection(rawValue: orderByDirection) else {
                    throw QueryError(.invalidParameter, "order_by direction must be asc or desc")
                }
                direction = parsed
            }
            orderBy = (metric, direction)
        } else if orderByDirection != nil {
            throw QueryError(.missingParameter, "order_by needs a metric")
        }

        var parsedLimit: Int?
        if let limit {
            guard let value = Int(limit), (1...QueryLimits.maxLimit).contains(value) else {
                throw QueryError(.invalidParameter, "limit must be an integer from 1 to \(QueryLimits.maxLimit)")
            }
            parsedLimit = value
        }
        return Query(
            dataset: dataset, interval: interval, granularity: resolvedGranularity, groupBy: dimensions,
            filters: filterMap, orderBy: orderBy, limit: parsedLimit
        )
    }

    /// Parses and checks `[from, to)`: both required, RFC 3339 or `YYYY-MM-DD`, on whole hours, from before to.
    public static func interval(from: String?, to: String?) throws(QueryError) -> QueryInterval {
        guard let from else { throw QueryError(.missingParameter, "from is required") }
        guard let to else { throw QueryError(.missingParameter, "to is required") }
        guard let start = RFC3339.parseInstant(from) else {
            throw QueryError(.invalidParameter, "from must be an RFC 3339 timestamp or YYYY-MM-DD")
        }
        guard let end = RFC3339.parseInstant(to) else {
            throw QueryError(.invalidParameter, "to must be an RFC 3339 timestamp or YYYY-MM-DD")
        }
        guard start.microseconds % 3_600_000_000 == 0, end.microseconds % 3_600_000_000 == 0 else {
            throw QueryError(.invalidInterval, "from and to must fall on whole hours (data is kept per hour)")
        }
        guard start < end else { throw QueryError(.invalidInterval, "from must be before to") }
        try requireLength(days: (end.microseconds - start.microseconds) / 86_400_000_000)
        return QueryInterval(from: start, to: end)
    }

    /// Refuses an interval of more than `QueryLimits.maxIntervalDays` whole days.
    public static func requireLength(days: Int64) throws(QueryError) {
        guard days <= QueryLimits.maxIntervalDays else {
            throw QueryError(.intervalTooLong, "the interval covers \(days) days; the limit is \(QueryLimits.maxIntervalDays)")
        }
    }

    private static func dimension(_ name: String, in dataset: Dataset) throws(QueryError) -> Dimension {
        guard let dimension = Dimension(rawValue: name), dataset.dimensions.contains(dimension) else {
            throw QueryError(.unknownDimension, "unknown dimension \"\(clip(name))\" for \(dataset.rawValue); use one of \(dataset.dimensions.map(\.rawValue).joined(separator: ", "))")
        }
        return dimension
    }
}

/// Shortens client text quoted back in an error message.
func clip(_ text: String) -> String {
    JSONScanner.clip(text, to: 64)
}
