#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Timestamp {
    /// The wall clock: the instant live consumption and a plain input's first replay judge events against, the
    /// day memory, retention and the summary count back from. The system's real-time clock moved by
    /// `wallClockOffsetSeconds`. Passed in as a function wherever a test needs another clock.
    @Sendable public static func wallClock() -> Timestamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp(microseconds: (Int64(now.tv_sec) + wallClockOffsetSeconds) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
    }

    /// Seconds the wall clock is moved by: `BACKBEAT_CLOCK_OFFSET`, 0 when unset. It exists so that the test suite
    /// can run every process it starts on another date (scripts/test's `BACKBEAT_TEST_CLOCK` sets it); it is the one
    /// setting the core reads itself, since every process must agree on the clock from its first reading, before any
    /// configuration is built. A value that is not a whole number of seconds stops the process.
    public static let wallClockOffsetSeconds: Int64 = {
        guard let text = getenv("BACKBEAT_CLOCK_OFFSET").map({ String(cString: $0) }), !text.isEmpty else { return 0 }
        guard let seconds = Int64(text.hasPrefix("+") ? String(text.dropFirst()) : text) else {
            fatalError("BACKBEAT_CLOCK_OFFSET must be a whole number of seconds, not \(text)")
        }
        return seconds
    }()
}
