import Synchronization

/// Whether `body` finishes without error within `limit`. A probe must answer even when a connection attempt
/// hangs (PostgreSQL down: the pool keeps trying), so the body runs in its own task and is left to finish.
func succeeds(within limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async -> Bool {
    let outcome = FirstOutcome()
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        outcome.continuation = continuation
        Task { outcome.settle((try? await body()) != nil) }
        Task {
            try? await Task.sleep(for: limit)
            outcome.settle(false)
        }
    }
}

/// Resumes a continuation with the first of several racing outcomes.
private final class FirstOutcome: @unchecked Sendable {
    // @unchecked: `continuation` is set before either racer starts and only read under `settled`'s exchange.
    var continuation: CheckedContinuation<Bool, Never>?
    private let settled = Atomic<Bool>(false)

    func settle(_ value: Bool) {
        guard settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        continuation?.resume(returning: value)
    }
}
