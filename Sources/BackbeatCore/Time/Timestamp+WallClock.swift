#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Timestamp {
    /// The system's real-time clock: the instant live consumption and a plain input's first replay judge events
    /// against. Passed in as a function wherever a test needs another clock.
    @Sendable public static func wallClock() -> Timestamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp(microseconds: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
    }
}
