import PostgresNIO

/// Statements whose text is built with their values bound as they are written: each value appended to the
/// bindings where its positional parameter (`$n`) goes in the text, so that the two never disagree.
extension PostgresBindings {
    /// Appends `value` and returns the positional parameter that names it in the statement's text (`$n`).
    mutating func parameter(_ value: some PostgresDynamicTypeEncodable) -> String {
        append(value)
        return "$\(count)"
    }

    /// Appends `day` (days since the epoch) and returns it as a date in the statement's text.
    mutating func day(_ day: Int64) -> String {
        "date '1970-01-01' + \(parameter(day))::integer"
    }
}
