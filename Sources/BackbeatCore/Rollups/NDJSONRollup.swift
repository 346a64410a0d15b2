/// Validates and rolls up newline-delimited JSON events held in memory.
public enum NDJSONRollup {
    /// What a rollup of some lines produced.
    public struct Result: Sendable {
        public var delta = InternedDelta()
        public var lines = 0
        public var rejected: [Rejection.Reason: Int] = [:]

        public init() {}

        /// Adds another chunk's result.
        public mutating func merge(_ other: Result) {
            delta.merge(other.delta)
            lines += other.lines
            for (reason, count) in other.rejected { rejected[reason, default: 0] += count }
        }
    }

    /// Rolls up every non-empty line of `bytes`, judging timestamps against `now`.
    public static func rollUp(_ bytes: UnsafeRawBufferPointer, now: Timestamp) -> Result {
        var result = Result()
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            if end > start {
                result.lines += 1
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                switch EventDecoder.decodeRecord(bytes: line, now: now) {
                case .success(let record): result.delta.add(record, in: line)
                case .failure(let rejection): result.rejected[rejection.reason, default: 0] += 1
                }
            }
            start = end + 1
        }
        return result
    }

    /// Splits `bytes` into `parts` ranges that end on line boundaries, for rolling up in parallel.
    public static func chunks(_ bytes: UnsafeRawBufferPointer, parts: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for part in 1...max(1, parts) {
            var end = part == parts ? bytes.count : max(start, bytes.count * part / parts)
            while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            end = min(bytes.count, end + (end < bytes.count ? 1 : 0))
            if end > start { ranges.append(start..<end) }
            start = end
        }
        return ranges
    }
}
