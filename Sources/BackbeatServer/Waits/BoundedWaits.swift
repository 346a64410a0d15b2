import Dispatch
import ServiceLifecycle
import Synchronization

// Waits with a bound for calls that block a thread (librdkafka's) or may never return.

/// The work of a bounded wait (`awaitBlocking(limit:)`, `awaitTask`) did not finish within its limit.
struct WaitTimedOut: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "no answer within \(limit)" }
}

/// Runs blocking `work` (a librdkafka call that waits) on a dispatch thread and awaits it, so that no Swift
/// concurrency thread is held while it waits.
func awaitBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Runs blocking `work` on a dispatch thread and awaits it for at most `limit`: then, or when the awaiting task is
/// cancelled, it throws (`WaitTimedOut`, `CancellationError`) and the work goes on alone, its result dropped. For
/// librdkafka calls that may never return, such as leaving a group whose broker is gone.
func awaitBlocking<T: Sendable>(limit: Duration, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await BoundedWait<T>().run(limit: limit) { wait in
        DispatchQueue.global().async { wait.finish(Result { try work() }) }
    }
}

/// Runs async `work` in a task of its own and awaits it for at most `limit`: then, or when the awaiting task is
/// cancelled, the work is cancelled and the wait ends at once (`WaitTimedOut`, `CancellationError`), even if the work
/// ignores its cancellation and never returns. For calls into a library that can hang: a PostgreSQL statement sent
/// just as its connection broke has been seen never to return.
///
/// With a `stopGrace`, the service's stop cancels the work too (a wait for a PostgreSQL connection ends at once) and
/// the wait is given up `stopGrace` later (`CancellationError`) if the work has not ended by then. `.zero` is for the
/// reads a service's loop makes between its steps, which a stop must not wait for. Work that holds a connection gets
/// a few seconds: given up at once, a COPY in flight would go on while the stop closes the pool under it, which
/// postgres-nio 1.33.2 meets with a fatal error (it does not cancel a running statement); awaited to its end, work
/// waiting for a connection PostgreSQL refuses, or for a lock, would hold the stop.
func awaitTask<T: Sendable>(
    limit: Duration, stopGrace: Duration? = nil, _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    let task = Task { try await work() }
    let wait = BoundedWait<T>()
    let waiting = { @Sendable () async throws -> T in
        try await wait.run(limit: limit) { wait in
            Task { wait.finish(await task.result) }
        }
    }
    do {
        guard let stopGrace else { return try await waiting() }
        return try await withGracefulShutdownHandler(operation: waiting) {
            task.cancel()
            wait.finish(.failure(CancellationError()), after: stopGrace)
        }
    } catch {
        task.cancel()
        throw error
    }
}

/// One wait of `awaitBlocking(limit:)` or `awaitTask(limit:)`: the first of the work's
/// result, the limit and the awaiting task's cancellation ends it; what comes later is dropped.
private final class BoundedWait<T: Sendable>: Sendable {
    private let waiting = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func finish(_ result: Result<T, any Error>) {
        waiting.withLock { $0.take() }?.resume(with: result)
    }

    func finish(_ result: Result<T, any Error>, after delay: Duration) {
        DispatchQueue.global().asyncAfter(deadline: .now() + DispatchTimeInterval(delay)) { [self] in finish(result) }
    }

    /// Waits for the result that `start` arranges to hand to `finish`.
    func run(limit: Duration, start: (BoundedWait<T>) -> Void) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.withLock { $0 = continuation }
                start(self)
                finish(.failure(WaitTimedOut(limit: limit)), after: limit)
                if Task.isCancelled { finish(.failure(CancellationError())) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }
}

extension DispatchTimeInterval {
    /// `duration` in nanoseconds, capped at about 292 years (what an `Int` of nanoseconds holds).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let wholeSeconds = Int(min(max(seconds, 0), Int64(Int.max / 1_000_000_000 - 1)))
        self = .nanoseconds(wholeSeconds * 1_000_000_000 + Int(max(attoseconds, 0) / 1_000_000_000))
    }
}

/// Whether `work` finishes without error within `limit` (`awaitTask`). For probes that must answer even when a
/// connection attempt hangs (PostgreSQL down: the pool keeps trying).
func succeeds(within limit: Duration, _ work: @escaping @Sendable () async throws -> Void) async -> Bool {
    (try? await awaitTask(limit: limit, work)) != nil
}
