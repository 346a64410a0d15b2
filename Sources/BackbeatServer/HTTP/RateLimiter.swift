import Synchronization

/// A token bucket per key (an API token's hash, so no token is kept in memory): `rate` requests per second on
/// average, bursts of up to `burst`.
final class RateLimiter: Sendable {
    let rate: Double
    let burst: Double
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }
    private let buckets = Mutex<[[UInt8]: Bucket]>([:])

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one request from `key`'s bucket: nil when allowed, else the whole seconds to wait before retrying.
    func take(_ key: [UInt8], now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { buckets in
            if buckets.count > 100_000 { buckets.removeAll() }  // bounded; only live tokens get here
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
