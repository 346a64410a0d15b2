/// The samples of a Prometheus text exposition, keyed by series (`name{label="value",...}` as printed).
func prometheusSamples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
        samples[String(line[..<space])] = value
    }
    return samples
}

extension [String: Double] {
    /// The sum of every series of metric `name` whose labels include each of `labels` (`key="value"` strings).
    func total(_ name: String, _ labels: String...) -> Double {
        filter { series, _ in
            (series == name || series.hasPrefix(name + "{")) && labels.allSatisfy { series.contains($0) }
        }.values.reduce(0, +)
    }
}
