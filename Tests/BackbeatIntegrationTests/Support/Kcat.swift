import Foundation

/// Runs Debian's `kcat` (installed by scripts/test) and returns what it printed.
func kcat(_ arguments: [String], timeout: TimeInterval = 30) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/kcat")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    return String(decoding: data, as: UTF8.self)
}

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
