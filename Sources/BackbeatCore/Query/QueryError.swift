/// A query a client got wrong: a stable code (docs/api.md) and a message naming the parameter and the rule.
public struct QueryError: Error, Equatable, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let missingParameter = Code(rawValue: "missing_parameter")
        public static let invalidParameter = Code(rawValue: "invalid_parameter")
        public static let invalidInterval = Code(rawValue: "invalid_interval")
        public static let unknownDataset = Code(rawValue: "unknown_dataset")
        public static let unknownDimension = Code(rawValue: "unknown_dimension")
        public static let unknownMetric = Code(rawValue: "unknown_metric")
        public static let currencyRequired = Code(rawValue: "currency_required")
        public static let intervalTooLong = Code(rawValue: "interval_too_long")
        public static let tooManyPoints = Code(rawValue: "too_many_points")
        public static let resultTooLarge = Code(rawValue: "result_too_large")
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
