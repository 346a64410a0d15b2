/// A query a client got wrong: a stable code (docs/api.md) and a message naming the parameter and the rule.
public struct QueryError: Error, Equatable, Sendable {
    /// Every code a query can be refused with; docs/api.md documents each (checked by a test over `allCases`).
    public enum Code: String, CaseIterable, Sendable {
        case missingParameter = "missing_parameter"
        case invalidParameter = "invalid_parameter"
        case unknownParameter = "unknown_parameter"
        case invalidInterval = "invalid_interval"
        case unknownDataset = "unknown_dataset"
        case unknownDimension = "unknown_dimension"
        case unknownMetric = "unknown_metric"
        case currencyRequired = "currency_required"
        case intervalTooLong = "interval_too_long"
        case tooManyPoints = "too_many_points"
        case resultTooLarge = "result_too_large"
        case droppedByRetention = "dropped_by_retention"
        case zoneNotTiled = "zone_not_tiled"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The bounds that keep any single query cheap.
public enum QueryLimits {
    /// Longest interval a query may cover, in days (ten years).
    public static let maxIntervalDays: Int64 = 3_653
    /// Most periods a series may have.
    public static let maxPeriods: Int64 = 10_000
    /// Most rows an answer may have after zero-filling.
    public static let maxRows = 100_000
    /// Largest `limit`.
    public static let maxLimit = 10_000
    /// Most values one filter may list.
    public static let maxFilterValues = 100
}
