import ArgumentParser
import BackbeatCore
import Foundation

/// `backbeat rollup`: validates and aggregates an NDJSON file in memory, without Kafka or PostgreSQL, and reports
/// what it found and how fast. Useful to check a file before loading it, and as the rollup benchmark.
struct RollupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollup",
        abstract: "Validate and roll up an NDJSON event file in memory; report counts, rejections and speed.")

    @Argument(help: "NDJSON file, one event per line ('-' for stdin).")
    var file: String

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Option(help: "Threads to roll up with (default: one per core).")
    var threads: Int?

    func run() async throws {
        let data: Data
        if file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            data = contents
        }
        let now = Timestamp.wallClock()
        let clock = ContinuousClock()
        let started = clock.now
        // One chunk per core, each rolled up on its own thread, then merged.
        let parts = threads ?? ProcessInfo.processInfo.activeProcessorCount
        let result = await withTaskGroup(of: NDJSONRollup.Result.self) { group in
            let ranges = data.withUnsafeBytes { NDJSONRollup.chunks($0, parts: parts) }
            for range in ranges {
                group.addTask {
                    data.withUnsafeBytes { NDJSONRollup.rollUp(UnsafeRawBufferPointer(rebasing: $0[range]), now: now) }
                }
            }
            var merged = NDJSONRollup.Result()
            for await part in group { merged.merge(part) }
            return merged
        }
        let delta = result.delta
        let listeners = delta.listeners
        let lines = result.lines
        let rejected = Dictionary(uniqueKeysWithValues: result.rejected.map { ($0.key.rawValue, $0.value) })
        let seconds = (clock.now - started).seconds
        let accepted = lines - rejected.values.reduce(0, +)
        let report: [String: Any] = [
            "file": file, "bytes": data.count, "lines": lines, "accepted": accepted, "rejected": rejected,
            "seconds": seconds, "threads": threads ?? ProcessInfo.processInfo.activeProcessorCount, "events_per_second": Double(lines) / seconds, "megabytes_per_second": Double(data.count) / 1_000_000 / seconds,
            "rows": ["stream_hourly": delta.streams.count, "revenue_hourly": delta.revenue.count, "social_hourly": delta.social.count,
                     "artist_listeners_daily": listeners.artists.count, "track_listeners_daily": listeners.tracks.count],
        ]
        if json {
            let encoded = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
            FileHandle.standardOutput.write(encoded + Data("\n".utf8))
        } else {
            print("\(lines) events (\(accepted) accepted, \(lines - accepted) rejected) in \(String(format: "%.3f", seconds)) s: \(Int(Double(lines) / seconds)) events/s, \(String(format: "%.1f", Double(data.count) / 1_000_000 / seconds)) MB/s")
            for (reason, count) in rejected.sorted(by: { $0.value > $1.value }) { print("  rejected \(reason): \(count)") }
            print("rows: streams \(delta.streams.count), revenue \(delta.revenue.count), social \(delta.social.count), listener days \(listeners.artists.count) artist / \(listeners.tracks.count) track")
        }
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
