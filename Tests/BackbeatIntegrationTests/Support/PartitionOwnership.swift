import Foundation

/// Who owned which partition when, read from the logs of a group's instances ("partitions assigned", "partitions
/// revoked", "partitions lost" lines, whole seconds) and the moments the test stopped or killed each one: answers
/// the longest stretch during which a partition had no owner.
struct PartitionOwnership {
    /// One instance's life: its log and when it stopped running (nil: still running).
    struct Life {
        var log: String
        var end: Date?
    }

    /// The longest stretch, in seconds, between `start` and `end` in which some partition had no owner, and that
    /// partition (nil when no partition was ever assigned).
    static func longestUnowned(_ lives: [Life], from start: Date, to end: Date) -> (seconds: Double, partition: String)? {
        var intervals: [String: [(Date, Date)]] = [:]
        for life in lives {
            var since: [String: Date] = [:]
            for line in life.log.split(separator: "\n") {
                guard let (time, partitions, assigned) = parse(line) else { continue }
                for partition in partitions {
                    if assigned {
                        since[partition] = since[partition] ?? time
                    } else if let from = since.removeValue(forKey: partition) {
                        intervals[partition, default: []].append((from, time))
                    }
                }
            }
            for (partition, from) in since { intervals[partition, default: []].append((from, life.end ?? end)) }
        }
        var worst: (seconds: Double, partition: String)?
        for (partition, owned) in intervals {
            var cursor = start
            var longest = 0.0
            for (from, to) in owned.sorted(by: { $0.0 < $1.0 }) {
                longest = max(longest, from.timeIntervalSince(cursor))
                cursor = max(cursor, to)
            }
            longest = max(longest, end.timeIntervalSince(cursor))
            if longest > worst?.seconds ?? -1 { worst = (longest, partition) }
        }
        return worst
    }

    /// The longest wait the instances themselves reported for a partition's first message after an assignment
    /// ("partition consumed again" lines, `backbeat_partition_resume_wait_seconds`), and that partition.
    static func longestResumeWait(_ lives: [Life]) -> (seconds: Double, partition: String)? {
        var worst: (seconds: Double, partition: String)?
        for life in lives {
            for line in life.log.split(separator: "\n") where line.hasSuffix("partition consumed again") {
                guard let partition = line.firstMatch(of: /partition=([^ ]+)/)?.1,
                      let waited = line.firstMatch(of: /waited_seconds=([0-9.e+-]+)/).flatMap({ Double($0.1) }) else { continue }
                if waited > worst?.seconds ?? -1 { worst = (waited, String(partition)) }
            }
        }
        return worst
    }

    /// Where an instance's first message of a partition was not at the stored offset it started the partition from
    /// ("consuming partitions from their stored offsets", then "partition consumed again"): messages skipped. For
    /// these tests' producers, which publish no transactions, the offsets of a partition have no holes. Partitions
    /// started without a stored offset are not checked (the log's start is not known here).
    static func startsPastTheStoredOffset(_ logs: [String]) -> [String] {
        var skipped: [String] = []
        for log in logs {
            var startedAt: [Substring: Substring] = [:]
            for line in log.split(separator: "\n") {
                if line.hasSuffix("consuming partitions from their stored offsets"), let list = line.firstMatch(of: /partitions=([^ ]+)/)?.1 {
                    for item in list.split(separator: ",") {
                        guard let colon = item.lastIndex(of: ":") else { continue }
                        startedAt[item[..<colon]] = item[item.index(after: colon)...]
                    }
                } else if line.hasSuffix("partition consumed again"), let partition = line.firstMatch(of: /partition=([^ ]+)/)?.1,
                          let offset = line.firstMatch(of: /offset=([0-9]+)/)?.1, let stored = startedAt[partition],
                          stored != "start", stored != offset {
                    skipped.append("\(partition): started at \(stored), first message \(offset)")
                }
            }
        }
        return skipped
    }

    /// The time, partitions and kind (assigned or not) of one ownership line of a text log.
    private static func parse(_ line: Substring) -> (Date, [String], Bool)? {
        let assigned = line.hasSuffix("partitions assigned")
        guard assigned || line.hasSuffix("partitions revoked") || line.hasSuffix("partitions lost"),
              let time = formatter.date(from: String(line.prefix(24))),
              let list = line.firstMatch(of: /partitions=([^ ]+)/)?.1 else { return nil }
        return (time, list.split(separator: ",").map(String.init), assigned)
    }

    nonisolated(unsafe) private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        return formatter
    }()
}
