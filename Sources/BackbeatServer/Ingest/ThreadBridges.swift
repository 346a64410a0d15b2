import Dispatch
import Synchronization

// Bridges between Swift concurrency and the plain threads librdkafka blocks.

/// Runs async `work` and blocks the calling thread until it finishes.
///
/// Only for the Kafka polling thread, a plain OS thread that librdkafka calls back on and that must wait for
/// PostgreSQL before it can answer (the stored offsets of newly assigned partitions). Never call it from a
/// Swift concurrency thread.
func blockingAwait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// Runs blocking `work` (a librdkafka call that waits) on a dispatch thread and awaits it, so that no Swift
/// concurrency thread is held while it waits.
func awaitBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
