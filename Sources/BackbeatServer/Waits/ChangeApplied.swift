import Synchronization

/// The answer of a change handed to a queue, awaited by whoever handed it over: resolved once by the queue,
/// awaited at most once. The wait ignores cancellation: the change is applied whatever happens to the waiter, and
/// a queue that only adds up memory always gets there.
final class ChangeApplied<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiter: CheckedContinuation<Value, Never>?
    }

    private let state = Mutex(State())

    init() {}

    /// Hands `value` to the waiter, or keeps it for the wait to come.
    func resolve(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard let waiter = state.waiter else {
                state.value = value
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// The answer, once the change is applied.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state -> Value? in
                guard let value = state.value else {
                    state.waiter = continuation
                    return nil
                }
                return value
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
